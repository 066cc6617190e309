import Foundation
import Testing

/// `[integrations.NAME]` is checked against the integrations installed, as every other key of the config is:
/// a NAME none is installed under, and a key its `describe` does not list, are mistakes naming file, line and
/// key, for `appearanced --check`, at start-up and on reload. The shipped scripts are the ones described.
@Suite struct IntegrationConfigTests {
    static let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path + "/integrations"

    /// A sandbox that finds the shipped integrations (as `make run` does) and no others.
    static func sandbox() throws -> Sandbox {
        let s = try Sandbox()
        s.env["APPEARANCED_INTEGRATIONS_DIR"] = shipped
        s.env["XDG_DATA_DIRS"] = s.root + "/nowhere"
        return s
    }

    @Test(.timeLimit(.minutes(1)))
    func checkNamesTheUnknownIntegrationAndTheUnknownSetting() throws {
        let s = try Self.sandbox()
        try s.write("default-mode = \"dark\"\n\n[integrations.kittty]\ndark = \"x\"\n", to: s.configFile)
        let name = try s.run(Bin.daemon, ["--check"])
        #expect(name.status == 78, "\(name)")
        #expect(name.err.hasPrefix("appearanced: \(s.configFile):3: integrations.kittty: no integration named \"kittty\" is installed (found: alacritty, emacs, foot, gtk, kitty, neovim, qt, tmux, vim, vscode, wallpaper)"), "\(name.err)")

        try s.write("[integrations.kitty]\ndark = \"night.conf\"\n\n# a typo\ndarkk = \"x\"\n", to: s.configFile)
        let key = try s.run(Bin.daemon, ["--check"])
        #expect(key.status == 78, "\(key)")
        #expect(key.err == "appearanced: \(s.configFile):5: integrations.kitty.darkk: unknown setting (kitty's settings: dark, light, socket, method, app)\n", "\(key.err)")

        // What describe lists, and the daemon's own `app`, are fine.
        try s.write("[integrations.kitty]\ndark = \"night.conf\"\nlight = \"day.conf\"\napp = \"term\"\n[integrations.neovim]\ndark-colorscheme = \"habamax\"\n", to: s.configFile)
        let fine = try s.run(Bin.daemon, ["--check"])
        #expect(fine.status == 0 && fine.out.hasPrefix("ok: config \(s.configFile)"), "\(fine)")
    }

    /// With none installed at all, the message says where they were looked for and how to get them.
    @Test(.timeLimit(.minutes(1)))
    func noneInstalledSaysHowToGetThem() throws {
        let s = try Sandbox()
        s.env["XDG_DATA_DIRS"] = s.root + "/nowhere"
        try s.write("[integrations.kitty]\ndark = \"x\"\n", to: s.configFile)
        let r = try s.run(Bin.daemon, ["--check"])
        #expect(r.status == 78 && r.err.contains(":1: integrations.kitty: no integration named \"kitty\" is installed (found: none); searched \(s.root)/config/appearanced/integrations")
                && r.err.contains("`make install PREFIX=~/.local`") && r.err.contains("`make run`"), "\(r)")
    }

    @Test(.timeLimit(.minutes(1)))
    func enablingInTheConfigSaysHowToEnable() throws {
        let s = try Self.sandbox()
        try s.write("[integrations]\nenabled = [\"kitty\"]\n", to: s.configFile)
        let r = try s.run(Bin.daemon, ["--check"])
        #expect(r.status == 78 && r.err == "appearanced: \(s.configFile):2: integrations.enabled: expected a table of settings ([integrations.enabled]), got an array; "
                + "integrations are enabled with `appearancectl integrations enable NAME`, not in the config, which holds their settings\n", "\(r)")
    }

    /// At start the daemon serves with the defaults and says why; a reload with the mistake keeps what is in
    /// force and answers with it (exit 65); fixed, it is taken.
    @Test(.timeLimit(.minutes(2)))
    func startAndReloadTreatItAsAnyMistake() throws {
        let s = try Self.sandbox()
        try s.write("default-mode = \"dark\"\n[integrations.kitty]\ndarkk = \"x\"\n", to: s.configFile)
        let d = try s.startDaemon()
        try d.waitForStderr("\(s.configFile):3: integrations.kitty.darkk: unknown setting (kitty's settings: dark, light, socket, method, app); using the defaults until it is fixed")
        #expect(try s.ctl("get").out == "light\n")
        let status = try s.ctl("status").out
        #expect(status.contains("config:      \(s.configFile): not used, integrations.kitty.darkk: unknown setting"), "\(status)")

        try s.write("default-mode = \"dark\"\n[integrations.kitty]\ndark = \"x\"\n", to: s.configFile)
        #expect(try s.ctl("reload").status == 0)
        #expect(try s.ctl("get").out == "dark\n")

        try s.write("default-mode = \"light\"\n[integrations.kittty]\ndark = \"x\"\n", to: s.configFile)
        let refused = try s.ctl("reload")
        #expect(refused.status == 65 && refused.err.contains("\(s.configFile):2: integrations.kittty: no integration named \"kittty\" is installed")
                && refused.err.contains("keeping the previous configuration"), "\(refused)")
        #expect(try s.ctl("get").out == "dark\n", "the previous configuration stays in force")
    }

    /// Only the integrations the config names are asked, and each at most once per version of its file: a
    /// reload that changed nothing of them runs nothing; a changed file is asked again.
    @Test(.timeLimit(.minutes(2)))
    func describeRunsOncePerFileVersionAndOnlyForTheNamedOnes() throws {
        let s = try Sandbox()
        let asked = s.root + "/asked"
        for name in ["named", "other"] {
            try HookTests.script(s, s.root + "/config/appearanced/integrations/" + name, """
                [ "$1" = describe ] || exit 0
                echo "\(name)" >> \(asked)
                echo "what: a test"; echo "touches: nothing"; echo "settings: colour (a colour, none)"
                """)
        }
        try s.write("[integrations.named]\ncolour = \"red\"\n", to: s.configFile)
        try s.startDaemon()
        try waitUntil("the start's config read") { (try? s.ctl("get"))?.status == 0 }
        #expect(HookTests.lines(asked) == ["named"])
        for _ in 0..<3 { #expect(try s.ctl("reload").status == 0) }
        #expect(HookTests.lines(asked) == ["named"], "nothing changed: not asked again")

        // A new version of the file is asked again, and what it says now counts.
        try HookTests.script(s, s.root + "/config/appearanced/integrations/named", """
            [ "$1" = describe ] || exit 0
            echo "named" >> \(asked)
            echo "what: a test"; echo "touches: nothing"; echo "settings: color (a color, none)"
            """)
        let r = try s.ctl("reload")
        #expect(r.status == 65 && r.err.contains("integrations.named.colour: unknown setting (named's settings: color, app)"), "\(r)")
        #expect(HookTests.lines(asked) == ["named", "named"])
    }

    /// One that cannot be asked is not checked, and that is said: not a reason to refuse the config.
    @Test(.timeLimit(.minutes(1)))
    func oneThatCannotBeAskedIsNotCheckedAndSaysSo() throws {
        let s = try Sandbox()
        try HookTests.script(s, s.root + "/config/appearanced/integrations/mute", "exec >&- 2>&-\nexec sleep 60")
        try HookTests.script(s, s.root + "/config/appearanced/integrations/terse", "echo 'what: says little'")
        try s.write("[integrations.mute]\nanything = 1\n[integrations.terse]\nanything = 2\n", to: s.configFile)
        let r = try s.run(Bin.daemon, ["--check"])
        #expect(r.status == 0, "\(r)")
        #expect(r.err.contains("integrations.mute: its settings are not checked: \(s.root)/config/appearanced/integrations/mute describe did not answer within 2 s"), "\(r.err)")
        #expect(r.err.contains("integrations.terse: its settings are not checked: \(s.root)/config/appearanced/integrations/terse describe gives no settings: line"), "\(r.err)")
    }
}
