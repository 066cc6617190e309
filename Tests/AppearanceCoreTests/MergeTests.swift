import Testing
@testable import AppearanceCore

/// The merge rule over every system × override × default (docs/protocol.md, "The merge rule").
struct MergeTests {
    static let all: [(SystemScheme, Override, Mode)] = SystemScheme.allCases.flatMap { s in
        Override.allCases.flatMap { o in Mode.allCases.map { d in (s, o, d) } }
    }

    @Test("resolve", arguments: all)
    func resolveTable(system: SystemScheme, override: Override, defaultMode: Mode) {
        let r = resolve(Inputs(system: system, override: override, defaultMode: defaultMode))
        let expected: Resolution
        switch (override, system) {
        case (.dark, _): expected = Resolution(mode: .dark, source: .override)
        case (.light, _): expected = Resolution(mode: .light, source: .override)
        case (.system, .dark): expected = Resolution(mode: .dark, source: .system)
        case (.system, .light): expected = Resolution(mode: .light, source: .system)
        case (.system, .noPreference), (.system, .unavailable): expected = Resolution(mode: defaultMode, source: .default)
        }
        #expect(r == expected)
    }

    @Test("toggle flips the mode and never leaves a stale override", arguments: all)
    func toggleTable(system: SystemScheme, override: Override, defaultMode: Mode) {
        let before = Inputs(system: system, override: override, defaultMode: defaultMode)
        let target = toggledOverride(before)
        var after = before
        after.override = target
        #expect(resolve(after).mode == resolve(before).mode.opposite)
        // An override is only kept when following the system would not give the same mode.
        var following = before
        following.override = .system
        if resolve(following).mode == resolve(after).mode {
            #expect(target == .system)
        } else {
            #expect(target != .system)
        }
    }

    @Test func portalValues() {
        #expect(SystemScheme(portalValue: 0) == .noPreference)
        #expect(SystemScheme(portalValue: 1) == .dark)
        #expect(SystemScheme(portalValue: 2) == .light)
        #expect(SystemScheme(portalValue: 3) == nil)
        #expect(SystemScheme(portalValue: .max) == nil)
    }

    @Test func gnomeLightIsTheDefault() {
        // GNOME's "light" arrives as 0; with the default config that must be light, with dark default dark.
        #expect(resolve(Inputs(system: .noPreference, override: .system, defaultMode: .light)).mode == .light)
        #expect(resolve(Inputs(system: .noPreference, override: .system, defaultMode: .dark)).mode == .dark)
    }
}
