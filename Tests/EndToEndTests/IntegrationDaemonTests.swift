import Foundation
import Testing
import TestSupport

/// The daemon's side of the integrations: `appearancectl integrations`, enabling and disabling, a run on every
/// change of the app's own mode (per-app overrides included), the settings from config.toml, the enabled set
/// across restarts, and every refusal with the name of what was wrong. The integrations themselves are
/// tested in IntegrationScriptTests and IntegrationProgramTests.
@Suite struct IntegrationDaemonTests {
    /// An integration of the user's own in ~/.config/appearanced/integrations that records each run.
    static func recorder(_ s: Sandbox, name: String = "rec", fail: Bool = false) throws -> String {
        let record = s.root + "/\(name).record"
        try HookTests.script(s, s.root + "/config/appearanced/integrations/" + name, """
            case "$1" in
            apply) echo "apply $APPEARANCE $DARKMODE app=$APPEARANCE_APP prev=$APPEARANCE_PREVIOUS color=$APPEARANCE_OPT_DARK_COLOR dir=$APPEARANCE_INTEGRATION_DIR cause=$APPEARANCE_CAUSE" >> \(record) ;;
            restore) echo "restore mode=$APPEARANCE" >> \(record) ;;
            available) echo "found: the recorder"; exit 0 ;;
            describe) echo "what: records its runs"; echo "touches: \(record)"; echo "settings: dark-color (a word)" ; exit 0 ;;
            *) exit 64 ;;
            esac
            \(fail ? "if [ \"$1\" = apply ]; then echo 'rec: the program refused the theme' >&2; exit 3; fi" : "")
            """)
        return record
    }

    @Test(.timeLimit(.minutes(2)))
    func enablingAppliesAtOnceThenEveryRealChangeAndDisablingRestores() throws {
        let s = try Sandbox()
        let record = try Self.recorder(s)
        try s.write("[integrations.rec]\ndark-color = \"navy\"\n", to: s.configFile)
        try s.startDaemon()
        let listed = try s.ctl("integrations")
        #expect(listed.status == 0 && listed.out.contains("rec: off\n  program:  found: the recorder\n  changes:  records its runs"), "\(listed)")
        #expect(!FileManager.default.fileExists(atPath: record), "nothing runs before it is enabled")

        let enabled = try s.ctl("integrations", "enable", "rec")
        #expect(enabled.status == 0 && enabled.out.hasPrefix("rec: enabled; apply light at ") && enabled.out.hasSuffix(": ok\n"), "\(enabled)")
        let dir = s.root + "/state/appearanced/integrations/rec"
        #expect(HookTests.lines(record) == ["apply light 0 app=rec prev= color=navy dir=\(dir) cause=integration enabled"])
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(try String(contentsOfFile: s.root + "/state/appearanced/integrations.json", encoding: .utf8) == #"{"enabled":["rec"]}"# + "\n")

        #expect(try s.ctl("set", "dark").status == 0)
        try waitUntil("the dark run; \(HookTests.lines(record))") { HookTests.lines(record).count == 2 }
        #expect(HookTests.lines(record)[1].hasPrefix("apply dark 1 app=rec prev=light color=navy "), "\(HookTests.lines(record))")
        // No real change, no run: the same override again, then a toggle there and back (two runs).
        #expect(try s.ctl("set", "dark").status == 0)
        #expect(try s.ctl("toggle").status == 0)
        #expect(try s.ctl("toggle").status == 0)
        try waitUntil("the toggles' runs; \(HookTests.lines(record))") { HookTests.lines(record).count == 4 }
        #expect(HookTests.lines(record).suffix(2).map { $0.prefix(12) } == ["apply light ", "apply dark 1"])
        let status = try s.ctl("status").out
        #expect(status.contains("integrations: 1 enabled (rec): ok"), "\(status)")

        let disabled = try s.ctl("integrations", "disable", "rec")
        #expect(disabled.status == 0 && disabled.out.hasPrefix("rec: disabled; restore at "), "\(disabled)")
        #expect(HookTests.lines(record).last == "restore mode=")
        #expect(try s.ctl("set", "light").status == 0)
        #expect(try s.ctl("integrations", "--json").out.contains(#""name":"rec","path":"\#(s.root)/config/appearanced/integrations/rec","enabled":false"#))
        #expect(HookTests.lines(record).count == 5, "a disabled integration is not run: \(HookTests.lines(record))")
        // Enabling one already enabled (or disabling one that is off) runs nothing and says so.
        let again = try s.ctl("integrations", "disable", "rec")
        #expect(again.status == 0 && again.out == "rec: disabled; nothing to do\n", "\(again)")
    }

    @Test(.timeLimit(.minutes(2)))
    func anAppOverrideReachesItsIntegrationAlone() throws {
        let s = try Sandbox()
        let rec = try Self.recorder(s, name: "rec")
        let other = try Self.recorder(s, name: "other")
        try s.startDaemon()
        #expect(try s.ctl("integrations", "enable", "rec", "other").status == 0)
        #expect(HookTests.lines(rec).count == 1 && HookTests.lines(other).count == 1)
        // rec's app is kept dark: rec runs, other does not.
        #expect(try s.ctl("set", "dark", "--app", "rec").status == 0)
        try waitUntil("rec's dark run") { HookTests.lines(rec).count == 2 }
        #expect(HookTests.lines(rec)[1].hasPrefix("apply dark 1 app=rec prev=light "))
        // Everyone dark: only other changes (rec already is).
        #expect(try s.ctl("set", "dark").status == 0)
        try waitUntil("other's dark run") { HookTests.lines(other).count == 2 }
        // Everyone light again: rec keeps its own dark.
        #expect(try s.ctl("set", "light").status == 0)
        try waitUntil("other's light run") { HookTests.lines(other).count == 3 }
        // Its override removed: rec follows everyone's light.
        #expect(try s.ctl("set", "system", "--app", "rec").status == 0)
        try waitUntil("rec's light run") { HookTests.lines(rec).count == 3 }
        #expect(HookTests.lines(rec)[2].hasPrefix("apply light 0 app=rec prev=dark "))
        #expect(HookTests.lines(rec).count == 3 && HookTests.lines(other).count == 3, "\(HookTests.lines(rec)) \(HookTests.lines(other))")
    }

    @Test(.timeLimit(.minutes(2)))
    func theEnabledSetSurvivesARestartAndIsAppliedAtStart() throws {
        let s = try Sandbox()
        let record = try Self.recorder(s)
        var d = try s.startDaemon()
        #expect(try s.ctl("integrations", "enable", "rec").status == 0)
        #expect(try s.ctl("set", "dark").status == 0)
        try waitUntil("the dark run") { HookTests.lines(record).count == 2 }
        d.stop()
        _ = try d.waitForEnd()
        d = try s.startDaemon()
        try waitUntil("the start-up run; \(HookTests.lines(record))") { HookTests.lines(record).count == 3 }
        #expect(HookTests.lines(record)[2].hasPrefix("apply dark 1 app=rec prev= ") && HookTests.lines(record)[2].hasSuffix("cause=start"))
    }

    @Test(.timeLimit(.minutes(2)))
    func refusalsNameWhatWasWrong() throws {
        let s = try Sandbox()
        _ = try Self.recorder(s, name: "broken", fail: true)
        let d = try s.startDaemon()
        let unknown = try s.ctl("integrations", "enable", "nosuch")
        #expect(unknown.status == 65 && unknown.err.contains(#"no integration named "nosuch" (found: broken; searched \#(s.root)/config/appearanced/integrations"#), "\(unknown)")
        let invalid = try s.ctl("integrations", "enable", "../x")
        #expect(invalid.status == 64 && invalid.err.contains(#"invalid name "../x""#), "\(invalid)")
        let verb = try s.ctl("integrations", "start", "x")
        #expect(verb.status == 64 && verb.err.contains("expected list, enable NAME... or disable NAME..."), "\(verb)")
        // Over the socket: a name that is not a string, and a name in both lists.
        let client = try RawClient(s.socket)
        let raw = try client.request(#"{"jsonrpc":"2.0","id":1,"method":"integrations","params":{"enable":[1]}}"#)
        #expect(raw.contains(#""code":-32602"#) && raw.contains("must be an array of at most 64 names"), "\(raw)")
        let both = try client.request(#"{"jsonrpc":"2.0","id":1,"method":"integrations","params":{"enable":["a"],"disable":["a"]}}"#)
        #expect(both.contains(#"\"a\" is in both"#), "\(both)")
        // A failing integration: exit 65, its own words in the CLI, `integrations` and the journal; left off.
        let failed = try s.ctl("integrations", "enable", "broken")
        #expect(failed.status == 65 && failed.out.hasPrefix("broken: enabling failed; apply light at ")
                && failed.out.hasSuffix(": exit status 3: rec: the program refused the theme; left off (what it changed is restored)\n"), "\(failed)")
        #expect(try s.ctl("status").out.contains("integrations: none enabled"))
        #expect(try s.ctl("integrations").out.contains("broken: off\n"))
        try d.waitForStderr("integration broken apply failed: exit status 3: rec: the program refused the theme; left off")
    }

    /// An integration that closes its output and hangs does not hang the list: each answer has a deadline.
    @Test(.timeLimit(.minutes(1)))
    func aHungIntegrationDoesNotHangTheList() throws {
        let s = try Sandbox()
        try HookTests.script(s, s.root + "/config/appearanced/integrations/stuck", "exec >&- 2>&-\nexec sleep 60")
        try s.startDaemon()
        let r = try s.ctl("integrations")
        #expect(r.status == 0 && r.out.contains("stuck: off\n  program:  unknown (\(s.root)/config/appearanced/integrations/stuck available did not answer within 2 s)"), "\(r)")
    }

    /// The integrations are asked side by side, under one deadline: each of these answers "available" only
    /// once it has seen the other two started, which asked one after another none but the last would.
    @Test(.timeLimit(.minutes(1)))
    func theIntegrationsAreAskedSideBySide() throws {
        let s = try Sandbox()
        for name in ["one", "two", "three"] {
            try HookTests.script(s, s.root + "/config/appearanced/integrations/" + name, """
                case "$1" in
                available)
                    touch \(s.root)/started-\(name)
                    for i in $(seq 1 36); do
                        [ "$(ls \(s.root) | grep -c '^started-')" = 3 ] && { echo "found: with the others"; exit 0; }
                        sleep 0.05
                    done
                    echo "alone"; exit 1 ;;
                describe) echo "what: waits for the others"; exit 0 ;;
                esac
                """)
        }
        try s.startDaemon()
        let r = try s.ctl("integrations")
        for name in ["one", "two", "three"] {
            #expect(r.out.contains("\(name): off\n  program:  found: with the others\n  changes:  waits for the others"), "\(r)")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func oneAnotherUserCouldHaveWrittenIsNotRun() throws {
        let s = try Sandbox()
        let record = try Self.recorder(s)
        let dir = s.root + "/config/appearanced/integrations"
        chmod(dir, 0o777)
        try s.startDaemon()
        let r = try s.ctl("integrations", "enable", "rec")
        #expect(r.status == 65 && r.out.contains("\(dir) is writable by every user; not run"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: record))
    }

    @Test(.timeLimit(.minutes(2)))
    func aCorruptEnabledFileIsKeptAsideAndNothingIsEnabled() throws {
        let s = try Sandbox()
        let record = try Self.recorder(s)
        let file = s.root + "/state/appearanced/integrations.json"
        try s.write(#"{"enabled": "rec"}"#, to: file)
        let d = try s.startDaemon()
        try d.waitForStderr("\(file) is not a valid integrations file (expected {\"enabled\": [names]}); kept it as \(file).corrupt; no integration enabled")
        #expect(try String(contentsOfFile: file + ".corrupt", encoding: .utf8) == #"{"enabled": "rec"}"#)
        #expect(try s.ctl("integrations", "--json").out.contains(#""enabled":false"#))
        #expect(!FileManager.default.fileExists(atPath: record))
    }

    @Test(.timeLimit(.minutes(2)))
    func aTrialInstanceRunsNone() throws {
        let s = try Sandbox()
        let record = try Self.recorder(s)
        let trial = s.root + "/trial"
        let socket = s.root + "/trial.sock"
        let d = try s.start(Bin.daemon, ["--socket", socket, "--state-dir", trial])
        try waitUntil("the trial daemon; \(d.stderr)") { (try? s.run(Bin.ctl, ["--socket", socket, "get"]))?.status == 0 }
        let r = try s.run(Bin.ctl, ["--socket", socket, "integrations", "enable", "rec"])
        #expect(r.status == 0 && r.out == "rec: enabled; not run: this instance runs none (a trial instance: --state-dir without --hooks)\n", "\(r)")
        #expect(try s.run(Bin.ctl, ["--socket", socket, "status"]).out.contains("integrations: 1 enabled (rec): not run (trial instance without --hooks)"))
        #expect(!FileManager.default.fileExists(atPath: record))
        #expect(FileManager.default.fileExists(atPath: trial + "/integrations.json"))
    }

    /// The shipped tmux integration through the daemon, on a private tmux server: a change of the mode reaches
    /// tmux, and an override for the app id `tmux` keeps it there.
    @Test(.timeLimit(.minutes(2)), .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "tmux is not installed (make test installs it)"))
    func theShippedTmuxIntegrationFollowsThroughTheDaemon() throws {
        let s = try Sandbox()
        s.env["APPEARANCED_INTEGRATIONS_DIR"] = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path + "/integrations"
        s.env["TMUX_TMPDIR"] = s.root + "/tmux"
        s.env["NVIM_LOG_FILE"] = s.root + "/nvim.log"
        try FileManager.default.createDirectory(atPath: s.root + "/tmux", withIntermediateDirectories: true)
        let tmux = { (args: [String]) throws -> String in try s.run("/usr/bin/tmux", ["-L", "t"] + args).out }
        _ = try tmux(["-f", "/dev/null", "new-session", "-d"])
        defer { _ = try? tmux(["kill-server"]) }
        try s.startDaemon()
        let r = try s.ctl("integrations", "enable", "tmux")
        #expect(r.status == 0, "\(r)")
        #expect(try tmux(["show", "-gv", "@appearance"]) == "light\n")
        #expect(try s.ctl("set", "dark").status == 0)
        try waitUntil("tmux to be told dark") { try tmux(["show", "-gv", "@appearance"]) == "dark\n" }
        #expect(try s.ctl("set", "light", "--app", "tmux").status == 0)
        try waitUntil("tmux to be told light") { try tmux(["show", "-gv", "@appearance"]) == "light\n" }
        #expect(try s.ctl("get").out == "dark\n")
    }
}
