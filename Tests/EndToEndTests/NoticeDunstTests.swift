import Foundation
import Testing

/// The notice's real round trip with a real notification server: Debian's dunst, under Xvfb, on the test's own
/// session bus. dunst shows the notice; its own tooling presses the buttons: `dunstctl context` (and `dunstctl
/// action`, which opens the same menu for a notice with more than one action) hands the notices' actions to
/// dunst's `dmenu` command, as a user's menu would, and dunst sends ActionInvoked for the line chosen. The test's
/// menu is a script that chooses by the action's key (the one thing a person would do by hand). dunst sends its
/// signals to the notice's sender only, where the stand-in (NoticeTests) broadcasts them.
@Suite(.enabled(if: ["/usr/bin/dunst", "/usr/bin/dunstctl", "/usr/bin/Xvfb"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
                "needs dunst and xvfb (make test installs them)"))
struct NoticeDunstTests {
    /// An X server of the test's own: its display number is the one it chose (`-displayfd`).
    final class Display {
        let child: Child
        let name: String

        init(_ s: Sandbox) throws {
            let x = try Child("/usr/bin/Xvfb", ["-displayfd", "1", "-screen", "0", "800x600x24", "-nolisten", "tcp"], env: s.env)
            try waitUntil("Xvfb's display number; stderr: \(x.stderr)") { !x.lines.isEmpty }
            (child, name) = (x, ":" + x.lines[0])
        }

        func close() {
            child.stop(SIGTERM)
            _ = try? child.waitForExit(timeout: 10)
        }
    }

    /// dunst on the sandbox's bus and display, its menu the script `pick`, which takes the line whose key is
    /// written in `choice`.
    final class Dunst {
        let child: Child
        let choice: String

        init(_ s: Sandbox, display: Display) throws {
            choice = s.root + "/choice"
            let pick = s.root + "/pick"
            try s.write("#!/bin/sh\n# dunst's menu: the line of the action whose key is in \(choice)\nexec grep -m1 -F \",$(cat '\(choice)')]\"\n", to: pick)
            chmod(pick, 0o755)
            try s.write("[global]\n    dmenu = \(pick)\n", to: s.root + "/dunstrc")
            var env = s.env
            env["DISPLAY"] = display.name
            let dunst = try Child("/usr/bin/dunst", ["-config", s.root + "/dunstrc"], env: env)
            child = dunst
            try waitUntil("dunst on the bus; stderr: \(dunst.stderr)") {
                guard dunst.isRunning else { throw TimedOut(description: "dunst exited: \(dunst.stderr)") }
                return try s.run("/usr/bin/dunstctl", ["count", "displayed"]).status == 0
            }
        }

        /// Notices on the screen now.
        func displayed(_ s: Sandbox) throws -> Int {
            Int(try s.run("/usr/bin/dunstctl", ["count", "displayed"]).out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }

        func waitDisplayed(_ s: Sandbox, _ count: Int) throws {
            try waitUntil("\(count) notices on dunst's screen; stderr: \(child.stderr)") { try displayed(s) == count }
        }

        /// Chooses `key` in dunst's menu, opened by `dunstctl` with `command`.
        func press(_ key: String, _ s: Sandbox, with command: [String]) throws {
            try s.write(key, to: choice)
            let r = try s.run("/usr/bin/dunstctl", command)
            #expect(r.status == 0, "dunstctl \(command): \(r.err)")
        }

        /// The summaries in dunst's history (the notices it closed), newest first.
        func history(_ s: Sandbox) throws -> [String] {
            let out = try s.run("/usr/bin/dunstctl", ["history"]).out
            let json = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any]
            let entries = ((json?["data"] as? [Any])?.first as? [[String: Any]]) ?? []
            return entries.compactMap { entry in
                guard (entry["appname"] as? [String: Any])?["data"] as? String == "appearanced" else { return nil }
                return (entry["summary"] as? [String: Any])?["data"] as? String
            }
        }

        func close() {
            child.stop(SIGTERM)
            _ = try? child.waitForExit(timeout: 10)
        }
    }

    @Test func dunstShowsTheNoticeAndItsButtonsPostponeAndSkip() throws {
        let (s, day) = try NoticeTests.sandbox(at: 18 * 3600 + 56 * 60)
        let display = try Display(s)
        defer { display.close() }
        let dunst = try Dunst(s, display: display)
        defer { dunst.close() }
        var d = try s.startDaemon()
        try dunst.waitDisplayed(s, 1)
        try NoticeTests.waitStatus(s, "showing \"Dark mode at 19:00\"")
        // Postpone, from dunst's menu: 19:30, and the notice goes (19:30 is not near).
        try dunst.press("postpone", s, with: ["context"])
        try dunst.waitDisplayed(s, 0)
        #expect(try dunst.history(s).first == "Dark mode at 19:00")
        let next = try #require(try NextChangeTests.events(s).first)
        #expect(next["time"] as? Int == Int(day + 19 * 3600 + 1800) && next["postponedFrom"] as? Int == Int(day + 19 * 3600), "\(next)")
        // 19:26: near again, shown again; a restart of the daemon closes it and shows it again.
        try NextChangeTests.moveClock(s, to: day + 19 * 3600 + 26 * 60)
        kill(d.pid, SIGHUP)
        try dunst.waitDisplayed(s, 1)
        try d.end()
        try dunst.waitDisplayed(s, 0)
        d = try s.startDaemon()
        try dunst.waitDisplayed(s, 1)
        try NoticeTests.waitStatus(s, "showing \"Dark mode at 19:30\"")
        // Skip, from dunstctl action (two actions: the same menu): skipped, and the notice goes.
        try dunst.press("skip", s, with: ["action", "0"])
        try dunst.waitDisplayed(s, 0)
        let skipped = try #require(try NextChangeTests.events(s).first)
        #expect(skipped["skipped"] as? Bool == true && skipped["time"] as? Int == Int(day + 19 * 3600 + 1800), "\(skipped)")
        try NoticeTests.waitStatus(s, "Postpone 30m: none showing")
        #expect(try s.ctl("get").out == "light\n")
    }
}
