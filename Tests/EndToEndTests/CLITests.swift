import Foundation
import Testing

/// The built binaries, run as a user would, with no session bus: the daemon is its own source.
@Suite struct DaemonAndCLITests {
    @Test func getSetToggleAndStatus() throws {
        let s = try Sandbox.started()
        #expect(try s.ctl("get") == (0, "light\n", ""))
        #expect(try s.ctl("set", "dark").out == "dark\n")
        #expect(try s.ctl("get").out == "dark\n")
        #expect(try s.ctl("toggle").out == "light\n")
        // Toggling back from a forced mode returns to following the system, leaving no stale override.
        let state = try s.ctl("get", "--json").out
        #expect(state.contains(#""override":"system""#), "\(state)")
        #expect(state.contains(#""source":"default""#))
        let status = try s.ctl("status")
        #expect(status.status == 0)
        #expect(status.out.contains("system:      unavailable"), "\(status.out)")
        #expect(status.out.contains("no session bus") || status.out.contains("bus"), "\(status.out)")
        let json = try s.ctl("status", "--json").out
        #expect(json.contains(#""subscribers":0"#) && json.contains(#""protocol":8"#), "\(json)")
    }

    @Test func watchPrintsCurrentThenEachRealChange() throws {
        let s = try Sandbox.started()
        let w = try s.start(Bin.ctl, ["watch"])
        #expect(try w.waitForLines(1) == ["light"])
        _ = try s.ctl("set", "dark")
        #expect(try w.waitForLines(2) == ["light", "dark"])
        _ = try s.ctl("set", "dark")      // no change: nothing printed
        _ = try s.ctl("set", "system")    // back to the default: light
        #expect(try w.waitForLines(3) == ["light", "dark", "light"])
        w.stop(SIGINT)
        #expect(try w.waitForExit() == 0)
        #expect(w.lines == ["light", "dark", "light"])
    }

    @Test func watchJSONCarriesPrevious() throws {
        let s = try Sandbox.started()
        let w = try s.start(Bin.ctl, ["watch", "--json"])
        _ = try w.waitForLines(1)
        _ = try s.ctl("toggle")
        let lines = try w.waitForLines(2)
        #expect(lines[0].contains(#""mode":"light""#) && lines[0].contains(#""previous":null"#), "\(lines[0])")
        #expect(lines[1].contains(#""mode":"dark""#) && lines[1].contains(#""previous":"light""#), "\(lines[1])")
        #expect(lines[1].contains(#""seq":1"#))
        w.stop(SIGTERM)
        #expect(try w.waitForExit() == 0)
    }

    /// A headless box or a root shell: no bus address at all. The daemon answers as its own source and sets
    /// no retry timer (nothing could ever change its environment).
    @Test func noBusAddressAtAll() throws {
        let s = try Sandbox()
        s.env["DBUS_SESSION_BUS_ADDRESS"] = nil
        s.env["XDG_RUNTIME_DIR"] = nil
        s.env["APPEARANCED_SOCKET"] = s.root + "/runtime/s"
        let d = try s.start(Bin.daemon, ["--log-level", "debug"])
        try waitUntil("the daemon to answer") { (try? s.ctl("get"))?.out == "light\n" }
        #expect(try s.ctl("status").out.contains("neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"))
        try d.waitForStderr("the daemon is its own source")
        #expect(!d.stderr.contains("trying again"), "\(d.stderr)")
    }

    @Test func daemonNotRunning() throws {
        let s = try Sandbox()
        // Plain `watch` waits for the daemon instead (a status bar may start first); with
        // --exit-on-disconnect it gives up like the others.
        for args in [["get"], ["set", "dark"], ["toggle"], ["status"], ["watch", "--exit-on-disconnect"]] {
            let r = try s.run(Bin.ctl, args)
            #expect(r.status == 69, "\(args)")
            #expect(r.out.isEmpty)
            #expect(r.err.contains(s.socket), "\(r.err)")
            #expect(r.err.contains("appearanced is not running"), "\(r.err)")
        }
        // Another socket than the default: the unit would not make it; say what would.
        let other = try s.ctl("--socket", s.root + "/other.sock", "get")
        #expect(other.status == 69 && other.err.contains("appearanced is not running on \(s.root)/other.sock (")
                && other.err.contains("Start one there with 'appearanced --socket \(s.root)/other.sock'.") && !other.err.contains("systemctl"), "\(other.err)")
    }

    @Test(arguments: [
        (["set"], "missing mode"), (["set", "blue"], "invalid mode \"blue\""), (["set", "dark", "x"], "too many"),
        (["frobnicate"], "unknown command"), ([], "missing command"), (["get", "--bogus"], "unknown option"),
        (["get", "extra"], "unexpected argument"), (["--socket"], "needs a value"),
    ])
    func usageErrors(args: [String], message: String) throws {
        let s = try Sandbox()
        let r = try s.run(Bin.ctl, args)
        #expect(r.status == 64)
        #expect(r.err.contains(message), "\(r.err)")
    }

    @Test func helpAndVersion() throws {
        let s = try Sandbox()
        #expect(try s.ctl("help").out.contains("Usage: appearancectl"))
        #expect(try s.ctl("--version").out.hasPrefix("appearancectl "))
        #expect(try s.run(Bin.daemon, ["--help"]).out.contains("Usage: appearanced"))
        #expect(try s.run(Bin.daemon, ["--version"]).out.hasPrefix("appearanced "))
        let bad = try s.run(Bin.daemon, ["--log-level", "loud"])
        #expect(bad.status == 64 && bad.err.contains("invalid log level \"loud\""))
        #expect(try s.run(Bin.daemon, ["--frob"]).status == 64)
    }

    @Test func rejectedRequestExits65() throws {
        let s = try Sandbox.started()
        // Make the state directory unwritable: the override cannot be saved, so it is not applied.
        try FileManager.default.createDirectory(atPath: s.root + "/state/appearanced", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: s.stateFile, withIntermediateDirectories: true)
        let r = try s.ctl("set", "dark")
        #expect(r.status == 65)
        #expect(r.err.contains("could not save the override to \(s.stateFile)"), "\(r.err)")
        #expect(try s.ctl("get").out == "light\n")
    }
}

@Suite struct LifecycleTests {
    @Test func overrideSurvivesSIGKILL() throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        #expect(try s.ctl("set", "dark").status == 0)
        try d.end(SIGKILL)
        try s.startDaemon()  // the stale socket of the killed instance is replaced
        #expect(try s.ctl("get").out == "dark\n")
        #expect(try String(contentsOfFile: s.stateFile, encoding: .utf8) == "{\"override\":\"dark\"}\n")
    }

    @Test(arguments: ["{not json", "", "{\"override\":\"purple\"}", "\u{FF}\u{FE}"])
    func corruptStateFileIsKeptAside(content: String) throws {
        let s = try Sandbox()
        try s.write(content, to: s.stateFile)
        let d = try s.startDaemon()
        #expect(try s.ctl("get", "--json").out.contains(#""override":"system""#))
        try d.waitForStderr("\(s.stateFile) is not a valid state file")
        #expect(d.stderr.contains("kept it as \(s.stateFile).corrupt"))
        #expect(try String(contentsOfFile: s.stateFile + ".corrupt", encoding: .utf8) == content)
        #expect(!FileManager.default.fileExists(atPath: s.stateFile))
    }

    @Test func stateFileThatIsADirectoryIsKeptAside() throws {
        let s = try Sandbox()
        try FileManager.default.createDirectory(atPath: s.stateFile, withIntermediateDirectories: true)
        let d = try s.startDaemon()
        try d.waitForStderr("cannot be read")
        var isDir: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: s.stateFile + ".corrupt", isDirectory: &isDir) && isDir.boolValue)
        #expect(try s.ctl("set", "dark").status == 0)
    }

    /// A FIFO where the state file belongs must not hang start-up (opening one for reading blocks).
    @Test func stateFileThatIsAFIFOIsKeptAside() throws {
        let s = try Sandbox()
        try FileManager.default.createDirectory(atPath: s.root + "/state/appearanced", withIntermediateDirectories: true)
        #expect(mkfifo(s.stateFile, 0o600) == 0)
        let d = try s.startDaemon()
        try d.waitForStderr("\(s.stateFile) cannot be read")
        #expect(FileManager.default.fileExists(atPath: s.stateFile + ".corrupt"))
        #expect(try s.ctl("set", "dark").status == 0)
    }

    @Test func sigtermExitsCleanlyAndRemovesTheSocket() throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        #expect(FileManager.default.fileExists(atPath: s.socket))
        d.stop(SIGTERM)
        #expect(try d.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: s.socket))
    }

    @Test func secondInstanceRefusesAndLeavesTheFirstAlone() throws {
        let s = try Sandbox.started()
        let r = try s.run(Bin.daemon, [])
        #expect(r.status == 1)
        #expect(r.err.contains("already running on \(s.socket)"), "\(r.err)")
        #expect(try s.ctl("get").status == 0)
    }

    @Test func socketAndDirectoryArePrivate() throws {
        let s = try Sandbox.started()
        _ = try s.ctl("set", "dark")
        func mode(_ p: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: p)[.posixPermissions] as? Int) ?? -1
        }
        #expect(try mode(s.socket) == 0o600)
        #expect(try mode(s.root + "/runtime/appearanced") == 0o700)
        #expect(try mode(s.stateFile) == 0o600)
    }

    @Test func explicitSocketOptionAndEnvironment() throws {
        let s = try Sandbox()
        let path = s.root + "/custom.sock"
        try s.start(Bin.daemon, ["--socket", path])
        try waitUntil("socket at \(path)") { (try? s.ctl("--socket", path, "get"))?.status == 0 }
        s.env["APPEARANCED_SOCKET"] = path
        #expect(try s.ctl("get").out == "light\n")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to run a client as nobody"))
    func peerWithAnotherUIDIsRejected() throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        // Let nobody reach the socket through the file system, so only SO_PEERCRED stands in the way.
        chmod(s.root, 0o755); chmod(s.root + "/runtime", 0o755)
        chmod(s.root + "/runtime/appearanced", 0o755); chmod(s.socket, 0o777)
        // appearancectl itself would refuse a socket that is not its user's (below): connect with socat.
        _ = try s.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/socat", "-t", "1",
                                           "/dev/null", "UNIX-CONNECT:\(s.socket)"])
        try d.waitForStderr("rejected a connection from uid 65534")
        #expect(try s.ctl("get").status == 0)
        let r = try s.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Bin.ctl, "--socket", s.socket, "get"])
        #expect(r.status == 69 && r.err.contains("refusing to use \(s.socket): the socket belongs to uid 0, not to uid 65534"), "\(r)")
    }

    /// The /tmp fallback spoof: another user's server at the path a client would use is never asked.
    @Test(.enabled(if: getuid() == 0, "needs root to make files of another uid"))
    func aSocketOfAnotherUserIsRefusedBeforeConnecting() throws {
        let s = try Sandbox()
        let dir = s.root + "/spoof"
        mkdir(dir, 0o700)
        let path = dir + "/socket"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(bound == 0 && listen(fd, 8) == 0)
        chown(path, 65534, 65534)
        let r = try s.run(Bin.ctl, ["--socket", path, "get"])
        #expect(r.status == 69 && r.err.contains("the socket belongs to uid 65534, not to uid 0"), "\(r)")
        // Ours, but in a directory anyone may write to.
        chown(path, 0, 0)
        chmod(dir, 0o777)
        let w = try s.run(Bin.ctl, ["--socket", path, "get"])
        #expect(w.status == 69 && w.err.contains("may be written by anyone (mode 777)"), "\(w)")
    }
}

/// A daemon that is stopped (SIGSTOP) still has its socket: connecting works, nothing answers. A prompt
/// must not hang: `get` gives up after AppearanceConnection.defaultTimeout with exit 69 and says why.
/// The test has a deadline of its own: a `get` that hung would fail it, not hang the suite.
@Suite(.timeLimit(.minutes(2))) struct StoppedDaemonTests {
    @Test func getGivesUpOnAStoppedDaemonAndWorksAgainAfterContinue() throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        defer { kill(d.pid, SIGCONT); d.stop() }
        kill(d.pid, SIGSTOP)
        let r = try s.run(Bin.ctl, ["get"])
        #expect(r.status == 69)
        #expect(r.err.contains("appearanced did not answer on \(s.socket) within 4 s"), "\(r.err)")
        #expect(r.out.isEmpty)
        // Every request has the same bound.
        #expect(try s.run(Bin.ctl, ["status"]).status == 69)
        kill(d.pid, SIGCONT)
        #expect(try s.ctl("get").out == "light\n")
    }
}
