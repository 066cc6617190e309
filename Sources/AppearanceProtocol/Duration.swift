/// A duration as people write it, on the command line and in the config: "90m", "1h30m", "1d2h3m4s" → seconds
/// (units d, h, m, s, each at most once and in that order; 1 s to `Lifetime.maxSeconds`); nil for anything else.
public func parseDuration(_ text: String) -> Int64? {
    let units: [(letter: UInt8, seconds: Int64)] = [(UInt8(ascii: "d"), 86_400), (UInt8(ascii: "h"), 3600),
                                                    (UInt8(ascii: "m"), 60), (UInt8(ascii: "s"), 1)]
    var total: Int64 = 0
    var number: Int64?
    var nextUnit = 0  // the units before this one are used up
    for c in text.utf8 {
        if c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") {
            // At most maxSeconds × 10 + 9 before the check: far from overflowing.
            let n = (number ?? 0) * 10 + Int64(c - UInt8(ascii: "0"))
            guard n <= Lifetime.maxSeconds else { return nil }
            number = n
        } else {
            guard let n = number, let k = units[nextUnit...].firstIndex(where: { $0.letter == c }) else { return nil }
            // n ≤ maxSeconds and total ≤ maxSeconds: at most about 2.7e12, no overflow.
            total += n * units[k].seconds
            guard total <= Lifetime.maxSeconds else { return nil }
            number = nil
            nextUnit = k + 1
        }
    }
    guard number == nil, total >= 1 else { return nil }
    return total
}
