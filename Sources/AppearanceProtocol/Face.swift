import AppearanceCore

/// A way in besides the socket: the D-Bus face (appearanced's own interface and darkman's), plugged into the
/// daemon as the portal backend is (`Outlet`), so the daemon never sees D-Bus. A face is confined to one serial
/// queue (the bus's: AppearanceDaemon's `CrossingFace` carries the daemon's calls there); it never waits on a
/// peer, and what it asks of the daemon waits at most for the daemon's current turn.
public protocol Face: AnyObject {
    /// Starts serving `state` (the published state) with `options`; what it does not hold itself goes through
    /// `requests`, and `report` is told now and whenever what the face serves changes (what `status` shows).
    func start(_ options: FaceOptions, state: AppearanceState, requests: FaceRequests, report: @escaping (String) -> Void)
    /// New options (the config was reloaded).
    func setOptions(_ options: FaceOptions)
    /// The published state after a change (or none: a face emits only what differs from what it last
    /// emitted), and the mode before the change.
    func publish(_ state: AppearanceState, previous: Mode)
    func stop()
}

/// What a face may ask of the daemon: the same reads and writes as the socket's, through the same decisions.
/// Answers come on the face's queue.
public protocol FaceRequests: AnyObject {
    /// The state one app is given (everyone's is the published state, which the face holds).
    func state(for app: String, answer: @escaping (AppearanceState) -> Void)
    /// A write (`set`, `toggle` and their temporary forms), decided as the socket's are and answered once the
    /// save that covers it is durable. `who` names the asker in `log`.
    func write(_ call: Call, app: String?, by who: String, answer: @escaping (Result<AppearanceState, RPCError>) -> Void)
    /// `postpone` and `skip` (and their `cancel`), as the socket's: answered once durable with what the
    /// schedule then says of the next two days.
    func nextChange(_ request: NextChange.Request, by who: String, answer: @escaping (Result<ScheduleInfo, RPCError>) -> Void)
}

/// The config's say in what a face serves.
public struct FaceOptions: Equatable, Sendable {
    /// `darkman-dbus`: serve darkman's `nl.whynothugo.darkman` where darkman itself does not hold it.
    public var darkman: Bool

    public init(darkman: Bool = true) {
        self.darkman = darkman
    }
}
