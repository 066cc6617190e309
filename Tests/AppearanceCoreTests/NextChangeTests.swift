@testable import AppearanceCore
import Testing

/// The user's word on the next automatic change, pure: what postpone and skip make of the plan, when they
/// are over, and what is refused.
@Suite struct NextChangeDecisionTests {
    static let schedule = Schedule(lightAt: 7 * 60, darkAt: 19 * 60)
    static let days = SchedulePlanTests.days(offsetHours: 0)
    static let noon = days[1].at(12 * 60), dusk = days[1].at(19 * 60), dawn = days[2].at(7 * 60)

    static func decide(_ r: NextChange.Request, _ current: NextChange? = nil, at now: Int64 = noon) -> Result<NextChange?, Schedule.Refusal> {
        schedule.deciding(r, current: current, now: now, days: days, show: { "\($0)" })
    }

    @Test func postponesAddUpAndMoveTheChange() throws {
        let once = try #require(try Self.decide(.postpone(seconds: 1800)).get())
        #expect(once == NextChange(time: Self.dusk, mode: .dark, postponedBy: 1800))
        let twice = try #require(try Self.decide(.postpone(seconds: 900), once).get())
        #expect(twice.postponedBy == 2700)
        let plan = try #require(Self.schedule.plan(now: Self.noon, days: Self.days, adjusting: twice))
        #expect(plan.mode == .light && plan.next?.time == Self.dusk + 2700 && plan.next?.postponedFrom == Self.dusk)
        // Between the planned time and the new one, still light; the change then says it was put off.
        #expect(Self.schedule.plan(now: Self.dusk + 60, days: Self.days, adjusting: twice)?.mode == .light)
        let after = try #require(Self.schedule.plan(now: Self.dusk + 2700, days: Self.days, adjusting: twice))
        #expect(after.mode == .dark && after.cause == "dark-at (postponed by 45m)")
        #expect(!Self.schedule.isOver(twice, now: Self.dusk + 2699, days: Self.days))
        #expect(Self.schedule.isOver(twice, now: Self.dusk + 2700, days: Self.days))
        #expect(try Self.decide(.cancelPostpone, twice).get() == nil)
    }

    @Test func aSkippedChangeIsListedChangesNothingAndEndsWithTheNextEvent() throws {
        let skip = try #require(try Self.decide(.skip).get())
        let plan = try #require(Self.schedule.plan(now: Self.noon, days: Self.days, adjusting: skip))
        #expect(plan.next?.time == Self.days[2].at(19 * 60), "the change after it: tomorrow's dusk")
        #expect(Self.schedule.plan(now: Self.dusk + 60, days: Self.days, adjusting: skip)?.mode == .light)
        #expect(Self.schedule.events(on: Self.days, adjusting: skip).first { $0.time == Self.dusk }?.skipped == true)
        #expect(!Self.schedule.isOver(skip, now: Self.dawn - 1, days: Self.days))
        #expect(Self.schedule.isOver(skip, now: Self.dawn, days: Self.days))
        #expect(Self.schedule.plan(now: Self.dawn, days: Self.days)?.mode == .light, "without the word the plan agrees")
    }

    @Test(arguments: [
        (NextChange.Request.postpone(seconds: 13 * 3600), nil as NextChange?, "that would put dark past the change after it"),
        (.postpone(seconds: 600), NextChange(time: dusk, mode: .dark, skipped: true), "is skipped; cancel that first"),
        (.cancelPostpone, nil, "nothing is postponed"),
        (.cancelSkip, NextChange(time: dusk, mode: .dark, postponedBy: 60), "nothing is skipped"),
        (.postpone(seconds: 0), nil, "longer than 0 seconds"),
    ])
    func refusals(request: NextChange.Request, current: NextChange?, says: String) {
        guard case .failure(let r) = Self.decide(request, current) else { Issue.record("not refused"); return }
        #expect(r.text.contains(says), "\(r.text)")
    }

    @Test func noChangeComingIsRefused() {
        let polar = Schedule(latitude: 78.22, longitude: 15.63)
        let r = polar.deciding(.skip, current: nil, now: Self.noon, days: Self.days, show: { "\($0)" })
        #expect(r == .failure(Schedule.Refusal("no automatic change is coming in the next days (no schedule, or a polar day or night)")))
    }
}
