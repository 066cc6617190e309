import AppearanceCore

extension Decide {
    /// A transition and the words `log` gives its cause.
    public struct Step: Equatable, Sendable {
        public var transition: Transition
        public var cause: String

        public init(_ transition: Transition, cause: String) { (self.transition, self.cause) = (transition, cause) }
    }

    /// What a reading of the desktop's value did.
    public struct DesktopOutcome: Equatable, Sendable {
        /// The reading was the echo of appearanced's own write (no automatic change).
        public var echo = false
        /// The reading was the user's flip in the desktop, which counts as `set MODE --until-next`.
        public var manualFlip: Mode?
        /// The changes of the published state, in order.
        public var steps: [Step] = []

        public init(echo: Bool = false, manualFlip: Mode? = nil, steps: [Step] = []) {
            (self.echo, self.manualFlip, self.steps) = (echo, manualFlip, steps)
        }
    }

    /// The desktop's mode as a reading gives it (GNOME's default is light); nil when it said nothing.
    public static func mode(of scheme: SystemScheme) -> Mode? {
        switch scheme {
        case .dark: .dark
        case .light, .noPreference: .light
        case .unavailable: nil
        }
    }

    /// A reading of the desktop's value, applied to `engine`. While `following`, a change there is the echo of a
    /// write in flight (`writes`) or the user's flip, which counts as a temporary override until the next change.
    public static func desktopReading(_ reading: SystemReading, engine: inout Engine, writes: inout DesktopWrites,
                                      following: Bool) -> DesktopOutcome {
        var outcome = DesktopOutcome()
        let before = writes.shown ?? engine.inputs.system
        writes.shown = reading.scheme
        let said = mode(of: reading.scheme) != nil
        let changed = following && reading.scheme != before && said && mode(of: before) != nil
        // Every reading of a value goes through the queue while following (one matching none lets finished writes go).
        let matched = following && said && writes.reading(reading.scheme)
        let raw = reading.scheme == .unavailable ? "unavailable" : reading.scheme.rawValue
        let cause = "desktop: \(raw) (\(reading.detail))"
        if following, let original = writes.original, matched || reading.scheme == writes.lastWritten {
            // The desktop shows appearanced's value: the desktop's own value stays the one it had.
            outcome.echo = changed
            let own = SystemReading(original, detail: reading.detail, traits: reading.traits)
            if let t = engine.apply(.systemEcho(own)) { outcome.steps.append(Step(t, cause: cause)) }
            return outcome
        }
        outcome.echo = changed && matched
        if following, said, !matched {
            // A value of the user's: the desktop shows its own again, and nothing is left to give back.
            writes.original = nil
            writes.lastWritten = nil
        }
        if let t = engine.apply(outcome.echo ? .systemEcho(reading) : .system(reading)) {
            outcome.steps.append(Step(t, cause: cause))
        }
        if changed, !outcome.echo, let manual = mode(of: reading.scheme), manual != engine.state.mode {
            outcome.manualFlip = manual
            if let t = engine.apply(.temporary(TemporaryOverride(mode: manual, expiry: .nextChange))) {
                outcome.steps.append(Step(t, cause: "desktop (manual): \(manual.rawValue)"))
            }
        }
        return outcome
    }
}
