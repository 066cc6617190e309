import AppearanceFuzzing

/// libFuzzer's entry point; built only by `make fuzz` (see Package.swift).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    let broken = FuzzHarness.run(Array(UnsafeBufferPointer(start: data, count: size)))
    // A broken invariant is a finding: trap, so libFuzzer keeps the input.
    precondition(broken.isEmpty, broken.joined(separator: "; "))
    return 0
}
