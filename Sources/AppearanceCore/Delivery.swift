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

/// One published state as the subscribers of one interest see it: made once per change and shared by all of
/// them, so a fan-out copies a reference per subscriber, not a state (docs/decisions.md).
public final class Offer: Sendable {
    public let state: AppearanceState
    /// The palette resolved for `state`, present when the interest asks for it.
    public let palette: ResolvedPalette?
    public let view: View

    public init(_ state: AppearanceState, palette: ResolvedPalette? = nil, interest: Interest) {
        view = interest.view(of: state, palette: palette)
        (self.state, self.palette) = (state, view.palette)
    }
}

/// Per-subscriber delivery (docs/protocol.md's notification rules) on the subscriber's own view: each change is
/// `offer`ed, the transport `take`s one pending notification at most when it can write.
public struct Delivery: Sendable {
    public let interest: Interest
    /// What this subscriber has been told last, seen through its interest.
    public private(set) var known: View
    /// The offer waiting for the transport; nil when the latest one looks like `known`.
    private var waiting: Offer?

    public init(subscribedAt state: AppearanceState, palette: ResolvedPalette? = nil, interest: Interest = .mode) {
        self.interest = interest
        known = interest.view(of: state, palette: palette)
    }

    /// The notification the transport would take now.
    public var pending: Notification? { waiting.map { Notification(state: $0.state, previous: known.mode, palette: $0.palette) } }

    /// Offers the newly published state and the palette resolved for it.
    public mutating func offer(_ state: AppearanceState, palette: ResolvedPalette? = nil) {
        offer(Offer(state, palette: palette, interest: interest))
    }

    /// Offers a state already seen through this subscriber's interest (`Offer` made with the same `interest`).
    public mutating func offer(_ o: Offer) { waiting = o.view == known ? nil : o }

    /// Hands the pending notification to the transport, which will send it; the subscriber then knows it.
    public mutating func take() -> Notification? {
        takeOffer().map { Notification(state: $0.offer.state, previous: $0.previous, palette: $0.offer.palette) }
    }

    /// `take` without building the notification: the offer and the mode the subscriber knew before it.
    public mutating func takeOffer() -> (offer: Offer, previous: Mode)? {
        guard let o = waiting else { return nil }
        waiting = nil
        defer { known = o.view }
        return (o, known.mode)
    }
}
