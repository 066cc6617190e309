print("appearanced")
