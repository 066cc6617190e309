import Foundation

/// A test-infrastructure failure that says what was expected and what was seen instead.
public struct TestSupportError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Polls `probe` until it returns a value or `timeout` passes, then throws an error naming `what`
/// and, through `seen`, what was observed. Use this instead of sleeping and then asserting: a slow
/// machine only makes the wait longer.
public func waitUntil<T>(
    _ what: @autoclosure () -> String,
    timeout: Duration = defaultTimeout,
    seen: () -> String = { "" },
    _ probe: () throws -> T?
) async throws -> T {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while true {
        if let value = try probe() { return value }
        if clock.now >= deadline {
            let observed = seen()
            throw TestSupportError("timed out after \(timeout) waiting for \(what())"
                + (observed.isEmpty ? "" : "; seen: \(observed)"))
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Generous, because CI machines are slow and tests run in parallel; waits normally end in milliseconds.
public let defaultTimeout: Duration = .seconds(20 * timeoutScale)

/// Deadlines are for catching a hang, not for judging speed: under a sanitizer (`make sanitize` sets
/// APPEARANCED_TEST_TIMEOUT_SCALE) everything is several times slower, so every deadline stretches.
public let timeoutScale: Int = {
    guard let v = getenv("APPEARANCED_TEST_TIMEOUT_SCALE").flatMap({ Int(String(cString: $0)) }), v > 0 else { return 1 }
    return v
}()

/// Set by `make sanitize`: memory figures measured under a sanitizer say nothing about the program.
public let underSanitizer = getenv("APPEARANCED_SANITIZER") != nil

/// A thread-safe, append-only log of events (readings, log lines, notifications) that tests wait on.
public final class Recorder<Element: Sendable>: @unchecked Sendable {
    // All state is behind `lock`.
    private let lock = NSLock()
    private var items: [Element] = []

    public init() {}

    public func append(_ item: Element) {
        lock.lock()
        items.append(item)
        lock.unlock()
    }

    /// Everything recorded so far.
    public var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }

    public var count: Int { all.count }

    /// Waits for the first element at index `from` or later that matches, and returns its index.
    @discardableResult
    public func wait(
        for what: @autoclosure () -> String,
        from start: Int = 0,
        timeout: Duration = defaultTimeout,
        where predicate: (Element) -> Bool
    ) async throws -> Int {
        try await waitUntil(what(), timeout: timeout, seen: { "\(all.dropFirst(start))" }) {
            let snapshot = all
            guard start < snapshot.count else { return nil }
            return snapshot[start...].firstIndex(where: predicate)
        }
    }
}
