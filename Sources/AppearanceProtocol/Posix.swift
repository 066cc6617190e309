#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// An errno value with the call that produced it: `connect /run/user/1000/appearanced/socket: Connection refused`.
public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int32
    public var call: String

    public init(_ code: Int32, _ call: String) {
        self.code = code
        self.call = call
    }

    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// The few syscalls the protocol's transport needs, each wrapped once: EINTR retried, errors typed.
public enum Posix {
    @inline(__always)
    static func retrying<T: BinaryInteger>(_ call: @autoclosure () -> String, _ body: () -> T) throws(Errno) -> T {
        while true {
            let r = body()
            if r >= 0 { return r }
            if errno != EINTR { throw Errno(errno, call()) }
        }
    }

    /// A stream Unix socket, close-on-exec.
    public static func unixStreamSocket(nonBlocking: Bool = false) throws(Errno) -> Int32 {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return try retrying("socket") { socket(AF_UNIX, type, 0) }
    }

    /// Runs `body` with a `sockaddr_un` for `path`; paths longer than sun_path are an error, never truncated.
    public static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) throws(Errno) -> R {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard bytes.count < capacity, !bytes.isEmpty else { throw Errno(ENAMETOOLONG, "socket path \(path)") }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    public static func connect(_ fd: Int32, to path: String) throws(Errno) {
        let r = try withAddress(path) { addr, len in
            while true {
                let r = Glibc.connect(fd, addr, len)
                if r == 0 || errno != EINTR { return r == 0 ? 0 : errno }
            }
        }
        if r != 0 { throw Errno(r, "connect \(path)") }
    }

    /// Reads what is available into `buffer`; 0 means end of file.
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retrying("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Writes as much as the socket takes now (MSG_NOSIGNAL: a peer that went away is an error, not SIGPIPE).
    public static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retrying("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Writes everything, blocking as needed (clients only; the daemon never blocks on a peer).
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(Errno) {
        var done = 0
        while done < bytes.count {
            let r = bytes.withUnsafeBytes { raw in
                Result { () throws(Errno) -> Int in try send(fd, UnsafeRawBufferPointer(rebasing: raw[done...])) }
            }
            done += try r.get()
        }
    }

    public static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// dirname(3) without touching the argument: "/a/b" → "/a", "/a" → "/", "a" → ".".
    public static func directory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }

    public static func environment(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }
}
