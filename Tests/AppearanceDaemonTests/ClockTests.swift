import AppearanceCore
import AppearancePosix
import Testing
@testable import AppearanceDaemon

/// The local calendar and how times are shown; nothing here depends on the machine's time zone.
struct ClockTests {
    /// Times localtime cannot show, or after the year 9999, are "never": no trap, whatever the Int64.
    @Test(arguments: [Int64.max, Int64.max - 1, Int64.min, Int64.min + 1, Clock.latestShown + 86_400 * 2,
                      1 << 62, -(1 << 62), Clock.earliestShown - 86_400 * 2])
    func farTimesAreNever(_ time: Int64) {
        for now in [Int64(0), 1_780_000_000, Int64.min, Int64.max, -1] {
            #expect(Clock.describe(time, from: now) == "never", "\(time) from \(now)")
        }
    }

    /// Within the years 1 to 9999 a time is shown as a date (the zone decides the day and hour, not the format).
    @Test(arguments: [Clock.latestShown - 86_400 * 2, Clock.earliestShown + 86_400 * 2, -1, 0, 1_780_000_000])
    func timesWithinTheYearsAreShown(_ time: Int64) {
        for now in [Int64.min, Int64.max] {
            let shown = Clock.describe(time, from: now)
            #expect(shown != "never" && shown.split(separator: " ").count == 3, "\(time): \(shown)")
        }
        #expect(Clock.describe(Clock.latestShown - 86_400 * 2, from: 0).contains(" 9999-12-"))
    }

    /// A time later today is only hours and minutes; one on another local day, even within 24 hours, has a date.
    @Test func todayIsHoursAndMinutesAnotherDayHasADate() {
        var dated = 0
        for now in stride(from: Int64(1_780_000_000), to: 1_780_000_000 + 86_400, by: 1_800) {
            let time = now + 3 * 3_600
            let shown = Clock.describe(time, from: now)
            let (a, b) = (Posix.localTime(time), Posix.localTime(now))
            if (a.year, a.month, a.day) == (b.year, b.month, b.day) {
                #expect(shown.utf8.count == 5 && shown.contains(":"), "\(shown)")
            } else {
                dated += 1
                #expect(shown.split(separator: " ").count == 3, "\(shown)")
            }
        }
        #expect(dated == 6, "three hours ahead crosses midnight from six of the day's half hours")
    }

    /// The local days of whatever zone the machine is in (run with TZ=Europe/Berlin, America/Santiago or
    /// Australia/Lord_Howe to see the days the clocks change): a fixed time that exists lands on that wall-clock
    /// time, the first time when the clocks show it twice; one the clocks skip lands at the end of the gap;
    /// later times of a day are never earlier instants.
    @Test func localDaysFollowTheRuleInTheMachinesZone() {
        for week in 0..<53 {
            let around = 1_767_225_600 + Int64(week) * 7 * 86_400  // 2026-01-01 on, Wednesdays to Sundays
            for day in Clock.localDays(around: around) {
                var last = Int64.min
                for minutes in stride(from: 0, to: 1440, by: 15) {
                    let at = day.at(minutes)
                    let where_ = "\(day.year)-\(day.month)-\(day.day) \(minutes / 60):\(minutes % 60)"
                    #expect(at >= last, "\(where_)")
                    last = at
                    let local = Posix.localTime(at)
                    if (local.year, local.month, local.day, local.hour * 60 + local.minute) == (day.year, day.month, day.day, minutes) {
                        // Shown twice (the clocks go back by `repeated` seconds): this is the first time.
                        let repeated = Clock.utcOffset(at: at - 86_400) - Clock.utcOffset(at: at + 86_400)
                        if repeated > 0 {
                            let before = Posix.localTime(at - repeated)
                            #expect((before.day, before.hour * 60 + before.minute) != (day.day, minutes), "\(where_)")
                        }
                    } else {
                        // Skipped: `at` is the instant the clocks jumped, from a time before this one.
                        #expect(Clock.utcOffset(at: at - 1) < Clock.utcOffset(at: at), "\(where_)")
                        let justBefore = Posix.localTime(at - 1)
                        #expect(justBefore.day != day.day || justBefore.hour * 60 + justBefore.minute < minutes, "\(where_)")
                    }
                }
            }
        }
    }
}
