/// Every input the merge rule looks at.
public struct Inputs: Equatable, Sendable {
    public var system: SystemScheme
    public var override: Override
    /// What `no-preference` and `unavailable` mean (config `default-mode`, light unless set).
    public var defaultMode: Mode
    /// The desktop's traits: published as they are; the merge rule does not look at them.
    public var traits: Traits
    /// The user's temporary word (`set MODE --until-next` / `--for`): above the persisted override.
    public var temporary: TemporaryOverride?
    /// What the schedule says now; nil without a schedule.
    public var schedule: Mode?
    /// What the ambient light sensor says now (past a threshold for the delay); nil: no sensor, or in the band.
    public var light: Mode?
    /// The power rule's mode while on battery; nil on AC, or without the rule.
    public var power: Mode?
    /// The automatic layer (power, light sensor, schedule) decides before the desktop (`[schedule] over-desktop`).
    public var scheduleAboveDesktop: Bool
    /// Per-app overrides (app id → mode): the top input, for that app only.
    public var apps: [String: Mode] = [:]
    /// The user's word on the next automatic change (`postpone`, `skip`): for the schedule's plan, saved with the rest.
    public var nextChange: NextChange?

    public init(system: SystemScheme, override: Override, defaultMode: Mode, traits: Traits = .unavailable,
                temporary: TemporaryOverride? = nil, schedule: Mode? = nil, scheduleAboveDesktop: Bool = false) {
        (self.system, self.override, self.defaultMode, self.traits) = (system, override, defaultMode, traits)
        (self.temporary, self.schedule, self.scheduleAboveDesktop) = (temporary, schedule, scheduleAboveDesktop)
    }
}

/// An override that ends by itself: at the next automatic change, or at a time.
public struct TemporaryOverride: Equatable, Sendable {
    public enum Expiry: Equatable, Sendable {
        case nextChange
        /// Unix time, seconds.
        case at(Int64)
    }

    public var mode: Mode
    public var expiry: Expiry

    public init(mode: Mode, expiry: Expiry) { (self.mode, self.expiry) = (mode, expiry) }
}

public struct Resolution: Equatable, Sendable {
    public var mode: Mode
    public var source: Source

    public init(mode: Mode, source: Source) { (self.mode, self.source) = (mode, source) }
}

/// The merge rule for one app: its own override first, then the rule for everyone.
public func resolve(_ inputs: Inputs, app: String?) -> Resolution {
    if let app, let m = inputs.apps[app] { return Resolution(mode: m, source: .app) }
    return resolve(inputs)
}

/// What `toggle` for an app sets: the opposite of the app's mode, or nil when the app gets that anyway.
public func toggledAppOverride(_ inputs: Inputs, app: String) -> Mode? {
    let target = resolve(inputs, app: app).mode.opposite
    return resolve(inputs).mode == target ? nil : target
}

extension Inputs {
    /// The automatic layer: the first of the power rule (on battery), the light sensor and the schedule that has a value.
    public var automatic: Resolution? {
        if let p = power { return Resolution(mode: p, source: .power) }
        if let l = light { return Resolution(mode: l, source: .lightSensor) }
        return schedule.map { Resolution(mode: $0, source: .schedule) }
    }
}

/// The merge rule (docs/protocol.md, "The merge rule"): the first input with a value decides.
public func resolve(_ inputs: Inputs) -> Resolution {
    if let t = inputs.temporary { return Resolution(mode: t.mode, source: .temporary) }
    if inputs.override != .system {
        return Resolution(mode: inputs.override == .dark ? .dark : .light, source: .override)
    }
    if inputs.scheduleAboveDesktop, let a = inputs.automatic { return a }
    if inputs.system == .dark || inputs.system == .light {
        return Resolution(mode: inputs.system == .dark ? .dark : .light, source: .system)
    }
    return inputs.automatic ?? Resolution(mode: inputs.defaultMode, source: .default)
}

/// The override that `toggle` sets: the opposite of the current mode, or `.system` when following gives that anyway.
public func toggledOverride(_ inputs: Inputs) -> Override {
    let target = resolve(inputs).mode.opposite
    var following = inputs
    (following.override, following.temporary) = (.system, nil)
    return resolve(following).mode == target ? .system : Override(target)
}
