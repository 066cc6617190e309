import AppearanceCore
import AppearanceDecide
import Testing

/// The echo/flip rule: what a reading of the desktop's value does while appearanced drives it, and while not.
@Suite struct DesktopReadingTests {
    static func reading(_ s: SystemScheme) -> SystemReading { SystemReading(s, detail: "portal v2") }

    static func engine(system: SystemScheme, override: Override = .system, temporary: TemporaryOverride? = nil) -> Engine {
        Engine(inputs: Inputs(system: system, override: override, defaultMode: .light, temporary: temporary), instance: "t")
    }

    @Test func notFollowingAChangeIsTheDesktopsValue() {
        var e = Self.engine(system: .light)
        var w = DesktopWrites()
        let o = Decide.desktopReading(Self.reading(.dark), engine: &e, writes: &w, following: false)
        #expect(!o.echo && o.manualFlip == nil)
        #expect(o.steps.map(\.cause) == ["desktop: dark (portal v2)"])
        #expect(e.state.mode == .dark && e.state.source == .system)
    }

    @Test func followingTheEchoOfAWriteIsNoAutomaticChange() {
        // appearanced wrote dark for a `set dark --until-next`; its echo must not end that override.
        var e = Self.engine(system: .noPreference, temporary: TemporaryOverride(mode: .dark, expiry: .nextChange))
        var w = DesktopWrites()
        _ = w.wrote(.dark)
        let o = Decide.desktopReading(Self.reading(.dark), engine: &e, writes: &w, following: true)
        #expect(o.echo && o.manualFlip == nil)
        #expect(e.inputs.temporary == TemporaryOverride(mode: .dark, expiry: .nextChange))
        #expect(e.inputs.system == .dark && e.state.mode == .dark)
        #expect(w.expected == nil)
    }

    @Test func followingAFlipThatMatchesNoWriteIsTheUsersTemporaryOverride() {
        var e = Self.engine(system: .dark, override: .dark)
        var w = DesktopWrites()
        let o = Decide.desktopReading(Self.reading(.noPreference), engine: &e, writes: &w, following: true)
        #expect(!o.echo && o.manualFlip == .light)
        #expect(e.inputs.temporary == TemporaryOverride(mode: .light, expiry: .nextChange))
        #expect(e.state.mode == .light && e.state.source == .temporary)
        #expect(o.steps.map(\.cause) == ["desktop: no-preference (portal v2)", "desktop (manual): light"])
        // The flip back is the user's too: a change of the desktop's value ends the temporary override, and the
        // persisted `dark` is back, as the desktop shows.
        let back = Decide.desktopReading(Self.reading(.dark), engine: &e, writes: &w, following: true)
        #expect(!back.echo && back.manualFlip == nil)
        #expect(e.inputs.temporary == nil && e.state.mode == .dark && e.state.source == .override)
    }

    @Test func followingAFlipToTheModeInForceChangesNothingButTheDesktopsValue() {
        var e = Self.engine(system: .noPreference, override: .dark)
        var w = DesktopWrites()
        let o = Decide.desktopReading(Self.reading(.dark), engine: &e, writes: &w, following: true)
        #expect(!o.echo && o.manualFlip == nil && e.inputs.temporary == nil)
        #expect(e.state.mode == .dark)
    }

    @Test func followingTheDesktopComingOrGoingIsNoFlip() {
        for (from, to) in [(SystemScheme.unavailable, SystemScheme.dark), (.dark, .unavailable)] {
            var e = Self.engine(system: from, override: .light)
            var w = DesktopWrites()
            let o = Decide.desktopReading(Self.reading(to), engine: &e, writes: &w, following: true)
            #expect(!o.echo && o.manualFlip == nil && e.inputs.temporary == nil, "\(from) → \(to)")
        }
    }

    @Test func aRepeatedReadingChangesNothing() {
        var e = Self.engine(system: .dark)
        var w = DesktopWrites()
        let o = Decide.desktopReading(Self.reading(.dark), engine: &e, writes: &w, following: true)
        #expect(o == Decide.DesktopOutcome())
    }
}

/// The desktop's own value (DESIGN rule 4): while it shows appearanced's write, the merge takes the value it
/// had before, never appearanced's read back; once the user sets another there, that one is the desktop's.
@Suite struct DesktopOwnValueTests {
    @Test func theEchoLeavesTheDesktopsOwnValueInTheMerge() {
        var e = DesktopReadingTests.engine(system: .noPreference, override: .dark)
        var w = DesktopWrites(original: .noPreference, lastWritten: .dark)
        _ = w.wrote(.dark)
        let o = Decide.desktopReading(DesktopReadingTests.reading(.dark), engine: &e, writes: &w, following: true)
        #expect(o.echo && o.manualFlip == nil)
        #expect(e.inputs.system == .noPreference && e.state.mode == .dark)
        // `set system`: the desktop's own value decides, not appearanced's write read back.
        _ = e.apply(.override(.system))
        #expect(e.state.mode == .light && e.state.source == .default)
        #expect(w.original == .noPreference)
    }

    @Test func afterARestartTheDesktopStillShowingAppearancedsValueIsNotItsOwn() {
        var e = DesktopReadingTests.engine(system: .unavailable)
        var w = DesktopWrites(original: .noPreference, lastWritten: .dark)
        let o = Decide.desktopReading(DesktopReadingTests.reading(.dark), engine: &e, writes: &w, following: true)
        #expect(o.manualFlip == nil && e.inputs.system == .noPreference && e.state.mode == .light)
        #expect(w.original == .noPreference)
    }

    @Test func aValueTheUserSetThereIsTheDesktopsOwnAndNothingIsGivenBack() {
        var e = DesktopReadingTests.engine(system: .noPreference, override: .dark)
        var w = DesktopWrites(original: .noPreference, lastWritten: .dark)
        w.shown = .dark
        let o = Decide.desktopReading(DesktopReadingTests.reading(.light), engine: &e, writes: &w, following: true)
        #expect(o.manualFlip == .light && e.inputs.system == .light)
        #expect(w.original == nil && w.lastWritten == nil)
    }
}

/// A finished write whose echo never came as a change (the reading equalled the system value already) does
/// not stay queued to swallow the user's later flip to that value.
@Suite struct StaleWriteTests {
    @Test func anUnchangedReadingLetsFinishedWritesGo() {
        var e = DesktopReadingTests.engine(system: .dark, override: .dark)
        var w = DesktopWrites()
        let id = w.wrote(.noPreference)
        w.finished(id, ok: true)
        // The desktop reports dark again (no change): the light write is not expected any more.
        _ = Decide.desktopReading(DesktopReadingTests.reading(.dark), engine: &e, writes: &w, following: true)
        #expect(w.expected == nil)
        // Now the user flips to light: theirs, not an echo.
        let o = Decide.desktopReading(DesktopReadingTests.reading(.noPreference), engine: &e, writes: &w, following: true)
        #expect(!o.echo && o.manualFlip == .light)
    }
}
