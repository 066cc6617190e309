import Foundation
import Testing

/// The lines of a file the command under test appends to ([] while it does not exist).
func fileLines(_ path: String) -> [String] {
    ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
}

@Suite struct WatchExecTests {
    @Test func theCommandGetsTheModeInItsEnvironment() throws {
        let s = try Sandbox.started()
        let log = s.root + "/runs"
        s.env["APPEARANCE"] = "stale"  // replaced, not duplicated
        let w = try s.start(Bin.ctl, ["watch", "--exec", "sh", "-c",
                                      #"echo "$APPEARANCE $DARKMODE $(env | grep -c '^APPEARANCE=')" >> "$0""#, log])
        try waitUntil("the initial run; have \(fileLines(log)), stderr \(w.stderr)") { fileLines(log).count == 1 }
        _ = try s.ctl("set", "dark")
        try waitUntil("the run for dark; have \(fileLines(log))") { fileLines(log).count == 2 }
        _ = try s.ctl("set", "light")
        try waitUntil("the run for light; have \(fileLines(log))") { fileLines(log).count == 3 }
        #expect(fileLines(log) == ["light 0 1", "dark 1 1", "light 0 1"])
        #expect(w.stdout.isEmpty)
        w.stop(SIGTERM)
        #expect(try w.waitForExit() == 0)
    }

    @Test func noInitialRunsOnlyOnChanges() throws {
        let s = try Sandbox.started()
        let log = s.root + "/runs"
        let w = try s.start(Bin.ctl, ["watch", "--no-initial", "--exec", "sh", "-c", #"echo "$APPEARANCE" >> "$0""#, log])
        // Once the watch has subscribed (the daemon counts it), a change is its first run.
        try waitUntil("the watch to subscribe") { (try? s.ctl("status", "--json").out.contains(#""subscribers":1"#)) == true }
        _ = try s.ctl("toggle")
        try waitUntil("a run; have \(fileLines(log)), stderr \(w.stderr)") { !fileLines(log).isEmpty }
        #expect(fileLines(log) == ["dark"])
    }

    @Test func runsNeverOverlapAndTheLastRunSeesTheFinalState() throws {
        let s = try Sandbox.started()
        let log = s.root + "/runs"
        let w = try s.start(Bin.ctl, ["watch", "--exec", "sh", "-c",
                                      #"echo "start $APPEARANCE" >> "$0"; sleep 0.02; echo "end $APPEARANCE" >> "$0""#, log])
        try waitUntil("the initial run; have \(fileLines(log))") { fileLines(log) == ["start light", "end light"] }
        // A burst of changes, while runs are in progress.
        let c = try RawClient(s.socket)
        var final = ""
        for i in 0..<41 {
            try c.send(#"{"jsonrpc":"2.0","id":\#(i),"method":"toggle"}"# + "\n")
            let reply = try #require(try c.line())
            final = reply.contains(#""mode":"dark""#) ? "dark" : "light"
        }
        #expect(final == "dark")
        var lines: [String] = []
        try waitUntil("a run that ends with the final state; have \(lines), stderr \(w.stderr)") {
            lines = fileLines(log)
            return lines.last == "end \(final)"
        }
        // Strictly start, end, start, end…: no run began before the previous one ended.
        for (i, line) in lines.enumerated() {
            let expected = i % 2 == 0 ? "start " : "end "
            #expect(line.hasPrefix(expected), "line \(i) of \(lines)")
            if i % 2 == 1 { #expect(line.dropFirst(4) == lines[i - 1].dropFirst(6), "line \(i) of \(lines)") }
        }
        #expect(w.isRunning)
    }

    @Test func aFailingCommandIsReportedAndWatchingGoesOn() throws {
        let s = try Sandbox.started()
        let log = s.root + "/runs"
        let w = try s.start(Bin.ctl, ["watch", "--exec", "sh", "-c", #"echo "$APPEARANCE" >> "$0"; exit 3"#, log])
        try w.waitForStderr("sh exited with status 3 (APPEARANCE=light)")
        _ = try s.ctl("set", "dark")
        try w.waitForStderr("sh exited with status 3 (APPEARANCE=dark)")
        #expect(fileLines(log) == ["light", "dark"])

        // A command that cannot be run at all is a usage error at once, not a report on every change.
        let missing = s.root + "/no-such-command"
        let r = try s.run(Bin.ctl, ["watch", "--exec", missing, "arg"])
        #expect(r.status == 64 && r.err.contains("watch: cannot run \(missing): No such file or directory"), "\(r.err)")
        let r2 = try s.run(Bin.ctl, ["watch", "--exec", "no-such-program-anywhere"])
        #expect(r2.status == 64 && r2.err.contains("cannot run no-such-program-anywhere: not found in PATH"), "\(r2.err)")
        #expect(w.isRunning)
    }

    @Test func theWatchFollowsTheDaemonAcrossARestart() throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        let log = s.root + "/runs"
        let w = try s.start(Bin.ctl, ["watch", "--exec", "sh", "-c", #"echo "$APPEARANCE" >> "$0""#, log])
        try waitUntil("the initial run") { fileLines(log) == ["light"] }
        try d.end(SIGKILL)
        try w.waitForStderr("lost the connection to appearanced")
        try s.write("default-mode = \"dark\"\n", to: s.configFile)
        d = try s.startDaemon()
        try w.waitForStderr("reconnected to appearanced")
        try waitUntil("the run for the new mode; have \(fileLines(log))") { fileLines(log) == ["light", "dark"] }
    }

    @Test func usageErrors() throws {
        let s = try Sandbox()
        for args in [["watch", "--exec"], ["get", "--exec", "true"], ["watch", "--no-initial"], ["watch", "--json", "--exec", "true"]] {
            let r = try s.run(Bin.ctl, args)
            #expect(r.status == 64, "\(args): \(r)")
        }
        // No daemon: the same status as every other command.
        #expect(try s.ctl("watch", "--exec", "true").status == 69)
    }
}
