import AppearancePosix

/// Socket activation (LISTEN_FDS) and the notify socket (NOTIFY_SOCKET), without linking libsystemd.
enum Systemd {
    /// The listening socket systemd passed (fd 3), if any; its variables are removed (children do not inherit them).
    static func activatedSocket() throws(StartupError) -> Descriptor? {
        defer { for v in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { Posix.unsetEnvironment(v) } }
        guard let pid = Posix.environment("LISTEN_PID").flatMap(Int32.init), pid == Posix.processID,
              let count = Posix.environment("LISTEN_FDS").flatMap(Int.init), count > 0 else { return nil }
        guard count == 1 else {
            throw StartupError("systemd passed \(count) sockets; appearanced.socket must have exactly one ListenStream=")
        }
        let socket = Descriptor(adopting: 3, socket: true)
        guard socket.isUnixStreamSocket else {
            throw StartupError("the socket systemd passed (fd 3) is not a Unix stream socket; check ListenStream= in appearanced.socket")
        }
        socket.setCloseOnExec()
        socket.setNonBlocking()
        return socket
    }

    /// Sends `state` (e.g. "READY=1\nSTATUS=dark") to $NOTIFY_SOCKET, if there is one. Never fails the daemon.
    static func notify(_ state: String) {
        guard let path = Posix.environment("NOTIFY_SOCKET") else { return }
        _ = Descriptor.sendDatagram(state, to: path)
    }
}
