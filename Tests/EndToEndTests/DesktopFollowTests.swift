import Foundation
import Testing

/// The desktop follows: on a GNOME-shaped session (the real portal, its gtk backend, dconf and a libadwaita
/// app) appearanced writes GNOME's own color-scheme, which every portal reader follows; a flip made in GNOME
/// is the user's word.
@Suite struct DesktopFollowTests {
    static func gsettingsValue(_ stack: RealPortalStack, _ key: String = "color-scheme") throws -> String {
        try stack.sandbox.run("/usr/bin/gsettings", ["get", "org.gnome.desktop.interface", key]).out
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func setDrivesGnomesOwnSettingOncePerChange() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "GNOME", portals: ["gtk"], gtk4: true, desktopFollows: true)
        defer { stack.close() }
        try stack.gsettings("default")
        // GTK 3 apps read gtk-theme: the configured pair is written with the color-scheme.
        try s.write("[desktop]\ngtk-theme-light = \"Adwaita\"\ngtk-theme-dark = \"Adwaita-dark\"\n", to: s.configFile)
        let d = try s.startDaemon()
        // A libadwaita app, which reads the portal (GNOME's own backend behind it), not appearanced's socket.
        let app = try stack.startLibadwaitaApp()
        defer { app.stop(SIGKILL) }
        #expect(try app.waitForLines(1) == ["light"])
        #expect(try Self.gsettingsValue(stack) == "'default'")          // nothing written at start
        #expect(try s.ctl("status").out.contains("desktop:     drives GNOME's color-scheme; 0 writes"))
        #expect(try s.ctl("set", "dark").out == "dark\n")
        try waitUntil("GNOME to be dark") { try Self.gsettingsValue(stack) == "'prefer-dark'" }
        try waitUntil("GTK 3's theme to be dark") { try Self.gsettingsValue(stack, "gtk-theme") == "'Adwaita-dark'" }
        try waitUntil("the portal to say dark") { (try? stack.frontendRead()) == "(<<uint32 1>>,)" }
        try d.waitForStderr("desktop: dark is the echo of appearanced's write")
        #expect(try app.waitForLines(2) == ["light", "dark"], "stderr: \(app.stderr)")
        #expect(try s.ctl("set", "light").out == "light\n")
        try waitUntil("GNOME to be light again") { try Self.gsettingsValue(stack) == "'default'" }
        try waitUntil("GTK 3's theme to be light again") { try Self.gsettingsValue(stack, "gtk-theme") == "'Adwaita'" }
        #expect(try app.waitForLines(3) == ["light", "dark", "light"], "stderr: \(app.stderr)")
        // Writes and recognised echoes are in the daemon's journal; `log` has only the changes of the mode.
        try d.waitForStderr("desktop written: dark, ok")
        let log = try s.ctl("log").out
        #expect(log.contains("light → dark") && log.contains("dark → light"), "\(log)")
        #expect(!log.contains("desktop written") && !log.contains("is the echo of appearanced's write"), "\(log)")
        // 100 rapid changes: the desktop, appearanced and the portal end agreeing; one write per change at most.
        for i in 0..<100 { _ = try s.ctl("set", i % 2 == 0 ? "dark" : "light") }
        try waitUntil("GNOME to settle light") { try Self.gsettingsValue(stack) == "'default'" && s.ctl("get").out == "light\n" }
        let status = try s.ctl("status").out
        let writes = Int(status.split(separator: "\n").first { $0.hasPrefix("desktop:") }?
            .split(separator: ";")[1].split(separator: " ").first ?? "") ?? -1
        #expect(writes >= 2 && writes <= 102, "\(status)")
        try waitUntil("the portal to say light") { (try? stack.frontendRead()) == "(<<uint32 0>>,)" }
        try waitUntil("the libadwaita app to end light; it printed \(app.lines)") { app.lines.last == "light" }
        // The echoes never counted as the user's own flips.
        #expect(!d.stderr.contains("desktop (manual)"), "\(d.stderr)")
    }

    @Test func aFlipInGnomeIsTheUsersWordUntilTheNextTransition() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "GNOME", portals: ["gtk"], desktopFollows: true)
        defer { stack.close() }
        s.env["TZ"] = "UTC"
        s.env["APPEARANCED_TEST_CLOCK_FILE"] = s.root + "/clock-offset"
        let real = Int64(Date().timeIntervalSince1970)
        let day = (real / 86_400 + 1) * 86_400
        try s.write("\(day + 19 * 3600 - 8 - real)\n", to: s.root + "/clock-offset")   // 18:59:52
        try s.write("[schedule]\nlight-at = \"07:00\"\ndark-at = \"19:00\"\n", to: s.configFile)
        try stack.gsettings("default")
        let d = try s.startDaemon()
        #expect(try s.ctl("get").out == "light\n")
        // 19:00: the schedule writes GNOME's dark.
        try waitUntil("the schedule to make GNOME dark") { try Self.gsettingsValue(stack) == "'prefer-dark'" }
        // The user flips GNOME back to light by hand: appearanced follows, as their word.
        try stack.gsettings("default")
        try waitUntil("appearanced to take the manual flip") { try s.ctl("get", "--json").out.contains(#""source":"temporary""#) }
        #expect(try s.ctl("get").out == "light\n")
        #expect(try s.ctl("log").out.contains("desktop (manual): light"))
        // The next day, before 19:00 again: the schedule's change ends the flip, and 19:00 writes dark again.
        let now = Int64(Date().timeIntervalSince1970)
        try s.write("\(day + 86_400 + 19 * 3600 - 8 - now)\n", to: s.root + "/clock-offset")   // 18:59:52 again
        kill(d.pid, SIGHUP)
        try waitUntil("the schedule to take over; log: \((try? s.ctl("log").out) ?? ""); stderr: \(d.stderr)") {
            try s.ctl("get", "--json").out.contains(#""source":"schedule""#)
        }
        try waitUntil("19:00 to make GNOME dark again") { try Self.gsettingsValue(stack) == "'prefer-dark'" }
        #expect(try s.ctl("get").out == "dark\n")
    }

    /// `set dark` then `set system`: GNOME gets back the value it had ('default'), and appearanced follows it
    /// (light) instead of reading its own write back as the desktop's answer; across a restart too.
    @Test func setSystemGivesGnomeItsOwnValueBack() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "GNOME", portals: ["gtk"], desktopFollows: true)
        defer { stack.close() }
        try s.write("[desktop]\nfollow = \"gnome\"\n", to: s.configFile)
        try stack.gsettings("default")
        var d = try s.startDaemon()
        #expect(try s.ctl("set", "dark").out == "dark\n")
        try waitUntil("GNOME to be dark") { try Self.gsettingsValue(stack) == "'prefer-dark'" }
        try d.waitForStderr("desktop: dark is the echo of appearanced's write")
        #expect(try s.ctl("status").out.contains("its own value (default) is given back when nothing of appearanced's decides"))
        #expect(try s.ctl("set", "system").out == "light\n")
        try waitUntil("GNOME to get 'default' back") { try Self.gsettingsValue(stack) == "'default'" }
        #expect(try s.ctl("get", "--json").out.contains(#""source":"default""#))
        #expect(!(try s.ctl("status").out.contains("given back")))

        // Kept across a restart: the daemon stopped while GNOME shows its write.
        #expect(try s.ctl("set", "dark").out == "dark\n")
        try waitUntil("GNOME to be dark again") { try Self.gsettingsValue(stack) == "'prefer-dark'" }
        try d.end()
        d = try s.startDaemon()
        #expect(try s.ctl("get").out == "dark\n")  // the override, not GNOME's (appearanced's) value
        #expect(try s.ctl("set", "system").out == "light\n", "\(d.stderr) \((try? String(contentsOfFile: s.root + "/state/appearanced/desktop.json", encoding: .utf8)) ?? "no desktop.json")")
        try waitUntil("GNOME to get 'default' back after the restart") { try Self.gsettingsValue(stack) == "'default'" }
        #expect(try s.ctl("get").out == "light\n")
    }

    /// A user who flips GNOME to light and straight back to dark right after appearanced wrote dark: both flips
    /// are theirs (only a reading that matches a write in flight is appearanced's echo). The first is a
    /// temporary override; the second, a change of the desktop's value, ends it: back to the user's `set dark`,
    /// and appearanced and GNOME agree, whatever the delay.
    @Test func aQuickFlipAndFlipBackInGnomeAreBothTheUsers() throws {
        let s = try Sandbox()
        let stack = try RealPortalStack(s, desktop: "GNOME", portals: ["gtk"], desktopFollows: true)
        defer { stack.close() }
        try stack.gsettings("default")
        let d = try s.startDaemon()
        #expect(try s.ctl("set", "dark").out == "dark\n")
        try waitUntil("GNOME to be dark") { try Self.gsettingsValue(stack) == "'prefer-dark'" }
        try d.waitForStderr("desktop: dark is the echo of appearanced's write")
        try stack.gsettings("default")
        try waitUntil("appearanced to take the flip to light") {
            let j = try s.ctl("get", "--json").out
            return j.contains(#""source":"temporary""#) && j.contains(#""mode":"light""#)
        }
        try stack.gsettings("prefer-dark")
        try waitUntil("appearanced to take the flip back to dark; log: \((try? s.ctl("log").out) ?? "")") {
            try s.ctl("get").out == "dark\n"
        }
        let log = try s.ctl("log").out
        #expect(log.contains("desktop (manual): light"), "\(log)")
        #expect(try s.ctl("get", "--json").out.contains(#""source":"override""#))
        #expect(try Self.gsettingsValue(stack) == "'prefer-dark'")
        // Only appearanced's own write had an echo.
        #expect(d.stderr.components(separatedBy: "is the echo of appearanced's write").count == 2, "\(d.stderr)")
    }
}

/// KDE Plasma, with recording stand-ins for plasma-apply-colorscheme and plasma-apply-lookandfeel on PATH
/// (the exact command lines).
@Suite struct KDEFollowTests {
    /// Puts stand-ins for KDE's tools first on the sandbox's PATH; each appends its command line to the
    /// returned file.
    static func recordingTools(_ s: Sandbox, then body: String = "") throws -> String {
        let bin = s.root + "/bin", record = s.root + "/kde-calls"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for name in ["plasma-apply-colorscheme", "plasma-apply-lookandfeel"] {
            let fd = open(bin + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
            let script = Array("#!/bin/sh\necho \"\(name) $*\" >> \(record)\n\(body)".utf8)
            _ = script.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        s.env["PATH"] = bin + ":" + (s.env["PATH"] ?? "/usr/bin:/bin")
        return record
    }

    /// An unknown scheme name: plasma-apply-colorscheme says so and exits 0 (Plasma 5.27); a look-and-feel
    /// tool that fails says why. Either is a failed write in status, with the tool's words.
    @Test func anUnknownNameIsAFailedWriteWithTheToolsWords() throws {
        let s = try Sandbox()
        _ = try Self.recordingTools(s, then: #"echo "Could not find theme \"$1\". The theme should be one of the following options: BreezeDark""# + "\n")
        try s.write("[desktop]\nfollow = \"kde\"\nkde-dark = \"NoSuchScheme\"\n", to: s.configFile)
        let d = try s.startDaemon()
        #expect(try s.ctl("set", "dark").out == "dark\n")
        try waitUntil("the failure in status") {
            try s.ctl("status").out.contains(#"last: dark, failed: plasma-apply-colorscheme: Could not find theme "NoSuchScheme""#)
        }
        #expect(d.isRunning)
    }

    /// A tool that never finishes is killed after the write timeout (10 s); meanwhile and after, the daemon
    /// answers, and status says what happened. Nothing is retried.
    @Test func aWriteThatHangsIsKilledAndReported() throws {
        let s = try Sandbox()
        let record = try Self.recordingTools(s, then: "exec sleep 600\n")
        try s.write("[desktop]\nfollow = \"kde\"\n", to: s.configFile)
        let d = try s.startDaemon()
        #expect(try s.ctl("set", "dark").out == "dark\n")   // answered while the tool hangs
        try waitUntil("the tool to start") { (try? String(contentsOfFile: record, encoding: .utf8)) != nil }
        #expect(try s.ctl("get").out == "dark\n")
        try waitUntil("the hung write in status", timeout: 30) {
            try s.ctl("status").out.contains("last: dark, failed: plasma-apply-colorscheme: did not finish within 10.0 s")
        }
        #expect(d.stderr.contains("desktop: dark, failed: plasma-apply-colorscheme: did not finish within 10.0 s"))
        #expect(try String(contentsOfFile: record, encoding: .utf8) == "plasma-apply-colorscheme BreezeDark\n")  // not retried
        #expect(d.isRunning)
    }

    @Test func setRunsPlasmaApplyColorschemeWithTheConfiguredSchemes() throws {
        let s = try Sandbox()
        let record = try Self.recordingTools(s)
        try s.write("[desktop]\nfollow = \"kde\"\nkde-dark = \"MyDark\"\n", to: s.configFile)
        try s.startDaemon()
        #expect(try s.ctl("set", "dark").out == "dark\n")
        try waitUntil("the dark scheme applied") { (try? String(contentsOfFile: record, encoding: .utf8)) == "plasma-apply-colorscheme MyDark\n" }
        #expect(try s.ctl("set", "light").out == "light\n")
        try waitUntil("the light scheme applied") {
            (try? String(contentsOfFile: record, encoding: .utf8)) == "plasma-apply-colorscheme MyDark\nplasma-apply-colorscheme BreezeLight\n"
        }
        // The result is recorded once the tool has exited, a moment after it wrote its line.
        try waitUntil("status to show the last write") {
            try s.ctl("status").out.contains("desktop:     drives KDE Plasma's color scheme; 2 writes, last: light, ok")
        }
    }

    /// A look-and-feel package configured for a mode is applied instead of that mode's color scheme.
    @Test func aLookAndFeelPackageIsAppliedForTheModeThatHasOne() throws {
        let s = try Sandbox()
        let record = try Self.recordingTools(s)
        try s.write("[desktop]\nfollow = \"kde\"\nkde-look-and-feel-dark = \"org.kde.breezedark.desktop\"\n", to: s.configFile)
        try s.startDaemon()
        #expect(try s.ctl("set", "dark").out == "dark\n")
        try waitUntil("the dark look-and-feel applied") {
            (try? String(contentsOfFile: record, encoding: .utf8)) == "plasma-apply-lookandfeel --apply org.kde.breezedark.desktop\n"
        }
        #expect(try s.ctl("set", "light").out == "light\n")
        try waitUntil("the light color scheme applied (no light look-and-feel configured)") {
            (try? String(contentsOfFile: record, encoding: .utf8))
                == "plasma-apply-lookandfeel --apply org.kde.breezedark.desktop\nplasma-apply-colorscheme BreezeLight\n"
        }
        try waitUntil("status to show what is driven") {
            try s.ctl("status").out.contains("desktop:     drives KDE Plasma's look-and-feel; 2 writes, last: light, ok")
        }
    }

    @Test func aMissingToolIsAStatusLineNotACrash() throws {
        let s = try Sandbox()
        s.env["PATH"] = "/nonexistent"
        try s.write("[desktop]\nfollow = \"kde\"\n", to: s.configFile)
        let d = try s.startDaemon()
        #expect(try s.run(Bin.ctl, ["set", "dark"]).status == 0)
        try waitUntil("the failure in status") {
            try s.run(Bin.ctl, ["status"]).out.contains("last: dark, failed: plasma-apply-colorscheme: cannot run: No such file or directory")
        }
        #expect(d.isRunning)
    }
}

/// KDE's own tools for real (plasma-workspace: 411 packages, ~790 MiB, so not among `make test`'s packages;
/// `apt-get install --no-install-recommends plasma-workspace` makes these run). They run headless
/// (QT_QPA_PLATFORM=offscreen) and write the user's kdeglobals, which is what Plasma reads.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/plasma-apply-colorscheme"),
                "plasma-apply-colorscheme is not installed (apt-get install --no-install-recommends plasma-workspace)"))
struct KDERealToolTests {
    static func kdeglobals(_ s: Sandbox) -> String {
        (try? String(contentsOfFile: s.root + "/config/kdeglobals", encoding: .utf8)) ?? ""
    }

    /// The color scheme Plasma says is current, as `plasma-apply-colorscheme --list-schemes` marks it.
    static func currentScheme(_ s: Sandbox) throws -> String? {
        let out = try s.run("/usr/bin/plasma-apply-colorscheme", ["--list-schemes"]).out
        return out.split(separator: "\n").first { $0.hasSuffix("(current color scheme)") }?
            .dropFirst(3).split(separator: " ").first.map(String.init)
    }

    @Test func setWritesPlasmasLookAndFeelAndColorScheme() throws {
        let s = try Sandbox()
        s.env["QT_QPA_PLATFORM"] = "offscreen"
        // As startplasma sets it: a look-and-feel package writes its color scheme as a default, into
        // ~/.config/kdedefaults, which Plasma's session reads through XDG_CONFIG_DIRS.
        s.env["XDG_CONFIG_DIRS"] = s.root + "/config/kdedefaults:/etc/xdg"
        try s.write("[desktop]\nfollow = \"kde\"\nkde-look-and-feel-dark = \"org.kde.breezedark.desktop\"\n", to: s.configFile)
        try s.startDaemon()
        #expect(try Self.currentScheme(s) == "BreezeLight")
        #expect(try s.ctl("set", "dark").out == "dark\n")
        try waitUntil("the write to end") { try s.ctl("status").out.contains("1 write, last: dark") }
        #expect(try s.ctl("status").out.contains("1 write, last: dark, ok"))
        #expect(Self.kdeglobals(s).contains("LookAndFeelPackage=org.kde.breezedark.desktop"), "\(Self.kdeglobals(s))")
        #expect(try Self.currentScheme(s) == "BreezeDark")
        #expect(try s.ctl("set", "light").out == "light\n")
        try waitUntil("the write to end") { try s.ctl("status").out.contains("2 writes, last: light") }
        #expect(try s.ctl("status").out.contains("2 writes, last: light, ok"))
        #expect(try Self.currentScheme(s) == "BreezeLight")
    }

    @Test func unknownNamesAreFailedWritesWithTheToolsWords() throws {
        let s = try Sandbox()
        s.env["QT_QPA_PLATFORM"] = "offscreen"
        try s.write("[desktop]\nfollow = \"kde\"\nkde-dark = \"NoSuchScheme\"\nkde-look-and-feel-light = \"org.example.none\"\n", to: s.configFile)
        let d = try s.startDaemon()
        #expect(try s.ctl("set", "dark").out == "dark\n")
        try waitUntil("the unknown scheme in status") {
            try s.ctl("status").out.contains(#"last: dark, failed: plasma-apply-colorscheme: Could not find theme "NoSuchScheme""#)
        }
        #expect(try s.ctl("set", "light").out == "light\n")
        try waitUntil("the unknown look-and-feel in status") {
            try s.ctl("status").out.contains("last: light, failed: plasma-apply-lookandfeel: exit status 1: Unable to find the theme named org.example.none")
        }
        #expect(d.isRunning)
    }
}
