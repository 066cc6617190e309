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
        let session = try s.startDaemon()
        defer { session.stop() }
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
}
