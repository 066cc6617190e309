import AppearancePosix
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
    /// The socket is not safely the user's own (another user's, or in a directory others may write to):
    /// not connected to, because a fake daemon could be listening there.
    case untrustedSocket(socket: String, reason: String)
    case protocolError(String)

    public var description: String {
        switch self {
        case .daemonNotRunning(let socket, let reason):
            // The unit and a bare `appearanced` make the default socket only: for another, say how to make it.
            guard socket == SocketLocation.resolve(explicit: nil).path else {
                return "appearanced is not running on \(socket) (\(reason)). Start one there with 'appearanced --socket \(socket)'."
            }
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
        case .untrustedSocket(let socket, let reason) where reason == SocketLocation.notASocket:
            let what = SocketLocation.describeNonSocket(socket)
            return "\(socket) is \(what): give the daemon's socket (by default $XDG_RUNTIME_DIR/appearanced/socket)"
        case .untrustedSocket(let socket, let reason):
            return "refusing to use \(socket): \(reason). Another user could be listening there; "
                + "use a socket in a directory only you can write to (XDG_RUNTIME_DIR)."
        case .protocolError(let m):
            return "protocol error: \(m)"
        }
    }
}
