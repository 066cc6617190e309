import Foundation
import Testing

/// README.md's "Try it without touching your session", run as written (the binaries from this build): the
/// trial instance's `set dark` leaves the session's daemon, its state file and its hooks alone.
@Suite struct TrialTests {
    /// The commands of the section's first code block, with `.build/release/` being this build's binaries.
    static func trialCommands() throws -> String {
        let readme = try String(contentsOfFile: Repo.root + "/README.md", encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "### Try it without touching your session\n").dropFirst().first,
                                   "README.md has no trial section")
        let lines = section.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let first = try #require(lines.firstIndex { $0.hasPrefix("    ") }, "the trial section has no commands")
        let block = lines[first...].prefix { $0.hasPrefix("    ") }.map { String($0.dropFirst(4)) }
        return block.joined(separator: "\n").replacingOccurrences(of: ".build/release/", with: Bin.dir + "/")
    }

    @Test(.timeLimit(.minutes(1)))
    func theReadmesTrialTouchesNothingOfTheSession() throws {
        let s = try Sandbox()
        s.env["TMPDIR"] = s.root
        try s.startDaemon()
        #expect(try s.ctl("set", "light").status == 0)
        let saved = try Data(contentsOf: URL(fileURLWithPath: s.stateFile))
        // A hook of the user's that leaves a mark when it runs.
        let hooks = s.root + "/config/appearanced/hooks.d"
        try s.write("#!/bin/sh\necho \"$APPEARANCE\" >> '\(s.root)/hook-ran'\n", to: hooks + "/mark")
        #expect(chmod(hooks + "/mark", 0o755) == 0)

        let script = try Self.trialCommands()
        #expect(script.contains("--state-dir"), "\(script)")
        let r = try s.run("/bin/sh", ["-e", "-c", script])
        #expect(r.status == 0, "\(script)\n\(r.out)\(r.err)")
        #expect(r.out.hasPrefix("dark\n"), "\(r.out)")
        #expect(r.out.contains("override:    dark") && r.out.contains("hooks:       off"), "\(r.out)")

        // The session's daemon, its state and its hooks: as they were.
        #expect(try s.ctl("get").out == "light\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: s.stateFile)) == saved)
        #expect(!FileManager.default.fileExists(atPath: s.root + "/hook-ran"))
        // The trial cleaned up after itself.
        let left = try FileManager.default.contentsOfDirectory(atPath: s.root).filter { $0.hasPrefix("tmp.") }
        #expect(left.isEmpty, "\(left)")
    }

    /// With the session's daemon stopped, a trial instance without --socket listens in its own folder: never on
    /// the session's socket, nor writing the session's mode file; `status` says it is a trial and why the
    /// portal, the bus and the hooks are off.
    @Test func aTrialWithoutASocketListensInItsOwnFolder() throws {
        let s = try Sandbox()
        s.env["APPEARANCED_SOCKET"] = s.socket  // even the socket the environment names is the session's
        let dir = s.root + "/trial"
        let trial = try s.start(Bin.daemon, ["--state-dir", dir])
        try waitUntil("the trial to answer on \(dir)/socket; stderr: \(trial.stderr)") {
            try s.run(Bin.ctl, ["--socket", dir + "/socket", "get"]).status == 0
        }
        #expect(!FileManager.default.fileExists(atPath: s.socket), "the trial took the session's socket")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/runtime/appearanced/mode"))
        #expect(try s.ctl("get").status == 69, "a client of the session reached the trial")
        let status = try s.run(Bin.ctl, ["--socket", dir + "/socket", "status"]).out
        for line in ["trial:       yes: its state is in \(dir);", "portal:      off (trial instance:", "bus:         off (trial instance:",
                     "hooks:       off (trial instance: --hooks runs them)"] {
            #expect(status.contains(line), "\(line) in \(status)")
        }
        #expect(!status.contains("older than protocol") && !status.contains("has no D-Bus service"), "\(status)")
    }

    /// The session daemon's own state folder is never a trial's, and no two instances share a state folder.
    @Test func aStateFolderInUseIsRefused() throws {
        let s = try Sandbox()
        let own = try s.run(Bin.daemon, ["--state-dir", s.root + "/state/appearanced/", "--socket", s.root + "/t.sock"])
        #expect(own.status == 64 && own.err.contains("is the session daemon's own state folder"), "\(own)")
        try s.startDaemon()
        let dir = s.root + "/trial"
        let first = try s.start(Bin.daemon, ["--state-dir", dir])
        try waitUntil("the first trial to answer; stderr: \(first.stderr)") { try s.run(Bin.ctl, ["--socket", dir + "/socket", "get"]).status == 0 }
        let second = try s.run(Bin.daemon, ["--state-dir", dir, "--socket", s.root + "/second.sock"])
        #expect(second.status == 1 && second.err.contains("another appearanced instance uses the state folder \(dir)"), "\(second)")
        // The session's daemon keeps its folder too: a second one on another socket is refused the same way.
        s.env["APPEARANCED_SOCKET"] = s.root + "/other.sock"
        let twin = try s.run(Bin.daemon, [])
        #expect(twin.status == 1 && twin.err.contains("another appearanced instance uses the state folder \(s.root)/state/appearanced"), "\(twin)")
        #expect(try s.run(Bin.ctl, ["--socket", s.socket, "get"]).status == 0, "the session's daemon still answers")
    }
}
