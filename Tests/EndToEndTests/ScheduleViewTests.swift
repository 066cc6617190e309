import Foundation
import Testing

/// `appearancectl schedule`: when it will switch next, and the days after, with what hides the schedule.
@Suite struct ScheduleViewTests {
    /// A sandbox at today 12:00 UTC with light-at 07:00 and dark-at 19:00 (UTC), or no schedule.
    static func sandbox(schedule: Bool = true) throws -> (Sandbox, day: Int64) {
        let s = try Sandbox()
        s.env["TZ"] = "UTC"
        s.env["APPEARANCED_TEST_CLOCK_FILE"] = s.root + "/clock-offset"
        let real = Int64(Date().timeIntervalSince1970)
        let day = real / 86_400 * 86_400
        try s.write("\(day + 12 * 3600 - real)\n", to: s.root + "/clock-offset")
        if schedule { try s.write("[schedule]\nlight-at = \"07:00\"\ndark-at = \"19:00\"\n", to: s.configFile) }
        return (s, day)
    }

    static func date(_ t: Int64) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "EEE yyyy-MM-dd"
        return f.string(from: Date(timeIntervalSince1970: TimeInterval(t)))
    }

    @Test func theNextChangesDayByDayAndWhatHidesThem() throws {
        let (s, day) = try Self.sandbox()
        try s.startDaemon()
        let r = try s.ctl("schedule", "--days", "2")
        #expect(r.status == 0, "\(r)")
        let today = Self.date(day), tomorrow = Self.date(day + 86_400), blank = String(repeating: " ", count: today.count)
        #expect(r.out == """
            now: light
            \(today)  19:00  dark   dark-at
            \(tomorrow)  07:00  light  light-at
            \(blank)  19:00  dark   dark-at

            """, "\(r.out)")
        // An override hides the schedule, and says how to follow it again.
        #expect(try s.ctl("set", "dark").status == 0)
        #expect(try s.ctl("schedule", "--days", "1").out.hasPrefix("now: light (your override hides it: appearancectl set system follows it again)\n"))
        // JSON for scripts.
        let json = try s.ctl("schedule", "--json", "--days", "1").out
        #expect(json.contains(#""configured":true,"mode":"light","hiddenBy":"override","events":[{"time":\#(day + 19 * 3600),"mode":"dark","cause":"dark-at"}]"#), "\(json)")
    }

    @Test func withoutAScheduleItSaysHowToHaveOne() throws {
        let (s, _) = try Self.sandbox(schedule: false)
        try s.startDaemon()
        let r = try s.ctl("schedule")
        #expect(r.status == 0 && r.out.hasPrefix("no schedule: add [schedule] to the config"), "\(r)")
        let bad = try s.ctl("schedule", "--days", "0")
        #expect(bad.status == 64 && bad.err.contains(#"invalid --days "0" (expected a whole number from 1 to 31)"#), "\(bad)")
    }
}
