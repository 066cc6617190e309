import Foundation
import Testing

/// The real desktop stack, headless: a private dbus-daemon, xdg-desktop-portal and the backends named by
/// `portals` (activated on demand by that bus): `gtk` is xdg-desktop-portal-gtk on a GTK broadway display,
/// switched with `gsettings` as a user would; `appearanced` is this project's own `.portal` file.
final class RealPortalStack: @unchecked Sendable {
    let sandbox: Sandbox
    private var broadways: [Child] = []
    private var bus: Child?
    /// The GTK 4 broadway display (`gtk4: true`), for `startLibadwaitaApp()`.
    private var gtk4Display: String?

    /// Scripts/adw-follow.py: a libadwaita app that prints its style, `dark` or `light`, now and on every change.
    static let adwScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Scripts/adw-follow.py").path

    /// The repository's portal/appearanced.portal.
    static let appearancedPortal = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("portal/appearanced.portal").path

    /// - Parameters:
    ///   - desktop: `XDG_CURRENT_DESKTOP` for the portal and the daemon.
    ///   - portals: the backends the portal frontend finds (1.16 reads only `XDG_DESKTOP_PORTAL_DIR`).
    ///   - gtk4: also start a GTK 4 broadway display (`gtk4-broadwayd`), for libadwaita apps.
    ///   - desktopFollows: leave `[desktop] follow` at "auto" (appearanced then drives GNOME's setting);
    ///     otherwise the config says "off", so that the desktop changes only when the test changes it.
    init(_ sandbox: Sandbox, desktop: String = "GNOME", portals: [String] = ["gtk"], gtk4: Bool = false,
         desktopFollows: Bool = false) throws {
        self.sandbox = sandbox
        if !desktopFollows { try sandbox.write("[desktop]\nfollow = \"off\"\n", to: sandbox.configFile) }
        let dir = sandbox.root + "/portals"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for name in portals {
            let source = name == "appearanced" ? Self.appearancedPortal : "/usr/share/xdg-desktop-portal/portals/\(name).portal"
            try FileManager.default.copyItem(atPath: source, toPath: dir + "/\(name).portal")
        }
        sandbox.env["XDG_DESKTOP_PORTAL_DIR"] = dir
        sandbox.env["XDG_CURRENT_DESKTOP"] = desktop
        sandbox.env["GDK_BACKEND"] = "broadway"
        sandbox.env["NO_AT_BRIDGE"] = "1"
        sandbox.env["GSETTINGS_BACKEND"] = "dconf"
        sandbox.env["DISPLAY"] = nil
        sandbox.env["WAYLAND_DISPLAY"] = nil

        // The gtk backend is GTK 3 and libadwaita apps are GTK 4: each needs its own broadway server.
        if portals.contains("gtk") {
            let (server, display) = try Self.startBroadway("/usr/bin/broadwayd", env: sandbox.env)
            broadways.append(server)
            sandbox.env["BROADWAY_DISPLAY"] = display
        }
        if gtk4 {
            let (server, display) = try Self.startBroadway("/usr/bin/gtk4-broadwayd", env: sandbox.env)
            broadways.append(server)
            gtk4Display = display
        }

        let address = "unix:path=\(sandbox.root)/bus"
        // Services activated by this bus inherit its environment: the broadway display, the portal dir, the XDG dirs.
        let b = try Child("/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=\(address)", "--print-address=1"],
                          env: sandbox.env)
        bus = b
        try waitUntil("dbus-daemon's address; stderr: \(b.stderr)") { !b.lines.isEmpty }
        sandbox.env["DBUS_SESSION_BUS_ADDRESS"] = b.lines[0]
    }

    deinit { close() }

    func close() {
        // The document portal's FUSE folder is unmounted while the portal still serves it: killed first, it
        // left the mount dangling (stat fails with ENOTCONN, so the folder did not even "exist" to check), and
        // the sandbox's removal stopped there, leaving appearanced-test-* behind in /tmp.
        unmountDocuments()
        // The portal and its backend leave with their bus; dconf-service and broadwayd must be ended by hand.
        for pid in activatedServices() { kill(pid, SIGKILL) }
        bus?.stop(SIGTERM)
        _ = try? bus?.waitForExit(timeout: 10)
        for b in broadways { b.stop(SIGKILL) }
        unmountDocuments()  // one mounted meanwhile: lazily, its server is gone
        bus = nil
        broadways = []
    }

    /// Unmounts `runtime/doc` when the mount table has it.
    private func unmountDocuments() {
        let doc = sandbox.root + "/runtime/doc"
        // Read by cat: Foundation reads a file by its size, and a /proc file's size is 0.
        guard let mounts = try? sandbox.run("/bin/cat", ["/proc/self/mounts"]).out,
              mounts.split(separator: "\n").contains(where: { $0.split(separator: " ").dropFirst().first.map(String.init) == doc })
        else { return }
        _ = try? sandbox.run("/bin/fusermount3", ["-u", "-z", doc])
    }

    /// Processes this bus started by D-Bus activation (they carry DBUS_STARTER_ADDRESS with our bus path).
    private func activatedServices() -> [pid_t] {
        let marker = Array("DBUS_STARTER_ADDRESS=unix:path=\(sandbox.root)/bus".utf8)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), let env = FileManager.default.contents(atPath: "/proc/\(name)/environ") else { return nil }
            let found = env.split(separator: 0).contains { $0.starts(with: marker) }
            return found ? pid : nil
        }
    }

    /// A broadway server on a free display (it also listens on TCP 8080+N: a display at random, retried on a clash).
    private static func startBroadway(_ server: String, env: [String: String]) throws -> (Child, String) {
        for _ in 0..<8 {
            let n = Int.random(in: 100...900)
            let b = try Child(server, [":\(n)"], env: env)
            if (try? waitUntil("\(server) :\(n) listening", timeout: 10, {
                if !b.isRunning { throw TimedOut(description: "\(server) exited: \(b.stderr)") }
                return (b.stdout + b.stderr).contains("Listening on")
            })) != nil {
                return (b, ":\(n)")
            }
            b.stop(SIGKILL)
        }
        throw TimedOut(description: "could not start \(server)")
    }

    /// Starts the libadwaita app on the GTK 4 display (the stack must have been made with `gtk4: true`); the
    /// caller stops it.
    func startLibadwaitaApp() throws -> Child {
        guard let gtk4Display else { throw TimedOut(description: "no GTK 4 display: make the stack with gtk4: true") }
        var env = sandbox.env
        env["BROADWAY_DISPLAY"] = gtk4Display
        return try Child("/usr/bin/python3", [Self.adwScript], env: env)
    }

    /// Switches the desktop's style the way GNOME Settings does.
    func gsettings(_ value: String) throws {
        let r = try sandbox.run("/usr/bin/gsettings", ["set", "org.gnome.desktop.interface", "color-scheme", value])
        guard r.status == 0 else { throw TimedOut(description: "gsettings set failed: \(r.err)") }
    }

    /// A method call on the bus with `gdbus call`, as any client would make it: its printed answer
    /// (`(<<uint32 1>>,)`), or the error it printed.
    func call(_ destination: String, _ method: String, _ args: [String]) throws -> (ok: Bool, out: String) {
        let r = try sandbox.run("/usr/bin/gdbus", ["call", "--session", "--timeout", "20", "--dest", destination,
                                                  "--object-path", "/org/freedesktop/portal/desktop", "--method", method] + args)
        return (r.status == 0, r.status == 0 ? r.out.trimmingCharacters(in: .whitespacesAndNewlines) : r.err)
    }

    /// The portal frontend's answer to `Read(org.freedesktop.appearance, key)`.
    func frontendRead(_ key: String = "color-scheme") throws -> String {
        let r = try call("org.freedesktop.portal.Desktop", "org.freedesktop.portal.Settings.Read", ["org.freedesktop.appearance", key])
        guard r.ok else { throw TimedOut(description: "the portal's Read failed: \(r.out)") }
        return r.out
    }

    /// Records the portal frontend's SettingChanged signals for `org.freedesktop.appearance` `color-scheme`
    /// (with `gdbus monitor`); `values` are the numbers they carried, in order.
    func recordColorSchemeSignals() throws -> SignalRecorder {
        let monitor = try Child("/usr/bin/gdbus", ["monitor", "--session", "--dest", "org.freedesktop.portal.Desktop"], env: sandbox.env)
        // gdbus prints "Monitoring signals …" once its match is in place.
        try waitUntil("gdbus monitor to start; stderr: \(monitor.stderr)") { monitor.stdout.contains("Monitoring signals") }
        return SignalRecorder(monitor)
    }
}

/// SettingChanged signals seen on the portal frontend, as `gdbus monitor` prints them.
final class SignalRecorder: @unchecked Sendable {
    let monitor: Child

    init(_ monitor: Child) { self.monitor = monitor }

    deinit { monitor.stop(SIGKILL) }

    /// The color-scheme values signalled so far.
    var values: [UInt32] {
        monitor.lines.compactMap { line -> UInt32? in
            guard line.contains("org.freedesktop.portal.Settings.SettingChanged"),
                  line.contains("'org.freedesktop.appearance', 'color-scheme'"),
                  let start = line.range(of: "<uint32 ") else { return nil }
            return UInt32(line[start.upperBound...].prefix { $0.isNumber })
        }
    }

    /// Waits until `count` values have been signalled and returns them all.
    func wait(for count: Int) throws -> [UInt32] {
        try waitUntil("\(count) SettingChanged for color-scheme; seen: \(monitor.stdout)") { values.count >= count }
        return values
    }
}

@Suite struct RealPortalTests {
    /// The user's story: the desktop switches, `watch` follows; a forced mode masks the desktop;
    /// `set system` brings the desktop's value back.
    @Test func followsTheDesktopThroughTheRealPortal() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s)
        defer { stack.close() }
        try stack.gsettings("default")
        try s.startDaemon()

        let status = try s.ctl("status").out
        #expect(status.contains("system:      no-preference (portal v1"), "\(status)")

        let w = try s.start(Bin.ctl, ["watch"])
        #expect(try w.waitForLines(1) == ["light"])

        try stack.gsettings("prefer-dark")
        #expect(try w.waitForLines(2) == ["light", "dark"])
        try stack.gsettings("prefer-light")
        #expect(try w.waitForLines(3) == ["light", "dark", "light"])

        // Forced dark: desktop changes are seen by the daemon but change nothing for subscribers.
        #expect(try s.ctl("set", "dark").out == "dark\n")
        #expect(try w.waitForLines(4).last == "dark")
        try stack.gsettings("default")
        try waitUntil("the daemon to see no-preference") { try s.ctl("get", "--json").out.contains(#""system":"no-preference""#) }
        try stack.gsettings("prefer-dark")
        try waitUntil("the daemon to see dark") { try s.ctl("get", "--json").out.contains(#""system":"dark""#) }
        try stack.gsettings("prefer-light")
        try waitUntil("the daemon to see light") { try s.ctl("get", "--json").out.contains(#""system":"light""#) }

        // Back to following the system: light. The watch printed nothing in between.
        #expect(try s.ctl("set", "system").out == "light\n")
        #expect(try w.waitForLines(5) == ["light", "dark", "light", "dark", "light"])
        #expect(try s.ctl("get", "--json").out.contains(#""source":"system""#))
    }

    @Test func startsDarkWhenTheDesktopIsDark() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s)
        defer { stack.close() }
        try stack.gsettings("prefer-dark")
        try s.startDaemon()
        // The first answer is already the desktop's: requests wait for the first reading.
        #expect(try s.ctl("get").out == "dark\n")
    }
}
