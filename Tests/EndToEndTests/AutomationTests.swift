import Foundation
import Testing
import class TestSupport.FakePortal
import class TestSupport.PrivateBus
import class TestSupport.TemporaryDirectory

/// The schedule, temporary overrides and the log (issue "Automation"), on the real daemon. Time is the
/// daemon's own test seam: APPEARANCED_TEST_CLOCK_FILE holds seconds added to the real clock, so a test puts
/// the daemon a few seconds before a transition, or hours later "after a suspend"; the machine's clock is
/// never touched. TZ=UTC makes local times in the config plain UTC times.
@Suite struct AutomationTests {
    /// A sandbox whose daemon believes it is `secondsAfterMidnight` past the next UTC midnight.
    static func sandbox(at secondsAfterMidnight: Int64, config: String) throws -> (Sandbox, Int64) {
        let s = try Sandbox()
        s.env["TZ"] = "UTC"
        s.env["APPEARANCED_TEST_CLOCK_FILE"] = s.root + "/clock-offset"
        let real = Int64(Date().timeIntervalSince1970)
        let target = (real / 86_400 + 1) * 86_400 + secondsAfterMidnight
        try s.write("\(target - real)\n", to: s.root + "/clock-offset")
        try s.write(config, to: s.configFile)
        return (s, target - real)
    }

    static let fixed = "[schedule]\nlight-at = \"07:00\"\ndark-at = \"19:00\"\n"

    @Test func theScheduleSwitchesAtItsTime() throws {
        let (s, offset) = try Self.sandbox(at: 19 * 3600 - 8, config: Self.fixed)   // 18:59:52: time to start first
        try s.startDaemon()
        let w = try s.start(Bin.ctl, ["watch", "--json"])
        let first = try w.waitForLines(1)[0]
        #expect(first.contains(#""mode":"light""#) && first.contains(#""source":"schedule""#), "\(first)")
        let status = try s.ctl("status").out
        #expect(status.contains("schedule:    light until 19:00 (dark-at: dark)"), "\(status)")
        let second = try w.waitForLines(2)[1]
        #expect(second.contains(#""mode":"dark""#) && second.contains(#""source":"schedule""#), "\(second)")
        // Tomorrow's 07:00 has its date.
        #expect(try s.ctl("status").out.contains("schedule:    dark until \(NewcomerTests.day(after: offset, 1)) 07:00 (light-at: light)"))
        let log = try s.ctl("log").out
        #expect(log.contains("light → dark") && log.contains("schedule: dark-at"), "\(log)")
    }

    /// A schedule added at 05:30 (a reload): the log's cause is the new configuration and what ends it, not
    /// the event that would have made the mode ("dark-at" of last night).
    @Test func aScheduleSetUpIsLoggedAsSuch() throws {
        let (s, _) = try Self.sandbox(at: 5 * 3600 + 30 * 60, config: "")
        try s.startDaemon()
        #expect(try s.ctl("get").out == "light\n")
        try s.write(Self.fixed, to: s.configFile)
        #expect(try s.ctl("reload").status == 0)
        #expect(try s.ctl("get").out == "dark\n")
        let log = try s.ctl("log").out
        #expect(log.contains("light → dark   schedule set up: dark until light-at 07:00") && !log.contains("schedule: dark-at"), "\(log)")
    }

    @Test func aTransitionDueDuringSuspendIsAppliedOnResume() async throws {
        let (s, offset) = try Self.sandbox(at: 12 * 3600, config: Self.fixed)
        let dir = try TemporaryDirectory()
        let system = try await PrivateBus(in: dir, name: "system")
        s.env["DBUS_SYSTEM_BUS_ADDRESS"] = system.address
        let d = try s.startDaemon()
        #expect(try s.ctl("get").out == "light\n")
        // Suspend at noon, wake at 20:00: the clock jumps, no timer has fired yet.
        _ = try s.run("/usr/bin/dbus-send", ["--bus=\(system.address)", "--type=signal", "/org/freedesktop/login1",
                                             "org.freedesktop.login1.Manager.PrepareForSleep", "boolean:true"])
        try s.write("\(offset + 8 * 3600)\n", to: s.root + "/clock-offset")
        let wake = try s.run("/usr/bin/dbus-send", ["--bus=\(system.address)", "--type=signal", "/org/freedesktop/login1",
                                                    "org.freedesktop.login1.Manager.PrepareForSleep", "boolean:false"])
        #expect(wake.status == 0, "\(wake.err)")
        try waitUntil("the daemon to apply dark on resume; stderr: \(d.stderr)") { try s.ctl("get").out == "dark\n" }
        #expect(d.stderr.contains("resumed from suspend: planning the schedule again"))
    }

    @Test func untilNextEndsAtTheNextScheduleTransition() throws {
        let (s, _) = try Self.sandbox(at: 19 * 3600 - 8, config: Self.fixed)
        let d = try s.startDaemon()
        let toggled = try s.ctl("toggle", "--until-next", "--json").out
        #expect(toggled.contains(#""mode":"dark""#) && toggled.contains(#""source":"temporary""#)
                && toggled.contains(#""temporary":{"mode":"dark","until":"next"}"#), "\(toggled)")
        #expect(try s.ctl("status").out.contains("temporary:   dark until the next automatic change"))
        try waitUntil("19:00 to end the temporary override") {
            let state = try s.ctl("get", "--json").out
            return state.contains(#""source":"schedule""#) && state.contains(#""temporary":null"#)
        }
        // It is gone from the state file too: a restart does not bring it back.
        try d.end()
        try s.startDaemon()
        #expect(try s.ctl("get", "--json").out.contains(#""temporary":null"#))
    }

    @Test func untilNextEndsWhenTheDesktopChangesItsValue() async throws {
        let (s, portal) = try await Sandbox.withFakePortal(colorScheme: 1)
        let d = try s.startDaemon()
        #expect(try s.ctl("set", "light", "--until-next").out == "light\n")
        try await portal.send("set 1")   // the same value again: not a change of the desktop's mind
        #expect(try s.ctl("get", "--json").out.contains(#""source":"temporary""#))
        try await portal.send("set 2")
        try waitUntil("the desktop's change to end the temporary override") {
            let state = try s.ctl("get", "--json").out
            return state.contains(#""source":"system""#) && state.contains(#""temporary":null"#)
        }
        // The desktop's change ended the temporary override but changed no mode: the journal says it, `log`
        // (changes of the mode only) does not.
        try d.waitForStderr("system: light (portal v2)")
        let log = try s.ctl("log").out
        #expect(log.contains("dark → light") && !log.contains("desktop: light (portal v2)"), "\(log)")
    }

    @Test func forEndsOnTimeAndSurvivesAKill() throws {
        let s = try Sandbox()
        s.env["APPEARANCED_TEST_CLOCK_FILE"] = s.root + "/clock-offset"
        try s.write("0\n", to: s.root + "/clock-offset")
        var d = try s.startDaemon()
        let set = try s.ctl("set", "dark", "--for", "1h", "--json").out
        #expect(set.contains(#""source":"temporary""#), "\(set)")
        // SIGKILL: the temporary override was durable before the reply, with its expiry.
        try d.end(SIGKILL)
        d = try s.startDaemon()
        let after = try s.ctl("get", "--json").out
        #expect(after.contains(#""mode":"dark""#) && after.contains(#""source":"temporary""#), "\(after)")
        // Two hours later (a restart after the machine was off): it has ended.
        try d.end()
        try s.write("7200\n", to: s.root + "/clock-offset")
        d = try s.startDaemon()
        #expect(try s.ctl("get", "--json").out.contains(#""source":"default""#))

        // A short one ends by its own timer while the daemon runs.
        let w = try s.start(Bin.ctl, ["watch"])
        #expect(try w.waitForLines(1) == ["light"])
        #expect(try s.ctl("set", "dark", "--for", "1s").out == "dark\n")
        #expect(try w.waitForLines(3) == ["light", "dark", "light"])
        #expect(try s.ctl("log").out.contains("temporary override ended (its time came)"))
    }

    @Test func theLogNamesTheClientThatSetTheOverride() throws {
        let s = try Sandbox.started()
        let c = try Child(Bin.ctl, ["set", "dark"], env: s.env)
        let pid = c.pid
        #expect(try c.waitForEnd() == 0)
        let lines = try s.ctl("log", "--json").out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains(#""from":null,"to":"light""#) == true && lines.first?.contains("start: light") == true, "\(lines)")
        #expect(lines.last?.contains(#""from":"light","to":"dark","source":"override","cause":"override dark set by appearancectl (pid \#(pid))""#) == true,
                "\(lines)")
        #expect(try s.ctl("log", "-n", "1").out.split(separator: "\n").count == 1)
    }

    @Test func badDurationsAndSchedulesAreUsageErrors() throws {
        let s = try Sandbox()
        for (args, message) in [
            (["set", "dark", "--for", "90"], #"invalid --for "90" (expected a duration such as 90m, 2h, 1h30m, 45s or 1d, up to 366d)"#),
            (["set", "dark", "--for", "0m"], #"invalid --for "0m""#),
            (["set", "system", "--until-next"], #"set: "system" cannot be temporary"#),
            (["toggle", "--until-next", "--for", "1h"], "give --until-next or --for, not both"),
            (["get", "--until-next"], "--until-next is not an option of get"),
            (["log", "-n", "x"], #"invalid -n "x""#),
        ] {
            let r = try s.run(Bin.ctl, args)
            #expect(r.status == 64 && r.err.contains(message), "\(args): \(r.err)")
        }
        // A bad [schedule] at start-up: --check exits 78 naming the file, line and key; the daemon serves
        // with the defaults and says the same.
        try s.write("[schedule]\nlatitude = 95\nlongitude = 0\n", to: s.configFile)
        let r = try s.run(Bin.daemon, ["--check"])
        #expect(r.status == 78 && r.err.contains("config.toml:2: schedule.latitude: 95.0 is outside -90…90"), "\(r.err)")
        let d = try s.startDaemon()
        try d.waitForStderr("config.toml:2: schedule.latitude: 95.0 is outside -90…90; using the defaults until it is fixed")
    }
}
