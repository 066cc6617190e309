print("appearancectl")
