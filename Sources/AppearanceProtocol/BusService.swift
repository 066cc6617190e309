import AppearanceCore

/// A way in besides the socket: a D-Bus service (appearanced's own interface and darkman's), plugged in as the
/// portal backend is (`Outlet`); confined to the bus's queue (`BusServiceProxy` carries the daemon's calls there).
public protocol BusService: AnyObject {
    /// Starts serving the published `state`; it asks `requests` for the rest, and tells `report` what it serves.
    func start(_ options: BusServiceOptions, state: AppearanceState, requests: BusServiceRequests, report: @escaping (String) -> Void)
    /// New options (the config was reloaded).
    func setOptions(_ options: BusServiceOptions)
    /// The published state after a change, and the mode before it (a service emits only what differs).
    func publish(_ state: AppearanceState, previous: Mode)
    func stop()
}

/// What a service may ask of the daemon: the socket's reads and writes, by the same decisions (answered on its queue).
public protocol BusServiceRequests: AnyObject {
    /// The state one app is given (everyone's is the published state, which the service holds).
    func state(for app: String, answer: @escaping (AppearanceState) -> Void)
    /// A write (`set`, `toggle` and their temporary forms), decided as the socket's, answered once durable.
    func write(_ call: Call, app: String?, by who: String, answer: @escaping (Result<AppearanceState, RPCError>) -> Void)
    /// `postpone` and `skip` (and their `cancel`), as the socket's: answered once durable with the next two days.
    func nextChange(_ request: NextChange.Request, by who: String, answer: @escaping (Result<ScheduleInfo, RPCError>) -> Void)
}

/// The config's say in what a service serves.
public struct BusServiceOptions: Equatable, Sendable {
    /// `darkman-dbus`: serve darkman's `nl.whynothugo.darkman` where darkman itself does not hold it.
    public var darkman: Bool

    public init(darkman: Bool = true) { self.darkman = darkman }
}
