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
/// Requests share one connection, used one at a time on a private Dispatch queue (no Swift concurrency thread
/// blocks on the socket), connected again by itself after the daemon restarted. `changes()` opens a connection
/// of its own for each sequence; see `AppearanceChanges`. Every error is an `AppearanceError`.
public final class AppearanceClient: @unchecked Sendable {
    /// The socket this client talks to.
    public let socketPath: String
    /// The app this client speaks for: `state()`, `set`, `toggle` and `changes()` concern its own mode.
    public let app: String?
    /// The bound, in seconds, on connecting, on each request and on the reply to `subscribe` in `changes()`.
    public let timeout: Double
    private let queue = DispatchQueue(label: "AppearanceKit.requests")
    /// Only read and written on `queue`.
    private var connection: AppearanceConnection?

    /// Connects to `socketPath`, or to the socket every client and the daemon agree on (docs/protocol.md).
    /// Throws `.daemonNotRunning` when nothing answers there, `.notAnswering` when the daemon does not
    /// answer within `timeout` seconds (stopped or stuck).
    public init(socketPath: String? = nil, app: String? = nil,
                timeout: Double = AppearanceConnection.defaultTimeout) async throws(AppearanceError) {
        (self.socketPath, self.app, self.timeout) = (SocketLocation.resolve(explicit: socketPath).path, app, timeout)
        try await perform(idempotent: true) { _ throws(AppearanceError) in () }
    }

    /// The current state: the `get` method.
    public func state() async throws(AppearanceError) -> AppearanceState {
        try await perform(idempotent: true) { c throws(AppearanceError) in try c.state() }
    }

    /// The state plus the daemon's facts: the `status` method.
    public func status() async throws(AppearanceError) -> StatusInfo {
        try await perform(idempotent: true) { c throws(AppearanceError) in try c.status() }
    }

    /// Sets the user's override (`.system`: follow the desktop again): the `set` method. Returns the state
    /// after the change, saved by the daemon.
    @discardableResult
    public func set(_ override: Override) async throws(AppearanceError) -> AppearanceState {
        try await perform(idempotent: true) { c throws(AppearanceError) in try c.set(override) }
    }

    /// Flips the mode, atomically in the daemon: the `toggle` method. Returns the state after the change.
    @discardableResult
    public func toggle() async throws(AppearanceError) -> AppearanceState {
        try await perform(idempotent: false) { c throws(AppearanceError) in try c.toggle() }
    }

    /// Palette tokens resolved for the current appearance, or for `mode` and `contrast`: the `resolve` method.
    /// An unknown token is `.rejected`, with a message naming it (never a made-up color).
    public func resolve(_ tokens: [String], mode: Mode? = nil, contrast: Contrast? = nil) async throws(AppearanceError) -> ResolvedPalette {
        try await perform(idempotent: true) { c throws(AppearanceError) in
            try c.resolve(tokens, mode: mode, contrast: contrast)
        }
    }

    /// The whole palette resolved for the current appearance, or for `mode` and `contrast`: the `palette` method.
    public func palette(mode: Mode? = nil, contrast: Contrast? = nil) async throws(AppearanceError) -> ResolvedPalette {
        try await perform(idempotent: true) { c throws(AppearanceError) in
            try c.palette(mode: mode, contrast: contrast)
        }
    }

    /// The current state, then every change, on a connection of its own (see `AppearanceChanges`). `traits`:
    /// also contrast, reduced motion and accent changes (`.changed` with the same mode); `palette`:
    /// `.paletteChanged` after the initial state and whenever the resolved palette changes. With `reconnect:
    /// false` the sequence throws the error that broke the connection instead of reconnecting.
    public func changes(traits: Bool = false, palette: Bool = false, reconnect: Bool = true) -> AppearanceChanges {
        AppearanceChanges(socketPath: socketPath, reconnect: reconnect, interest: Interest(traits: traits, palette: palette, app: app),
                          timeout: timeout)
    }

    /// A live connection: the current one, or a new one when the daemon closed it (it restarted).
    private func open() throws(AppearanceError) -> AppearanceConnection {
        if let c = connection, !c.isClosedByPeer { return c }
        connection = nil
        let c = try AppearanceConnection(socketPath: socketPath, timeout: timeout, app: app)
        connection = c
        return c
    }

    /// Runs `body` on the queue. A request that may be repeated safely is sent once more, on a new connection,
    /// when the connection it used turns out to have been lost.
    private func perform<T: Sendable>(idempotent: Bool,
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
