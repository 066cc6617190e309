@preconcurrency import Glibc
import CPosix

/// Unix-domain sockets: what the daemon listens on, what clients connect to, systemd's notify socket.
extension Descriptor {
    /// socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC): `name` is the path it will be bound or connected to.
    public static func unixStreamSocket(nonBlocking: Bool = false, name: String? = nil) throws(Errno) -> Descriptor {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw Errno.current("socket", path: name) }
        return Descriptor(adopting: fd, name: name, socket: true)
    }

    /// A connected pair of stream sockets, close-on-exec.
    public static func socketPair() throws(Errno) -> (Descriptor, Descriptor) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw Errno.current("socketpair", path: nil)
        }
        return (Descriptor(adopting: fds[0], socket: true), Descriptor(adopting: fds[1], socket: true))
    }

    /// pipe2(O_CLOEXEC): both ends are never inheritable, not even for a moment.
    public static func pipe() throws(Errno) -> (read: Descriptor, write: Descriptor) {
        var fds: [Int32] = [-1, -1]
        guard cposix_pipe(&fds) == 0 else { throw Errno.current("pipe", path: nil) }
        return (Descriptor(adopting: fds[0]), Descriptor(adopting: fds[1]))
    }

    /// connect(2) to the socket at `path`; on a non-blocking socket a full backlog is thrown as EAGAIN.
    public func connect(to path: String) throws(Errno) {
        let r = try Self.withAddress(path) { addr, len in
            while true {
                if Glibc.connect(raw, addr, len) == 0 { return Int32(0) }
                if errno == EINTR { continue }
                return errno == EISCONN ? 0 : errno  // an interrupted connect that went on to finish
            }
        }
        if r != 0 { throw Errno(r, "connect", path: path) }
    }

    /// bind(2) to `path`; the file is created with the permissions the umask leaves.
    public func bind(to path: String) throws(Errno) {
        let r = try Self.withAddress(path) { addr, len in Glibc.bind(raw, addr, len) == 0 ? 0 : errno }
        if r != 0 { throw Errno(r, "bind", path: path) }
    }

    public func listen(backlog: Int32 = SOMAXCONN) throws(Errno) {
        guard Glibc.listen(raw, backlog) == 0 else { throw error("listen") }
    }

    /// accept4(2), close-on-exec: the connection, or nil when none waits; EINTR and ECONNABORTED are retried.
    public func accept(nonBlocking: Bool) throws(Errno) -> Descriptor? {
        while true {
            let fd = cposix_accept(raw, nonBlocking ? 1 : 0)
            if fd >= 0 { return Descriptor(adopting: fd, socket: true) }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw error("accept")
            }
        }
    }

    /// The process on the other end of a Unix socket (SO_PEERCRED).
    public struct Credentials: Equatable, Sendable {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32
    }

    /// getsockopt(SO_PEERCRED); nil if the kernel will not say.
    public var peerCredentials: Credentials? {
        var c = cposix_credentials()
        guard cposix_peer_credentials(raw, &c) == 0 else { return nil }
        return Credentials(pid: c.pid, uid: c.uid, gid: c.gid)
    }

    /// getsockname(2): the path a Unix socket is bound to, if it has one.
    public var boundPath: String? {
        var addr = sockaddr_un()
        var len = socklen_t(MemoryLayout<sockaddr_un>.size)
        return withUnsafeMutablePointer(to: &addr) { p -> String? in
            let ok = p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(raw, $0, &len) == 0 }
            guard ok, p.pointee.sun_family == sa_family_t(AF_UNIX) else { return nil }
            return withUnsafeBytes(of: &p.pointee.sun_path) { raw in
                let bytes = raw.prefix { $0 != 0 }
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
        }
    }

    /// True for a Unix stream socket (what systemd must pass for appearanced.socket).
    public var isUnixStreamSocket: Bool {
        var type: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        var addr = sockaddr_storage()
        var alen = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let family = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(raw, $0, &alen) == 0 ? Int32($0.pointee.sa_family) : -1 }
        }
        return getsockopt(raw, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == Int32(SOCK_STREAM.rawValue) && family == AF_UNIX
    }

    /// Sends what the socket takes right now (MSG_DONTWAIT): a last word to a client about to be closed.
    public func sendWithoutWaiting(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(raw, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// True when the peer has closed the connection: a peek that does not block.
    public var isClosedByPeer: Bool {
        var byte: UInt8 = 0
        while true {
            let n = recv(raw, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            if n == 0 { return true }
            if n > 0 { return false }
            if errno == EINTR { continue }
            return errno != EAGAIN && errno != EWOULDBLOCK
        }
    }

    /// One datagram to the socket at `path` (`@name`: abstract), as sd_notify sends; false if not sent; never blocks.
    public static func sendDatagram(_ message: String, to path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var message = message
        let sent = try? withAddress(path, abstract: true) { addr, len in
            message.withUTF8 { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), addr, len) }
        }
        return (sent ?? -1) >= 0
    }

    /// Runs `body` with a `sockaddr_un` for `path` (too long: an error) and its length; `abstract`: `@name`.

    public static func withAddress<R>(_ path: String, abstract: Bool = false,
                                      _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) throws(Errno) -> R {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        // Copied from the string's own UTF-8 (not through an Array: a one-shot client builds no array type).
        var text = path
        let abstract = abstract && text.utf8.first == UInt8(ascii: "@")
        let length = text.withUTF8 { utf8 -> Int? in
            guard utf8.count < capacity, !utf8.isEmpty else { return nil }
            withUnsafeMutableBytes(of: &addr.sun_path) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(utf8))
                raw[utf8.count] = 0
                if abstract { raw[0] = 0 }
            }
            return utf8.count
        }
        guard let length else { throw Errno(ENAMETOOLONG, "socket path", path: path) }
        let size = abstract ? MemoryLayout<sa_family_t>.size + length : MemoryLayout<sockaddr_un>.size
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(size)) }
        }
    }
}
