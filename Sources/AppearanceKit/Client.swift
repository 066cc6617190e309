import AppearanceCore
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The async client of appearanced, for apps.
///
///     let client = try await AppearanceClient()
///     print(try await client.state().mode)          // dark or light
///     try await client.set(.dark)
///     for try await change in client.changes() { … }
///
/// Requests (`state`, `status`, `set`, `toggle`) share one connection, opened by `init` and used one request
/// at a time on a private Dispatch queue, so no Swift concurrency thread ever blocks on the socket. When the
/// daemon has restarted since the last request, the next request connects again by itself.
/// `changes()` opens a connection of its own for each sequence; see `AppearanceChanges`.
///
/// Every error is an `AppearanceError`, whose description says what to do.
public final class AppearanceClient: Sendable {
    /// The socket this client talks to.
    public let socketPath: String
    /// The app this client speaks for: `state()`, `set`, `toggle` and `changes()` concern its own mode.
    public let app: String?
    /// The bound, in seconds, on connecting and on each request, and on the reply to `subscribe` in
    /// `changes()` (never on waiting for changes): past it the daemon counts as not answering.
    public let timeout: Double
    private let requests: RequestLine

    /// Connects to `socketPath`, or to the socket every client and the daemon agree on
    /// (`$APPEARANCED_SOCKET`, else `$XDG_RUNTIME_DIR/appearanced/socket`, … as in docs/protocol.md).
    /// Throws `.daemonNotRunning` when nothing answers there, `.notAnswering` when the daemon does not
    /// answer within `timeout` seconds (stopped or stuck).
    public init(socketPath: String? = nil, app: String? = nil,
                timeout: Double = AppearanceConnection.defaultTimeout) async throws(AppearanceError) {
        let path = SocketLocation.resolve(explicit: socketPath).path
        (self.socketPath, self.app, self.timeout) = (path, app, timeout)
        requests = RequestLine(path: path, app: app, timeout: timeout)
        try await requests.perform(idempotent: true) { _ throws(AppearanceError) in () }
    }

    /// The current state: the `get` method.
    public func state() async throws(AppearanceError) -> AppearanceState {
        try await requests.perform(idempotent: true) { c throws(AppearanceError) in try c.state() }
    }

    /// The state plus the daemon's facts (system detail, default mode, subscribers, protocol version,
    /// version, pid): the `status` method.
    public func status() async throws(AppearanceError) -> StatusInfo {
        try await requests.perform(idempotent: true) { c throws(AppearanceError) in try c.status() }
    }

    /// Sets the user's override: the `set` method with `{"override": …}`. `.system` goes back to following the
    /// desktop. Returns the state after the change; the daemon has saved the override when this returns.
    @discardableResult
    public func set(_ override: Override) async throws(AppearanceError) -> AppearanceState {
        try await requests.perform(idempotent: true) { c throws(AppearanceError) in try c.set(override) }
    }

    /// Flips the mode, atomically in the daemon: the `toggle` method. Returns the state after the change.
    @discardableResult
    public func toggle() async throws(AppearanceError) -> AppearanceState {
        try await requests.perform(idempotent: false) { c throws(AppearanceError) in try c.toggle() }
    }

    /// Palette tokens resolved for the current appearance, or for `mode` and `contrast`: the `resolve` method.
    /// An unknown token is `.rejected`, with a message naming it (never a made-up color).
    public func resolve(_ tokens: [String], mode: Mode? = nil, contrast: Contrast? = nil) async throws(AppearanceError) -> ResolvedPalette {
        try await requests.perform(idempotent: true) { c throws(AppearanceError) in try c.resolve(tokens, mode: mode, contrast: contrast) }
    }

    /// The whole palette resolved for the current appearance, or for `mode` and `contrast`: the `palette` method.
    public func palette(mode: Mode? = nil, contrast: Contrast? = nil) async throws(AppearanceError) -> ResolvedPalette {
        try await requests.perform(idempotent: true) { c throws(AppearanceError) in try c.palette(mode: mode, contrast: contrast) }
    }

    /// The current state, then every change, on a connection of its own: the `subscribe` method and the
    /// `changed` notifications that follow it. See `AppearanceChanges` for the elements, reconnection and errors.
    ///
    /// - `traits: true` also yields `.changed` when contrast, reduced motion or the accent color change (the
    ///   mode may then be the same as `previous`).
    /// - `palette: true` yields `.paletteChanged(palette)` after the initial state and whenever the resolved
    ///   palette changes (mode, contrast, accent, or a palette file reloaded by the daemon): re-apply colors there.
    ///
    /// With `reconnect: false` the sequence ends by throwing the `AppearanceError` that broke the connection,
    /// instead of reporting `.connectionLost` and trying again.
    public func changes(traits: Bool = false, palette: Bool = false, reconnect: Bool = true) -> AppearanceChanges {
        AppearanceChanges(socketPath: socketPath, reconnect: reconnect, interest: Interest(traits: traits, palette: palette, app: app),
                          timeout: timeout)
    }
}

/// The request connection: a blocking `AppearanceConnection` confined to a serial queue.
final class RequestLine: @unchecked Sendable {
    // `connection` is only read and written on `queue`.
    private let queue = DispatchQueue(label: "AppearanceKit.requests")
    private let path: String
    private var connection: AppearanceConnection?

    let app: String?
    let timeout: Double
    init(path: String, app: String?, timeout: Double) {
        (self.path, self.app, self.timeout) = (path, app, timeout)
    }

    /// A live connection: the current one, or a new one when the daemon closed it (it restarted).
    private func open() throws(AppearanceError) -> AppearanceConnection {
        if let c = connection, !c.isClosedByPeer { return c }
        connection = nil
        let c = try AppearanceConnection(socketPath: path, timeout: timeout, app: app)
        connection = c
        return c
    }

    /// Runs `body` on the queue. A request that may be repeated safely is sent once more, on a new connection,
    /// when the connection it used turns out to have been lost.
    func perform<T: Sendable>(idempotent: Bool,
                              _ body: @escaping @Sendable (AppearanceConnection) throws(AppearanceError) -> T)
        async throws(AppearanceError) -> T {
        let result: Result<T, AppearanceError> = await withCheckedContinuation { done in
            queue.async {
                done.resume(returning: Result { () throws(AppearanceError) -> T in
                    let reused = self.connection != nil
                    do throws(AppearanceError) {
                        return try body(try self.open())
                    } catch {
                        switch error {
                        case .connectionLost:
                            self.connection = nil
                            if idempotent && reused { return try body(try self.open()) }
                        case .protocolError, .notAnswering:
                            // A reply may still come later on this connection: it must not be read as the next one's.
                            self.connection = nil
                        case .daemonNotRunning, .rejected, .untrustedSocket:
                            break
                        }
                        throw error
                    }
                })
            }
        }
        return try result.get()
    }
}
