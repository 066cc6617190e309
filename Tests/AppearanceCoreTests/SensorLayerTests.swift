import Testing
@testable import AppearanceCore

/// The automatic layer's order (the power rule on battery, the light sensor, the schedule) and the light sensor's
/// thresholds and delay.
struct SensorLayerTests {
    static let modes: [Mode?] = [nil, .light, .dark]
    static let all = modes.flatMap { p in modes.flatMap { l in modes.flatMap { s in [SystemScheme.dark, .noPreference].flatMap { d in
        [false, true].map { above in (p, l, s, d, above) } } } } }

    @Test("the first automatic input with a value decides, below the desktop unless ranked above it", arguments: all)
    func order(power: Mode?, light: Mode?, schedule: Mode?, desktop: SystemScheme, above: Bool) {
        var inputs = Inputs(system: desktop, override: .system, defaultMode: .light, schedule: schedule, scheduleAboveDesktop: above)
        (inputs.power, inputs.light) = (power, light)
        let automatic: Resolution? = if let power { Resolution(mode: power, source: .power) }
            else if let light { Resolution(mode: light, source: .lightSensor) }
            else { schedule.map { Resolution(mode: $0, source: .schedule) } }
        let expected: Resolution = if above, let automatic { automatic }
            else if desktop == .dark { Resolution(mode: .dark, source: .system) }
            else { automatic ?? Resolution(mode: .light, source: .default) }
        #expect(resolve(inputs) == expected)
    }

    @Test func anOverrideHidesEveryAutomaticInput() {
        var inputs = Inputs(system: .noPreference, override: .light, defaultMode: .light, schedule: .dark)
        (inputs.power, inputs.light) = (.dark, .dark)
        #expect(resolve(inputs) == Resolution(mode: .light, source: .override))
    }

    @Test func aChangeOfTheAutomaticLayerEndsATemporaryOverrideUntilTheNext() {
        var engine = Engine(inputs: Inputs(system: .unavailable, override: .system, defaultMode: .light, schedule: .light), instance: "i")
        _ = engine.apply(.temporary(TemporaryOverride(mode: .dark, expiry: .nextChange)))
        // The light sensor saying what the schedule says already changes nothing automatic.
        _ = engine.apply(.light(.light))
        #expect(engine.inputs.temporary != nil)
        let t = engine.apply(.power(.dark))
        #expect(engine.inputs.temporary == nil)
        #expect(t?.state.mode == .dark && t?.state.source == .power)
    }

    @Test func thresholdsAndTheBandBetweenThem() {
        let judge = LightJudge(darkBelow: 40, lightAbove: 80, delay: 10)
        #expect(judge.side(of: 0) == .dark)
        #expect(judge.side(of: 39.9) == .dark)
        #expect(judge.side(of: 40) == nil)
        #expect(judge.side(of: 80) == nil)
        #expect(judge.side(of: 80.1) == .light)
    }

    @Test func theFirstLevelDecidesAtOnceThenALevelMustStayForTheDelay() {
        var judge = LightJudge(darkBelow: 40, lightAbove: 80, delay: 10)
        #expect(judge.reading(12, at: 100) == true)
        #expect(judge.mode == .dark)
        #expect(judge.reading(500, at: 101) == false)
        #expect(judge.mode == .dark && judge.due == 111)
        #expect(judge.tick(110.9) == false)
        #expect(judge.reading(600, at: 105) == false)  // still light: the wait goes on from 101
        #expect(judge.tick(111) == true)
        #expect(judge.mode == .light && judge.due == nil)
    }

    @Test func aFlickerShorterThanTheDelayChangesNothing() {
        var judge = LightJudge(darkBelow: 40, lightAbove: 80, delay: 10)
        _ = judge.reading(200, at: 0)
        for t in stride(from: 1.0, to: 60, by: 2) {
            #expect(judge.reading(t.truncatingRemainder(dividingBy: 4) == 1 ? 5 : 200, at: t) == false)
            _ = judge.tick(t + 1)
        }
        #expect(judge.mode == .light)
    }

    @Test func theBandLeavesItToTheScheduleAfterTheDelay() {
        var judge = LightJudge(darkBelow: 40, lightAbove: 80, delay: 10)
        _ = judge.reading(10, at: 0)
        _ = judge.reading(60, at: 1)
        #expect(judge.tick(11) == true)
        #expect(judge.mode == nil)
    }

    @Test func aSensorThatReturnsDecidesAtOnceAgain() {
        var judge = LightJudge(darkBelow: 40, lightAbove: 80, delay: 10)
        _ = judge.reading(10, at: 0)
        judge.lost()
        #expect(judge.mode == nil)
        #expect(judge.reading(300, at: 5) == true)
        #expect(judge.mode == .light)
    }

    @Test(arguments: [Double.nan, .infinity, -1, -Double.leastNonzeroMagnitude])
    func levelsThatAreNoLevel(_ level: Double) {
        #expect(!LightJudge.usable(level))
    }
}
