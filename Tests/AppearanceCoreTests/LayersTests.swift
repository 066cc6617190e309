import Testing
@testable import AppearanceCore

/// The full merge rule (docs/protocol.md, "The merge rule"): temporary > persisted > desktop > schedule > default, the schedule
/// optionally above the desktop, and how temporary overrides end.
struct LayersTests {
    static let temporaries: [TemporaryOverride?] = [nil, TemporaryOverride(mode: .dark, expiry: .nextChange),
                                                    TemporaryOverride(mode: .light, expiry: .at(100))]
    static let schedules: [Mode?] = [nil, .light, .dark]
    static let all = temporaries.flatMap { t in Override.allCases.flatMap { o in SystemScheme.allCases.flatMap { s in
        schedules.flatMap { sc in [false, true].map { above in (t, o, s, sc, above) } } } } }

    @Test("resolve with every layer", arguments: all)
    func layers(t: TemporaryOverride?, o: Override, s: SystemScheme, schedule: Mode?, above: Bool) {
        let inputs = Inputs(system: s, override: o, defaultMode: .light, temporary: t, schedule: schedule, scheduleAboveDesktop: above)
        let desktop: Mode? = s == .dark ? .dark : s == .light ? .light : nil
        let expected: Resolution =
            if let t { Resolution(mode: t.mode, source: .temporary) }
            else if o != .system { Resolution(mode: o == .dark ? .dark : .light, source: .override) }
            else if above, let schedule { Resolution(mode: schedule, source: .schedule) }
            else if let desktop { Resolution(mode: desktop, source: .system) }
            else if let schedule { Resolution(mode: schedule, source: .schedule) }
            else { Resolution(mode: .light, source: .default) }
        #expect(resolve(inputs) == expected)
    }

    @Test("toggle clears a temporary override and never leaves a stale one", arguments: all)
    func toggle(t: TemporaryOverride?, o: Override, s: SystemScheme, schedule: Mode?, above: Bool) {
        var engine = Engine(inputs: Inputs(system: s, override: o, defaultMode: .light, schedule: schedule,
                                           scheduleAboveDesktop: above), instance: "i")
        _ = engine.apply(.temporary(t))
        let before = engine.state.mode
        _ = engine.apply(.override(engine.toggleTarget))
        #expect(engine.state.mode == before.opposite)
        #expect(engine.inputs.temporary == nil)
    }

    static let untilNext = TemporaryOverride(mode: .dark, expiry: .nextChange)

    @Test func untilNextEndsWhenTheDesktopChangesItsValue() {
        var e = Engine(inputs: Inputs(system: .light, override: .system, defaultMode: .light), instance: "i")
        _ = e.apply(.temporary(Self.untilNext))
        #expect(e.state.mode == .dark && e.state.source == .temporary)
        // The same value again, or the portal leaving and coming back, is not a change of the desktop's mind.
        _ = e.apply(.system(SystemReading(.light, detail: "again")))
        _ = e.apply(.system(SystemReading(.unavailable, detail: "portal left")))
        _ = e.apply(.system(SystemReading(.light, detail: "portal back")))
        #expect(e.state.source == .temporary)
        let t = e.apply(.system(SystemReading(.noPreference, detail: "changed")))
        #expect(t?.state.temporary == nil && e.state.source == .default)
    }

    @Test func untilNextEndsAtTheNextScheduleTransitionButATimedOneDoesNot() {
        var e = Engine(inputs: Inputs(system: .unavailable, override: .system, defaultMode: .light, schedule: .light), instance: "i")
        _ = e.apply(.temporary(Self.untilNext))
        _ = e.apply(.schedule(.light, aboveDesktop: false))
        #expect(e.state.source == .temporary)
        _ = e.apply(.schedule(.dark, aboveDesktop: false))
        #expect(e.state.temporary == nil && e.state.source == .schedule && e.state.mode == .dark)

        _ = e.apply(.temporary(TemporaryOverride(mode: .light, expiry: .at(1000))))
        _ = e.apply(.schedule(.light, aboveDesktop: false))
        #expect(e.state.temporary?.expiry == .at(1000))
        _ = e.apply(.temporary(nil))  // its time came
        #expect(e.state.source == .schedule)
    }

    @Test func aPersistedOverrideReplacesATemporaryOne() {
        var e = Engine(inputs: Inputs(system: .dark, override: .system, defaultMode: .light), instance: "i")
        _ = e.apply(.temporary(TemporaryOverride(mode: .light, expiry: .at(5))))
        let t = e.apply(.override(.dark))
        #expect(t?.state.source == .override && t?.state.temporary == nil)
        // Expiring it later changes nothing.
        #expect(e.apply(.temporary(nil)) == nil)
    }
}

/// The schedule's plan: the mode now and the next change, with fixed times, the sun, and polar days.
struct SchedulePlanTests {
    /// Consecutive days of a zone with a fixed offset, from 2026-06-20 (`first` days after it).
    static func days(offsetHours: Int64, from first: Int = 0, count: Int = 4, year: Int = 2026, month: Int = 6, day: Int = 20) -> [Schedule.LocalDay] {
        (0..<count).map { i in
            let d = Schedule.LocalDay(year: year, month: month, day: day + first + i) { _ in 0 }
            let midnight = d.utcMidnight - offsetHours * 3600
            return Schedule.LocalDay(year: year, month: month, day: day + first + i) { midnight + Int64($0) * 60 }
        }
    }

    @Test func fixedTimes() throws {
        let s = Schedule(lightAt: 7 * 60, darkAt: 19 * 60 + 30)
        let days = Self.days(offsetHours: 2)
        let noon = days[1].at(12 * 60)
        let plan = try #require(s.plan(now: noon, days: days))
        #expect(plan.mode == .light)
        #expect(plan.next == Schedule.Event(time: days[1].at(19 * 60 + 30), mode: .dark, cause: "dark-at"))
        let night = try #require(s.plan(now: days[1].at(23 * 60), days: days))
        #expect(night.mode == .dark && night.next?.time == days[2].at(7 * 60))
        // At the very instant of a transition the new mode holds.
        #expect(s.plan(now: days[1].at(7 * 60), days: days)?.mode == .light)
    }

    @Test func sunWithAFixedTimeReplacingOneEvent() throws {
        let berlin = Schedule(latitude: 52.52, longitude: 13.405, darkAt: 21 * 60)
        let days = Self.days(offsetHours: 2)
        let plan = try #require(berlin.plan(now: days[1].at(12 * 60), days: days))
        #expect(plan.mode == .light && plan.next?.cause == "dark-at" && plan.next?.time == days[1].at(21 * 60))
        let night = try #require(berlin.plan(now: days[1].at(22 * 60), days: days))
        #expect(night.mode == .dark && night.next?.cause == "sunrise")
        // Berlin's midsummer sunrise is around 04:43 local time.
        let rise = try #require(night.next?.time) - days[2].at(0)
        #expect(rise > 4 * 3600 + 30 * 60 && rise < 5 * 3600)
    }

    @Test func polarDayAndNightAreOneModeAllDay() throws {
        let longyearbyen = Schedule(latitude: 78.22, longitude: 15.63)
        let summer = Self.days(offsetHours: 2)
        let day = try #require(longyearbyen.plan(now: summer[1].at(3 * 60), days: summer))
        #expect(day.mode == .light && day.next == nil)
        #expect(day.replanAt == summer.last!.at(0))
        let winter = Self.days(offsetHours: 1, month: 12, day: 18)
        let night = try #require(longyearbyen.plan(now: winter[1].at(12 * 60), days: winter))
        #expect(night.mode == .dark && night.next == nil)
    }

    @Test func noScheduleNoPlan() {
        #expect(Schedule().plan(now: 0, days: Self.days(offsetHours: 0)) == nil)
    }
}

/// Per-app overrides: the top input, for that app only.
struct AppOverrideTests {
    static let systems: [SystemScheme] = [.dark, .light, .noPreference, .unavailable]

    @Test("an app's override wins for it alone", arguments: systems)
    func appWins(system: SystemScheme) {
        var inputs = Inputs(system: system, override: .light, defaultMode: .light,
                            temporary: TemporaryOverride(mode: .light, expiry: .nextChange))
        inputs.apps = ["kitty": .dark]
        #expect(resolve(inputs, app: "kitty") == Resolution(mode: .dark, source: .app))
        #expect(resolve(inputs, app: "firefox") == resolve(inputs))
        #expect(resolve(inputs, app: nil) == resolve(inputs))
    }

    @Test("toggle per app removes the override when the opposite is what the app gets anyway", arguments: systems)
    func toggle(system: SystemScheme) {
        var inputs = Inputs(system: system, override: .system, defaultMode: .light)
        let everyone = resolve(inputs).mode
        #expect(toggledAppOverride(inputs, app: "a") == everyone.opposite)   // no override yet: force the opposite
        inputs.apps["a"] = everyone.opposite
        #expect(toggledAppOverride(inputs, app: "a") == nil)                 // back to following everyone
        inputs.apps["a"] = everyone
        #expect(toggledAppOverride(inputs, app: "a") == everyone.opposite)
    }

    @Test func anAppOverrideIsAStateChangeButNotAGlobalOne() throws {
        var e = Engine(inputs: Inputs(system: .light, override: .system, defaultMode: .light), instance: "i")
        let applied = e.apply(.app("kitty", .dark))
        let t = try #require(applied)
        #expect(t.state.seq == 1 && t.state.mode == .light && !t.modeChanged)
        #expect(e.state(for: "kitty").mode == .dark && e.state(for: "kitty").source == .app)
        #expect(e.state(for: "kitty").globalMode == .light && e.state(for: "kitty").app == "kitty")
        #expect(e.apply(.app("kitty", .dark)) == nil)
        // Its subscriber is offered its own state: a desktop flip it masks changes nothing for it.
        var d = Delivery(subscribedAt: e.state(for: "kitty"), interest: Interest(app: "kitty"))
        _ = e.apply(.system(SystemReading(.dark, detail: "flip")))
        d.offer(e.state(for: "kitty"))
        #expect(d.take() == nil)
        _ = e.apply(.app("kitty", .light))
        d.offer(e.state(for: "kitty"))
        let taken = d.take()
        let n = try #require(taken)
        #expect(n.state.mode == .light && n.previous == .dark)
    }
}
