import Foundation
import Testing

/// kitty and foot, which need a display: their own config readers (Debian's kitty and foot) read what is
/// written, and stand-ins on PATH take the signals and report the versions. kitty 0.38 and later follow the
/// portal from their auto theme files, and foot 1.26 and later take their color sets' names: Debian's are
/// older, so those paths have stand-ins that report the versions, and the older paths Debian's programs.
@Suite("Integration scripts: the terminals") struct IntegrationTerminalTests {
    // MARK: kitty

    /// kitty's own config reader (kitty +runpy) reads kitty.conf with the block: the colors are the mode's,
    /// and a kitty running for this HOME gets SIGUSR1 (a stand-in: kitty needs a display).
    @Test
    func kittyConfigReadsTheModesColors() throws {
        let rig = try IntegrationRig()
        try rig.write("# mine\nbackground #123456\nfont_size 13\n", to: rig.config + "/kitty/kitty.conf")
        try rig.write("background #0a0b0c\nforeground #fefefe\n", to: rig.home + "/themes/night.conf")
        for (mode, expected) in [("dark", "Color(10, 11, 12)"), ("light", "Color(248, 248, 248)")] {
            let r = try rig.run("kitty", "apply", mode: mode, settings: ["dark": "~/themes/night.conf"])
            #expect(r.status == 0, "\(r)")
            let read = try rig.program("/usr/bin/kitty", ["+runpy", """
                from kitty.config import load_config
                import sys
                o = load_config(sys.argv[-1])
                print(o.background, o.font_size)
                """, rig.config + "/kitty/kitty.conf"])
            #expect(read.out == "\(expected) 13.0\n", "\(mode): \(read)")
        }
    }

    @Test func kittyRunningGetsSIGUSR1() throws {
        let rig = try IntegrationRig()
        let log = rig.root + "/kitty.log"
        let kitty = try rig.startStandIn("kitty", version: "kitty 0.26.5 created by Kovid Goyal", log: log)
        let r = try rig.run("kitty", "apply", mode: "dark")
        #expect(r.status == 0 && r.out.contains("kitty \(kitty.pid): reloading (dark)"), "\(r)")
        try waitUntil("SIGUSR1 in \(log)") { rig.read(log) == "ready\nUSR1\n" }
    }

    /// kitty before 0.21 quits on SIGUSR1: it is sent none.
    @Test func anOldKittyGetsNoSignal() throws {
        let rig = try IntegrationRig()
        let log = rig.root + "/kitty.log"
        let kitty = try rig.startStandIn("kitty", version: "kitty 0.20.3 created by Kovid Goyal", log: log)
        let r = try rig.run("kitty", "apply", mode: "dark")
        #expect(r.status == 0 && r.out.contains("does not reload on SIGUSR1"), "\(r)")
        #expect(kitty.isRunning && rig.read(log) == "ready\n")
    }

    // MARK: kitty 0.38 and later

    static let kitty038 = "kitty 0.38.0 created by Kovid Goyal"

    /// What Debian's kitty reads from a config file: its background color.
    static func background(_ rig: IntegrationRig, _ file: String) throws -> String {
        let read = try rig.program("/usr/bin/kitty", ["+runpy", """
            from kitty.config import load_config
            import sys
            print(load_config(sys.argv[-1]).background)
            """, file])
        return read.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func kittyFrom038GetsItsAutoThemeFilesAndKittyConfIsLeftAlone() throws {
        let rig = try IntegrationRig()
        let log = rig.root + "/kitty.log"
        let standIn = try rig.standIn("kitty", version: Self.kitty038, log: log)
        let dir = rig.config + "/kitty"
        try rig.write("# mine\nfont_size 13\n", to: dir + "/kitty.conf")
        try rig.write("background #0a0b0c\nforeground #fefefe\n", to: rig.home + "/themes/night.conf")

        let available = try rig.run("kitty", "available")
        #expect(available.status == 0 && available.out == "found: \(standIn) (kitty 0.38.0): kitty 0.38.0 follows the portal itself: "
                + "its dark-theme.auto.conf and light-theme.auto.conf are written instead of kitty.conf\n", "\(available)")

        let kitty = try Child(standIn, [], env: rig.env)
        defer { stopAndReap(kitty) }
        try waitUntil("the stand-in to start") { rig.read(log)?.contains("ready") == true }
        let dark = try rig.run("kitty", "apply", mode: "dark", settings: ["dark": "~/themes/night.conf"])
        #expect(dark.status == 0 && dark.out.contains("kitty 0.38.0 follows the portal itself") && dark.out.contains("kitty \(kitty.pid): reloading its config"), "\(dark)")
        #expect(try Self.background(rig, dir + "/dark-theme.auto.conf") == "Color(10, 11, 12)")
        #expect(try Self.background(rig, dir + "/light-theme.auto.conf") == "Color(248, 248, 248)")
        #expect(try Self.background(rig, dir + "/no-preference-theme.auto.conf") == "Color(10, 11, 12)", "no preference: the mode's")
        #expect(rig.read(dir + "/kitty.conf") == "# mine\nfont_size 13\n")
        #expect(!FileManager.default.fileExists(atPath: dir + "/appearanced.conf"))
        try waitUntil("SIGUSR1 in \(log)") { rig.read(log) == "ready\nUSR1\n" }

        // A switch: kitty switches itself; only the no-preference file follows the mode, and kitty is not told.
        let light = try rig.run("kitty", "apply", mode: "light", settings: ["dark": "~/themes/night.conf"])
        #expect(light.status == 0 && !light.out.contains("reloading"), "\(light)")
        #expect(try Self.background(rig, dir + "/no-preference-theme.auto.conf") == "Color(248, 248, 248)")
        #expect(rig.read(log) == "ready\nUSR1\n")

        let restore = try rig.run("kitty", "restore")
        #expect(restore.status == 0, "\(restore)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["kitty.conf"])
        #expect(rig.read(dir + "/kitty.conf") == "# mine\nfont_size 13\n")
    }

    /// kitty upgraded under an enabled integration: the block it put in kitty.conf for the older kitty is taken
    /// out, byte for byte, and appearanced.conf goes.
    @Test func kittyUpgradedTo038GetsKittyConfBack() throws {
        let rig = try IntegrationRig()
        let dir = rig.config + "/kitty"
        let mine = "# mine\r\nfont_size 13"
        try rig.write(mine, to: dir + "/kitty.conf")
        _ = try rig.standIn("kitty", version: "kitty 0.37.0 created by Kovid Goyal", log: rig.root + "/log")
        #expect(try rig.run("kitty", "apply", mode: "dark").status == 0)
        #expect(rig.read(dir + "/kitty.conf")?.contains("include appearanced.conf") == true)

        _ = try rig.standIn("kitty", version: Self.kitty038, log: rig.root + "/log")
        let r = try rig.run("kitty", "apply", mode: "dark")
        #expect(r.status == 0, "\(r)")
        #expect(rig.read(dir + "/kitty.conf") == mine)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir))
                == ["kitty.conf", "dark-theme.auto.conf", "light-theme.auto.conf", "no-preference-theme.auto.conf"])
    }

    /// Auto theme files of the user's own (kitten themes writes them): kitty follows the portal with them; the
    /// integration writes nothing.
    @Test func kittyWithAutoThemeFilesOfYourOwnIsLeftAsItIs() throws {
        let rig = try IntegrationRig()
        let dir = rig.config + "/kitty"
        try rig.write("# kitten themes: Tokyo Night\nbackground #1a1b26\n", to: dir + "/dark-theme.auto.conf")
        _ = try rig.standIn("kitty", version: Self.kitty038, log: rig.root + "/log")
        let r = try rig.run("kitty", "apply", mode: "light")
        #expect(r.status == 0 && r.out.contains("follows the portal with your own \(dir)/dark-theme.auto.conf: nothing written"), "\(r)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["dark-theme.auto.conf"])
        #expect(rig.read(dir + "/dark-theme.auto.conf") == "# kitten themes: Tokyo Night\nbackground #1a1b26\n")
        #expect(try rig.run("kitty", "restore").status == 0)
        #expect(rig.read(dir + "/dark-theme.auto.conf") == "# kitten themes: Tokyo Night\nbackground #1a1b26\n")
    }

    /// `method = "include"` keeps the included file on a kitty that could follow the portal (a per-app mode for
    /// kitty, or no portal); a method it does not know is refused.
    @Test func kittyMethodIncludeKeepsTheIncludedFile() throws {
        let rig = try IntegrationRig()
        let dir = rig.config + "/kitty"
        _ = try rig.standIn("kitty", version: Self.kitty038, log: rig.root + "/log")
        let r = try rig.run("kitty", "apply", mode: "dark", settings: ["method": "include"])
        #expect(r.status == 0, "\(r)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir)) == ["kitty.conf", "appearanced.conf"])
        let bad = try rig.run("kitty", "apply", mode: "dark", settings: ["method": "portal"])
        #expect(bad.status == 1 && bad.errLines == ["kitty: method must be auto or include, not 'portal'"], "\(bad)")
    }

    /// `appearancectl integrations` shows what `available` says.
    @Test(.timeLimit(.minutes(1)))
    func theListSaysKittyFollowsThePortal() throws {
        let rig = try IntegrationRig()
        _ = try rig.standIn("kitty", version: Self.kitty038, log: rig.root + "/log")
        rig.sandbox.env = rig.env
        rig.sandbox.env["APPEARANCED_INTEGRATIONS_DIR"] = IntegrationConfigTests.shipped
        let d = try rig.sandbox.startDaemon()
        defer { d.stop() }
        let r = try rig.sandbox.ctl("integrations")
        #expect(r.status == 0 && r.out.contains("kitty: off\n  program:  found: \(rig.root)/bin/kitty (kitty 0.38.0): kitty 0.38.0 follows the portal itself"), "\(r)")
    }

    // MARK: foot

    /// foot's own check (foot --check-config) reads foot.ini with the block and the included files.
    @Test
    func footChecksTheConfig() throws {
        let rig = try IntegrationRig()
        try rig.write("[main]\nfont=monospace:size=11\n\n[colors]\nbackground=000000\n", to: rig.config + "/foot/foot.ini")
        try rig.write("[colors]\nbackground=f8f8f8\nforeground=202020\n", to: rig.home + "/themes/day.ini")
        for mode in ["dark", "light"] {
            let r = try rig.run("foot", "apply", mode: mode, settings: ["light": "~/themes/day.ini"])
            #expect(r.status == 0, "\(r)")
            let check = try rig.program("/usr/bin/foot", ["--check-config"])
            #expect(check.status == 0, "foot --check-config: \(check)")
            #expect(check.err.contains("imported sub-configuration from \(rig.config)/foot/appearanced.ini"), "\(check)")
            #expect(check.err.contains("imported sub-configuration from \(rig.home)/themes/day.ini") == (mode == "light"), "\(check)")
        }
        // The check is a real one: a line foot does not know fails it.
        try rig.write("[main]\nno-such-option=1\n", to: rig.config + "/foot/foot.ini")
        #expect(try rig.program("/usr/bin/foot", ["--check-config"]).status != 0)
    }

    /// foot 1.23.1 and later switch running windows: SIGUSR1 shows [colors], SIGUSR2 [colors2]; new windows
    /// start with initial-color-theme. `dark-colors` says which set is dark.
    @Test func footRunningGetsTheSignalOfTheSet() throws {
        let rig = try IntegrationRig()
        let log = rig.root + "/foot.log"
        let foot = try rig.startStandIn("foot", version: "foot version: 1.23.1 +pgo +ime +graphemes -assertions", log: log)
        var expected = "ready\n"
        for (mode, darkColors, signal, set) in [("dark", "colors", "USR1", 1), ("light", "colors", "USR2", 2),
                                                ("dark", "colors2", "USR2", 2), ("light", "colors2", "USR1", 1)] {
            let r = try rig.run("foot", "apply", mode: mode, settings: ["dark-colors": darkColors])
            #expect(r.status == 0 && r.out.contains("foot \(foot.pid): SIG\(signal) (\(mode))"), "\(r)")
            expected += signal + "\n"
            try waitUntil("\(signal) in \(log)") { rig.read(log) == expected }
            #expect(rig.read(rig.config + "/foot/appearanced.ini")?.contains("initial-color-theme=\(set)\n") == true)
        }
        let bad = try rig.run("foot", "apply", mode: "dark", settings: ["dark-colors": "colors3"])
        #expect(bad.status == 1 && bad.errLines == ["foot: dark-colors must be colors or colors2, not 'colors3'"], "\(bad)")
    }

    /// Before 1.23.1, SIGUSR1 and SIGUSR2 would end foot: none is sent, and initial-color-theme (unknown
    /// there) is not written.
    @Test func anOldFootGetsNoSignal() throws {
        let rig = try IntegrationRig()
        let log = rig.root + "/foot.log"
        let foot = try rig.startStandIn("foot", version: "foot version: 1.13.1 +pgo +ime +graphemes -assertions", log: log)
        let r = try rig.run("foot", "apply", mode: "dark")
        #expect(r.status == 0 && r.out.contains("cannot switch running windows"), "\(r)")
        #expect(foot.isRunning && rig.read(log) == "ready\n")
        #expect(rig.read(rig.config + "/foot/appearanced.ini")?.contains("initial-color-theme") == false)
    }

    // MARK: foot 1.26 and later

    /// foot 1.26 names its sets [colors-dark] and [colors-light] and shows a notice for initial-color-theme=1|2:
    /// the words are written, for the set `dark-colors` says; the signals are as from 1.23.1.
    @Test func footFrom126GetsTheSetsWords() throws {
        let rig = try IntegrationRig()
        let log = rig.root + "/foot.log"
        let foot = try rig.startStandIn("foot", version: "foot version: 1.26.0 +pgo +ime +graphemes -assertions", log: log)
        var expected = "ready\n"
        for (mode, darkColors, signal, word) in [("dark", "colors", "USR1", "dark"), ("light", "colors", "USR2", "light"),
                                                 ("dark", "colors2", "USR2", "light")] {
            let r = try rig.run("foot", "apply", mode: mode, settings: ["dark-colors": darkColors])
            #expect(r.status == 0 && r.out.contains("foot \(foot.pid): SIG\(signal) (\(mode))"), "\(r)")
            expected += signal + "\n"
            try waitUntil("\(signal) in \(log)") { rig.read(log) == expected }
            #expect(rig.read(rig.config + "/foot/appearanced.ini")?.contains("initial-color-theme=\(word)\n") == true)
        }
    }
}
