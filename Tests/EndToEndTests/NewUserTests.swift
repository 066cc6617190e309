import Foundation
import Testing

/// What a new user tripped over (issue "What a new user trips over"), each as it behaves now.
@Suite struct NewUserTests {
    @Test(arguments: [false, true])
    func watchFollowsTheDaemonAcrossARestart(json: Bool) throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        let w = try s.start(Bin.ctl, json ? ["watch", "--json"] : ["watch"])
        #expect(try w.waitForLines(1).count == 1)
        #expect(try s.ctl("set", "dark").status == 0)
        _ = try w.waitForLines(2)
        try d.end()
        try w.waitForStderr("waiting for it")
        d = try s.startDaemon()                      // the override survived: still dark, so no new line
        try w.waitForStderr("reconnected to appearanced")
        #expect(try s.ctl("set", "light").status == 0)
        let lines = try w.waitForLines(3)
        #expect(lines.count == 3, "\(lines)")
        if json {
            #expect(lines[2].contains(#""mode":"light""#) && lines[2].contains(#""previous":"dark""#), "\(lines)")
        } else {
            #expect(lines == ["light", "dark", "light"])
        }
        #expect(w.isRunning)
    }

    @Test func exitOnDisconnectKeepsTheOldBehaviour() throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        let w = try s.start(Bin.ctl, ["watch", "--exit-on-disconnect"])
        _ = try w.waitForLines(1)
        d.stop()
        #expect(try w.waitForExit() == 69)
    }

    @Test func statusGivesTheTrueReasonAndAKeptAsideConfig() throws {
        let s = try Sandbox()
        try s.write("default-mode = \"dark\"\n", to: s.configFile)
        let d = try s.startDaemon()
        let status = try s.ctl("status").out
        #expect(status.contains("mode:        dark (the default: the desktop gives no answer)"), "\(status)")
        #expect(status.contains("config:      \(s.configFile)\n"), "\(status)")
        try s.write("default-mode = \"blue\"\n", to: s.configFile)
        kill(d.pid, SIGHUP)
        try d.waitForStderr("keeping the previous configuration")
        let after = try s.ctl("status").out
        #expect(after.contains(#"config:      \#(s.configFile): not used, default-mode: expected "light" or "dark", got "blue" (line 1); keeping the previous configuration"#), "\(after)")
    }

    @Test(arguments: [
        (["--socket=", "get"], "option --socket needs a path (--socket= is empty)"),
        (["help", "frobnicate"], #"help: unknown command "frobnicate""#),
        (["color", "fill.bg", "--json"], "color does not take --json"),
        (["asset", "wallpaper", "--json"], "asset does not take --json"),
        (["palette", "--format", "css", "--json"], "palette does not take --json (use --format json)"),
        (["palette", "--color=never"], "palette: --color goes with --preview"),
        (["palette", "--preview", "--color=sometimes"], #"invalid --color "sometimes""#),
        (["get", "--exit-on-disconnect"], "--exit-on-disconnect is an option of watch"),
    ])
    func flagsMeanWhatTheySayOrAreUsageErrors(args: [String], message: String) throws {
        let s = try Sandbox()
        let r = try s.run(Bin.ctl, args)
        #expect(r.status == 64 && r.err.contains(message), "\(args): \(r.err)")
    }

    @Test func aPathThatIsNotASocketSaysSo() throws {
        let s = try Sandbox()
        let r = try s.run(Bin.ctl, ["--socket", s.root, "get"])
        #expect(r.status == 69 && r.err.contains("\(s.root) is a directory, not a socket"), "\(r.err)")
        #expect(!r.err.contains("systemctl"))
        try s.write("x", to: s.root + "/file")
        let f = try s.run(Bin.ctl, ["--socket", s.root + "/file", "get"])
        #expect(f.status == 69 && f.err.contains("is a regular file, not a socket"), "\(f.err)")
    }
}

/// Coming from darkman: its config becomes appearanced's, and what has no equivalent is said.
@Suite struct DarkmanImportTests {
    @Test func aDarkmanConfigBecomesAScheduleThatTheDaemonAccepts() throws {
        let s = try Sandbox()
        try s.write("""
            # darkman
            lat: 52.3
            lng: 4.8
            usegeoclue: true
            dbusserver: true
            portal: true

            """, to: s.root + "/config/darkman/config.yaml")
        let r = try s.run(Bin.ctl, ["import-darkman", "-o", s.configFile])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.contains("usegeoclue: kept the lat and lng written here, which win over a location service"))
        let toml = try String(contentsOfFile: s.configFile, encoding: .utf8)
        #expect(toml.contains("darkman-dbus = true"), "\(toml)")
        #expect(toml.contains("[schedule]\nlatitude = 52.3\nlongitude = 4.8\n") && toml.contains("portal-backend = \"auto\""), "\(toml)")
        #expect(try s.run(Bin.daemon, ["--check"]).status == 0)
    }

    /// The README's order: the schedule step wrote config.toml, then import-darkman -o it: refused (73) with
    /// the way to merge; --merge adds what the file lacks, keeping every byte of it, and names what it added.
    @Test func importDarkmanMergesIntoAConfigThatExists() throws {
        let s = try Sandbox()
        let mine = "# mine\n[schedule]\nlight-at = \"07:00\"\ndark-at = \"19:30\"\n"
        try s.write(mine, to: s.configFile)
        #expect(chmod(s.configFile, 0o640) == 0)
        try s.write("lat: 52.3\nlng: 4.8\ndbusserver: false\n", to: s.root + "/config/darkman/config.yaml")
        let refused = try s.run(Bin.ctl, ["import-darkman", "-o", s.configFile])
        #expect(refused.status == 73 && refused.err.contains("exists; give --merge to add to it what it lacks, or --force to replace it"), "\(refused)")
        let r = try s.run(Bin.ctl, ["import-darkman", "-o", s.configFile, "--merge"])
        #expect(r.status == 0 && r.err.contains("added to \(s.configFile): darkman-dbus, schedule.latitude, schedule.longitude"), "\(r)")
        let merged = try String(contentsOfFile: s.configFile, encoding: .utf8)
        #expect(merged == "# mine\n# darkman dbusserver: false\ndarkman-dbus = false\n\n[schedule]\nlight-at = \"07:00\"\ndark-at = \"19:30\"\nlatitude = 52.3\nlongitude = 4.8\n", "\(merged)")
        let mode = try FileManager.default.attributesOfItem(atPath: s.configFile)[.posixPermissions] as? Int
        #expect(mode == 0o640)
        #expect(try s.run(Bin.daemon, ["--check"]).status == 0)
        // Again: nothing to add. A conflict: named, the file untouched.
        #expect(try s.run(Bin.ctl, ["import-darkman", "-o", s.configFile, "--merge"]).err.contains("has every setting already; nothing written"))
        try s.write("lat: 48.1\nlng: 11.6\n", to: s.root + "/config/darkman/config.yaml")
        let conflict = try s.run(Bin.ctl, ["import-darkman", "-o", s.configFile, "--merge"])
        #expect(conflict.status == 65 && conflict.err.contains("schedule.latitude is 52.3 there, 48.1 in the import"), "\(conflict)")
        #expect(try String(contentsOfFile: s.configFile, encoding: .utf8) == merged)
    }

    /// A setting it does not know (`foo: bar`) or cannot use is named and left out; the rest is converted.
    @Test(arguments: [
        ("lat: 95\nlng: 4\ndbusserver: false\n", "config.yaml:1: lat: expected a latitude from -90 to 90, got \"95\""),
        ("lat: 52\ndbusserver: false\n", "left out lat: "),
        ("foo: bar\ndbusserver: false\n", "config.yaml:1: unknown darkman setting \"foo\""),
        ("portal: maybe\ndbusserver: false\n", "config.yaml:1: portal: expected true or false, got \"maybe\""),
    ])
    func whatCannotBeUsedIsNamedAndTheRestConverted(text: String, message: String) throws {
        let s = try Sandbox()
        try s.write(text, to: s.root + "/d/config.yaml")
        let r = try s.run(Bin.ctl, ["import-darkman", s.root + "/d/config.yaml"])
        #expect(r.status == 0 && r.err.contains("appearancectl: left out ") && r.err.contains(message), "\(r.err)")
        #expect(r.out.contains("darkman-dbus = false"), "\(r.out)")
    }
}
