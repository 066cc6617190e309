import AppearancePosix
import Foundation
import Testing
import let TestSupport.timeoutScale

/// A datagram socket standing in for systemd's NOTIFY_SOCKET.
final class NotifyListener {
    let fd: Int32
    let path: String

    init(_ path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        let rc = try Descriptor.withAddress(path) { bind(fd, $0, $1) }
        guard rc == 0 else { throw TimedOut(description: "bind \(path) failed") }
        var tv = timeval(tv_sec: 20 * timeoutScale, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// The next datagram (fails after 20 s without one).
    func next() throws -> String {
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buf, buf.count, 0)
        guard n >= 0 else { throw TimedOut(description: "no notify message within 20 s") }
        return String(decoding: buf[0..<n], as: UTF8.self)
    }

    /// Reads messages until one contains `text`; returns everything read.
    func waitFor(_ text: String) throws -> [String] {
        var seen: [String] = []
        while true {
            let m = try next()
            seen.append(m)
            if m.contains(text) { return seen }
        }
    }
}

@Suite struct SystemdIntegrationTests {
    @Test func readinessStatusReloadAndStopping() throws {
        let s = try Sandbox()
        let notify = try NotifyListener(s.root + "/notify")
        s.env["NOTIFY_SOCKET"] = notify.path
        let d = try s.start(Bin.daemon, [])
        let first = try notify.next()
        #expect(first.contains("READY=1"), "\(first)")
        #expect(first.contains("STATUS=light (default, "), "\(first)")
        // READY=1 is sent once the socket answers.
        #expect(try s.ctl("get").out == "light\n")
        _ = try s.ctl("set", "dark")
        #expect(try notify.waitFor("STATUS=").last == "STATUS=dark (override)")
        kill(d.pid, SIGHUP)
        #expect(try notify.next().hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        #expect(try notify.next() == "READY=1")
        d.stop(SIGTERM)
        #expect(try notify.next() == "STOPPING=1")
        #expect(try d.waitForExit() == 0)
    }

    @Test func socketActivation() throws {
        let s = try Sandbox()
        let path = s.root + "/runtime/activated.sock"
        s.env["APPEARANCED_SOCKET"] = path
        // systemd-socket-activate closes every inherited descriptor before it execs the daemon, which
        // Foundation.Process takes for the child's death (and then blocks in waitpid): run it under a shell.
        let sa = try Child("/bin/sh", ["-c", #"/usr/bin/systemd-socket-activate -l "$0" "$1"; echo "exit $?""#, path, Bin.daemon],
                           env: s.env)
        defer { sa.stop(SIGKILL) }
        try sa.waitForStderr("Listening on")
        // The first client starts the daemon through the passed socket, and gets an answer.
        #expect(try s.ctl("get") == (0, "light\n", ""))
        #expect(try s.ctl("set", "dark").out == "dark\n")
        #expect(try s.ctl("status").out.contains("pid"))
        // On exit the socket file stays: it belongs to whoever passed it.
        let status = try s.ctl("status", "--json").out
        let pid = try #require(status.range(of: #""pid":"#).flatMap { Int32(status[$0.upperBound...].prefix { $0.isNumber }) })
        defer { kill(pid, SIGKILL) }
        kill(pid, SIGTERM)
        #expect(try sa.waitForLines(1) == ["exit 0"])
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func modeFileFollowsEveryChangeAndGoesAwayOnExit() throws {
        let s = try Sandbox()
        let modeFile = s.root + "/runtime/appearanced/mode"
        let d = try s.startDaemon()
        #expect(try String(contentsOfFile: modeFile, encoding: .utf8) == "light\n")
        let w = try s.start(Bin.ctl, ["watch"])
        _ = try w.waitForLines(1)
        _ = try s.ctl("toggle")
        _ = try w.waitForLines(2)
        // The file is replaced before subscribers are told: a notification and the file agree.
        #expect(try String(contentsOfFile: modeFile, encoding: .utf8) == "dark\n")
        let attrs = try FileManager.default.attributesOfItem(atPath: modeFile)
        #expect(attrs[.posixPermissions] as? Int == 0o644)
        try d.end(SIGTERM)
        #expect(!FileManager.default.fileExists(atPath: modeFile))
    }
}
