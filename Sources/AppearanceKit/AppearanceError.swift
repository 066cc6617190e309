import AppearanceProtocol

/// What went wrong talking to appearanced, with a message that says what to do.
public enum AppearanceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing answers on the socket: the daemon is not running (or listens elsewhere).
    case daemonNotRunning(socket: String, reason: String)
    /// The daemon understood the request and refused it; `error.message` says why.
    case rejected(RPCError)
    /// The connection broke, or the daemon sent something this client cannot read.
    case connectionLost(socket: String, reason: String)
    /// The daemon did not answer within the connection's timeout: it is stopped (SIGSTOP), wedged, or not
    /// accepting connections.
    case notAnswering(socket: String, seconds: Double)
    case protocolError(String)

    public var description: String {
        switch self {
        case .daemonNotRunning(let socket, let reason):
            return "appearanced is not running: cannot connect to \(socket) (\(reason)). "
                + "Start it with 'systemctl --user start appearanced.socket', or run 'appearanced'."
        case .rejected(let e):
            return e.message
        case .connectionLost(let socket, let reason):
            return "lost the connection to appearanced on \(socket) (\(reason))"
        case .notAnswering(let socket, let seconds):
            let shown = seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
            return "appearanced did not answer on \(socket) within \(shown) s: it may be stopped or stuck. "
                + "Check it with 'systemctl --user status appearanced', or restart it."
        case .protocolError(let m):
            return "protocol error: \(m)"
        }
    }
}
