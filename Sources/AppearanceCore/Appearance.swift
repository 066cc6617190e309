/// The vocabulary of appearanced: what the system says, what the user chose, and what that makes the UI (pure).

/// The effective appearance every client sees.
public enum Mode: String, Sendable, CaseIterable {
    case light, dark

    public var opposite: Mode { self == .light ? .dark : .light }
    public var isDark: Bool { self == .dark }
}

/// What the desktop says, as read by the sentry.
public enum SystemScheme: String, Sendable, CaseIterable {
    case dark
    case light
    /// The portal answered 0 (or something we could not use): no preference (GNOME's "light" arrives so).
    case noPreference = "no-preference"
    /// Nobody answered: no portal, no session bus.
    case unavailable

    /// The portal's `color-scheme`: 0 no preference, 1 dark, 2 light; nil for any other (reported, taken as no preference).
    public init?(portalValue: UInt32) {
        guard portalValue < 3 else { return nil }
        self = [.noPreference, .dark, .light][Int(portalValue)]
    }
}

/// The user's persisted switch. `.system` is the way back to following the desktop.
public enum Override: String, Sendable, CaseIterable {
    case system, light, dark

    public init(_ mode: Mode) { self = mode == .dark ? .dark : .light }
}

/// Why the mode is what it is.
public enum Source: String, Sendable, CaseIterable {
    /// The app's own override (only in a state given for an app).
    case app
    /// A temporary override (`set MODE --until-next` / `--for`).
    case temporary
    case override
    case system
    /// The configured schedule (sunrise/sunset or fixed times).
    case schedule
    /// The ambient light sensor (`[light-sensor]`).
    case lightSensor = "light-sensor"
    /// The power rule while on battery (`[power] on-battery`).
    case power
    case `default`
}

/// One reading from the sentry: the scheme and the traits, and where the scheme came from ("portal v2", for `status`).
public struct SystemReading: Equatable, Sendable {
    public var scheme: SystemScheme
    public var detail: String
    /// Contrast, reduced motion and accent color; `.unavailable` when the portal does not say.
    public var traits: Traits

    public init(_ scheme: SystemScheme, detail: String, traits: Traits = .unavailable) {
        (self.scheme, self.detail, self.traits) = (scheme, detail, traits)
    }
}
