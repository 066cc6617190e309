import Foundation
import Testing
import class TestSupport.Subprocess

/// `[automatic] notify-before`: a desktop notification before an automatic change, with Postpone and Skip. On a
/// real dbus-daemon of the test's own with the project's stand-in notification server (Scripts/fake-notifications.py),
/// which records what it is asked and can press a button, close the notice, leave, come back, have no buttons or
/// answer oddly; the real round trip with dunst is NoticeDunstTests. Time is the daemon's test clock, in UTC, with
/// light-at 07:00 and dark-at 19:00 (NextChangeTests.sandbox).
@Suite struct NoticeTests {
    static func config(before: String = "5m") -> String { AutomationTests.fixed + "[automatic]\nnotify-before = \"\(before)\"\n" }

    /// The stand-in server on the sandbox's session bus, driven command by command (see the script's docstring).
    final class FakeServer: StandIn {
        init(_ s: Sandbox, mode: String = "ok") async throws {
            try await super.init(s, script: "fake-notifications.py", name: "stand-in notification server (\(mode))",
                                 arguments: [s.env["DBUS_SESSION_BUS_ADDRESS"]!, "--mode", mode])
        }

        /// The server leaves the bus.
        func quit() async throws {
            try await send("quit")
            _ = try await process.waitForExit()
        }

        /// Every Notify it was given, oldest first.
        var notices: [[String: Any]] {
            process.output.filter { $0.hasPrefix("notify ") }.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.dropFirst(7).utf8)) as? [String: Any]
            }
        }

        func waitNotices(_ count: Int) throws -> [[String: Any]] {
            try waitUntil("\(count) notices; have \(process.output); stderr: \(process.errorOutput)") { notices.count >= count }
            return notices
        }

        /// Waits for CloseNotification(id).
        func waitClose(_ id: Int) throws {
            try waitUntil("CloseNotification(\(id)); have \(process.output)") { process.output.contains("close \(id)") }
        }
    }

    /// `status`'s notices line.
    static func notices(_ s: Sandbox, socket: String? = nil) throws -> String {
        let out = try s.run(Bin.ctl, (socket.map { ["--socket", $0] } ?? []) + ["status"]).out
        return out.split(separator: "\n").first { $0.hasPrefix("notices:") }.map(String.init) ?? "(no notices line in \(out))"
    }

    static func waitStatus(_ s: Sandbox, _ text: String) throws {
        var last = ""
        try waitUntil("notices: …\(text)…; have \(last)") {
            last = try notices(s)
            return last.contains(text)
        }
    }

    /// A sandbox with its own session bus, at `time` seconds after the next UTC midnight, notices on.
    static func sandbox(at time: Int64, before: String = "5m") throws -> (Sandbox, day: Int64) {
        let (s, day) = try NextChangeTests.sandbox(at: time)
        try s.write(config(before: before), to: s.configFile)
        _ = try SandboxBus(s)
        return (s, day)
    }

    static func id(_ notice: [String: Any]) -> Int { notice["id"] as? Int ?? -1 }

    /// A peer's `count` calls for one app's state (each taken over to the daemon's queue), sent without waiting for
    /// their answers; it says "sent" once they are on the bus, then waits to be stopped.
    static func appStateCalls(_ s: Sandbox, count: Int) throws -> Child {
        let calls = try Child("/usr/bin/python3", ["-c", """
            bus, sys, time = __import__("dbus.bus").bus, __import__("sys"), __import__("time")
            b = bus.BusConnection(sys.argv[1])
            for i in range(int(sys.argv[2])):
                b.call_async(sys.argv[3], sys.argv[4], sys.argv[3], "Get", "a{sv}", [{"app": "org.example.App"}], None, None)
            b.flush()
            print("sent", flush=True)
            time.sleep(600)
            """, s.env["DBUS_SESSION_BUS_ADDRESS"]!, "\(count)", AppearanceServiceTests.name, AppearanceServiceTests.path], env: s.env)
        _ = try calls.waitForLines(1)
        return calls
    }

    @Test func theNoticeComesOnTimeAndItsPostponeButtonPostpones() async throws {
        let (s, day) = try Self.sandbox(at: 18 * 3600 + 50 * 60)
        let server = try await FakeServer(s)
        let d = try s.startDaemon()
        // 18:50: ten minutes away, no notice yet.
        try Self.waitStatus(s, "5m before an automatic change, Postpone 30m: none showing")
        #expect(server.notices.isEmpty)
        // 18:54:58: the notice's own timer brings it when 19:00 is five minutes away.
        try NextChangeTests.moveClock(s, to: day + 19 * 3600 - 5 * 60 - 2)
        kill(d.pid, SIGHUP)
        let n = try server.waitNotices(1)[0]
        #expect(n["app"] as? String == "appearanced" && n["summary"] as? String == "Dark mode at 19:00" && n["replaces"] as? Int == 0, "\(n)")
        #expect(n["body"] as? String == "The schedule switches to dark at 19:00 (dark-at).", "\(n)")
        #expect(n["actions"] as? [String] == ["postpone", "Postpone 30 minutes", "skip", "Skip"], "\(n)")
        try Self.waitStatus(s, "Postpone 30m: showing \"Dark mode at 19:00\"")
        // Its Postpone: 30 minutes later, as `appearancectl postpone 30m`; 19:30 is far, so the notice goes.
        try await server.send("invoke \(Self.id(n)) postpone")
        try await server.send("invoke \(Self.id(n)) postpone")  // a double click: one postponement
        try server.waitClose(Self.id(n))
        let next = try #require(try NextChangeTests.events(s).first)
        #expect(next["time"] as? Int == Int(day + 19 * 3600 + 1800) && next["postponedFrom"] as? Int == Int(day + 19 * 3600), "\(next)")
        try Self.waitStatus(s, "Postpone 30m: none showing")
        try d.waitForStderr("the notice's postpone button was pressed (Dark mode at 19:00)")
        #expect(try s.ctl("get").out == "light\n")
    }

    /// Only the notice's own signals count: from the server that showed it, with its id, of the right types.
    @Test func onlyItsOwnNoticesSignalsCount() async throws {
        let (s, _) = try Self.sandbox(at: 18 * 3600 + 56 * 60)
        let server = try await FakeServer(s)
        let d = try s.startDaemon()
        let n = try server.waitNotices(1)[0]
        let id = Self.id(n), daemon = try #require(n["sender"] as? String)
        try await server.send("forge \(daemon) \(id) postpone")  // from another connection, straight to the daemon
        try await server.send("invoke \(id + 100) postpone")     // another program's notice
        try await server.send("odd \(id)")                       // ActionInvoked (uu), NotificationClosed (s)
        try await server.send("invoke \(id) skip")
        try server.waitClose(id)
        let next = try #require(try NextChangeTests.events(s).first)
        #expect(next["skipped"] as? Bool == true && next["postponedFrom"] == nil, "\(next)")
        try d.waitForStderr("the notification server sent ActionInvoked as (uu), not (us): ignored")
        try d.waitForStderr("the notification server sent NotificationClosed as (s), not (uu): ignored")
        #expect(d.isRunning)
    }

    /// A button the daemon refuses (Postpone past the change after it) is said in the notice, which stays.
    @Test func aRefusedButtonSaysWhy() async throws {
        let (s, _) = try Self.sandbox(at: 18 * 3600 + 56 * 60)
        try s.write(Self.config() + "postpone-by = \"12h\"\n", to: s.configFile)
        let server = try await FakeServer(s)
        let d = try s.startDaemon()
        let n = try server.waitNotices(1)[0]
        #expect(n["actions"] as? [String] == ["postpone", "Postpone 12 hours", "skip", "Skip"], "\(n)")
        try await server.send("invoke \(Self.id(n)) postpone")
        let said = try server.waitNotices(2)[1]
        #expect(said["replaces"] as? Int == Self.id(n) && said["summary"] as? String == "Dark mode at 19:00", "\(said)")
        #expect((said["body"] as? String)?.hasPrefix("Not done: postpone: that would put dark past the change after it (light at ") == true, "\(said)")
        #expect(try NextChangeTests.events(s).first?["postponedFrom"] == nil)
        try d.waitForStderr("the notice's postpone was refused: postpone: that would put dark past the change after it")
        try await server.send("invoke \(Self.id(n)) skip")
        try server.waitClose(Self.id(n))
        #expect(try NextChangeTests.events(s).first?["skipped"] as? Bool == true)
    }

    /// appearancectl's postpone and skip while the notice shows: it follows the change (updated in place where it
    /// is still near, closed where not), comes back with a cancel, and goes when the change happens.
    @Test func postponeAndSkipFromTheCommandLineMoveOrCloseIt() async throws {
        let (s, day) = try Self.sandbox(at: 18 * 3600 + 50 * 60, before: "30m")
        let server = try await FakeServer(s)
        let d = try s.startDaemon()
        let first = try server.waitNotices(1)[0]
        #expect(first["summary"] as? String == "Dark mode at 19:00")
        #expect(try s.ctl("postpone", "5m").status == 0)
        let moved = try server.waitNotices(2)[1]
        #expect(moved["summary"] as? String == "Dark mode at 19:05" && moved["replaces"] as? Int == Self.id(first) && Self.id(moved) == Self.id(first), "\(moved)")
        #expect((moved["body"] as? String)?.contains("(dark-at, postponed from 19:00)") == true, "\(moved)")
        #expect(try s.ctl("skip").status == 0)
        try server.waitClose(Self.id(first))
        try Self.waitStatus(s, "Postpone 30m: none showing")
        #expect(try s.ctl("skip", "--cancel").status == 0)
        let again = try server.waitNotices(3)[2]
        #expect(again["summary"] as? String == "Dark mode at 19:05" && again["replaces"] as? Int == 0, "\(again)")
        // The change happens: the notice goes.
        try NextChangeTests.moveClock(s, to: day + 19 * 3600 + 5 * 60 + 1)
        kill(d.pid, SIGHUP)
        try waitUntil("dark") { try s.ctl("get").out == "dark\n" }
        try server.waitClose(Self.id(again))
        try Self.waitStatus(s, "Postpone 30m: none showing")
    }

    /// A daemon's restart closes its notice (even while a peer's calls are crossing over to the daemon's queue) and
    /// the next start shows it again; a server that leaves and another that comes are followed; a notice the user
    /// closed stays closed, until its change moves.
    @Test func restartsOfTheDaemonAndOfTheServer() async throws {
        let (s, _) = try Self.sandbox(at: 18 * 3600 + 56 * 60)
        let server = try await FakeServer(s)
        var d = try s.startDaemon()
        let first = try server.waitNotices(1)[0]
        let calls = try Self.appStateCalls(s, count: 2000)
        defer { calls.stop(SIGKILL); _ = try? calls.waitForExit() }
        try d.end()
        try server.waitClose(Self.id(first))
        d = try s.startDaemon()
        let second = try server.waitNotices(2)[1]
        #expect(second["summary"] as? String == "Dark mode at 19:00" && second["replaces"] as? Int == 0, "\(second)")
        try await server.quit()
        try Self.waitStatus(s, "none showing: the notification server left the session bus")
        let next = try await FakeServer(s)
        let third = try next.waitNotices(1)[0]
        #expect(third["summary"] as? String == "Dark mode at 19:00", "\(third)")
        try Self.waitStatus(s, "showing \"Dark mode at 19:00\"")
        // Closed by the user: not sent again for this change.
        try await next.send("closed \(Self.id(third)) 2")
        try Self.waitStatus(s, "none showing: \"Dark mode at 19:00\" was closed")
        #expect(next.notices.count == 1)
        // Moved, and still near: a notice for where it went.
        #expect(try s.ctl("postpone", "1m").status == 0)
        #expect(try next.waitNotices(2)[1]["summary"] as? String == "Dark mode at 19:01")
    }

    /// No server: nothing is sent and nothing else changes, `status` says so. A server without buttons gets a notice
    /// naming the commands; odd answers are said and followed; a trial instance sends none.
    @Test func withoutAServerOrWithAnOddOne() async throws {
        let (s, _) = try Self.sandbox(at: 18 * 3600 + 56 * 60)
        let d = try s.startDaemon()
        try Self.waitStatus(s, "none showing: no notification server on the session bus (org.freedesktop.Notifications: org.freedesktop.DBus.Error.ServiceUnknown)")
        #expect(try s.ctl("get").out == "light\n")
        #expect(try s.ctl("status").out.contains("schedule:    light until 19:00 (dark-at: dark)"))
        let plain = try await FakeServer(s, mode: "no-actions")
        let n = try plain.waitNotices(1)[0]
        #expect(n["actions"] as? [String] == [], "\(n)")
        #expect((n["body"] as? String)?.hasSuffix("To put it off: appearancectl postpone 30m; to skip it: appearancectl skip.") == true, "\(n)")
        try Self.waitStatus(s, "(the notification server shows no buttons: it names the commands)")
        try await plain.quit()
        let odd = try await FakeServer(s, mode: "odd-notify")
        _ = try odd.waitNotices(1)
        try Self.waitStatus(s, "none showing: the notification server answered Notify with (s), not an id (u): the notice cannot be followed or closed")
        try await odd.quit()
        let oddCapabilities = try await FakeServer(s, mode: "odd-caps")
        #expect(try oddCapabilities.waitNotices(1)[0]["actions"] as? [String] == [])
        try d.waitForStderr("answered GetCapabilities with (u) where a list of names (as) was expected: notices go without buttons")
        try await oddCapabilities.quit()
        let refusing = try await FakeServer(s, mode: "refuse")
        try Self.waitStatus(s, "none showing: the notification server refused (org.freedesktop.DBus.Error.Failed: no notices today)")
        #expect(refusing.notices.isEmpty && d.isRunning)
        #expect(try s.ctl("get").out == "light\n")
        // A trial instance on the same bus, with the same config: it sends none.
        try await refusing.quit()
        let server = try await FakeServer(s, mode: "ok")
        let sender = try #require(try server.waitNotices(1)[0]["sender"] as? String)
        let dir = s.root + "/trial"
        let trial = try s.start(Bin.daemon, ["--state-dir", dir])
        try waitUntil("the trial to answer; stderr: \(trial.stderr)") { try s.run(Bin.ctl, ["--socket", dir + "/socket", "get"]).status == 0 }
        #expect(try Self.notices(s, socket: dir + "/socket") == "notices:     off (trial instance: the session's daemon sends them)")
        #expect(server.notices.allSatisfy { $0["sender"] as? String == sender }, "\(server.notices)")
    }

    /// `appearanced --check` knows the keys, and refuses a bad duration with the line and what it expects; a reload
    /// with one keeps the configuration in force.
    @Test func badDurationsAreRefusedWithAMessage() throws {
        let (s, _) = try NextChangeTests.sandbox(at: 12 * 3600)
        try s.write(Self.config() + "postpone-by = \"45m\"\n", to: s.configFile)
        let good = try s.run(Bin.daemon, ["--check"])
        #expect(good.status == 0 && good.out.hasPrefix("ok: config \(s.configFile)"), "\(good)")
        try s.startDaemon()
        #expect(try Self.notices(s).hasPrefix("notices:     5m before an automatic change, Postpone 45m: "))
        for (line, problem) in [("notify-before = \"5 minutes\"", "automatic.notify-before: invalid duration \"5 minutes\", expected a duration such as \"5m\", \"30m\" or \"1h30m\" (units d, h, m, s), from 1s to 12h"),
                                ("notify-before = 300", "automatic.notify-before: expected a duration such as \"5m\", \"30m\" or \"1h30m\" (units d, h, m, s), from 1s to 12h, got 300"),
                                ("postpone-by = \"2d\"", "automatic.postpone-by: invalid duration \"2d\", expected a duration such as \"5m\", \"30m\" or \"1h30m\" (units d, h, m, s), from 1s to 24h")] {
            try s.write(AutomationTests.fixed + "[automatic]\n" + line + "\n", to: s.configFile)
            let bad = try s.run(Bin.daemon, ["--check"])
            #expect(bad.status == 78 && bad.err == "appearanced: \(s.configFile):5: \(problem)\n", "\(bad)")
            let reload = try s.ctl("reload")
            #expect(reload.status == 65 && reload.err.contains("config.toml:5: \(problem); keeping the previous configuration"), "\(reload)")
            #expect(try Self.notices(s).hasPrefix("notices:     5m before an automatic change, Postpone 45m: "), "the configuration in force stays")
        }
    }

    /// A change that changes nothing (an override hides the schedule) has no notice; once it would change the
    /// mode again, the notice comes.
    @Test func noNoticeForAChangeThatChangesNothing() async throws {
        let (s, _) = try Self.sandbox(at: 18 * 3600 + 56 * 60)
        let server = try await FakeServer(s)
        try s.startDaemon()
        let first = try server.waitNotices(1)[0]
        #expect(try s.ctl("set", "dark").status == 0)  // dark already: the change to dark changes nothing
        try server.waitClose(Self.id(first))
        #expect(try s.ctl("set", "light").status == 0)  // light, above the schedule: it changes nothing either
        try Self.waitStatus(s, "Postpone 30m: none showing")
        #expect(try s.ctl("set", "system").status == 0)
        #expect(try server.waitNotices(2)[1]["summary"] as? String == "Dark mode at 19:00")
    }
}
