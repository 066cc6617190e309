import AppearanceCore
import AppearanceKit
import AppearanceProtocol
import Foundation
import Testing

/// `appearancectl log` as a user meets it: the changes outlive a restart (log.jsonl next to state.json), only
/// real changes are entries (everyone's mode, and an app's own by its override), a file that cannot be used is
/// kept aside and a new one started, and the file stays within its cap however many changes come.
@Suite struct ChangeLogTests {
    static func logFile(_ s: Sandbox) -> String { s.root + "/state/appearanced/log.jsonl" }

    /// What `log --json` prints, one entry a line.
    static func entries(_ s: Sandbox, _ args: String...) throws -> [LogEntry] {
        let r = try s.run(Bin.ctl, ["log", "--json"] + args)
        #expect(r.status == 0, "\(r)")
        return try r.out.split(separator: "\n").map { try #require(LogEntry(json: JSON.parse(String($0))), "\($0)") }
    }

    /// The file's entries (appended after the reply: read once the daemon stopped, or wait for them).
    static func fileEntries(_ path: String) throws -> [LogEntry] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map { try #require(LogEntry(json: JSON.parse(String($0))), "\($0)") }
    }

    static func stopped(_ d: Child) throws {
        d.stop()
        #expect(try d.waitForExit() == 0, "\(d.stderr)")
    }

    @Test func theLogOutlivesARestartAndTheSameModeAtStartIsNoChange() throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        let c = try Child(Bin.ctl, ["set", "dark"], env: s.env)
        let pid = c.pid
        #expect(try c.waitForEnd() == 0)
        try Self.stopped(d)
        d = try s.startDaemon()
        let e = try Self.entries(s)
        #expect(e.count == 2, "\(e)")  // the restart in dark (the override) is no change
        #expect(e.first?.from == nil && e.first?.to == .light && e.first?.cause.hasPrefix("start: light") == true, "\(e)")
        #expect(e.last == LogEntry(time: e.last?.time ?? 0, from: .light, to: .dark, source: .override,
                                   cause: "override dark set by appearancectl (pid \(pid))"), "\(e)")
        let text = try s.ctl("log").out
        #expect(text.contains("light → dark") && text.contains("override dark set by appearancectl (pid \(pid))"), "\(text)")
        #expect(try Self.fileEntries(Self.logFile(s)) == e)
    }

    /// The state changed while the daemon was away: it starts in another mode than the last one logged, and
    /// says so, from that mode.
    @Test func aStartInAnotherModeIsAChangeFromTheLastOneLogged() throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        #expect(try s.ctl("set", "dark").status == 0)
        try Self.stopped(d)
        try s.write(#"{"override":"light"}"# + "\n", to: s.stateFile)
        d = try s.startDaemon()
        let e = try Self.entries(s)
        #expect(e.count == 3, "\(e)")
        #expect(e.last?.from == .dark && e.last?.to == .light && e.last?.source == .override, "\(e)")
        #expect(e.last?.cause == "start: light (override)", "\(e)")
    }

    /// A set that changes no mode (the same mode again, or the mode it already had from another source) is no
    /// entry; nor are the journal's notes (a failed hook, a desktop write, an echo: HookTests, DesktopFollowTests).
    @Test func aSetThatChangesNoModeIsNoEntry() throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        #expect(try s.ctl("set", "light").status == 0)   // light by default already: only the source changes
        #expect(try s.ctl("set", "light").status == 0)
        #expect(try s.ctl("set", "dark").status == 0)
        #expect(try s.ctl("set", "dark").status == 0)
        #expect(try s.ctl("toggle").status == 0)
        let e = try Self.entries(s)
        #expect(e.map(\.to) == [.light, .dark, .light], "\(e)")
        #expect(e.dropFirst().map(\.from) == [.light, .dark], "\(e)")
        try Self.stopped(d)
        #expect(try Self.fileEntries(Self.logFile(s)) == e)
        d = try s.startDaemon()
        #expect(try Self.entries(s) == e)
    }

    /// `set --app ID` changes that app's own mode: an entry carrying the app id (`"app"` in JSON, the id in
    /// the text), only when its mode changes; `log` with `app` (`appearancectl log --app ID`) shows only that
    /// app's.
    @Test func anAppsOwnChangeIsAnEntryWithItsID() throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        #expect(try s.ctl("set", "dark", "--app", "kitty").status == 0)
        #expect(try s.ctl("set", "dark", "--app", "kitty").status == 0)     // the same: nothing
        #expect(try s.ctl("set", "dark").status == 0)                       // everyone's: kitty was dark already
        #expect(try s.ctl("set", "system", "--app", "kitty").status == 0)   // removed, but kitty stays dark: nothing
        #expect(try s.ctl("set", "light", "--app", "kitty").status == 0)
        #expect(try s.ctl("set", "system", "--app", "kitty").status == 0)   // removed: kitty follows everyone's dark
        let e = try Self.entries(s)
        #expect(e.map(\.app) == [nil, "kitty", nil, "kitty", "kitty"], "\(e)")
        #expect(e.map(\.to) == [.light, .dark, .dark, .light, .dark], "\(e)")
        #expect(e[1].from == .light && e[1].source == .app && e[1].cause.hasPrefix("app override kitty: dark, set by appearancectl (pid "), "\(e)")
        #expect(e[4].from == .light && e[4].source == .override && e[4].cause.hasPrefix("app override kitty: system, set by"), "\(e)")
        let json = try s.ctl("log", "--json").out.split(separator: "\n")
        #expect(json[1].contains(#""source":"app","app":"kitty","cause":"#) && !json[2].contains(#""app""#), "\(json)")
        let text = try s.ctl("log").out.split(separator: "\n")
        #expect(text[1].contains("light → dark") && text[1].contains("  [kitty] app override kitty: dark, set by"), "\(text)")
        #expect(!text[2].contains("[kitty]"), "\(text)")
        // Only kitty's, through the client library's `log(app:)` (protocol param "app").
        let kitty = try AppearanceConnection(socketPath: s.socket).log(app: "kitty")
        #expect(kitty == Array(e.filter { $0.app == "kitty" }), "\(kitty)")
        #expect(try AppearanceConnection(socketPath: s.socket).log(limit: 1, app: "kitty") == [e[4]])
        // And `appearancectl log --app kitty`; APPEARANCED_APP (a terminal's own app) is not its default.
        let only = try s.ctl("log", "--app", "kitty").out.split(separator: "\n")
        #expect(only.count == 3 && only.allSatisfy { $0.contains("  [kitty] app override kitty: ") }, "\(only)")
        s.env["APPEARANCED_APP"] = "kitty"
        #expect(try s.ctl("log").out.split(separator: "\n").count == 5)
        s.env["APPEARANCED_APP"] = nil
        try Self.stopped(d)
        d = try s.startDaemon()
        #expect(try Self.entries(s) == e)
    }

    /// What a log file can hold that is not a log (garbage, a line longer than any the daemon writes, a file
    /// over the cap, a time of 2^63, invalid UTF-8, a directory): the daemon starts, keeps it aside as
    /// log.jsonl.corrupt, says so, and starts a new log that works.
    @Test(arguments: ["garbage", "a huge line", "a file over the cap", "a time of 2^63", "invalid UTF-8", "a directory"])
    func aLogThatCannotBeUsedIsKeptAsideAndANewOneStarted(_ kind: String) throws {
        let s = try Sandbox()
        let path = Self.logFile(s)
        try FileManager.default.createDirectory(atPath: s.root + "/state/appearanced", withIntermediateDirectories: true)
        let good = Array(#"{"time":1780000000,"from":null,"to":"light","source":"default","cause":"start: light"}"#.utf8) + [0x0A]
        let content: [UInt8]? = switch kind {
        case "garbage": Array("this is not a log\n".utf8)
        case "a huge line": good + Array(repeating: UInt8(ascii: "x"), count: 100_000) + [0x0A]
        case "a file over the cap": Array(repeating: 0x0A, count: 9_000_000)
        case "a time of 2^63": good + Array(#"{"time":9223372036854775808,"from":"light","to":"dark","source":"override","cause":"x"}"#.utf8) + [0x0A]
        case "invalid UTF-8": good + Array(#"{"time":1,"from":"light","to":"dark","source":"override","cause":""#.utf8) + [0xC3, 0x28, 0xFF] + Array("\"}\n".utf8)
        default: nil
        }
        if let content {
            #expect(FileManager.default.createFile(atPath: path, contents: Data(content)))
        } else {
            try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
        }
        var d = try s.startDaemon()
        try d.waitForStderr("kept it as \(path).corrupt; starting a new change log")
        #expect(d.stderr.contains("\(path) "), "\(d.stderr)")
        if let content {
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + ".corrupt")) == Data(content))
        } else {
            #expect(FileManager.default.fileExists(atPath: path + ".corrupt/inside"))
        }
        let first = try Self.entries(s)
        #expect(first.count == 1 && first[0].from == nil && first[0].to == .light, "\(first)")
        #expect(try s.ctl("set", "dark").status == 0)
        try Self.stopped(d)
        d = try s.startDaemon()
        #expect(try Self.entries(s).map(\.to) == [.light, .dark])
        #expect(!d.stderr.contains("corrupt"), "\(d.stderr)")
    }

    /// A daemon killed in the middle of an append leaves a line cut short: it is left out, said, and the
    /// rest kept.
    @Test func aLineCutShortAtTheEndIsLeftOutAndTheRestKept() throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        #expect(try s.ctl("set", "dark").status == 0)
        try Self.stopped(d)
        let path = Self.logFile(s)
        let before = try Self.fileEntries(path)
        let h = try #require(FileHandle(forWritingAtPath: path))
        h.seekToEndOfFile()
        h.write(Data(#"{"time":1780000000,"from":"dark","to":"li"#.utf8))
        h.closeFile()
        d = try s.startDaemon()
        try d.waitForStderr("\(path): left out an incomplete last line")
        #expect(try Self.entries(s) == before)
        #expect(!FileManager.default.fileExists(atPath: path + ".corrupt"))
        #expect(try s.ctl("set", "light").status == 0)
        try waitUntil("the new entry in the file") { (try? Self.fileEntries(path))?.count == 3 }
        #expect(try Self.fileEntries(path) == Self.entries(s))
    }

    /// A state directory that cannot be made (a file is in the way): the daemon runs, `log` answers from
    /// memory, the journal says the log cannot be written.
    @Test func aLogThatCannotBeWrittenCostsOnlyTheFile() throws {
        let s = try Sandbox()
        try s.write("in the way\n", to: s.root + "/state/appearanced")
        let d = try s.startDaemon()
        try d.waitForStderr("could not write the change log \(Self.logFile(s)) (")
        let e = try Self.entries(s)
        #expect(e.count == 1 && e[0].to == .light, "\(e)")
        #expect(try s.ctl("get").out == "light\n")
    }

    /// A trial instance (`--state-dir`) keeps its own log in its own directory; the session's is untouched.
    @Test func aTrialInstanceHasItsOwnLog() throws {
        let s = try Sandbox.started()
        #expect(try s.ctl("set", "dark").status == 0)
        let dir = s.root + "/trial"
        let socket = s.root + "/trial.sock"
        let trial = try s.start(Bin.daemon, ["--state-dir", dir, "--socket", socket])
        try waitUntil("the trial to answer; stderr: \(trial.stderr)") { (try? s.ctl("--socket", socket, "get"))?.status == 0 }
        #expect(try s.ctl("--socket", socket, "set", "dark").status == 0)
        try waitUntil("the trial's log file") { (try? Self.fileEntries(dir + "/log.jsonl"))?.count == 2 }
        let trialLog = try Self.fileEntries(dir + "/log.jsonl")
        #expect(trialLog.map(\.to) == [.light, .dark], "\(trialLog)")
        #expect(try s.ctl("log").out.split(separator: "\n").count == 2)
        #expect(try Self.entries(s).map(\.to) == [.light, .dark])
        #expect(try Self.fileEntries(Self.logFile(s)).count == 2)
    }

    /// More than twice the thousand entries kept, as fast as one client can ask: `log` shows the newest
    /// thousand, the file was rewritten with them and never held more than 2,000 lines, and a restart shows
    /// the same thousand.
    @Test(.timeLimit(.minutes(2)))
    func theCapHoldsAfterManyQuickChanges() throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        let client = try RawClient(s.socket)
        let changes = 2_100
        var sent = 0
        while sent < changes {
            let batch = min(100, changes - sent)
            try client.send((0..<batch).map { #"{"jsonrpc":"2.0","id":\#(sent + $0),"method":"toggle"}"# + "\n" }.joined())
            for _ in 0..<batch {
                let line = try #require(try client.line())
                #expect(line.contains(#""result""#), "\(line)")
            }
            sent += batch
        }
        let shown = try Self.entries(s)
        #expect(shown.count == 1_000)
        #expect(shown.last?.to == (changes % 2 == 0 ? .light : .dark))
        try Self.stopped(d)
        let file = try Self.fileEntries(Self.logFile(s))
        // 2,101 entries (the start and each toggle): rewritten with the newest 1,000 when the 2,001st came,
        // then appended to.
        #expect(file.count == 1_100, "\(file.count)")
        #expect(Array(file.suffix(1_000)) == shown)
        d = try s.startDaemon()
        #expect(try Self.entries(s) == shown)
    }
}
