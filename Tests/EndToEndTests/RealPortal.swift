import Foundation
import Testing

/// The real desktop stack, headless: a private dbus-daemon, xdg-desktop-portal and xdg-desktop-portal-gtk
/// (activated on demand by that bus) on a GTK broadway display, switched with `gsettings` as a user would.
final class RealPortalStack: @unchecked Sendable {
    let sandbox: Sandbox
    private var broadway: Child?
    private var bus: Child?

    init(_ sandbox: Sandbox) throws {
        self.sandbox = sandbox
        let portals = sandbox.root + "/portals"
        try FileManager.default.createDirectory(atPath: portals, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "/usr/share/xdg-desktop-portal/portals/gtk.portal", toPath: portals + "/gtk.portal")
        sandbox.env["XDG_DESKTOP_PORTAL_DIR"] = portals
        sandbox.env["XDG_CURRENT_DESKTOP"] = "GNOME"
        sandbox.env["GDK_BACKEND"] = "broadway"
        sandbox.env["NO_AT_BRIDGE"] = "1"
        sandbox.env["GSETTINGS_BACKEND"] = "dconf"
        sandbox.env["DISPLAY"] = nil
        sandbox.env["WAYLAND_DISPLAY"] = nil

        // broadwayd also listens on TCP 8080+N: pick a display number at random and retry on a clash.
        for _ in 0..<8 {
            let n = Int.random(in: 100...900)
            let b = try Child("/usr/bin/broadwayd", [":\(n)"], env: sandbox.env)
            if (try? waitUntil("broadwayd :\(n) listening", timeout: 10, {
                if !b.isRunning { throw TimedOut(description: "broadwayd exited: \(b.stderr)") }
                return (b.stdout + b.stderr).contains("Listening on")
            })) != nil {
                broadway = b
                sandbox.env["BROADWAY_DISPLAY"] = ":\(n)"
                break
            }
            b.stop(SIGKILL)
        }
        guard broadway != nil else { throw TimedOut(description: "could not start broadwayd") }

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
        // The portal and its backend leave with their bus; dconf-service and broadwayd must be ended by hand.
        for pid in activatedServices() { kill(pid, SIGKILL) }
        bus?.stop(SIGTERM)
        _ = try? bus?.waitForExit(timeout: 10)
        broadway?.stop(SIGKILL)
        let doc = sandbox.root + "/runtime/doc"
        if FileManager.default.fileExists(atPath: doc) { _ = try? sandbox.run("/bin/fusermount3", ["-u", doc]) }
        bus = nil
        broadway = nil
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

    /// Switches the desktop's style the way GNOME Settings does.
    func gsettings(_ value: String) throws {
        let r = try sandbox.run("/usr/bin/gsettings", ["set", "org.gnome.desktop.interface", "color-scheme", value])
        guard r.status == 0 else { throw TimedOut(description: "gsettings set failed: \(r.err)") }
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
        let d = try s.startDaemon()
        defer { d.stop() }

        let status = try s.ctl("status").out
        #expect(status.contains("system:      no-preference (portal v1"), "\(status)")

        let w = try Child(Bin.ctl, ["watch"], env: s.env)
        defer { w.stop() }
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
        let d = try s.startDaemon()
        defer { d.stop() }
        // The first answer is already the desktop's: requests wait for the first reading.
        #expect(try s.ctl("get").out == "dark\n")
    }
}
