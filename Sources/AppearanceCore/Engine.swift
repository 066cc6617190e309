/// The published state: what `get` returns and what every notification carries.
public struct AppearanceState: Equatable, Sendable {
    public var mode: Mode
    public var system: SystemScheme
    public var override: Override
    public var source: Source
    /// The desktop's contrast, reduced motion and accent color, as the sentry last read them.
    public var traits: Traits
    /// The temporary override in force, if any.
    public var temporary: TemporaryOverride? = nil
    /// Set in a state given for one app: its id, and the mode and source everyone else has.
    public var app: String? = nil
    public var globalMode: Mode? = nil
    public var globalSource: Source? = nil
    /// Increases by one on every change of the fields above within one daemon instance (it orders, it does not count).
    public var seq: UInt64
    /// Random per daemon start: a different value means the daemon restarted and seq started again.
    public var instance: String
    /// Only in a `get` reply, while the config file on disk is not in force: why, with the file and line.
    public var configProblem: String? = nil

    public var darkMode: Bool { mode.isDark }

    public init(mode: Mode, system: SystemScheme, override: Override, source: Source, traits: Traits = .unavailable,
                temporary: TemporaryOverride? = nil, seq: UInt64, instance: String) {
        (self.mode, self.system, self.override, self.source) = (mode, system, override, source)
        (self.traits, self.temporary, self.seq, self.instance) = (traits, temporary, seq, instance)
    }
}

/// What happens to the world.
public enum Event: Equatable, Sendable {
    case system(SystemReading)
    /// A reading that is the echo of appearanced's own write to the desktop: no automatic change.
    case systemEcho(SystemReading)
    /// A persisted override: it also ends a temporary one (the user's newest word).
    case override(Override)
    case defaultMode(Mode)
    /// A temporary override set, or ended (nil: expired or cleared).
    case temporary(TemporaryOverride?)
    /// What the schedule says now (nil: no schedule), and whether it ranks above the desktop.
    case schedule(Mode?, aboveDesktop: Bool)
    /// An app's override set, or removed (nil).
    case app(String, Mode?)
    /// The user's word on the next automatic change, given or ended (nil); the schedule is planned again with it.
    case nextChange(NextChange?)
    /// What the light sensor says now (nil: no sensor, or between the thresholds).
    case light(Mode?)
    /// The power rule's mode (nil: on AC, or no rule).
    case power(Mode?)
}

/// A change of the published state.
public struct Transition: Equatable, Sendable {
    public var state: AppearanceState
    public var previous: AppearanceState
    public var modeChanged: Bool { state.mode != previous.mode }
    public var traitsChanged: Bool { state.traits != previous.traits }

    public init(state: AppearanceState, previous: AppearanceState) { (self.state, self.previous) = (state, previous) }
}

/// The reducer: owns the inputs and the published state; `apply` returns a transition only for a real change.
public struct Engine: Sendable {
    public private(set) var inputs: Inputs
    public private(set) var state: AppearanceState
    /// The sentry's explanation of the last reading ("portal v1", "no session bus", ...).
    public private(set) var systemDetail: String

    public init(inputs: Inputs, instance: String, systemDetail: String = "not read yet") {
        (self.inputs, self.systemDetail) = (inputs, systemDetail)
        let r = resolve(inputs)
        state = AppearanceState(mode: r.mode, system: inputs.system, override: inputs.override,
                                source: r.source, traits: inputs.traits, temporary: inputs.temporary, seq: 0, instance: instance)
    }

    /// The override `toggle` would set now.
    public var toggleTarget: Override { toggledOverride(inputs) }

    /// The app override `toggle` for `app` would set now (nil: remove it).
    public func toggleTarget(app: String) -> Mode? { toggledAppOverride(inputs, app: app) }

    /// The published state as one app sees it (its mode and source, with everyone's beside them); nil: everyone's.
    public func state(for app: String?) -> AppearanceState {
        guard let app else { return state }
        var s = state
        let r = resolve(inputs, app: app)
        (s.app, s.globalMode, s.globalSource) = (app, state.mode, state.source)
        (s.mode, s.source) = (r.mode, r.source)
        return s
    }

    public mutating func apply(_ event: Event) -> Transition? {
        var next = inputs
        let previousApps = inputs.apps
        switch event {
        case .system(let reading), .systemEcho(let reading):
            systemDetail = reading.detail
            (next.system, next.traits) = (reading.scheme, reading.traits)
            // The desktop changing its own value (not coming or going, not an echo) is an automatic change.
            let said: Set<SystemScheme> = [.dark, .light, .noPreference]
            if case .system = event, said.contains(inputs.system), said.contains(reading.scheme),
               inputs.system != reading.scheme, next.temporary?.expiry == .nextChange {
                next.temporary = nil
            }
        case .override(let o):
            (next.override, next.temporary) = (o, nil)
        case .defaultMode(let m): next.defaultMode = m
        case .temporary(let t): next.temporary = t
        case .app(let id, let m): next.apps[id] = m
        case .schedule(let m, let above): (next.schedule, next.scheduleAboveDesktop) = (m, above)
        case .nextChange(let n): next.nextChange = n
        case .light(let m): next.light = m
        case .power(let m): next.power = m
        }
        // A change of the automatic layer's mode is an automatic change: it ends a temporary override `until-next`.
        if let old = inputs.automatic?.mode, let new = next.automatic?.mode, old != new, next.temporary?.expiry == .nextChange {
            next.temporary = nil
        }
        inputs = next
        let r = resolve(next)
        var candidate = state
        (candidate.mode, candidate.source) = (r.mode, r.source)
        (candidate.system, candidate.override, candidate.traits, candidate.temporary) = (next.system, next.override, next.traits, next.temporary)
        // An app override changes no global field, but it is a change of state: it gets its own seq.
        guard candidate != state || next.apps != previousApps else { return nil }
        candidate.seq = state.seq + 1
        let previous = state
        state = candidate
        return Transition(state: candidate, previous: previous)
    }
}
