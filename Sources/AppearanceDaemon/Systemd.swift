import AppearancePosix

/// The two sd-daemon interfaces appearanced speaks, without linking libsystemd:
/// socket activation (LISTEN_FDS) and the notify socket (NOTIFY_SOCKET).
enum Systemd {
    /// The listening socket systemd passed (fd 3), if this process was socket-activated.
    /// Like sd_listen_fds(unset_environment=1): the variables are removed so children do not inherit them.
    static func activatedSocket() throws(StartupError) -> Descriptor? {
        defer {
            Posix.unsetEnvironment("LISTEN_PID")
            Posix.unsetEnvironment("LISTEN_FDS")
            Posix.unsetEnvironment("LISTEN_FDNAMES")
        }
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
