/// A notification as one subscriber receives it: the new state, the mode it knew before, the palette it asked for.
public struct Notification: Equatable, Sendable {
    public var state: AppearanceState
    public var previous: Mode
    /// Present for subscribers that asked for the palette (`subscribe {"palette": true}`).
    public var palette: ResolvedPalette?

    public init(state: AppearanceState, previous: Mode, palette: ResolvedPalette? = nil) {
        (self.state, self.previous, self.palette) = (state, previous, palette)
    }
}

/// What a subscriber asked to be told about (`subscribe` params). The mode always; the rest on request.
public struct Interest: Hashable, Sendable {
    /// Also notify when contrast, reduced motion or the accent color change.
    public var traits: Bool
    /// Carry the resolved palette in the reply and every notification, and notify when it changes.
    public var palette: Bool
    /// The app the subscriber speaks for (`subscribe {"app": ID}`): it is offered that app's state.
    public var app: String?

    public init(traits: Bool = false, palette: Bool = false, app: String? = nil) {
        (self.traits, self.palette, self.app) = (traits, palette, app)
    }

    /// Mode changes only: what a plain `subscribe` gets (protocol 1's behaviour).
    public static let mode = Interest()

    /// The part of the published state and palette this subscriber looks at.
    public func view(of state: AppearanceState, palette: ResolvedPalette?) -> View {
        View(mode: state.mode, traits: traits ? state.traits : nil, palette: self.palette ? palette : nil)
    }
}

/// One subscriber's view: two published states that look the same through it are no change to it.
public struct View: Equatable, Sendable {
    public var mode: Mode
    public var traits: Traits?
    public var palette: ResolvedPalette?
}

/// Per-subscriber delivery (docs/protocol.md's notification rules) on the subscriber's own view: each change is
/// `offer`ed, the transport `take`s one pending notification at most when it can write.
public struct Delivery: Sendable {
    public let interest: Interest
    /// What this subscriber has been told last, seen through its interest.
    public private(set) var known: View
    /// The notification waiting for the transport, and its view: two fields, not a tuple (docs/benchmarks.md).
    public private(set) var pending: Notification?
    private var pendingView: View?

    public init(subscribedAt state: AppearanceState, palette: ResolvedPalette? = nil, interest: Interest = .mode) {
        self.interest = interest
        known = interest.view(of: state, palette: palette)
    }

    /// Offers the newly published state and the palette resolved for it.
    public mutating func offer(_ state: AppearanceState, palette: ResolvedPalette? = nil) {
        let view = interest.view(of: state, palette: palette)
        if view == known {
            pending = nil
            pendingView = nil
        } else {
            pending = Notification(state: state, previous: known.mode, palette: view.palette)
            pendingView = view
        }
    }

    /// Hands the pending notification to the transport, which will send it; the subscriber then knows it.
    public mutating func take() -> Notification? {
        guard let n = pending, let v = pendingView else { return nil }
        pending = nil
        pendingView = nil
        known = v
        return n
    }
}

/// Severity of a log line (syslog numbering, so the journal can read `<N>` prefixes).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7

    public var name: String { ["error", "warning", "notice", "info", "debug"][rawValue - 3] }

    public init?(name: String) {
        guard let l = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
        self = l
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// The source of system readings (AppearanceBus.PortalSentry); `start`, `stop` and `report` on the daemon's queue.
/// It reports every reading, repeated or not, and never throws: no bus and no portal are readings too.
public protocol Sentry: AnyObject {
    func start(report: @escaping (SystemReading) -> Void)
    func stop()
}
