import Foundation
import Testing

/// The D-Bus service on a real dbus-daemon of its own: appearanced's interface (io.github.appearanced.Appearance1)
/// and darkman's (nl.whynothugo.darkman), with gdbus and busctl as any client would use them.
@Suite struct AppearanceServiceTests {
    static let name = "io.github.appearanced.Appearance1"
    static let path = "/io/github/appearanced/Appearance1"
    static let darkman = "nl.whynothugo.darkman"
    static let darkmanPath = "/nl/whynothugo/darkman"
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// A sandbox whose session bus is a SandboxBus, and a daemon on it that owns both names.
    final class Served {
        let sandbox: Sandbox
        let bus: SandboxBus
        let daemon: Child

        init() throws {
            sandbox = try Sandbox()
            bus = try SandboxBus(sandbox)
            daemon = try sandbox.startDaemon()
            try waitUntil("both names to be owned") { try AppearanceServiceTests.status(sandbox) == "bus:         \(AppearanceServiceTests.name); \(AppearanceServiceTests.darkman)" }
        }
    }

    /// A call on appearanced's own object.
    static func call(_ s: Sandbox, _ method: String, _ args: [String]) throws -> (ok: Bool, out: String) {
        try gdbus(s, name, path, method, args)
    }

    static func gdbus(_ s: Sandbox, _ dest: String, _ path: String, _ method: String, _ args: [String]) throws -> (ok: Bool, out: String) {
        let r = try s.run("/usr/bin/gdbus", ["call", "--session", "--timeout", "20", "--dest", dest, "--object-path", path, "--method", method] + args)
        return (r.status == 0, r.out + r.err)
    }

    static func busctl(_ s: Sandbox, _ args: [String]) throws -> (ok: Bool, out: String) {
        let r = try s.run("/usr/bin/busctl", ["--address=\(s.env["DBUS_SESSION_BUS_ADDRESS"]!)"] + args)
        return (r.status == 0, r.out + r.err)
    }

    /// The Introspect answer, as the string itself (busctl's JSON output decoded).
    static func introspect(_ s: Sandbox, _ dest: String, _ path: String) throws -> String {
        let r = try busctl(s, ["call", "--json=short", dest, path, "org.freedesktop.DBus.Introspectable", "Introspect"])
        #expect(r.ok, "\(r.out)")
        let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any]
        return ((json?["data"] as? [Any])?.first as? String) ?? ""
    }

    static func status(_ s: Sandbox) throws -> String {
        try s.ctl("status").out.split(separator: "\n").first { $0.hasPrefix("bus:") }.map(String.init) ?? ""
    }

    /// `gdbus monitor` on a name; `lines(matching:)` are the signals it printed so far.
    final class Monitor {
        let child: Child
        init(_ s: Sandbox, _ dest: String) throws {
            child = try Child("/usr/bin/gdbus", ["monitor", "--session", "--dest", dest], env: s.env)
            try waitUntil("gdbus monitor to start; stderr: \(child.stderr)") { child.stdout.contains("Monitoring signals") }
        }
        func lines(_ text: String) -> [String] { child.lines.filter { $0.contains(text) } }
        func wait(_ text: String, count: Int) throws -> [String] {
            try waitUntil("\(count) × \(text); have: \(child.stdout)") { lines(text).count >= count }
            return lines(text)
        }
        func stop() { child.stop(SIGKILL); _ = try? child.waitForExit(timeout: 10) }
    }

    /// Read your writes across the queues: a read on the bus made right after a write was answered (on the bus
    /// or on the socket) sees the write. One client process, back to back, many times.
    @Test func aReadAfterAnAnsweredWriteSeesIt() throws {
        let served = try Served()
        let s = served.sandbox
        let script = """
            import dbus, json, socket, sys
            b = dbus.SessionBus()
            own = b.get_object("\(Self.name)", "\(Self.path)")
            dm = b.get_object("\(Self.darkman)", "\(Self.darkmanPath)")
            sock = socket.socket(socket.AF_UNIX); sock.settimeout(20); sock.connect(sys.argv[1]); f = sock.makefile("rb")
            P = "org.freedesktop.DBus.Properties"
            wrong = []
            for i in range(60):
                mode = ["dark", "light"][i % 2]
                if i % 3 == 0:
                    own.Set(mode, dbus.Dictionary({}, signature="sv"), dbus_interface="\(Self.name)", timeout=20)
                elif i % 3 == 1:
                    dm.Set("\(Self.darkman)", "Mode", dbus.String(mode, variant_level=1), dbus_interface=P, timeout=20)
                else:
                    sock.sendall(json.dumps({"jsonrpc": "2.0", "id": i, "method": "set", "params": {"override": mode}}).encode() + b"\\n")
                    assert json.loads(f.readline())["result"]["mode"] == mode
                got = (str(own.Get("\(Self.name)", "Mode", dbus_interface=P, timeout=20)),
                       str(dm.Get("\(Self.darkman)", "Mode", dbus_interface=P, timeout=20)))
                if got != (mode, mode):
                    wrong.append((i, mode, got))
            print(wrong)
            """
        let r = try s.run("/usr/bin/python3", ["-c", script, s.socket])
        #expect(r.status == 0 && r.out == "[]\n", "\(r)")
    }

    @Test func introspectionGetSetToggleWithEveryOptionAndNamedErrors() throws {
        let served = try Served()
        let s = served.sandbox

        let shipped = try String(contentsOfFile: Self.repo + "/dbus/\(Self.name).xml", encoding: .utf8)
        #expect(try Self.introspect(s, Self.name, Self.path) == shipped)

        let m = "\(Self.name)."
        var r = try Self.call(s, m + "Get", ["{}"])
        #expect(r.ok && r.out.contains("'mode': <'light'>") && r.out.contains("'source': <'default'>"), "\(r.out)")
        // seq is uint64 in every reply, as the Seq property.
        #expect(r.out.contains("'seq': <uint64 ") && !r.out.contains("'seq': <int64"), "\(r.out)")
        r = try Self.call(s, m + "Get", ["{'app': <'kitty'>}"])
        #expect(r.ok && r.out.contains("'app': <'kitty'>") && r.out.contains("'globalMode': <'light'>"), "\(r.out)")
        r = try Self.call(s, m + "Set", ["dark", "{}"])
        #expect(r.ok && r.out.contains("'mode': <'dark'>") && r.out.contains("'override': <'dark'>") && r.out.contains("'seq': <uint64 "), "\(r.out)")
        #expect(try s.ctl("get").out == "dark\n")
        r = try Self.call(s, m + "Set", ["light", "{'until': <'next'>}"])
        #expect(r.ok && r.out.contains("'source': <'temporary'>") && r.out.contains("'until': <'next'>"), "\(r.out)")
        r = try Self.call(s, m + "Set", ["dark", "{'for': <uint32 600>}"])
        #expect(r.ok && r.out.contains("'mode': <'dark'>") && r.out.contains("'source': <'temporary'>"), "\(r.out)")
        r = try Self.call(s, m + "Toggle", ["{'for': <600>}"])
        #expect(r.ok && r.out.contains("'mode': <'light'>") && r.out.contains("'source': <'temporary'>"), "\(r.out)")
        r = try Self.call(s, m + "Toggle", ["{'until': <'next'>}"])
        #expect(r.ok && r.out.contains("'mode': <'dark'>") && r.out.contains("'until': <'next'>"), "\(r.out)")
        r = try Self.call(s, m + "Toggle", ["{'app': <'kitty'>}"])
        #expect(r.ok && r.out.contains("'source': <'app'>") && r.out.contains("'mode': <'light'>"), "\(r.out)")
        r = try Self.call(s, m + "Set", ["system", "{'app': <'kitty'>}"])
        #expect(r.ok && r.out.contains("'mode': <'dark'>"), "\(r.out)")
        r = try Self.call(s, m + "Toggle", ["{}"])
        #expect(r.ok && r.out.contains("'mode': <'light'>"), "\(r.out)")
        #expect(try s.ctl("get").out == "light\n")
        let prop = try Self.busctl(s, ["get-property", Self.name, Self.path, Self.name, "Mode"])
        #expect(prop.ok && prop.out == "s \"light\"\n", "\(prop.out)")
        let all = try Self.call(s, "org.freedesktop.DBus.Properties.GetAll", [Self.name])
        #expect(all.ok && all.out.contains("'Mode': <'light'>") && all.out.contains("'Seq': <uint64 "), "\(all.out)")

        // The socket's refusals, as named errors with the socket's messages.
        let refusals: [(String, [String], String)] = [
            ("Set", ["blue", "{}"], "Error.InvalidParams"),
            ("Set", ["dark", "{'until': <'next'>, 'for': <5>}"], "give \"until\" or \"for\", not both"),
            ("Set", ["dark", "{'for': <0>}"], "invalid \"for\" 0"),
            ("Set", ["dark", "{'until': <'later'>}"], "expected \"next\""),
            ("Set", ["dark", "{'app': <'kitty'>, 'for': <5>}"], "an app override cannot be temporary"),
            ("Toggle", ["{'app': <'.bad'>}"], "invalid \"app\""),
            ("Get", ["{'until': <'next'>}"], "unknown parameter \"until\""),
            ("Get", ["{'app': <['a']>}"], "org.freedesktop.DBus.Error.InvalidArgs"),
        ]
        for (method, args, expected) in refusals {
            let e = try Self.call(s, m + method, args)
            #expect(!e.ok && e.out.contains(expected), "\(method) \(args): \(e.out)")
        }
        let wrong = try Self.busctl(s, ["call", Self.name, Self.path, Self.name, "Get", "s", "x"])
        #expect(!wrong.ok && wrong.out.contains("Get takes (a{sv}), not (s)"), "\(wrong.out)")
        let readOnly = try Self.call(s, "org.freedesktop.DBus.Properties.Set", [Self.name, "Mode", "<'dark'>"])
        #expect(!readOnly.ok && readOnly.out.contains("PropertyReadOnly"), "\(readOnly.out)")
        #expect(try s.ctl("get").out == "light\n")
        #expect(served.daemon.isRunning)
    }

    @Test func propertiesChangedOncePerRealChangeAndNeverForANoOp() throws {
        let s = try Sandbox()
        _ = try SandboxBus(s)
        try s.startDaemon()
        try waitUntil("the name to be owned") { try Self.status(s).hasPrefix("bus:         \(Self.name);") }
        let monitor = try Monitor(s, Self.name)
        defer { monitor.stop() }
        let changed = "\(Self.path): org.freedesktop.DBus.Properties.PropertiesChanged ('\(Self.name)'"
        let modeChanged = "\(Self.path): \(Self.name).ModeChanged"

        #expect(try s.ctl("set", "dark").status == 0)
        #expect(try monitor.wait(changed, count: 1).count == 1)
        #expect(try monitor.wait(modeChanged, count: 1) == ["\(modeChanged) ('dark', 'light')"])
        // No-ops from the socket and the bus; then a real change: exactly one more of each.
        #expect(try s.ctl("set", "dark").status == 0)
        #expect(try Self.call(s, "\(Self.name).Set", ["dark", "{}"]).ok)
        #expect(try s.ctl("set", "light").status == 0)
        let second = try monitor.wait(changed, count: 2)
        #expect(second.count == 2 && second[1].contains("'Mode': <'light'>"), "\(second)")
        #expect(try monitor.wait(modeChanged, count: 2).last == "\(modeChanged) ('light', 'dark')")
        // A change of the source alone (light override → light temporary) changes properties, not the mode.
        #expect(try Self.call(s, "\(Self.name).Set", ["light", "{'until': <'next'>}"]).ok)
        let third = try monitor.wait(changed, count: 3)
        #expect(third.count == 3 && third[2].contains("'Source': <'temporary'>"), "\(third)")
        #expect(try s.ctl("set", "dark").status == 0)
        // ModeChanged goes out after PropertiesChanged: once the third is seen, every PropertiesChanged is in.
        #expect(try monitor.wait(modeChanged, count: 3).count == 3)
        #expect(monitor.lines(changed).count == 4, "\(monitor.child.stdout)")
    }

    @Test func darkmansInterfaceReadSetRefusedAndModeChanged() throws {
        let s = try Sandbox()
        _ = try SandboxBus(s)
        try s.startDaemon()
        try waitUntil("darkman's name to be owned") { try Self.status(s).hasSuffix("; \(Self.darkman)") }

        let shipped = try String(contentsOfFile: Self.repo + "/dbus/\(Self.darkman).xml", encoding: .utf8)
        #expect(try Self.introspect(s, Self.darkman, Self.darkmanPath) + "\n" == shipped)
        let get = "org.freedesktop.DBus.Properties.Get"
        #expect(try Self.gdbus(s, Self.darkman, Self.darkmanPath, get, [Self.darkman, "Mode"]).out == "(<'light'>,)\n")

        let monitor = try Monitor(s, Self.darkman)
        defer { monitor.stop() }
        let set = try Self.busctl(s, ["set-property", Self.darkman, Self.darkmanPath, Self.darkman, "Mode", "s", "dark"])
        #expect(set.ok, "\(set.out)")
        #expect(try s.ctl("get", "--json").out.contains(#""override":"dark""#))
        #expect(try Self.gdbus(s, Self.darkman, Self.darkmanPath, get, [Self.darkman, "Mode"]).out == "(<'dark'>,)\n")
        let signal = "\(Self.darkmanPath): \(Self.darkman).ModeChanged"
        #expect(try monitor.wait(signal, count: 1) == ["\(signal) ('dark',)"])
        #expect(try monitor.wait("\(Self.darkmanPath): org.freedesktop.DBus.Properties.PropertiesChanged ('\(Self.darkman)', {'Mode': <'dark'>}", count: 1).count == 1)

        for bad in ["<'blue'>", "<'DARK'>", "<1>", "<['dark']>"] {
            let r = try Self.gdbus(s, Self.darkman, Self.darkmanPath, "org.freedesktop.DBus.Properties.Set", [Self.darkman, "Mode", bad])
            #expect(!r.ok && r.out.contains("org.freedesktop.DBus.Error.InvalidArgs"), "\(bad): \(r.out)")
        }
        #expect(try s.ctl("get").out == "dark\n")
        // A change from the socket reaches darkman's listeners too.
        #expect(try s.ctl("set", "light").status == 0)
        #expect(try monitor.wait(signal, count: 2).last == "\(signal) ('light',)")
    }

    /// Another process that holds `name` on `bus` (DO_NOT_QUEUE) until it is killed; it owns it when this returns.
    static func holdName(_ name: String, on bus: SandboxBus, _ s: Sandbox) throws -> Child {
        let holder = try Child("/usr/bin/python3", ["-c", """
            bus, signal, sys = __import__("dbus.bus").bus, __import__("signal"), __import__("sys")
            b = bus.BusConnection(sys.argv[1])
            r = b.request_name(sys.argv[2], bus.NAME_FLAG_DO_NOT_QUEUE)
            print("owned" if r == bus.REQUEST_NAME_REPLY_PRIMARY_OWNER else "not owned", flush=True)
            signal.pause()
            """, bus.address, name], env: s.env)
        #expect(try holder.waitForLines(1) == ["owned"])
        return holder
    }

    @Test func darkmansNameHeldElsewhereIsNotFoughtForAndTheKeyTurnsItOff() throws {
        let s = try Sandbox()
        let bus = try SandboxBus(s)
        // Another process holds darkman's name first.
        let holder = try Self.holdName(Self.darkman, on: bus, s)
        defer { holder.stop(SIGKILL); _ = try? holder.waitForExit() }
        let d = try s.startDaemon()
        try waitUntil("status to say darkman's name is held; have: \((try? Self.status(s)) ?? "")") {
            try Self.status(s) == "bus:         \(Self.name); not \(Self.darkman): darkman (or another process) holds it"
        }
        let json = try s.ctl("status", "--json").out
        #expect(json.contains(#""bus":"io.github.appearanced.Appearance1; not nl.whynothugo.darkman"#), "\(json)")
        // Once it leaves, appearanced takes the name.
        holder.stop(SIGKILL)
        try waitUntil("appearanced to take darkman's name") { try Self.status(s) == "bus:         \(Self.name); \(Self.darkman)" }
        #expect(try Self.gdbus(s, Self.darkman, Self.darkmanPath, "org.freedesktop.DBus.Properties.Get", [Self.darkman, "Mode"]).ok)

        // darkman-dbus = false: the name is let go (a reload), and taken again when the key goes back.
        try s.write("darkman-dbus = false\n", to: s.configFile)
        d.stop(SIGHUP)
        try waitUntil("the name to be let go") {
            try Self.status(s) == "bus:         \(Self.name); not \(Self.darkman): off (darkman-dbus = false)"
        }
        let owner = try Self.gdbus(s, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", [Self.darkman])
        #expect(owner.out == "(false,)\n", "\(owner.out)")
        try s.write("darkman-dbus = true\n", to: s.configFile)
        d.stop(SIGHUP)
        try waitUntil("the name to be taken again") { try Self.status(s) == "bus:         \(Self.name); \(Self.darkman)" }
    }

    /// Another process holds appearanced's own name at start-up: status says so; once it lets the name go,
    /// the daemon takes it (NameOwnerChanged), as it does darkman's.
    @Test func ourNameHeldElsewhereIsTakenOnceItIsFree() throws {
        let s = try Sandbox()
        let bus = try SandboxBus(s)
        let holder = try Self.holdName(Self.name, on: bus, s)
        defer { holder.stop(SIGKILL); _ = try? holder.waitForExit() }
        try s.startDaemon()
        try waitUntil("status to say the name is held; have: \((try? Self.status(s)) ?? "")") {
            try Self.status(s).hasPrefix("bus:         not \(Self.name): another process owns it (taken when it lets it go)")
        }
        holder.stop(SIGKILL)
        try waitUntil("appearanced to take its name; have: \((try? Self.status(s)) ?? "")") { try Self.status(s) == "bus:         \(Self.name); \(Self.darkman)" }
        #expect(try Self.gdbus(s, Self.name, Self.path, "org.freedesktop.DBus.Properties.Get", ["io.github.appearanced.Appearance1", "Mode"]).ok)
    }

    /// A trial instance (--state-dir) takes no name on the session bus, so the session's daemon, started after
    /// it, has both.
    @Test func aTrialTakesNoNameOnTheBus() throws {
        let s = try Sandbox()
        _ = try SandboxBus(s)
        let trial = try Child(Bin.daemon, ["--state-dir", s.root + "/trial", "--socket", s.root + "/trial.sock"], env: s.env)
        defer { trial.stop(); _ = try? trial.waitForExit() }
        try waitUntil("the trial to answer") {
            try s.run(Bin.ctl, ["--socket", s.root + "/trial.sock", "get"]).status == 0
        }
        try s.startDaemon()
        try waitUntil("the session's daemon to own both names") { try Self.status(s) == "bus:         \(Self.name); \(Self.darkman)" }
    }

    @Test func aCallActivatesTheDaemonFromTheServicesFile() throws {
        let s = try Sandbox()
        let services = s.root + "/services"
        let template = try String(contentsOfFile: Self.repo + "/dbus/\(Self.name).service", encoding: .utf8)
        try s.write(template.replacingOccurrences(of: "@bindir@", with: Bin.dir), to: services + "/\(Self.name).service")
        _ = try SandboxBus(s, serviceDir: services)
        #expect(try s.ctl("get").status != 0)  // nothing runs yet

        let r = try Self.call(s, "\(Self.name).Get", ["{}"])
        #expect(r.ok && r.out.contains("'mode': <'light'>"), "\(r.out)")
        let pidReply = try Self.gdbus(s, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID", [Self.name])
        let pid = try #require(pidReply.out.split(separator: " ").last.flatMap { pid_t($0.filter(\.isNumber)) }, "\(pidReply.out)")
        defer {
            kill(pid, SIGTERM)
            try? waitUntil("the activated daemon to exit") { kill(pid, 0) != 0 }
        }
        // The activated daemon is the whole daemon: its socket answers too.
        try waitUntil("the activated daemon's socket") { (try? s.ctl("get"))?.out == "light\n" }
        #expect(try Self.call(s, "\(Self.name).Set", ["dark", "{}"]).ok)
        #expect(try s.ctl("get").out == "dark\n")
    }

    /// The bus goes away and comes back at the same address: the names are owned again and calls answered, and
    /// a flood of calls from a peer meanwhile does not keep the socket's clients waiting for good.
    @Test func theFaceFollowsTheBusAcrossItsLossAndAFloodOfCalls() throws {
        let s = try Sandbox()
        var bus = try SandboxBus(s)
        let d = try s.startDaemon()
        try waitUntil("both names to be owned") { try Self.status(s) == "bus:         \(Self.name); \(Self.darkman)" }
        bus.close()
        try waitUntil("status to say the bus is gone") { try Self.status(s).hasPrefix("bus:         not on the bus") }
        bus = try SandboxBus(s)
        try waitUntil("both names to be owned again") { try Self.status(s) == "bus:         \(Self.name); \(Self.darkman)" }
        #expect(try Self.call(s, "\(Self.name).Set", ["dark", "{}"]).ok)
        #expect(try Self.gdbus(s, Self.darkman, Self.darkmanPath, "org.freedesktop.DBus.Properties.Get", [Self.darkman, "Mode"]).out == "(<'dark'>,)\n")

        // 20,000 calls sent without waiting for their answers; the socket answers meanwhile, and so does the bus.
        let flood = try Child("/usr/bin/python3", ["-c", """
            bus, sys = __import__("dbus.bus").bus, __import__("sys")
            b = bus.BusConnection(sys.argv[1])
            for i in range(20000):
                b.call_async(sys.argv[2], sys.argv[3], sys.argv[2], "Get", "a{sv}", [{}], None, None)
            print("sent", flush=True)
            b.flush()
            b.call_blocking(sys.argv[2], sys.argv[3], sys.argv[2], "Get", "a{sv}", [{}], timeout=60)
            print("answered", flush=True)
            """, bus.address, Self.name, Self.path], env: s.env)
        defer { flood.stop(SIGKILL); _ = try? flood.waitForExit() }
        #expect(try flood.waitForLines(1, timeout: 60) == ["sent"])
        #expect(try s.ctl("get").out == "dark\n")
        #expect(try flood.waitForLines(2, timeout: 60) == ["sent", "answered"], "\(flood.stderr)")
        #expect(try s.ctl("set", "light").out == "light\n")
        #expect(d.isRunning)
    }
}
