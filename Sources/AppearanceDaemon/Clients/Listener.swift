import AppearancePosix

/// Why the daemon cannot start; the message says what is at fault and what to do.
public struct StartupError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public var exitCode: Int32

    public init(_ description: String, exitCode: Int32 = 1) { (self.description, self.exitCode) = (description, exitCode) }
}

/// The daemon's listening socket, set up the safe way: a private directory (0700, ours), a lock so two daemons
/// never share a path, a live instance never stolen from, a stale socket replaced, the socket itself 0600.
struct Listener {
    let socket: Descriptor
    let path: String
    /// Held for the daemon's lifetime (nil under systemd); the kernel drops the lock when the process dies.
    private let lock: Descriptor?
    /// Passed by systemd: the socket file is systemd's and stays when the daemon exits.
    let activated: Bool

    var fd: Int32 { socket.raw }

    /// Adopts the socket systemd passed (socket activation); systemd keeps only one instance running.
    static func adopt(_ socket: Descriptor, location: SocketLocation) -> Listener {
        Listener(socket: socket, path: socket.boundPath ?? location.path, lock: nil, activated: true)
    }

    static func open(_ location: SocketLocation) throws(StartupError) -> Listener {
        let (path, dir) = (location.path, location.directory)
        if location.ownsDirectory {
            try ensurePrivateDirectory(dir)
        } else if (try? FileSystem.status(dir))?.kind != .directory {
            throw StartupError("Failed to use socket \(path): directory \(dir) does not exist")
        }

        let lockPath = path + ".lock"
        let lock: Descriptor, locked: Bool
        do throws(Errno) {
            lock = try Descriptor.open(lockPath, [.readWrite, .create, .noFollow], mode: 0o600)
            locked = try lock.tryLock()
        } catch { throw StartupError("Failed to open lock file \(lockPath): \(error.message)") }
        guard locked else {
            throw StartupError("appearanced is already running on \(path) (its lock \(lockPath) is held); use that instance, or stop it first")
        }

        if let st = try? FileSystem.status(path, followLinks: false) {
            guard st.kind == .socket else { throw StartupError("Failed to bind \(path): it exists and is not a socket; move it away") }
            switch probe(path) {
            case .answers: throw StartupError("another server already answers on \(path); refusing to take its socket")
            case .notOurs(let what):
                throw StartupError("Failed to bind \(path): it is \(what), not a stale appearanced socket; move it away")
            case .stale: try? FileSystem.remove(path)  // left by an instance that died
            }
        }

        let socket: Descriptor
        do { socket = try Descriptor.unixStreamSocket(nonBlocking: true, name: path) } catch { throw StartupError("Failed to create socket: \(error)") }
        do {
            try FileSystem.withUmask(0o177) { () throws(Errno) in try socket.bind(to: path) }  // the socket file is created 0600
        } catch {
            if error.code == Errno.nameTooLong { throw StartupError("Failed to bind \(path): path too long for a Unix socket") }
            throw StartupError("Failed to bind \(path): \(error.message)")
        }
        try? FileSystem.setPermissions(path, 0o600)
        do { try socket.listen() } catch {
            try? FileSystem.remove(path)
            throw StartupError("Failed to listen on \(path): \(error.message)")
        }
        return Listener(socket: socket, path: path, lock: lock, activated: false)
    }

    /// Removes the socket file (unless systemd owns it); the lock goes with the process.
    func remove() {
        if !activated { try? FileSystem.remove(path) }
        socket.close()
    }

    enum Probe: Equatable { case stale, answers, notOurs(String) }

    /// Only a stream socket that refuses connections is stale (a full backlog is alive; another type not ours).
    static func probe(_ path: String) -> Probe {
        guard let s = try? Descriptor.unixStreamSocket(nonBlocking: true, name: path) else { return .answers }
        defer { s.close() }
        do {
            try s.connect(to: path)
            return .answers
        } catch {
            switch error.code {
            case Errno.connectionRefused, Errno.noSuchFile: return .stale
            case Errno.wrongSocketType: return .notOurs("a socket of another type (datagram or seqpacket)")
            case Errno.wouldBlock, Errno.inProgress: return .answers
            default: return .notOurs("a socket that cannot be probed (\(error.message))")
            }
        }
    }

    /// Creates `dir` 0700, or checks that an existing one is a directory we own and tightens it to 0700.
    static func ensurePrivateDirectory(_ dir: String) throws(StartupError) {
        let parent = FileSystem.directory(of: dir)
        do { try FileSystem.makeDirectories(parent, permissions: 0o700) } catch { throw StartupError("Failed to create \(parent): \(error)") }
        do { try FileSystem.makeDirectory(dir, permissions: 0o700) } catch where error.code != Errno.exists {
            throw StartupError("Failed to create \(dir): \(error.message)")
        } catch {}
        let st: FileStatus
        do { st = try FileSystem.status(dir, followLinks: false) } catch { throw StartupError("Failed to stat \(dir): \(error.message)") }
        guard st.kind == .directory else { throw StartupError("Refusing to use \(dir): it is not a directory (a symlink?)") }
        guard st.owner == Posix.userID else { throw StartupError("Refusing to use \(dir): it belongs to uid \(st.owner), not \(Posix.userID)") }
        if st.permissions & 0o077 != 0 { try? FileSystem.setPermissions(dir, 0o700) }
    }
}
