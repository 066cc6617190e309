import Testing
@testable import AppearanceCore

/// Fixed times on the days the clocks change. The zone is given as a function (Europe/Berlin's rule: CET,
/// UTC+1, and CEST, UTC+2, from 01:00 UTC on the last Sunday of March to 01:00 UTC on the last Sunday of
/// October), so nothing depends on the machine's time zone or its tz database.
struct DaylightSavingTests {
    static let springForward: Int64 = 1_774_746_000  // 2026-03-29 01:00 UTC: 02:00 CET becomes 03:00 CEST
    static let fallBack: Int64 = 1_792_890_000  // 2026-10-25 01:00 UTC: 03:00 CEST becomes 02:00 CET

    static let berlin: @Sendable (Int64) -> Int64 = { t in t >= springForward && t < fallBack ? 7200 : 3600 }
    /// A zone whose clocks skip midnight (as Chile's): UTC-4, then UTC-3 from 2026-09-06 00:00 local (04:00 UTC).
    static let santiago: @Sendable (Int64) -> Int64 = { t in t >= 1_788_667_200 ? -3 * 3600 : -4 * 3600 }

    static func day(_ year: Int, _ month: Int, _ day: Int, _ zone: @escaping @Sendable (Int64) -> Int64 = berlin) -> Schedule.LocalDay {
        Schedule.LocalDay.inZone(year: year, month: month, day: day, utcOffset: zone)
    }

    static func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> Int64 {
        Schedule.LocalDay(year: year, month: month, day: day) { _ in 0 }.utcMidnight + Int64(hour * 3600 + minute * 60)
    }

    /// (local date, local time) → the instant, in UTC.
    static let instants: [(date: (Int, Int, Int), local: (Int, Int), utc: (Int, Int, Int, Int, Int), why: String)] = [
        ((2026, 1, 10), (12, 0), (2026, 1, 10, 11, 0), "winter"),
        ((2026, 6, 20), (12, 0), (2026, 6, 20, 10, 0), "summer"),
        ((2026, 3, 29), (1, 59), (2026, 3, 29, 0, 59), "before the gap"),
        ((2026, 3, 29), (2, 0), (2026, 3, 29, 1, 0), "the gap's first minute: when the gap ends, 03:00 CEST"),
        ((2026, 3, 29), (2, 30), (2026, 3, 29, 1, 0), "in the gap: when it ends, 03:00 CEST"),
        ((2026, 3, 29), (2, 59), (2026, 3, 29, 1, 0), "the gap's last minute"),
        ((2026, 3, 29), (3, 0), (2026, 3, 29, 1, 0), "the gap's end itself"),
        ((2026, 3, 29), (3, 30), (2026, 3, 29, 1, 30), "after the gap"),
        ((2026, 3, 29), (0, 0), (2026, 3, 28, 23, 0), "midnight before the gap"),
        ((2026, 10, 25), (1, 59), (2026, 10, 24, 23, 59), "before the repeated hour"),
        ((2026, 10, 25), (2, 0), (2026, 10, 25, 0, 0), "the repeated hour: its first occurrence (CEST)"),
        ((2026, 10, 25), (2, 30), (2026, 10, 25, 0, 30), "the repeated hour: its first occurrence (CEST)"),
        ((2026, 10, 25), (2, 59), (2026, 10, 25, 0, 59), "the repeated hour's last minute, first time"),
        ((2026, 10, 25), (3, 0), (2026, 10, 25, 2, 0), "after the repeated hour (CET)"),
        ((2026, 10, 25), (23, 59), (2026, 10, 25, 22, 59), "the long day's end"),
    ]

    @Test(arguments: instants.indices)
    func fixedTimeToInstant(_ i: Int) {
        let c = Self.instants[i]
        let d = Self.day(c.date.0, c.date.1, c.date.2)
        #expect(d.at(c.local.0 * 60 + c.local.1) == Self.utc(c.utc.0, c.utc.1, c.utc.2, c.utc.3, c.utc.4), "\(c.why)")
    }

    @Test func midnightInAGapIsWhenTheGapEnds() {
        let d = Self.day(2026, 9, 6, Self.santiago)
        #expect(d.at(0) == Self.utc(2026, 9, 6, 4, 0))  // 01:00 local, UTC-3
        #expect(d.at(30) == Self.utc(2026, 9, 6, 4, 0))
        #expect(d.at(60) == Self.utc(2026, 9, 6, 4, 0))
        #expect(d.at(90) == Self.utc(2026, 9, 6, 4, 30))
        #expect(Self.day(2026, 9, 5, Self.santiago).at(23 * 60 + 59) == Self.utc(2026, 9, 6, 3, 59))
    }

    static func days(_ year: Int, _ month: Int, _ first: Int) -> [Schedule.LocalDay] {
        (first - 1...first + 3).map { Self.day(year, month, $0) }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var lightAt: (Int, Int), darkAt: (Int, Int)
        var date: (Int, Int, Int)
        /// UTC (hour, minute) on that date → the mode then, and the next change (UTC date, hour, minute) and its cause.
        var checks: [((Int, Int), Mode, (Int, Int, Int, Int, Int)?, String?)]
        var testDescription: String { "light-at \(lightAt) dark-at \(darkAt) on \(date)" }
    }

    /// The plan on the days the clocks change: every configured time lands on its own instant, or, when two
    /// land on the same one (both in a gap), the one configured later in the day wins, and the plan agrees.
    static let cases: [Case] = [
        // The finding: 02:30 does not exist on 29 March; it happens at 03:00, dark-at 03:30 half an hour later.
        Case(lightAt: (2, 30), darkAt: (3, 30), date: (2026, 3, 29), checks: [
            ((0, 30), .dark, (2026, 3, 29, 1, 0), "light-at"),  // 01:30 CET
            ((1, 0), .light, (2026, 3, 29, 1, 30), "dark-at"),  // 03:00 CEST
            ((1, 15), .light, (2026, 3, 29, 1, 30), "dark-at"),
            ((1, 30), .dark, (2026, 3, 30, 0, 30), "light-at"),  // the next day at 02:30 CEST
        ]),
        // Both in the gap, so both at 03:00: dark-at (02:45) is configured later and wins; light-at is not
        // announced for an instant at which it would not hold.
        Case(lightAt: (2, 15), darkAt: (2, 45), date: (2026, 3, 29), checks: [
            ((0, 30), .dark, (2026, 3, 30, 0, 15), "light-at"),
            ((1, 0), .dark, (2026, 3, 30, 0, 15), "light-at"),
        ]),
        Case(lightAt: (2, 45), darkAt: (2, 15), date: (2026, 3, 29), checks: [
            ((0, 30), .light, (2026, 3, 30, 0, 15), "dark-at"),
            ((1, 0), .light, (2026, 3, 30, 0, 15), "dark-at"),
        ]),
        // light-at 02:30 (in the gap) and dark-at 03:00 (the gap's end): the same instant, dark-at wins.
        Case(lightAt: (2, 30), darkAt: (3, 0), date: (2026, 3, 29), checks: [
            ((0, 59), .dark, (2026, 3, 30, 0, 30), "light-at"),
            ((1, 0), .dark, (2026, 3, 30, 0, 30), "light-at"),
        ]),
        // The repeated hour: 02:30 and 02:45 happen the first time (CEST), 15 minutes apart.
        Case(lightAt: (2, 30), darkAt: (2, 45), date: (2026, 10, 25), checks: [
            ((0, 0), .dark, (2026, 10, 25, 0, 30), "light-at"),
            ((0, 30), .light, (2026, 10, 25, 0, 45), "dark-at"),
            ((1, 30), .dark, (2026, 10, 26, 1, 30), "light-at"),  // the second 02:30 (CET) is not a change
        ]),
        Case(lightAt: (7, 0), darkAt: (19, 0), date: (2026, 10, 25), checks: [
            ((5, 59), .dark, (2026, 10, 25, 6, 0), "light-at"),
            ((6, 0), .light, (2026, 10, 25, 18, 0), "dark-at"),
        ]),
    ]

    @Test(arguments: cases)
    func planOnTheDayTheClocksChange(_ c: Case) throws {
        let s = Schedule(lightAt: c.lightAt.0 * 60 + c.lightAt.1, darkAt: c.darkAt.0 * 60 + c.darkAt.1)
        let days = Self.days(c.date.0, c.date.1, c.date.2)
        for (now, mode, next, cause) in c.checks {
            let at = Self.utc(c.date.0, c.date.1, c.date.2, now.0, now.1)
            let plan = try #require(s.plan(now: at, days: days))
            #expect(plan.mode == mode, "at \(now) UTC")
            #expect(plan.next?.time == next.map { Self.utc($0.0, $0.1, $0.2, $0.3, $0.4) }, "at \(now) UTC")
            #expect(plan.next?.cause == cause, "at \(now) UTC")
            // What the plan announces holds once it comes.
            if let n = plan.next { #expect(s.plan(now: n.time, days: days)?.mode == n.mode, "at \(now) UTC") }
        }
    }

    /// No two events share an instant: at most one change per instant, the one configured later in the day.
    @Test func eventsOnADayTheClocksSkipAreDistinct() {
        for (light, dark) in [(135, 165), (165, 135), (150, 180), (180, 150), (150, 210)] {
            let events = Schedule(lightAt: light, darkAt: dark).events(on: Self.days(2026, 3, 29))
            #expect(Set(events.map(\.time)).count == events.count, "\(light) \(dark)")
            #expect(events == events.sorted { $0.time < $1.time })
        }
    }
}
