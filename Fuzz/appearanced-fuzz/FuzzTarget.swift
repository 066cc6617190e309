import AppearanceFuzzing

/// libFuzzer's entry point; built only by `make fuzz` (see Package.swift).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    FuzzHarness.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
