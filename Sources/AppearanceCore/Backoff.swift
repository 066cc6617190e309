/// The pauses between attempts to reach something again: `first`, doubling up to `longest`, `first` after `reset()`.
public struct Backoff: Equatable, Sendable {
    public let firstMilliseconds: Int
    public let longestMilliseconds: Int
    private var milliseconds: Int

    public init(firstMilliseconds: Int, longestMilliseconds: Int) {
        (self.firstMilliseconds, self.longestMilliseconds) = (firstMilliseconds, longestMilliseconds)
        milliseconds = firstMilliseconds
    }

    /// A client reaching the daemon (`changes()`, `appearancectl watch`): 50 ms doubling to 2 s.
    public static let client = Backoff(firstMilliseconds: 50, longestMilliseconds: 2_000)

    public var first: Double { Double(firstMilliseconds) / 1000 }
    public var longest: Double { Double(longestMilliseconds) / 1000 }

    /// The pause before the next attempt, in seconds; the one after it is twice as long, up to `longest`.
    public mutating func next() -> Double {
        let pause = milliseconds
        milliseconds = min(milliseconds * 2, longestMilliseconds)
        return Double(pause) / 1000
    }

    /// An attempt succeeded: the next pause is `first` again.
    public mutating func reset() { milliseconds = firstMilliseconds }
}
