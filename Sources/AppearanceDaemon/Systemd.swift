#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AppearanceProtocol

/// The two sd-daemon interfaces appearanced speaks, without linking libsystemd:
/// socket activation (LISTEN_FDS) and the notify socket (NOTIFY_SOCKET).
enum Systemd {
    /// The listening socket systemd passed (fd 3), if this process was socket-activated.
    /// Like sd_listen_fds(unset_environment=1): the variables are removed so children do not inherit them.
    static func activatedSocket() throws(StartupError) -> Int32? {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pid = Posix.environment("LISTEN_PID").flatMap(Int32.init), pid == getpid(),
              let count = Posix.environment("LISTEN_FDS").flatMap(Int.init), count > 0 else { return nil }
        guard count == 1 else {
            throw StartupError("systemd passed \(count) sockets; appearanced.socket must have exactly one ListenStream=")
        }
        let fd: Int32 = 3
        var type: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        var addr = sockaddr_storage()
        var alen = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let family = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &alen) == 0 ? Int32($0.pointee.sa_family) : -1 }
        }
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0, type == Int32(SOCK_STREAM.rawValue),
              family == AF_UNIX else {
            throw StartupError("the socket systemd passed (fd 3) is not a Unix stream socket; check ListenStream= in appearanced.socket")
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    /// Sends `state` (e.g. "READY=1\nSTATUS=dark") to $NOTIFY_SOCKET, if there is one. Never fails the daemon.
    static func notify(_ state: String) {
        guard let path = Posix.environment("NOTIFY_SOCKET") else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }  // abstract namespace
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return }
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: bytes) }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes[0] == 0 ? 0 : 1))
        var message = state
        _ = message.withUTF8 { msg in
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, msg.baseAddress, msg.count, Int32(MSG_NOSIGNAL), $0, len)
                }
            }
        }
    }

    static func monotonicMicroseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }
}
