import Testing
@testable import AppearanceCore

struct EngineTests {
    func step(_ e: inout Engine, _ event: Event) -> Transition? { e.apply(event) }

    func engine(_ system: SystemScheme = .light, _ override: Override = .system) -> Engine {
        Engine(inputs: Inputs(system: system, override: override, defaultMode: .light), instance: "i")
    }

    @Test func initialState() {
        let e = engine(.dark)
        #expect(e.state == AppearanceState(mode: .dark, system: .dark, override: .system, source: .system, seq: 0, instance: "i"))
        #expect(e.state.darkMode)
    }

    @Test func repeatedReadingsChangeNothing() {
        var e = engine(.dark)
        #expect(step(&e, .system(SystemReading(.dark, detail: "portal v1"))) == nil)
        #expect(step(&e, .system(SystemReading(.dark, detail: "portal v1"))) == nil)
        #expect(e.state.seq == 0)
        #expect(e.systemDetail == "portal v1")
    }

    @Test func changeCarriesPreviousAndBumpsSeq() throws {
        var e = engine(.light)
        let t = try #require(step(&e, .system(SystemReading(.dark, detail: "portal v2"))))
        #expect(t.modeChanged)
        #expect(t.previous.mode == .light)
        #expect(t.state.mode == .dark)
        #expect(t.state.seq == 1)
        let t2 = try #require(step(&e, .system(SystemReading(.light, detail: "portal v2"))))
        #expect(t2.state.seq == 2)
    }

    @Test func overrideMasksTheSystem() throws {
        var e = engine(.light)
        let t = try #require(step(&e, .override(.dark)))
        #expect(t.state.source == .override)
        #expect(t.modeChanged)
        // The system changing under an override changes the state object but not the mode.
        let t2 = try #require(step(&e, .system(SystemReading(.dark, detail: "x"))))
        #expect(!t2.modeChanged)
        #expect(t2.state.system == .dark)
        // Setting the same override twice is no change at all.
        #expect(step(&e, .override(.dark)) == nil)
        // The way back: follow the system again.
        let t3 = try #require(step(&e, .override(.system)))
        #expect(t3.state.source == .system)
        #expect(t3.state.mode == .dark)
        #expect(!t3.modeChanged)
    }

    @Test func defaultModeChange() throws {
        var e = engine(.noPreference)
        #expect(e.state.mode == .light)
        let t = try #require(step(&e, .defaultMode(.dark)))
        #expect(t.state.mode == .dark)
        #expect(t.state.source == .default)
        #expect(step(&e, .defaultMode(.dark)) == nil)
    }

    @Test func traitsAreStateChangesThatLeaveTheModeAlone() throws {
        var e = engine(.dark)
        let traits = Traits(contrast: .high, reducedMotion: true, accentColor: Color(1, 2, 3))
        let t = try #require(step(&e, .system(SystemReading(.dark, detail: "portal v2", traits: traits))))
        #expect(!t.modeChanged && t.traitsChanged)
        #expect(t.state.traits == traits && t.state.seq == 1)
        #expect(step(&e, .system(SystemReading(.dark, detail: "portal v2", traits: traits))) == nil)
        // Losing the portal loses the traits too.
        let t2 = try #require(step(&e, .system(SystemReading(.unavailable, detail: "portal left the bus"))))
        #expect(t2.state.traits == .unavailable)
    }

    @Test func toggleTarget() {
        #expect(engine(.light).toggleTarget == .dark)
        #expect(engine(.light, .dark).toggleTarget == .system)
        #expect(engine(.dark, .system).toggleTarget == .light)
        #expect(engine(.unavailable, .light).toggleTarget == .dark)
    }
}

struct DeliveryTests {
    func state(_ mode: Mode, seq: UInt64) -> AppearanceState {
        AppearanceState(mode: mode, system: .light, override: .system, source: .system, seq: seq, instance: "i")
    }

    @Test func fastSubscriberGetsEachChangeWithPrevious() {
        var d = Delivery(subscribedAt: state(.light, seq: 0))
        d.offer(state(.dark, seq: 1))
        #expect(d.take() == Notification(state: state(.dark, seq: 1), previous: .light))
        d.offer(state(.light, seq: 2))
        #expect(d.take() == Notification(state: state(.light, seq: 2), previous: .dark))
        #expect(d.take() == nil)
    }

    @Test func nothingForAChangeThatLeavesTheModeAlone() {
        var d = Delivery(subscribedAt: state(.light, seq: 0))
        d.offer(state(.light, seq: 1))
        #expect(d.take() == nil)
    }

    @Test func slowSubscriberIsCoalescedLatestWins() {
        var d = Delivery(subscribedAt: state(.light, seq: 0))
        d.offer(state(.dark, seq: 1))
        d.offer(state(.dark, seq: 2))
        #expect(d.take() == Notification(state: state(.dark, seq: 2), previous: .light))
    }

    @Test func slowSubscriberBackWhereItWasGetsNothing() {
        var d = Delivery(subscribedAt: state(.light, seq: 0))
        d.offer(state(.dark, seq: 1))
        d.offer(state(.light, seq: 2))
        #expect(d.pending == nil)
        #expect(d.take() == nil)
        d.offer(state(.dark, seq: 3))
        #expect(d.take() == Notification(state: state(.dark, seq: 3), previous: .light))
    }
}

/// Delivery per subscriber view: mode only, mode + traits, mode + palette.
struct DeliveryViewTests {
    static let high = Traits(contrast: .high)
    func state(_ mode: Mode, _ traits: Traits = .unavailable, seq: UInt64) -> AppearanceState {
        AppearanceState(mode: mode, system: .light, override: .system, source: .system, traits: traits, seq: seq, instance: "i")
    }
    func palette(_ mode: Mode, _ bg: UInt8) -> ResolvedPalette {
        ResolvedPalette(variant: Variant(mode), tokens: [PaletteToken(name: "fill.bg", value: .color(Color(bg, bg, bg)))])
    }

    @Test func modeOnlySubscriberGetsNothingForATraitChange() {
        var d = Delivery(subscribedAt: state(.light, seq: 0))
        d.offer(state(.light, Self.high, seq: 1))
        #expect(d.take() == nil)
        d.offer(state(.dark, Self.high, seq: 2))
        #expect(d.take() == Notification(state: state(.dark, Self.high, seq: 2), previous: .light))
    }

    @Test func traitsSubscriberGetsTraitChangesWithTheSameMode() {
        var d = Delivery(subscribedAt: state(.light, seq: 0), interest: Interest(traits: true))
        d.offer(state(.light, Self.high, seq: 1))
        #expect(d.take() == Notification(state: state(.light, Self.high, seq: 1), previous: .light))
        d.offer(state(.light, Self.high, seq: 1))
        #expect(d.take() == nil)
    }

    @Test func traitsSubscriberCoalescedBackToKnownGetsNothing() {
        var d = Delivery(subscribedAt: state(.light, seq: 0), interest: Interest(traits: true))
        d.offer(state(.light, Self.high, seq: 1))
        d.offer(state(.dark, Self.high, seq: 2))
        d.offer(state(.light, .unavailable, seq: 3))
        #expect(d.pending == nil)
        // A slow one coalesced over mode and trait changes gets the latest, with the mode it knew.
        d.offer(state(.dark, Self.high, seq: 4))
        d.offer(state(.dark, Traits(contrast: .normal), seq: 5))
        #expect(d.take() == Notification(state: state(.dark, Traits(contrast: .normal), seq: 5), previous: .light))
    }

    @Test func paletteSubscriberGetsPaletteChangesAndThePaletteInEachNotification() {
        var d = Delivery(subscribedAt: state(.light, seq: 0), palette: palette(.light, 255), interest: Interest(palette: true))
        // A trait change that leaves the palette alone is nothing to a palette subscriber that did not ask for traits.
        d.offer(state(.light, Self.high, seq: 1), palette: palette(.light, 255))
        #expect(d.take() == nil)
        // A reload that changes a value: same state, new palette.
        d.offer(state(.light, Self.high, seq: 1), palette: palette(.light, 250))
        #expect(d.take() == Notification(state: state(.light, Self.high, seq: 1), previous: .light, palette: palette(.light, 250)))
        d.offer(state(.dark, seq: 2), palette: palette(.dark, 38))
        #expect(d.take() == Notification(state: state(.dark, seq: 2), previous: .light, palette: palette(.dark, 38)))
        // Back to what it knows while slow: cancelled.
        d.offer(state(.light, seq: 3), palette: palette(.light, 250))
        d.offer(state(.dark, seq: 4), palette: palette(.dark, 38))
        #expect(d.pending == nil)
    }

    @Test func modeOnlySubscriberNeverCarriesAPalette() {
        var d = Delivery(subscribedAt: state(.light, seq: 0), palette: palette(.light, 255))
        d.offer(state(.light, seq: 0), palette: palette(.light, 1))
        #expect(d.take() == nil)
        d.offer(state(.dark, seq: 1), palette: palette(.dark, 38))
        #expect(d.take()?.palette == nil)
    }
}
