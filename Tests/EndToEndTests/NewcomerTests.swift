import Foundation
import Testing

/// A newcomer's second walk (issue 29), each stumble as it behaves now.
@Suite struct NewcomerTests {
    /// The example copied under its own name: `status` and the log say which file the daemon reads.
    @Test(.timeLimit(.minutes(1)))
    func aMisnamedConfigIsNamed() throws {
        let s = try Sandbox()
        let dir = s.root + "/config/appearanced"
        try s.write("default-mode = \"dark\"\n", to: dir + "/appearanced.toml")
        try s.write("[tokens]\n", to: dir + "/palette.toml")
        let d = try s.startDaemon()
        let hint = "found appearanced.toml; appearanced reads config.toml"
        let status = try s.ctl("status").out
        #expect(status.contains("config:      \(s.configFile): no such file (the defaults); \(hint)"), "\(status)")
        try d.waitForStderr(hint)
    }

    /// The palette alone is not a misnamed config.
    @Test(.timeLimit(.minutes(1)))
    func thePaletteAloneIsNoHint() throws {
        let s = try Sandbox()
        try s.write("[tokens]\n", to: s.root + "/config/appearanced/palette.toml")
        try s.startDaemon()
        let status = try s.ctl("status").out
        #expect(status.contains("config:      \(s.configFile): no such file (the defaults)\n"), "\(status)")
    }

    /// README's command that copies the example puts it where the daemon reads it.
    @Test(.timeLimit(.minutes(1)))
    func theReadmeCopiesTheExampleToConfigToml() throws {
        let readme = try String(contentsOfFile: Repo.root + "/README.md", encoding: .utf8)
        let line = try #require(readme.split(separator: "\n").first { $0.contains("config/appearanced.toml ~/") },
                                "README.md has no command copying config/appearanced.toml")
        let command = try #require(line.firstMatch(of: /`([^`]*config\/appearanced\.toml ~\/[^`]*)`/)?.1)
        let s = try Sandbox()
        let r = try s.run("/bin/sh", ["-c", "cd '\(Repo.root)' && \(command)"])
        #expect(r.status == 0, "\(command): \(r.err)")
        let copied = s.root + "/home/.config/appearanced/config.toml"
        #expect(FileManager.default.fileExists(atPath: copied), "\(command) did not write \(copied)")
    }

    /// `appearancectl reload`: the config read again as SIGHUP does; a mistake names the file and line, exits
    /// 65, and the previous config stays in force.
    @Test(.timeLimit(.minutes(1)))
    func reloadSaysWhatItReadOrWhatIsWrong() throws {
        let s = try Sandbox.started()
        try s.write("default-mode = \"dark\"\n", to: s.configFile)
        let ok = try s.ctl("reload")
        #expect(ok.status == 0 && ok.out == "reloaded \(s.configFile)\n", "\(ok)")
        #expect(try s.ctl("get").out == "dark\n")
        try s.write("# a comment\ndefault-mode = \"blue\"\n", to: s.configFile)
        let bad = try s.ctl("reload")
        #expect(bad.status == 65, "\(bad)")
        #expect(bad.err.contains("\(s.configFile):2: default-mode: expected \"light\" or \"dark\", got \"blue\"; keeping the previous configuration"), "\(bad.err)")
        #expect(try s.ctl("get").out == "dark\n")
        let json = try s.ctl("reload", "--json")
        #expect(json.status == 64, "reload has no --json: \(json)")
    }

    /// The two imports' command lines writing to `out`, and what they write, in words.
    static func importCommand(_ which: String, _ s: Sandbox, _ out: String) throws -> (args: [String], wrote: String) {
        if which == "palette" {
            return (["palette", "import", "--light", Golden.dir + "/lfl-light.plist", "--dark", Golden.dir + "/lfl-dark.plist", "-o", out],
                    "appearancectl: wrote \(out) (7 tokens)\n")
        }
        try s.write("lat: 52.3\nlng: 4.8\nportal: true\n", to: s.root + "/darkman.yaml")
        return (["import-darkman", s.root + "/darkman.yaml", "-o", out], "appearancectl: wrote \(out) (3 settings)\n")
    }

    /// `-o FILE` never replaces a file without `--force` (exit 73, the file untouched), makes missing
    /// folders, and says what it wrote.
    @Test(arguments: ["palette", "darkman"])
    func importsRefuseToOverwriteAndSayWhatTheyWrote(which: String) throws {
        let s = try Sandbox()
        let out = s.root + "/new/folder/out.toml"
        let (args, wrote) = try Self.importCommand(which, s, out)
        let first = try s.run(Bin.ctl, args)
        #expect(first.status == 0 && first.err.hasSuffix(wrote), "\(first)")
        #expect(FileManager.default.fileExists(atPath: out))
        try s.write("precious\n", to: out)
        let again = try s.run(Bin.ctl, args)
        #expect(again.status == 73, "\(again)")
        #expect(again.err.contains("appearancectl: \(out) exists; give ") && again.err.contains("--force to replace it"), "\(again.err)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "precious\n")
        let forced = try s.run(Bin.ctl, args + ["--force"])
        #expect(forced.status == 0 && forced.err.hasSuffix(wrote), "\(forced)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) != "precious\n")
        // --force means nothing without -o.
        let stdoutOnly = try s.run(Bin.ctl, Array(args.dropLast(2)) + ["--force"])
        #expect(stdoutOnly.status == 64 && stdoutOnly.err.contains("--force goes with -o"), "\(stdoutOnly)")
    }

    /// "Wed 2026-11-26": the UTC day `days` after the one the AutomationTests sandbox's daemon believes it is.
    static func day(after offset: Int64, _ days: Int64) -> String {
        let now = Int64(Date().timeIntervalSince1970) + offset
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "EEE yyyy-MM-dd"
        return f.string(from: Date(timeIntervalSince1970: TimeInterval((now / 86_400 + days) * 86_400 + 43_200)))
    }

    /// `status` gives a date for a time that is not today, and says when an override hides the schedule.
    @Test(.timeLimit(.minutes(1)))
    func statusDatesTomorrowAndSaysTheOverrideHidesTheSchedule() throws {
        let (s, offset) = try AutomationTests.sandbox(at: 20 * 3600, config: AutomationTests.fixed)
        try s.startDaemon()
        let schedule = "schedule:    dark until \(Self.day(after: offset, 1)) 07:00 (light-at: light)"
        let status = try s.ctl("status").out
        #expect(status.contains(schedule + "\n"), "\(status)")
        #expect(try s.ctl("set", "light").status == 0)
        let hidden = try s.ctl("status").out
        #expect(hidden.contains(schedule + "; your override hides the schedule"), "\(hidden)")
        #expect(try s.ctl("set", "system").status == 0)
        #expect(try s.ctl("status").out.contains(schedule + "\n"))
    }

    /// `set MODE --until-next` says what will end it: the schedule's next change, or the desktop's own
    /// setting; the JSON output stays the state object alone.
    @Test(.timeLimit(.minutes(1)))
    func untilNextSaysWhatWillEndIt() throws {
        let (s, _) = try AutomationTests.sandbox(at: 12 * 3600, config: AutomationTests.fixed)
        try s.startDaemon()
        let r = try s.ctl("set", "dark", "--until-next")
        #expect(r.status == 0 && r.out == "dark\n", "\(r)")
        #expect(r.err.contains("dark until the schedule's next change at 19:00"), "\(r.err)")
        let j = try s.ctl("toggle", "--until-next", "--json")
        #expect(j.status == 0 && j.out.hasPrefix("{") && j.out.split(separator: "\n").count == 1, "\(j)")

        let plain = try Sandbox()
        try plain.startDaemon()
        let q = try plain.ctl("set", "dark", "--until-next")
        #expect(q.status == 0 && q.out == "dark\n", "\(q)")
        // No schedule and no desktop (no session bus): nothing automatic ends it, and it says so.
        #expect(q.err.contains("dark: nothing automatic is set up (no schedule, and the desktop gives no answer): this lasts until appearancectl set system"), "\(q.err)")
        #expect(try plain.ctl("status").out.contains("temporary:   dark until appearancectl set system (nothing automatic is set up)"))
        #expect(try plain.ctl("set", "light", "--for", "1h").err.isEmpty)
    }

    /// Every option of `appearanced --help` is in the README (`--check` was not).
    @Test func theReadmeNamesEveryDaemonOption() throws {
        let s = try Sandbox()
        let help = try s.run(Bin.daemon, ["--help"]).out
        let options = Set(help.matches(of: /(?m)^  (?:-h, )?(--[a-z-]+)/).map { String($0.1) })
        #expect(options.contains("--check") && options.count >= 5, "\(options)")
        let readme = try String(contentsOfFile: Repo.root + "/README.md", encoding: .utf8)
        for option in options where option != "--help" && option != "--version" {
            #expect(readme.contains("appearanced") && readme.contains(option), "README.md does not mention appearanced \(option)")
        }
        #expect(readme.contains("appearanced --check"))
    }

    /// The hint after `make install`: the folder of the binaries when it is not on PATH, and how to add it.
    @Test(.timeLimit(.minutes(1)))
    func theInstallHintSaysHowToReachTheBinaries() throws {
        let s = try Sandbox()
        let bin = s.root + "/prefix/bin"
        s.env["PATH"] = "/usr/bin:/bin"
        let off = try s.run("/usr/bin/make", ["-s", "--no-print-directory", "-C", Repo.root, "install-hint", "BINDIR=\(bin)"])
        #expect(off.status == 0, "\(off)")
        #expect(off.out.contains("\(bin) is not on your PATH"), "\(off.out)")
        #expect(off.out.contains("export PATH=\"\(bin):$PATH\""), "\(off.out)")
        s.env["PATH"] = "/usr/bin:\(bin):/bin"
        let on = try s.run("/usr/bin/make", ["-s", "--no-print-directory", "-C", Repo.root, "install-hint", "BINDIR=\(bin)"])
        #expect(on.status == 0 && on.out.contains("appearancectl is in \(bin), on your PATH"), "\(on.out)")
        #expect(!on.out.contains("not on your PATH"))
    }

    /// A real portal stack, whose document portal mounts `runtime/doc` (FUSE), leaves no appearanced-test-*
    /// folder behind: `make test` left one for each such test.
    @Test(.timeLimit(.minutes(1)))
    func aRealPortalStackLeavesNoSandboxBehind() throws {
        func mounted(_ path: String) -> Bool {
            let mounts = (try? Sandbox().run("/bin/cat", ["/proc/self/mounts"]).out) ?? ""
            return mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().first.map(String.init) == path }
        }
        var root = ""
        do {
            let s = try Sandbox()
            root = s.root
            let stack = try RealPortalStack(s)
            defer { stack.close() }
            try stack.gsettings("prefer-dark")
            let d = try s.startDaemon()
            defer { d.stop() }  // before the stack closes
            try waitUntil("the daemon to read dark from the portal") { try s.ctl("get").out == "dark\n" }
            try waitUntil("the document portal to mount \(root)/runtime/doc") { mounted(root + "/runtime/doc") }
        }
        #expect(!mounted(root + "/runtime/doc"))
        #expect(!FileManager.default.fileExists(atPath: root), "\(root) was left behind")
    }
}
