import Foundation
import Testing

/// Hooks (darkman's dark-mode.d/light-mode.d and appearanced's hooks.d) run by the real daemon.
@Suite struct HookTests {
    /// Writes an executable shell script, with a close-on-exec descriptor: a process the test runner starts
    /// meanwhile (tests run in parallel) must not inherit it open for writing, or running the script fails
    /// with ETXTBSY for as long as that process lives.
    static func script(_ s: Sandbox, _ path: String, _ body: String, executable: Bool = true) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, executable ? 0o755 : 0o644)
        guard fd >= 0 else { throw TimedOut(description: "cannot create \(path): \(String(cString: strerror(errno)))") }
        let bytes = Array(("#!/bin/sh\n" + body + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { throw TimedOut(description: "cannot write \(path)") }
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test func darkmanDirectoriesAndHooksDRunInOrderWithTheirEnvironment() throws {
        let s = try Sandbox()
        let record = s.root + "/record"
        let data = s.root + "/data", sys1 = s.root + "/sys1", sys2 = s.root + "/sys2"
        s.env["XDG_DATA_HOME"] = data
        s.env["XDG_DATA_DIRS"] = "\(sys1):\(sys2)"
        let body = { (who: String) in "echo \"\(who) $APPEARANCE $DARKMODE prev=$APPEARANCE_PREVIOUS cause=$APPEARANCE_CAUSE\" >> \(record)" }
        try Self.script(s, data + "/dark-mode.d/20-editor", body("home/20-editor"))
        try Self.script(s, sys1 + "/dark-mode.d/20-editor", body("sys1/20-editor"))   // shadowed by the one in XDG_DATA_HOME
        try Self.script(s, sys1 + "/dark-mode.d/10-terminal", body("sys1/10-terminal"))
        try Self.script(s, sys2 + "/dark-mode.d/10-terminal", body("sys2/10-terminal"))  // shadowed by sys1's
        try Self.script(s, sys2 + "/dark-mode.d/30-sway", body("sys2/30-sway"))
        try Self.script(s, data + "/light-mode.d/10-light", body("home/10-light"))
        try Self.script(s, s.root + "/config/appearanced/hooks.d/15-both", body("hooks.d/15-both"))
        try Self.script(s, data + "/dark-mode.d/25-not-executable", body("never"), executable: false)
        try Self.script(s, data + "/dark-mode.d/26-fails", "exit 3")
        let d = try s.startDaemon(["--log-level", "debug"])
        // At start, the light hooks run once for the current mode.
        try waitUntil("the start-up run; record: \(Self.lines(record))") { Self.lines(record).count == 2 }
        #expect(Self.lines(record) == ["home/10-light light 0 prev= cause=start", "hooks.d/15-both light 0 prev= cause=start"])
        let c = try Child(Bin.ctl, ["set", "dark"], env: s.env)
        let pid = c.pid
        #expect(try c.waitForEnd() == 0)
        try waitUntil("the dark run; record: \(Self.lines(record)); stderr: \(d.stderr)") { Self.lines(record).count == 6 }
        #expect(Array(Self.lines(record).dropFirst(2)) == [
            "sys1/10-terminal dark 1 prev=light cause=override dark set by appearancectl (pid \(pid))",
            "hooks.d/15-both dark 1 prev=light cause=override dark set by appearancectl (pid \(pid))",
            "home/20-editor dark 1 prev=light cause=override dark set by appearancectl (pid \(pid))",
            "sys2/30-sway dark 1 prev=light cause=override dark set by appearancectl (pid \(pid))",
        ])
        // A file nobody may run (a README, a .bak) is left out as run-parts does, said once: no failure.
        try d.waitForStderr("hook 25-not-executable: \(data)/dark-mode.d/25-not-executable is not executable; skipped (chmod +x runs it)")
        #expect(d.stderr.components(separatedBy: "25-not-executable is not executable").count == 2, "\(d.stderr)")
        try waitUntil("status to show the failure") { try s.ctl("status").out.contains("hooks:       5 hooks for dark at") }
        let status = try s.ctl("status").out
        #expect(status.contains("failed: 26-fails: exit status 3") && !status.contains("25-not-executable"), "\(status)")
        // A failed hook changed no mode: the journal and status say it, `log` does not.
        try d.waitForStderr("hooks for dark failed: 26-fails: exit status 3")
        let log = try s.ctl("log").out
        #expect(!log.contains("hooks for dark failed") && log.contains("light → dark"), "\(log)")
    }

    @Test func runsNeverOverlapAndTheLastOneSeesTheFinalMode() throws {
        let s = try Sandbox()
        let record = s.root + "/record"
        try Self.script(s, s.root + "/config/appearanced/hooks.d/slow",
                        "echo \"start $APPEARANCE\" >> \(record)\nsleep 0.05\necho \"end $APPEARANCE\" >> \(record)")
        try s.startDaemon()
        try waitUntil("the start-up run") { Self.lines(record).count == 2 }
        var last = "light"
        for i in 0..<100 {
            last = i % 2 == 0 ? "dark" : "light"
            #expect(try s.ctl("set", last).status == 0)
        }
        #expect(last == "light")
        try waitUntil("the runs to settle on \(last)") { try Self.lines(record).last == "end \(last)" && !s.ctl("status").out.contains("running") }
        let lines = Self.lines(record)
        for (i, line) in lines.enumerated() where line.hasPrefix("start ") {
            #expect(i + 1 < lines.count && lines[i + 1] == "end " + line.dropFirst(6), "run \(i) overlapped: \(lines[i...].prefix(3))")
        }
        // Coalesced: far fewer runs than changes, never more.
        #expect(lines.count / 2 <= 101, "\(lines.count / 2) runs")
    }

    @Test func aHangingHookIsStoppedWithItsChildrenAndNothingWaitsForIt() throws {
        let s = try Sandbox()
        let pids = s.root + "/pids"
        try s.write("hook-timeout = 1\n", to: s.configFile)
        try Self.script(s, s.root + "/config/appearanced/hooks.d/hang",
                        "[ \"$APPEARANCE\" = dark ] || exit 0\nsleep 1000 &\necho $! >> \(pids)\necho $$ >> \(pids)\nsleep 1000\n")
        let d = try s.startDaemon()
        let w = try s.start(Bin.ctl, ["watch"])
        #expect(try w.waitForLines(1) == ["light"])
        // The hook starts and hangs; the reply and the notification do not wait for it.
        #expect(try s.ctl("set", "dark").out == "dark\n")
        #expect(try w.waitForLines(2) == ["light", "dark"])
        try waitUntil("the hook to start its helper") { Self.lines(pids).count == 2 }
        try d.waitForStderr("hook hang did not finish within 1.0 s; stopping it and its children")
        let started = Self.lines(pids).compactMap { Int32($0) }
        try waitUntil("the hook \(started[1]) and its helper \(started[0]) to be gone") { started.allSatisfy { !Self.alive($0) } }
        try waitUntil("status to show the timeout") { try s.ctl("status").out.contains("hang: timed out after 1.0 s") }
        #expect(d.isRunning)
    }

    /// Running, and not a zombie waiting for a parent (a container's init may not reap it).
    static func alive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return !(stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).hasPrefix("Z") ?? true)
    }

    @Test func hooksFalseTurnsThemOff() throws {
        let s = try Sandbox()
        let record = s.root + "/record"
        try s.write("hooks = false\n", to: s.configFile)
        try Self.script(s, s.root + "/config/appearanced/hooks.d/any", "echo ran >> \(record)")
        try s.startDaemon()
        #expect(try s.ctl("set", "dark").status == 0)
        #expect(try s.ctl("status").out.contains("hooks:       off (hooks = false)"))
        #expect(Self.lines(record).isEmpty)
    }

    // MARK: Output that never ends

    /// A hook that prints without end (`exec yes`): the daemon keeps answering while it runs, its timeout
    /// stops it, `status` says so, and the log gets a capped amount of its output, not all of it.
    @Test func endlessOutputNeitherStallsTheDaemonNorFloodsTheLog() throws {
        let s = try Sandbox()
        let pidFile = s.root + "/pid"
        try s.write("hook-timeout = 3\n", to: s.configFile)
        try Self.script(s, s.root + "/config/appearanced/hooks.d/flood",
                        "[ \"$APPEARANCE\" = dark ] || exit 0\necho $$ > \(pidFile)\nexec yes")
        let d = try s.startDaemon()
        var hook: Int32 = 0
        defer {
            if hook > 0 { kill(-hook, SIGKILL) }  // on failure the daemon may never stop it
            d.stop()
        }
        #expect(try s.ctl("set", "dark").status == 0)
        try waitUntil("the hook to start") { Self.lines(pidFile).count == 1 }
        hook = Int32(Self.lines(pidFile)[0]) ?? 0
        // While it floods, `get` answers within the command's own deadline (4 s): it exits 0 with the mode.
        var answered = 0
        for _ in 0..<3 where Self.alive(hook) {
            let get = try s.ctl("get")
            #expect(get.status == 0 && get.out == "dark\n", "get while the hook floods: \(get)")
            answered += 1
        }
        #expect(answered > 0, "the hook ended before the daemon was asked")
        try waitUntil("status to show the timeout; stderr: \(d.stderr.suffix(500))") {
            try s.ctl("status").out.contains("flood: timed out after 3.0 s")
        }
        try waitUntil("the hook \(hook) to be gone") { !Self.alive(hook) }
        try d.waitForStderr("hook flood: [output past ")
        #expect(d.stderr.utf8.count < 1 << 20, "the log grew to \(d.stderr.utf8.count) bytes")
        #expect(d.isRunning)
    }

    /// A hook that prints several megabytes at once and exits: it succeeds, the daemon answers meanwhile,
    /// and the log says how much was left out instead of holding it all.
    @Test func aFewMegabytesOfOutputAreCappedInTheLog() throws {
        let s = try Sandbox()
        try Self.script(s, s.root + "/config/appearanced/hooks.d/bulk",
                        "[ \"$APPEARANCE\" = dark ] || exit 0\nseq 1 1000000\nhead -c 3000000 /dev/zero | tr '\\0' x")
        let d = try s.startDaemon()
        #expect(try s.ctl("set", "dark").out == "dark\n")
        let get = try s.ctl("get")
        #expect(get.status == 0 && get.out == "dark\n", "\(get)")
        try waitUntil("the run to end; stderr: \(d.stderr.suffix(500))") {
            try s.ctl("status").out.contains("hooks:       1 hook for dark at")
        }
        let status = try s.ctl("status").out
        #expect(status.contains(": ok"), "\(status)")
        try d.waitForStderr("bytes of output not logged")
        #expect(d.stderr.contains("appearanced: hook bulk: 1\n"), "the first lines are logged")
        #expect(d.stderr.utf8.count < 1 << 20, "the log grew to \(d.stderr.utf8.count) bytes")
    }

    // MARK: Background programs

    /// `swaybg … &` in a hook: the program outlives the hook (as with darkman), the run is reported done
    /// without waiting for it or for its output, and the next hook runs meanwhile.
    @Test func aBackgroundProgramOutlivesItsHook() throws {
        let s = try Sandbox()
        let pidFile = s.root + "/background", record = s.root + "/record"
        try Self.script(s, s.root + "/config/appearanced/hooks.d/10-wallpaper",
                        "[ \"$APPEARANCE\" = dark ] || exit 0\nsleep 300 &\necho $! > \(pidFile)\necho wallpaper set")
        try Self.script(s, s.root + "/config/appearanced/hooks.d/20-next", "echo \"next $APPEARANCE\" >> \(record)")
        let d = try s.startDaemon()
        var background: Int32 = 0
        defer {
            if background > 0 { kill(background, SIGKILL) }
            d.stop()
        }
        try waitUntil("the start-up run") { Self.lines(record) == ["next light"] }
        #expect(try s.ctl("set", "dark").status == 0)
        try waitUntil("the dark run to be done; stderr: \(d.stderr)") {
            try s.ctl("status").out.contains("hooks:       2 hooks for dark at")
        }
        #expect(try s.ctl("status").out.contains(": ok"))
        #expect(Self.lines(record) == ["next light", "next dark"])
        background = Int32(Self.lines(pidFile).first ?? "") ?? 0
        #expect(background > 0)
        #expect(Self.alive(background), "the hook's background program was stopped with it")
        try d.waitForStderr("hook 10-wallpaper: wallpaper set")
        // Later runs do not wait for it either.
        #expect(try s.ctl("set", "light").status == 0)
        try waitUntil("the light run") { Self.lines(record).last == "next light" && Self.lines(record).count == 3 }
        #expect(Self.alive(background))
    }

    // MARK: Who may write a hook

    /// A world-writable dark-mode.d anywhere in XDG_DATA_DIRS: anyone could put a program there, so its hooks
    /// are skipped, and `status` and the log say why.
    @Test func hooksInAWorldWritableDirectoryAreSkipped() throws {
        let s = try Sandbox()
        let record = s.root + "/record"
        let sys1 = s.root + "/sys1", sys2 = s.root + "/sys2"
        s.env["XDG_DATA_HOME"] = s.root + "/data"
        s.env["XDG_DATA_DIRS"] = "\(sys1):\(sys2)"
        try Self.script(s, sys1 + "/dark-mode.d/10-open", "echo open >> \(record)")
        try Self.script(s, sys2 + "/dark-mode.d/20-safe", "echo safe >> \(record)")
        #expect(chmod(sys1 + "/dark-mode.d", 0o777) == 0)
        let d = try s.startDaemon(["--log-level", "debug"])
        #expect(try s.ctl("set", "dark").status == 0)
        try waitUntil("the dark run; stderr: \(d.stderr)") { try s.ctl("status").out.contains(" for dark at") }
        let status = try s.ctl("status").out
        #expect(status.contains("failed: 10-open: \(sys1)/dark-mode.d is writable by every user"), "\(status)")
        #expect(Self.lines(record) == ["safe"])
        try d.waitForStderr("hook \(sys1)/dark-mode.d/10-open: \(sys1)/dark-mode.d is writable by every user, skipping it")
    }

    /// A world-writable hook file in hooks.d is skipped the same way.
    @Test func aWorldWritableHookIsSkipped() throws {
        let s = try Sandbox()
        let record = s.root + "/record"
        let hook = s.root + "/config/appearanced/hooks.d/open"
        try Self.script(s, hook, "echo open >> \(record)")
        #expect(chmod(hook, 0o757) == 0)
        let d = try s.startDaemon()
        try waitUntil("the start-up run; stderr: \(d.stderr)") { try s.ctl("status").out.contains("0 hooks for light at") }
        let status = try s.ctl("status").out
        #expect(status.contains("failed: open: \(hook) is writable by every user"), "\(status)")
        #expect(Self.lines(record).isEmpty)
        try d.waitForStderr("hook \(hook): \(hook) is writable by every user, skipping it")
    }
}
