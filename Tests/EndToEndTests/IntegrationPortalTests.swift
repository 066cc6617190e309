import Foundation
import Testing

/// Where a program follows the light or dark by itself, the integration says so and does it the program's way:
/// kitty 0.38 and later from its auto theme files (which it switches by the portal), Neovim 0.11 and later from
/// its terminal, foot 1.26 and later with its own words for its color sets. Debian's programs are older: these
/// are stand-ins that report those versions (Debian's own are tested on the older path in
/// IntegrationProgramTests), and kitty's own config reader (Debian's) reads what is written.
@Suite("Integration scripts: programs that follow by themselves") struct IntegrationPortalTests {
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

    // MARK: Neovim

    /// A stand-in nvim that reports 0.11 and is Debian's nvim for everything else (the servers are real).
    static func nvim011(_ rig: IntegrationRig) throws {
        try rig.writeExecutable("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'NVIM v0.11.0'; exit 0; }\nexec /usr/bin/nvim \"$@\"\n",
                                to: rig.root + "/bin/nvim")
    }

    @Test func neovimFrom011LeavesTheBackgroundToIt() throws {
        let rig = try IntegrationRig()
        try Self.nvim011(rig)
        let socket = rig.runtime + "/nvim.1001.0"
        let server = try Child("/usr/bin/nvim", ["--headless", "--clean", "--listen", socket], env: rig.env)
        defer { stopAndReap(server) }
        try waitUntil("nvim to listen on \(socket)") { FileManager.default.fileExists(atPath: socket) }
        func query(_ expr: String) throws -> String {
            let r = try rig.program("/usr/bin/nvim", ["--headless", "--clean", "--server", socket, "--remote-expr", expr])
            return (r.out + r.err).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        _ = try query("execute('set background=light')")

        let available = try rig.run("neovim", "available")
        #expect(available.out.hasPrefix("found: \(rig.root)/bin/nvim (NVIM v0.11.0): Neovim 0.11.0 follows its terminal's light or dark itself"), "\(available)")
        let none = try rig.run("neovim", "apply", mode: "dark")
        #expect(none.status == 0 && none.out == "Neovim 0.11.0 follows its terminal's light or dark itself: nothing to send (no dark-colorscheme set)\n", "\(none)")
        #expect(try query("&background") == "light", "left to Neovim")

        // A colorscheme of the user's is still sent, alone.
        let scheme = try rig.run("neovim", "apply", mode: "dark", settings: ["dark-colorscheme": "blue"])
        #expect(scheme.status == 0 && scheme.out.contains("nvim \(socket): colorscheme blue\n"), "\(scheme)")
        #expect(try query("g:colors_name") == "blue")

        // background = "always": sent as to an older Neovim.
        let always = try rig.run("neovim", "apply", mode: "light", settings: ["background": "always"])
        #expect(always.status == 0 && always.out.contains("set background=light"), "\(always)")
        #expect(try query("&background") == "light")
        let bad = try rig.run("neovim", "apply", mode: "dark", settings: ["background": "never"])
        #expect(bad.status == 1 && bad.errLines == ["neovim: background must be auto or always, not 'never'"], "\(bad)")
    }

    // MARK: foot

    /// foot 1.26 names its sets [colors-dark] and [colors-light] and shows a notice for initial-color-theme=1|2:
    /// the words are written, for the set `dark-colors` says; the signals are as from 1.23.1.
    @Test func footFrom126GetsTheSetsWords() throws {
        let rig = try IntegrationRig()
        let log = rig.root + "/foot.log"
        let standIn = try rig.standIn("foot", version: "foot version: 1.26.0 +pgo +ime +graphemes -assertions", log: log)
        let foot = try Child(standIn, [], env: rig.env)
        defer { stopAndReap(foot) }
        try waitUntil("the stand-in to start") { rig.read(log)?.contains("ready") == true }
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
