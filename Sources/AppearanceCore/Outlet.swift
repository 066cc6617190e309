/// Where the published state goes besides the socket: the portal's Settings backend, for GTK, Qt and browsers to follow.
public protocol Outlet: AnyObject {
    /// Starts serving under `policy`; `report` is told now and whenever it changes what the outlet serves.
    func start(policy: BackendPolicy, report: @escaping (OutletStatus) -> Void)
    /// A new policy (the config was reloaded).
    func setPolicy(_ policy: BackendPolicy)
    /// The values to serve, after every change of the published state or of the palette's accent.
    func publish(_ values: ServedValues)
    func stop()
}

/// `portal-backend` in the config.
public enum BackendPolicy: String, Sendable, CaseIterable {
    /// Serve only where no other backend provides `color-scheme` for the current desktop.
    case auto
    case on
    /// Never serve (the bus name is still answered, with no keys, so the portal never waits for it).
    case off
}

/// What the outlet serves now, and why: `status` shows it.
public struct OutletStatus: Equatable, Sendable {
    /// The portal's `color-scheme` (and the palette's accent) is appearanced's own value: not read back.
    public var serving: Bool
    public var detail: String

    public init(serving: Bool, detail: String) { (self.serving, self.detail) = (serving, detail) }
}

/// The keys of `org.freedesktop.appearance` the outlet serves.
public struct ServedValues: Equatable, Sendable {
    public var mode: Mode
    /// The palette's `accent` token; nil when the palette has none (the key is then not served).
    public var accent: Color?

    public init(mode: Mode, accent: Color?) { (self.mode, self.accent) = (mode, accent) }
}
