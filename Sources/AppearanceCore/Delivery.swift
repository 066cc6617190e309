/// A notification as one subscriber receives it: the full new state and the mode it knew before.
public struct Notification: Equatable, Sendable {
    public var state: AppearanceState
    public var previous: Mode

    public init(state: AppearanceState, previous: Mode) {
        self.state = state
        self.previous = previous
    }
}

/// Per-subscriber delivery: notification rules 1, 2, 3 and 5 of docs/protocol.md.
///
/// A subscriber starts knowing the state it got as its `subscribe` reply. Each global change is `offer`ed;
/// the transport `take`s a notification when it can write. While the transport is busy (a slow client),
/// newer offers replace the pending one (latest wins, state is idempotent), and a change that ends where
/// the subscriber already is cancels the pending one: nothing is ever sent that does not change what the
/// subscriber knows. Memory per subscriber is one pending notification.
public struct Delivery: Sendable {
    /// The mode this subscriber has been told last.
    public private(set) var known: Mode
    public private(set) var pending: Notification?

    public init(subscribedAt state: AppearanceState) {
        known = state.mode
    }

    public mutating func offer(_ state: AppearanceState) {
        pending = state.mode == known ? nil : Notification(state: state, previous: known)
    }

    /// Hands the pending notification to the transport, which will send it; the subscriber then knows it.
    public mutating func take() -> Notification? {
        guard let n = pending else { return nil }
        pending = nil
        known = n.state.mode
        return n
    }
}

/// Severity of a log line (syslog numbering, so the journal can read `<N>` prefixes).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7

    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    public init?(name: String) {
        guard let l = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
        self = l
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// The source of system readings. The daemon owns one and never looks inside: the real one watches the
/// XDG desktop portal over D-Bus (AppearanceBus.PortalSentry); tests may pass their own.
///
/// Threading contract: the sentry is created with the daemon's serial queue, and `start`, `stop` and every
/// call of `report` happen on that queue. It reports every reading, repeated or not (the engine drops
/// what does not change anything), and never throws: no bus and no portal are readings too.
public protocol Sentry: AnyObject {
    func start(report: @escaping (SystemReading) -> Void)
    func stop()
}
