/// The pauses between attempts to reach the daemon again: 50 ms, doubling after each failed attempt up to
/// 2 s; `reset()` once an attempt succeeds (subscribed again), so the next outage starts at 50 ms. Used by
/// `changes()` (AppearanceChanges) and by `appearancectl watch`.
package struct Backoff: Equatable, Sendable {
    package static let first = Double(firstMilliseconds) / 1000
    package static let longest = Double(longestMilliseconds) / 1000

    // Whole milliseconds, so the sequence is exact: 50, 100, 200, 400, 800, 1,600, 2,000, 2,000, …
    private static let firstMilliseconds = 50
    private static let longestMilliseconds = 2_000
    private var milliseconds = Self.firstMilliseconds

    package init() {}

    /// The pause before the next attempt, in seconds; the one after it is twice as long, up to `longest`.
    package mutating func next() -> Double {
        let pause = milliseconds
        milliseconds = min(milliseconds * 2, Self.longestMilliseconds)
        return Double(pause) / 1000
    }

    /// An attempt succeeded: the next pause is `first` again.
    package mutating func reset() { milliseconds = Self.firstMilliseconds }
}
