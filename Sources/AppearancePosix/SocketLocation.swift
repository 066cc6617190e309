/// Where the daemon listens and every client connects: `--socket PATH`, `$APPEARANCED_SOCKET`,
/// `$XDG_RUNTIME_DIR/appearanced/socket`, else under `/run/user/$UID` or `/tmp`, with a warning.
public struct SocketLocation: Equatable, Sendable {
    public var path: String
    /// Set when the path is a fallback the user should know about.
    public var warning: String?
    /// True when the directory is ours to create and lock down (0700); false for a path the user named.
    public var ownsDirectory: Bool

    public var directory: String { FileSystem.directory(of: path) }

    /// The status file for prompts, next to the socket.
    public var modeFilePath: String { directory + "/mode" }

    public init(path: String, warning: String? = nil, ownsDirectory: Bool) {
        (self.path, self.warning, self.ownsDirectory) = (path, warning, ownsDirectory)
    }

    public static func resolve(explicit: String? = nil,
                               environment: (String) -> String? = Posix.environment,
                               uid: UInt32 = Posix.userID,
                               runUserDirectory: (UInt32) -> String? = SocketLocation.runUserDirectory) -> SocketLocation {
        if let explicit, !explicit.isEmpty { return SocketLocation(path: explicit, ownsDirectory: false) }
        if let (path, owns) = fromEnvironment(environment) { return SocketLocation(path: path, ownsDirectory: owns) }
        if let run = runUserDirectory(uid) {
            return SocketLocation(path: run + "/appearanced/socket",
                                  warning: "XDG_RUNTIME_DIR is not set; using \(run)", ownsDirectory: true)
        }
        return SocketLocation(path: "/tmp/appearanced-\(uid)/socket",
                              warning: "XDG_RUNTIME_DIR is not set and /run/user/\(uid) is not usable; using /tmp/appearanced-\(uid)",
                              ownsDirectory: true)
    }

    /// The path the environment names and whether its directory is ours, or nil (`resolve` without a warning).
    public static func fromEnvironment(_ environment: (String) -> String? = Posix.environment) -> (path: String, ownsDirectory: Bool)? {
        if let env = environment("APPEARANCED_SOCKET") { return (env, false) }
        if let runtime = environment("XDG_RUNTIME_DIR") { return (runtime + "/appearanced/socket", true) }
        return nil
    }

    /// Why a client must not connect to `path` (another user's, or in a directory others may write to), or nil.

    public static func untrustedReason(_ path: String, uid: UInt32 = Posix.userID) -> String? {
        let dir = FileSystem.directory(of: path)
        guard let socket = try? FileSystem.status(path, followLinks: false) else { return nil }
        guard socket.kind == .socket else { return notASocket }
        guard socket.owner == uid else { return "the socket belongs to uid \(socket.owner), not to uid \(uid)" }
        guard let st = try? FileSystem.status(dir) else { return nil }
        guard st.owner == uid else { return "its directory \(dir) belongs to uid \(st.owner), not to uid \(uid)" }
        guard st.permissions & 0o022 == 0 else {
            return "its directory \(dir) may be written by \(st.permissions & 0o002 != 0 ? "anyone" : "its group") (mode \(String(st.permissions & 0o777, radix: 8)))"
        }
        return nil
    }

    /// What is at `path` when it is not a socket, for the message about a wrong `--socket`.
    public static func describeNonSocket(_ path: String) -> String {
        switch (try? FileSystem.status(path, followLinks: false))?.kind {
        case .directory?: "a directory, not a socket"
        case .regular?: "a regular file, not a socket"
        default: "not a socket"
        }
    }

    /// What `untrustedReason` says of a path that exists but is not a socket at all (a wrong `--socket`).
    public static let notASocket = "it is not a socket"

    /// `/run/user/UID` when it is a real directory owned by `uid`.
    public static func runUserDirectory(_ uid: UInt32) -> String? {
        let path = "/run/user/\(uid)"
        guard let st = try? FileSystem.status(path, followLinks: false), st.kind == .directory, st.owner == uid else { return nil }
        return path
    }
}
