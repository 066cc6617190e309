import Foundation
import Testing

/// `postpone` and `skip`: the user's word on the next automatic change, on the real daemon with the test
/// clock (APPEARANCED_TEST_CLOCK_FILE) and fixed times in UTC (light-at 07:00, dark-at 19:00).
@Suite struct NextChangeTests {
    /// A sandbox at `secondsAfterMidnight` of the next UTC day, and that day's midnight.
    static func sandbox(at secondsAfterMidnight: Int64, schedule: Bool = true) throws -> (Sandbox, day: Int64) {
        let (s, offset) = try AutomationTests.sandbox(at: secondsAfterMidnight, config: schedule ? AutomationTests.fixed : "")
        let real = Int64(Date().timeIntervalSince1970)
        return (s, (real + offset) / 86_400 * 86_400)
    }

    static func moveClock(_ s: Sandbox, to time: Int64) throws {
        try s.write("\(time - Int64(Date().timeIntervalSince1970))\n", to: s.root + "/clock-offset")
    }

    static func events(_ s: Sandbox) throws -> [[String: Any]] {
        let r = try s.ctl("schedule", "--json", "--days", "2")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], "\(r)")
        return try #require(object["events"] as? [[String: Any]])
    }

    @Test func postponesAddUpSurviveARestartAndCancel() throws {
        let (s, day) = try Self.sandbox(at: 12 * 3600)
        var d = try s.startDaemon()
        let first = try s.ctl("postpone", "30m")
        #expect(first.status == 0 && first.out.hasSuffix(" 19:30 (dark-at, postponed from 19:00)\n") && first.out.hasPrefix("dark at "), "\(first)")
        #expect(try s.ctl("postpone", "15m").out.hasSuffix(" 19:45 (dark-at, postponed from 19:00)\n"))
        let next = try #require(try Self.events(s).first)
        #expect(next["time"] as? Int == Int(day + 19 * 3600 + 45 * 60) && next["postponedFrom"] as? Int == Int(day + 19 * 3600), "\(next)")
        #expect(try s.ctl("status").out.contains("schedule:    light until 19:45 (dark-at: dark postponed from 19:00)"))
        // Kept across a restart (state.json).
        try d.end()
        d = try s.startDaemon()
        #expect(try s.ctl("schedule", "--days", "1").out.contains("19:45  dark   dark-at (postponed from 19:00)"))
        // 19:44:58: still light; at 19:45 the change comes, logged with its postponement; the word is over.
        try Self.moveClock(s, to: day + 19 * 3600 + 45 * 60 - 2)
        kill(d.pid, SIGHUP)
        try waitUntil("the postponed change; log: \((try? s.ctl("log").out) ?? "")") { try s.ctl("get").out == "dark\n" }
        let log = try s.ctl("log").out
        #expect(log.contains("light → dark   schedule: dark-at (postponed by 45m)"), "\(log)")
        try waitUntil("the word to be gone from state.json") {
            !((try? String(contentsOfFile: s.stateFile, encoding: .utf8)) ?? "\"next\"").contains("\"next\"")
        }
        // Cancel: back as planned; nothing left to cancel is refused.
        #expect(try s.ctl("postpone", "1h").status == 0)
        let cancel = try s.ctl("postpone", "--cancel")
        #expect(cancel.status == 0 && cancel.out.hasSuffix(" 07:00 (light-at), as planned\n"), "\(cancel)")
        let again = try s.ctl("postpone", "--cancel")
        #expect(again.status == 65 && again.err.contains("postpone: nothing is postponed"), "\(again)")
    }

    @Test func aSkippedChangeDoesNotHappenAndTheOneAfterDoes() throws {
        let (s, day) = try Self.sandbox(at: 12 * 3600)
        let d = try s.startDaemon()
        let r = try s.ctl("skip")
        #expect(r.status == 0 && r.out.contains("skipped: dark at ") && r.out.contains(" 19:00, dark-at (then dark at "), "\(r)")
        let next = try #require(try Self.events(s).first)
        #expect(next["skipped"] as? Bool == true && next["time"] as? Int == Int(day + 19 * 3600), "\(next)")
        #expect(try s.ctl("status").out.contains("the next change, dark at 19:00, is skipped"))
        #expect(try s.ctl("postpone", "30m").err.contains("is skipped; cancel that first (skip --cancel)"))
        // 19:00 passes: still light. The day after, 19:00 makes it dark.
        try Self.moveClock(s, to: day + 19 * 3600 + 60)
        kill(d.pid, SIGHUP)
        try waitUntil("the reload to plan") { try s.ctl("status").out.contains("until") }
        #expect(try s.ctl("get").out == "light\n")
        try Self.moveClock(s, to: day + 86_400 + 19 * 3600 + 60)
        kill(d.pid, SIGHUP)
        try waitUntil("the next day's change") { try s.ctl("get").out == "dark\n" }
        // The word is dropped as the change is published; its save follows on the save queue.
        try waitUntil("the word to be gone from state.json") {
            !((try? String(contentsOfFile: s.stateFile, encoding: .utf8)) ?? "\"next\"").contains("\"next\"")
        }
        // skip --cancel with nothing skipped: refused.
        #expect(try s.ctl("skip", "--cancel").err.contains("skip: nothing is skipped"))
    }

    @Test func refusedWithoutAChangeComingOrPastTheOneAfter() throws {
        let (none, _) = try Self.sandbox(at: 12 * 3600, schedule: false)
        try none.startDaemon()
        for args in [["postpone", "30m"], ["skip"]] {
            let r = try none.run(Bin.ctl, args)
            #expect(r.status == 65 && r.err.contains("no automatic change is coming in the next days"), "\(args): \(r)")
        }
        let (s, _) = try Self.sandbox(at: 12 * 3600)
        try s.startDaemon()
        let far = try s.ctl("postpone", "13h")
        #expect(far.status == 65 && far.err.contains("that would put dark past the change after it (light at "), "\(far)")
        for bad in ["0", "abc", "2d", "1x"] {
            let r = try s.ctl("postpone", bad)
            #expect(r.status == 64 && r.err.contains("postpone: invalid duration"), "\(bad): \(r)")
        }
        #expect(try s.ctl("postpone").status == 64)
    }

    /// The D-Bus service's Postpone and Skip: the socket's words and checks, answered with the schedule.
    @Test func postponeAndSkipOnDBus() throws {
        let (s, day) = try Self.sandbox(at: 12 * 3600)
        _ = try SandboxBus(s)
        try s.startDaemon()
        try waitUntil("the service's name") { try s.ctl("status").out.contains("bus:         io.github.appearanced.Appearance1") }
        let m = AppearanceServiceTests.name + "."
        let r = try AppearanceServiceTests.call(s, m + "Postpone", ["{'for': <uint32 1800>}"])
        #expect(r.ok && r.out.contains("'postponedFrom': <int64 \(day + 19 * 3600)>") && r.out.contains("'time': <int64 \(day + 19 * 3600 + 1800)>"), "\(r.out)")
        #expect(try s.ctl("schedule", "--days", "1").out.contains("19:30  dark   dark-at (postponed from 19:00)"))
        let refused = try AppearanceServiceTests.call(s, m + "Skip", ["{'cancel': <true>}"])
        #expect(!refused.ok && refused.out.contains("Error.RequestFailed") && refused.out.contains("skip: nothing is skipped"), "\(refused.out)")
        let bad = try AppearanceServiceTests.call(s, m + "Postpone", ["{'for': <uint32 0>}"])
        #expect(!bad.ok && bad.out.contains("Error.InvalidParams") && bad.out.contains("postpone: invalid \"for\" 0"), "\(bad.out)")
        #expect(try AppearanceServiceTests.call(s, m + "Postpone", ["{'cancel': <true>}"]).ok)
        #expect(try s.ctl("schedule", "--days", "1").out.contains("19:00  dark   dark-at\n"))
    }
}
