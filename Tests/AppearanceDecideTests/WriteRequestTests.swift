import AppearanceCore
import AppearanceDecide
import AppearanceProtocol
import Testing

/// Which change a write request makes, on a given state, at a given time: every branch of `Decide.write`.
@Suite struct WriteRequestTests {
    static let now: Int64 = 1_800_000_000

    static func engine(override: Override = .system, system: SystemScheme = .light, temporary: TemporaryOverride? = nil,
                       apps: [String: Mode] = [:]) -> Engine {
        var inputs = Inputs(system: system, override: override, defaultMode: .light, temporary: temporary)
        inputs.apps = apps
        return Engine(inputs: inputs, instance: "t")
    }

    static let cases: [(String, Call, String?, Engine, Event?)] = [
        ("set dark", .set(.dark), nil, engine(), .override(.dark)),
        ("set dark when already so", .set(.dark), nil, engine(override: .dark), nil),
        ("set dark over a temporary ends the temporary", .set(.dark), nil,
         engine(override: .dark, temporary: TemporaryOverride(mode: .light, expiry: .nextChange)), .override(.dark)),
        ("set system", .set(.system), nil, engine(override: .light), .override(.system)),
        ("toggle from light (system light) forces dark", .toggle, nil, engine(), .override(.dark)),
        ("toggle back returns to the system", .toggle, nil, engine(override: .dark), .override(.system)),
        ("set dark for an app", .set(.dark), "kitty", engine(), .app("kitty", .dark)),
        ("set system for an app removes its override", .set(.system), "kitty", engine(apps: ["kitty": .dark]), .app("kitty", nil)),
        ("set system for an app without one", .set(.system), "kitty", engine(), nil),
        ("toggle for an app", .toggle, "kitty", engine(), .app("kitty", .dark)),
        ("until-next", .setTemporary(.dark, .untilNext), nil, engine(),
         .temporary(TemporaryOverride(mode: .dark, expiry: .nextChange))),
        ("the same until-next again", .setTemporary(.dark, .untilNext), nil,
         engine(temporary: TemporaryOverride(mode: .dark, expiry: .nextChange)), nil),
        ("for 2 h ends 2 h from now", .setTemporary(.dark, .seconds(7200)), nil, engine(),
         .temporary(TemporaryOverride(mode: .dark, expiry: .at(now + 7200)))),
        ("toggle for 60 s", .toggleTemporary(.seconds(60)), nil, engine(),
         .temporary(TemporaryOverride(mode: .dark, expiry: .at(now + 60)))),
        ("get changes nothing", .get, nil, engine(), nil),
        ("status changes nothing", .status, "kitty", engine(), nil),
    ]

    @Test(arguments: cases) func aWriteMakesTheChangeItAsksFor(_ name: String, _ call: Call, _ app: String?, _ engine: Engine,
                                                             _ expected: Event?) throws {
        let decided = try Decide.write(call, app: app, on: engine, now: Self.now).get()
        #expect(decided == expected, "\(name)")
    }

    @Test func anAppOverrideOverTheCapIsRefusedButChangingOrRemovingOneIsNot() {
        let full = Dictionary(uniqueKeysWithValues: (0..<AppID.maxOverrides).map { ("app\($0)", Mode.dark) })
        let e = Self.engine(apps: full)
        guard case .failure(let error) = Decide.write(.set(.dark), app: "one-more", on: e, now: Self.now) else {
            Issue.record("a new app over the cap was accepted")
            return
        }
        #expect(error.code == ErrorCode.requestFailed.rawValue && error.message.contains("too many app overrides (the limit is 4096)"))
        #expect((try? Decide.write(.set(.light), app: "app0", on: e, now: Self.now).get()) == .app("app0", .light))
        #expect((try? Decide.write(.set(.system), app: "app0", on: e, now: Self.now).get()) == .app("app0", nil))
    }

    /// `set … --for N` is logged with its end (now + N), not with the time it was set.
    @Test func theLogLineOfATemporaryOverrideGivesItsEnd() throws {
        let event = try #require(try Decide.write(.setTemporary(.dark, .seconds(5400)), app: nil, on: Self.engine(), now: Self.now).get())
        #expect(Decide.logLine(of: event, time: { "@\($0)" }) == "temporary override: dark until @\(Self.now + 5400)")
        #expect(Decide.logLine(of: .temporary(TemporaryOverride(mode: .light, expiry: .nextChange)), time: { _ in "" })
                == "temporary override: light until the next automatic change")
        #expect(Decide.logLine(of: .override(.system), time: { _ in "" }) == "override: system")
        #expect(Decide.logLine(of: .app("kitty", nil), time: { _ in "" }) == "app override kitty: removed")
        #expect(Decide.cause(of: .app("kitty", .dark)) == "app override kitty: dark,")
        #expect(Decide.cause(of: .temporary(nil)) == "temporary override ended")
    }

    static let timerCases: [(String, TemporaryOverride?, Int64, Int64, Event?)] = [
        ("its time came", TemporaryOverride(mode: .dark, expiry: .at(100)), 100, 100, .temporary(nil)),
        ("a late timer", TemporaryOverride(mode: .dark, expiry: .at(100)), 100, 160, .temporary(nil)),
        ("fired early: the clock was set back", TemporaryOverride(mode: .dark, expiry: .at(100)), 100, 99, nil),
        ("another temporary replaced it", TemporaryOverride(mode: .dark, expiry: .at(200)), 100, 150, nil),
        ("an until-next replaced it", TemporaryOverride(mode: .dark, expiry: .nextChange), 100, 150, nil),
        ("none is in force", nil, 100, 150, nil),
    ]

    @Test(arguments: timerCases) func aTemporaryOverrideEndsOnlyAtItsOwnTime(_ name: String, _ t: TemporaryOverride?, _ end: Int64,
                                                                           _ now: Int64, _ expected: Event?) {
        #expect(Decide.temporaryTimeCame(end, on: Self.engine(temporary: t), now: now) == expected, "\(name)")
    }
}
