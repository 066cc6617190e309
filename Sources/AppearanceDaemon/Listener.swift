#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AppearanceProtocol

/// Why the daemon cannot start; the message says what is at fault and what to do.
public struct StartupError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public var exitCode: Int32

    public init(_ description: String, exitCode: Int32 = 1) {
        self.description = description
        self.exitCode = exitCode
    }
}

/// The daemon's listening socket, set up the safe way:
/// a private directory (0700, ours), a lock so two daemons never share a path, a live instance is
/// never stolen from, a stale socket is replaced, and the socket itself is 0600.
struct Listener {
    let fd: Int32
    let path: String
    private let lockFD: Int32
    /// Passed by systemd: the socket file is systemd's and stays when the daemon exits.
    let activated: Bool

    /// Adopts the socket systemd passed (socket activation); systemd keeps only one instance running.
    static func adopt(_ fd: Int32, location: SocketLocation) -> Listener {
        var addr = sockaddr_un()
        var len = socklen_t(MemoryLayout<sockaddr_un>.size)
        let path = withUnsafeMutablePointer(to: &addr) { p -> String? in
            let ok = p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) == 0 }
            guard ok else { return nil }
            return withUnsafeBytes(of: &p.pointee.sun_path) { raw in
                let bytes = raw.prefix { $0 != 0 }
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
        }
        return Listener(fd: fd, path: path ?? location.path, lockFD: -1, activated: true)
    }

    static func open(_ location: SocketLocation) throws(StartupError) -> Listener {
        let path = location.path
        let dir = location.directory
        if location.ownsDirectory {
            try ensurePrivateDirectory(dir)
        } else {
            var st = stat()
            guard stat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
                throw StartupError("Failed to use socket \(path): directory \(dir) does not exist")
            }
        }

        // The lock is held for the daemon's lifetime; the kernel drops it when the process dies.
        let lockPath = path + ".lock"
        let lockFD = Glibc.open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard lockFD >= 0 else { throw StartupError("Failed to open lock file \(lockPath): \(Errno(errno, "open"))") }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else {
            close(lockFD)
            throw StartupError("appearanced is already running on \(path) (its lock \(lockPath) is held); "
                + "use that instance, or stop it first")
        }

        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFSOCK else {
                close(lockFD)
                throw StartupError("Failed to bind \(path): it exists and is not a socket; move it away")
            }
            switch probe(path) {
            case .answers:
                close(lockFD)
                throw StartupError("another server already answers on \(path); refusing to take its socket")
            case .notOurs(let what):
                close(lockFD)
                throw StartupError("Failed to bind \(path): it is \(what), not a stale appearanced socket; move it away")
            case .stale:
                unlink(path)  // stale: left by an instance that died
            }
        }

        let fd: Int32
        do { fd = try Posix.unixStreamSocket(nonBlocking: true) } catch {
            close(lockFD)
            throw StartupError("Failed to create socket: \(error)")
        }
        let old = umask(0o177)  // the socket file is created 0600
        let rc = (try? Posix.withAddress(path) { Glibc.bind(fd, $0, $1) }) ?? -2
        let bindErr = errno
        umask(old)
        guard rc == 0 else {
            close(fd); close(lockFD)
            if rc == -2 { throw StartupError("Failed to bind \(path): path too long for a Unix socket") }
            throw StartupError("Failed to bind \(path): \(String(cString: strerror(bindErr)))")
        }
        chmod(path, 0o600)
        guard listen(fd, SOMAXCONN) == 0 else {
            let e = errno
            close(fd); close(lockFD); unlink(path)
            throw StartupError("Failed to listen on \(path): \(String(cString: strerror(e)))")
        }
        return Listener(fd: fd, path: path, lockFD: lockFD, activated: false)
    }

    /// Removes the socket file (unless systemd owns it); the lock goes with the process.
    func remove() {
        if !activated { unlink(path) }
        close(fd)
    }

    enum Probe: Equatable { case stale, answers, notOurs(String) }

    /// Only a stream socket that refuses connections is stale. The connect never blocks: a live server whose
    /// backlog is full (EAGAIN) is alive, and a socket of another type (EPROTOTYPE: someone's datagram
    /// socket) is not ours to replace.
    static func probe(_ path: String) -> Probe {
        guard let fd = try? Posix.unixStreamSocket(nonBlocking: true) else { return .answers }
        defer { close(fd) }
        do {
            try Posix.connect(fd, to: path)
            return .answers
        } catch {
            switch error.code {
            case ECONNREFUSED, ENOENT: return .stale
            case EPROTOTYPE: return .notOurs("a socket of another type (datagram or seqpacket)")
            case EAGAIN, EINPROGRESS: return .answers
            default: return .notOurs("a socket that cannot be probed (\(String(cString: strerror(error.code))))")
            }
        }
    }

    /// Creates `dir` 0700, or checks that an existing one is a directory we own and tightens it to 0700.
    static func ensurePrivateDirectory(_ dir: String) throws(StartupError) {
        do { try Files.makeDirectories(Posix.directory(of: dir), mode: 0o700) } catch {
            throw StartupError("Failed to create \(Posix.directory(of: dir)): \(error)")
        }
        if mkdir(dir, 0o700) != 0, errno != EEXIST {
            throw StartupError("Failed to create \(dir): \(String(cString: strerror(errno)))")
        }
        var st = stat()
        guard lstat(dir, &st) == 0 else { throw StartupError("Failed to stat \(dir): \(String(cString: strerror(errno)))") }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw StartupError("Refusing to use \(dir): it is not a directory (a symlink?)")
        }
        guard st.st_uid == getuid() else {
            throw StartupError("Refusing to use \(dir): it belongs to uid \(st.st_uid), not \(getuid())")
        }
        if st.st_mode & 0o077 != 0 { chmod(dir, 0o700) }
    }
}

/// The uid and pid of the process on the other end of a Unix socket (SO_PEERCRED).
func peerCredentials(_ fd: Int32) -> (uid: uid_t, pid: pid_t)? {
    // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (only declared under _GNU_SOURCE)
    var cred: (pid: pid_t, uid: uid_t, gid: gid_t) = (0, 0, 0)
    var len = socklen_t(MemoryLayout<pid_t>.size + MemoryLayout<uid_t>.size + MemoryLayout<gid_t>.size)
    guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 else { return nil }
    return (cred.uid, cred.pid)
}
