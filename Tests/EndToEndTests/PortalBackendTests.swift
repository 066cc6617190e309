import Foundation
import Testing

/// appearanced as the portal's Settings backend, against the real xdg-desktop-portal (1.16 on bookworm) and a
/// real libadwaita app: on a desktop without a Settings backend every portal reader follows the merged mode;
/// on GNOME, where the desktop has its own, nothing appearanced does reaches the frontend.
@Suite struct PortalBackendTests {
    static let backend = "org.freedesktop.impl.portal.desktop.appearanced"
    /// The daemon's log lines about the system's value: while it serves, only "unavailable, ours".
    static func systemLines(_ d: Child) -> [String] {
        d.stderr.split(separator: "\n").filter { $0.contains("system: ") }.map(String.init)
    }

    /// The process that owns `name` on the sandbox's bus.
    static func owner(_ stack: RealPortalStack, _ name: String) throws -> pid_t? {
        let r = try stack.sandbox.run("/usr/bin/gdbus", ["call", "--session", "--timeout", "10", "--dest", "org.freedesktop.DBus",
                                                        "--object-path", "/org/freedesktop/DBus", "--method",
                                                        "org.freedesktop.DBus.GetConnectionUnixProcessID", name])
        guard r.status == 0, let n = r.out.split(separator: " ").last.map({ $0.filter(\.isNumber) }) else { return nil }
        return pid_t(n)
    }

    @Test func onSwayEveryPortalReaderFollowsAppearanced() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "sway", portals: ["appearanced"])
        defer { stack.close() }
        let d = try s.startDaemon(["--log-level", "debug"])

        let status = try s.ctl("status", "--json").out
        #expect(status.contains("serving as \(Self.backend): no other Settings backend for sway"), "\(status)")
        #expect(try stack.frontendRead() == "(<<uint32 2>>,)")
        let all = try stack.call("org.freedesktop.portal.Desktop", "org.freedesktop.portal.Settings.ReadAll", ["['org.freedesktop.appearance']"])
        #expect(all.ok && all.out.contains("'color-scheme': <uint32 2>"), "\(all.out)")

        // Each change gives exactly one SettingChanged with the new value, and Read agrees with it.
        let signals = try stack.recordColorSchemeSignals()
        let steps: [([String], UInt32)] = [(["set", "dark"], 1), (["set", "light"], 2), (["toggle"], 1), (["set", "system"], 2)]
        var expected: [UInt32] = []
        for (args, value) in steps {
            #expect(try s.run(Bin.ctl, args).status == 0)
            expected.append(value)
            #expect(try signals.wait(for: expected.count) == expected, "after \(args)")
            #expect(try stack.frontendRead() == "(<<uint32 \(value)>>,)")
        }
        // A change after the last step shows that nothing more came for it.
        #expect(try s.ctl("set", "dark").status == 0)
        #expect(try signals.wait(for: expected.count + 1) == expected + [1])

        // The portal frontend goes away and comes back (D-Bus activation): it is served again.
        let frontend = try #require(try Self.owner(stack, "org.freedesktop.portal.Desktop"))
        kill(frontend, SIGKILL)
        try waitUntil("the portal to restart with appearanced's value") { (try? stack.frontendRead()) == "(<<uint32 1>>,)" }
        #expect(try Self.owner(stack, "org.freedesktop.portal.Desktop") != frontend)
        #expect(try s.ctl("set", "light").out == "light\n")
        try waitUntil("the restarted portal to follow") { (try? stack.frontendRead()) == "(<<uint32 2>>,)" }

        // No loop: the daemon never took its own value, relayed back by the frontend, for the desktop's.
        #expect(Self.systemLines(d).allSatisfy { $0.hasSuffix("system: unavailable (appearanced is the portal's Settings backend)") },
                "\(Self.systemLines(d))")
        #expect(try s.ctl("get", "--json").out.contains(#""system":"unavailable""#))
    }

    @Test func aLibadwaitaAppFollowsEveryChange() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "sway", portals: ["appearanced"], gtk4: true)
        defer { stack.close() }
        try s.startDaemon()

        let app = try stack.startLibadwaitaApp()
        defer { app.stop(SIGKILL) }
        #expect(try app.waitForLines(1) == ["light"])
        var expected = ["light"]
        for (args, mode) in [(["set", "dark"], "dark"), (["set", "light"], "light"), (["toggle"], "dark"), (["set", "system"], "light")] {
            #expect(try s.run(Bin.ctl, args).status == 0)
            expected.append(mode)
            #expect(try app.waitForLines(expected.count) == expected, "after \(args); stderr: \(app.stderr)")
        }
    }

    /// GNOME with its own backend (gtk) and appearanced's .portal both installed: the frontend's answers and
    /// signals follow gsettings only; a forced mode in appearanced reaches its own subscribers, not the portal.
    @Test func onGnomeNothingContradictsTheDesktopsBackend() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "GNOME", portals: ["gtk", "appearanced"])
        defer { stack.close() }
        try stack.gsettings("default")
        try s.startDaemon()
        #expect(try s.ctl("status", "--json").out.contains("not serving: gtk.portal provides Settings for GNOME"))
        #expect(try stack.frontendRead() == "(<<uint32 0>>,)")
        // appearanced answers the frontend, but with nothing: it owns its name, so activation never waits.
        let direct = try stack.call(Self.backend, "org.freedesktop.impl.portal.Settings.Read", ["org.freedesktop.appearance", "color-scheme"])
        #expect(!direct.ok && direct.out.contains("org.freedesktop.portal.Error.NotFound"), "\(direct.out)")

        let signals = try stack.recordColorSchemeSignals()
        try stack.gsettings("prefer-light")
        #expect(try signals.wait(for: 1) == [2])
        #expect(try s.ctl("set", "dark").out == "dark\n")   // contradicts the desktop: must not reach the portal
        try stack.gsettings("prefer-dark")
        #expect(try signals.wait(for: 2) == [2, 1])
        #expect(try stack.frontendRead() == "(<<uint32 1>>,)")
        #expect(try s.ctl("set", "light").out == "light\n")
        try stack.gsettings("default")
        #expect(try signals.wait(for: 3) == [2, 1, 0])
        #expect(try stack.frontendRead() == "(<<uint32 0>>,)")
        // The daemon followed the desktop all along (no own value read back): system is the desktop's.
        try waitUntil("the daemon to see no-preference") { try s.ctl("get", "--json").out.contains(#""system":"no-preference""#) }
    }

    /// Told to serve on GNOME (`portal-backend = "on"`), appearanced's value is the portal's: GNOME's own switch
    /// is then not driven (the portal would not show it), once the backend serves, whenever that comes.
    @Test func servingOnGnomeLeavesGnomesSwitchAlone() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "GNOME", portals: ["appearanced"], desktopFollows: true)
        defer { stack.close() }
        try stack.gsettings("default")
        try s.write("portal-backend = \"on\"\n", to: s.configFile)
        let d = try s.startDaemon()
        try waitUntil("the daemon to serve and leave GNOME's switch alone") {
            let status = try s.ctl("status").out
            return status.contains("portal:      serving as \(Self.backend)") && status.contains("desktop:     off")
        }
        #expect(try s.ctl("set", "dark").out == "dark\n")
        try waitUntil("the portal to say dark") { (try? stack.frontendRead()) == "(<<uint32 1>>,)" }
        #expect(try DesktopFollowTests.gsettingsValue(stack) == "'default'")
        #expect(!d.stderr.contains("desktop written"), "\(d.stderr)")
    }

    @Test func theBackendAnswersAsTheInterfaceSaysAndSurvivesBadCalls() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "sway", portals: ["appearanced"])
        defer { stack.close() }
        try s.write("[accent]\ndefault = \"#3584E4\"\n", to: s.root + "/config/appearanced/palette.toml")
        let d = try s.startDaemon()

        // The introspection data matches the interface XML xdg-desktop-portal installs.
        let xml = try String(contentsOfFile: "/usr/share/dbus-1/interfaces/org.freedesktop.impl.portal.Settings.xml", encoding: .utf8)
        let introspected = try stack.call(Self.backend, "org.freedesktop.DBus.Introspectable.Introspect", [])
        #expect(introspected.ok)
        let ours = Self.members(of: "org.freedesktop.impl.portal.Settings", in: introspected.out.replacingOccurrences(of: "\\n", with: "\n"))
        #expect(!ours.isEmpty)
        #expect(ours == Self.members(of: "org.freedesktop.impl.portal.Settings", in: xml))

        func direct(_ method: String, _ args: [String]) throws -> (ok: Bool, out: String) {
            try stack.call(Self.backend, method, args)
        }
        #expect(try direct("org.freedesktop.impl.portal.Settings.Read", ["org.freedesktop.appearance", "color-scheme"]).out == "(<uint32 2>,)")
        #expect(try direct("org.freedesktop.impl.portal.Settings.Read", ["org.freedesktop.appearance", "accent-color"]).out
                == "(<(0.20784313725490197, 0.51764705882352946, 0.89411764705882357)>,)")
        #expect(try direct("org.freedesktop.DBus.Properties.Get", ["org.freedesktop.impl.portal.Settings", "version"]).out == "(<uint32 1>,)")
        let all = try direct("org.freedesktop.impl.portal.Settings.ReadAll", ["['org.freedesktop.*']"])
        #expect(all.out.contains("'org.freedesktop.appearance': {'color-scheme': <uint32 2>, 'accent-color': <("), "\(all.out)")
        #expect(try direct("org.freedesktop.impl.portal.Settings.ReadAll", ["['org.gnome.*']"]).out == "(@a{sa{sv}} {},)")

        // Bad calls get D-Bus errors, not a crash. dbus-send sends what gdbus would refuse to.
        let bad: [([String], String)] = [
            (["org.freedesktop.impl.portal.Settings.Read", "string:org.freedesktop.appearance", "string:no-such-key"], "org.freedesktop.portal.Error.NotFound"),
            (["org.freedesktop.impl.portal.Settings.Read", "string:org.example.other", "string:color-scheme"], "org.freedesktop.portal.Error.NotFound"),
            (["org.freedesktop.impl.portal.Settings.Read", "string:only-one"], "org.freedesktop.DBus.Error.InvalidArgs"),
            (["org.freedesktop.impl.portal.Settings.Read", "uint32:1", "uint32:2"], "org.freedesktop.DBus.Error.InvalidArgs"),
            (["org.freedesktop.impl.portal.Settings.ReadAll", "string:x"], "org.freedesktop.DBus.Error.InvalidArgs"),
            (["org.freedesktop.impl.portal.Settings.Write", "string:x"], "org.freedesktop.DBus.Error.UnknownMethod"),
            (["org.freedesktop.DBus.Properties.Get", "string:org.freedesktop.impl.portal.Settings", "string:nope"], "org.freedesktop.DBus.Error.UnknownProperty"),
            (["org.freedesktop.DBus.Properties.Set", "string:org.freedesktop.impl.portal.Settings", "string:version", "variant:uint32:3"],
             "org.freedesktop.DBus.Error.PropertyReadOnly"),
        ]
        for (args, error) in bad {
            let r = try s.run("/usr/bin/dbus-send", ["--session", "--print-reply", "--reply-timeout=10000", "--dest=\(Self.backend)",
                                                     "/org/freedesktop/portal/desktop"] + args)
            #expect(r.status != 0 && r.err.contains(error), "\(args): \(r.err)")
        }
        #expect(d.isRunning)
        #expect(try s.ctl("get").out == "light\n")
    }

    /// A careless or hostile peer (python3-dbus, Debian's python): `python3 -c script KIND N` makes one call to
    /// appearanced's backend and prints `reply …` or `error NAME: MESSAGE`. dbus-send and gdbus cannot send
    /// megabytes, nor a wrong signature gdbus knows better than.
    static let caller = #"""
        # No line starts with the word import: scripts/check-imports.py reads Swift files line by line.
        from importlib import import_module
        os, sys, dbus = (import_module(m) for m in ("os", "sys", "dbus"))
        import_module("dbus.bus")
        kind, n = sys.argv[1], int(sys.argv[2])
        bus = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
        calls = {
            "readall-bytes": ("ReadAll", "ay", (dbus.ByteArray(b"x" * n),)),
            "readall-pair": ("ReadAll", "ss", ("org.freedesktop.appearance", "x" * n)),
            "readall-many": ("ReadAll", "as", (dbus.Array(["org.exampl" + str(i % 10) for i in range(n)], signature="s"),)),
            "readall-long": ("ReadAll", "as", (["org.freedesktop.appearance", "x" * n],)),
            "read-list": ("Read", "as", (["org.freedesktop.appearance"] * n,)),
            "read-long-key": ("Read", "ss", ("org.freedesktop.appearance", "k" * n)),
            "read-long-namespace": ("Read", "ss", ("n" * n, "color-scheme")),
        }
        calls["elsewhere-bytes"] = calls["readall-bytes"]
        method, signature, args = calls[kind]
        path = "/org/example/elsewhere" if kind.startswith("elsewhere") else "/org/freedesktop/portal/desktop"
        try:
            reply = bus.call_blocking("org.freedesktop.impl.portal.desktop.appearanced", path,
                                      "org.freedesktop.impl.portal.Settings", method, signature, args, timeout=120)
            print("reply", repr(reply)[:200])
        except dbus.exceptions.DBusException as e:
            print("error", e.get_dbus_name() + ":", e.get_dbus_message())
        """#

    /// One call of `caller`'s: what it printed.
    static func hostileCall(_ s: Sandbox, _ kind: String, _ n: Int) throws -> String {
        let c = try Child("/usr/bin/python3", ["-c", caller, kind, "\(n)"], env: s.env)
        let status = try c.waitForEnd(timeout: 180)
        guard status == 0 else { throw TimedOut(description: "the caller failed (\(status)): \(c.stderr)") }
        return c.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The daemon's resident memory (VmRSS in /proc/PID/status), in KiB.
    static func residentKiB(_ d: Child) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(d.pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    /// The daemon still answers its socket and the portal, correctly, and its memory is back under 64 MiB.
    static func expectAnsweringAndSmall(_ s: Sandbox, _ stack: RealPortalStack, _ d: Child, after what: String) throws {
        #expect(d.isRunning, "after \(what)")
        #expect(try s.ctl("get").out == "light\n", "after \(what)")
        #expect(try stack.call(backend, "org.freedesktop.impl.portal.Settings.Read", ["org.freedesktop.appearance", "color-scheme"]).out
                == "(<uint32 2>,)", "after \(what)")
        let kib = try residentKiB(d)
        #expect(kib < 64 * 1024, "VmRSS \(kib) KiB after \(what)")
    }

    static let invalidArgs = "error org.freedesktop.DBus.Error.InvalidArgs: "

    @Test func aCallOfTheWrongTypeIsRefusedNamingTheExpectedSignature() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "sway", portals: ["appearanced"])
        defer { stack.close() }
        let d = try s.startDaemon()
        #expect(try Self.hostileCall(s, "readall-bytes", 16) == Self.invalidArgs + "ReadAll takes (as), not (ay)")
        #expect(try Self.hostileCall(s, "readall-pair", 4) == Self.invalidArgs + "ReadAll takes (as), not (ss)")
        #expect(try Self.hostileCall(s, "read-list", 2) == Self.invalidArgs + "Read takes (ss), not (as)")
        try Self.expectAnsweringAndSmall(s, stack, d, after: "calls of the wrong type")
    }

    /// The frontend forwards an app's few namespaces, and names are tens of bytes: past the bounds, InvalidArgs.
    @Test func tooManyNamespacesOrTooLongANameAreRefused() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "sway", portals: ["appearanced"])
        defer { stack.close() }
        let d = try s.startDaemon()
        let readAllBounds = Self.invalidArgs + "ReadAll takes at most 256 namespaces, 16384 bytes in all"
        #expect(try Self.hostileCall(s, "readall-many", 256) == "reply dbus.Dictionary({}, signature=dbus.Signature('sa{sv}'))")
        #expect(try Self.hostileCall(s, "readall-many", 257) == readAllBounds)
        #expect(try Self.hostileCall(s, "readall-many", 100_000) == readAllBounds)
        #expect(try Self.hostileCall(s, "readall-long", 100_000) == readAllBounds)
        #expect(try Self.hostileCall(s, "read-long-key", 1024) == "error org.freedesktop.portal.Error.NotFound: Requested setting not found")
        #expect(try Self.hostileCall(s, "read-long-key", 1025) == Self.invalidArgs + "Read's strings are at most 1024 bytes each")
        #expect(try Self.hostileCall(s, "read-long-namespace", 1_000_000) == Self.invalidArgs + "Read's strings are at most 1024 bytes each")
        try Self.expectAnsweringAndSmall(s, stack, d, after: "calls past the bounds")
    }

    /// 20 MB in one call (the session bus passes up to 1e9 bytes, libdbus up to 128 MiB): refused, and the
    /// daemon still answers, correctly, with its memory back under 64 MiB. bench/hostile.py --big-call has the
    /// figures for 60 MB.
    @Test func aHugeCallLeavesTheDaemonAnsweringAndSmall() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "sway", portals: ["appearanced"])
        defer { stack.close() }
        let d = try s.startDaemon()
        let before = try Self.residentKiB(d)
        #expect(try Self.hostileCall(s, "readall-many", 1_250_000)
                == Self.invalidArgs + "ReadAll takes at most 256 namespaces, 16384 bytes in all")
        try Self.expectAnsweringAndSmall(s, stack, d, after: "20 MB of namespaces (VmRSS \(before) KiB before)")
        #expect(try Self.hostileCall(s, "readall-bytes", 20_000_000) == Self.invalidArgs + "ReadAll takes (as), not (ay)")
        try Self.expectAnsweringAndSmall(s, stack, d, after: "20 MB of bytes (VmRSS \(before) KiB before)")
        #expect(try Self.hostileCall(s, "read-long-key", 20_000_000) == Self.invalidArgs + "Read's strings are at most 1024 bytes each")
        try Self.expectAnsweringAndSmall(s, stack, d, after: "a 20 MB key (VmRSS \(before) KiB before)")
        // Not the backend's object: libdbus answers, and the daemon's memory comes back all the same.
        #expect(try Self.hostileCall(s, "elsewhere-bytes", 20_000_000).hasPrefix("error org.freedesktop.DBus.Error.UnknownMethod: "))
        try Self.expectAnsweringAndSmall(s, stack, d, after: "20 MB to another object (VmRSS \(before) KiB before)")
    }

    /// Methods (with in/out argument types), signals (argument types) and properties of `interface`, in order.
    static func members(of interface: String, in xml: String) -> [String] {
        guard let start = xml.range(of: "<interface name=\"\(interface)\"") ?? xml.range(of: "<interface name='\(interface)'"),
              let end = xml.range(of: "</interface>", range: start.upperBound..<xml.endIndex) else { return [] }
        let body = xml[start.upperBound..<end.lowerBound]
        var result: [String] = []
        var kind = ""
        for match in body.matches(of: /<(method|signal|property|arg)\b([^>]*)>/) {
            let attrs = Dictionary(String(match.2).matches(of: /(\w+)=["']([^"']*)["']/).map { (String($0.1), String($0.2)) },
                                   uniquingKeysWith: { a, _ in a })
            switch match.1 {
            case "method", "signal":
                kind = String(match.1)
                result.append("\(kind) \(attrs["name"] ?? "")")
            case "property":
                result.append("property \(attrs["name"] ?? "") \(attrs["type"] ?? "") \(attrs["access"] ?? "")")
            default:
                let direction = kind == "signal" ? "out" : attrs["direction"] ?? "in"
                result.append("  \(direction) \(attrs["type"] ?? "")")
            }
        }
        return result
    }
}
