/// Every input the merge rule looks at. Per-app, temporary and scheduled overrides will be more fields
/// here, and more cases in `resolve`; callers do not change.
public struct Inputs: Equatable, Sendable {
    public var system: SystemScheme
    public var override: Override
    /// What `no-preference` and `unavailable` mean (config `default-mode`, light unless set).
    public var defaultMode: Mode
    /// The desktop's traits: published as they are; the merge rule does not look at them.
    public var traits: Traits

    public init(system: SystemScheme, override: Override, defaultMode: Mode, traits: Traits = .unavailable) {
        self.system = system
        self.override = override
        self.defaultMode = defaultMode
        self.traits = traits
    }
}

public struct Resolution: Equatable, Sendable {
    public var mode: Mode
    public var source: Source

    public init(mode: Mode, source: Source) {
        self.mode = mode
        self.source = source
    }
}

/// The merge rule: the user's override wins, else the system's explicit choice, else the default.
public func resolve(_ inputs: Inputs) -> Resolution {
    switch inputs.override {
    case .light: return Resolution(mode: .light, source: .override)
    case .dark: return Resolution(mode: .dark, source: .override)
    case .system: break
    }
    switch inputs.system {
    case .dark: return Resolution(mode: .dark, source: .system)
    case .light: return Resolution(mode: .light, source: .system)
    case .noPreference, .unavailable: return Resolution(mode: inputs.defaultMode, source: .default)
    }
}

/// The override that `toggle` sets: the opposite of the current mode, except that when the opposite is what
/// following the system gives anyway, the override goes back to `.system` (no stale override is left behind).
public func toggledOverride(_ inputs: Inputs) -> Override {
    let target = resolve(inputs).mode.opposite
    var following = inputs
    following.override = .system
    return resolve(following).mode == target ? .system : Override(target)
}
