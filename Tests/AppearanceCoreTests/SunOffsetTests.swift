@testable import AppearanceCore
import Testing

/// `sunrise-offset` / `sunset-offset`: the sun's events moved by a signed duration; fixed times and polar days
/// and nights are not moved.
@Suite struct SunOffsetTests {
    /// UTC days in June 2026 (local time = UTC).
    static func days() -> [Schedule.LocalDay] {
        (19...23).map { d in
            let midnight = Schedule.LocalDay(year: 2026, month: 6, day: d) { _ in 0 }.utcMidnight
            return Schedule.LocalDay(year: 2026, month: 6, day: d) { midnight + Int64($0) * 60 }
        }
    }

    static func sun(_ schedule: Schedule) -> [Schedule.Event] {
        schedule.events(on: days()).filter { $0.time >= days()[1].utcMidnight && $0.time < days()[2].utcMidnight }
    }

    @Test func offsetsMoveSunriseAndSunsetAndSayHowFar() {
        let plain = Schedule(latitude: 52.37, longitude: 4.9)
        var moved = plain
        moved.sunriseOffset = 30 * 60
        moved.sunsetOffset = -3600
        let a = Self.sun(plain), b = Self.sun(moved)
        #expect(a.count == 2 && b.count == 2)
        #expect(b[0].time == a[0].time + 1800 && b[0].mode == .light && b[0].cause == "sunrise+30m")
        #expect(b[1].time == a[1].time - 3600 && b[1].mode == .dark && b[1].cause == "sunset-1h")
    }

    @Test func offsetsDoNotMoveFixedTimes() {
        var s = Schedule(latitude: 52.37, longitude: 4.9, lightAt: 7 * 60)
        s.sunriseOffset = 3600
        s.sunsetOffset = 3600
        let e = Self.sun(s)
        #expect(e[0].cause == "light-at" && e[0].time == Self.days()[1].at(7 * 60))
        #expect(e[1].cause == "sunset+1h")
    }

    @Test func offsetsThatLeaveNoDaylightLeaveTheDayDark() {
        // Tromsø around the solstice has the midnight sun; Quito has 12 h days: +7 h and -7 h leave none.
        var s = Schedule(latitude: -0.18, longitude: -78.47)
        s.sunriseOffset = 7 * 3600
        s.sunsetOffset = -7 * 3600
        let all = s.events(on: Self.days())
        #expect(!all.contains { $0.mode == .light }, "\(all)")
        #expect(s.plan(now: Self.days()[2].at(12 * 60), days: Self.days())?.mode == .dark)
    }

    @Test func polarDaysAndNightsAreNotMoved() {
        var s = Schedule(latitude: 78.22, longitude: 15.63)  // Longyearbyen: midnight sun in June
        s.sunriseOffset = -3600
        #expect(s.events(on: Self.days()).isEmpty)
        let plan = s.plan(now: Self.days()[2].at(0), days: Self.days())
        #expect(plan?.mode == .light && plan?.cause == "polar day" && plan?.next == nil, "\(String(describing: plan))")
    }

    @Test func offsetsThatLeaveNoNightLeaveItLight() {
        // Helsinki in June: the sun sets around 22:50 local and rises around 03:55; +6 h and -6 h leave no night.
        var s = Schedule(latitude: 60.17, longitude: 24.94)
        s.sunriseOffset = -6 * 3600
        s.sunsetOffset = 6 * 3600
        let all = s.events(on: Self.days())
        #expect(!all.contains { $0.mode == .dark }, "\(all)")
        #expect(s.plan(now: Self.days()[2].at(0), days: Self.days())?.mode == .light)
    }

    static let shown: [(Int64, String)] = [(0, ""), (30 * 60, "+30m"), (-3600, "-1h"), (5400, "+1h30m"), (-45, "-45s"), (3600 + 30, "+1h30s")]

    @Test(arguments: shown) func offsetsAreShownAsWritten(_ seconds: Int64, _ text: String) {
        #expect(Schedule.describeOffset(seconds) == text)
    }
}
