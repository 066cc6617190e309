import AppearanceBus
import AppearanceCore
import Testing
import TestSupport

// The traits (contrast, reduced-motion, accent-color) against the fake portal: read at start with the
// color scheme, followed through SettingChanged (one match rule per key), re-read after each signal.

@Suite struct PortalTraitsTests {
    @Test func v2WithEveryKey() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1,
                                      traits: ["--contrast", "1", "--reduced-motion", "1", "--accent", "0.2 0.5 1.0"], started: true)
        defer { rig.close() }
        // The first reading already carries every trait: the sentry reports once all keys have been read.
        let first = try await rig.expect(.dark, "portal v2")
        #expect(first.traits == Traits(contrast: .high, reducedMotion: true, accentColor: Color(51, 128, 255)))
        try await rig.portal!.send("contrast 0")
        try await rig.expectTraits("normal contrast") { $0.contrast == .normal }
        try await rig.portal!.send("motion 0")
        try await rig.expectTraits("no reduced motion") { $0.reducedMotion == false }
        try await rig.portal!.send("accent 0 0 0")
        let last = try await rig.expectTraits("a black accent") { $0.accentColor == Color(0, 0, 0) }
        #expect(last.traits == Traits(contrast: .normal, reducedMotion: false, accentColor: Color(0, 0, 0)))
        #expect(last.scheme == .dark)
        // A key going away (NotFound) is unavailable again.
        try await rig.portal!.send("unset contrast")
        try await rig.expectTraits("contrast unavailable") { $0.contrast == nil && $0.reducedMotion == false }
        #expect(rig.logs.all.filter { $0.level <= .warning }.isEmpty, "\(rig.logs.all)")
    }

    @Test(arguments: [FakePortal.Version.v1, .v2])
    func noTraitKeysAreUnavailable(version: FakePortal.Version) async throws {
        let rig = try await SentryRig(portal: version, colorScheme: 2, started: true)
        defer { rig.close() }
        let first = try await rig.expect(.light)
        #expect(first.traits == .unavailable)
        // NotFound is how an older portal says it has no such key: not worth a warning.
        #expect(rig.logs.all.filter { $0.level <= .warning }.isEmpty, "\(rig.logs.all)")
    }

    @Test func v1ReadsTraitsThroughRead() async throws {
        let rig = try await SentryRig(portal: .v1, colorScheme: 1, traits: ["--contrast", "1"], started: true)
        defer { rig.close() }
        let first = try await rig.expect(.dark, "portal v1 (Read fallback)")
        #expect(first.traits == Traits(contrast: .high))
        try await rig.portal!.send("motion 1")
        try await rig.expectTraits("reduced motion") { $0.reducedMotion == true && $0.contrast == .high }
    }

    @Test(arguments: [
        ("contrast s high", "contrast has type 's'"), ("contrast u 2", "contrast is 2, which is not 0 or 1"),
        ("reduced-motion b true", "reduced-motion has type 'b'"), ("reduced-motion u 5", "reduced-motion is 5"),
        ("accent-color d 0.5", "accent-color has type 'd'"), ("accent-color s #ff0000", "expected '(ddd)'"),
    ])
    func wrongTypesAreUnsetAndAWarning(command: String, warning: String) async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1,
                                      traits: ["--contrast", "1", "--reduced-motion", "1", "--accent", "1 0 0"], started: true)
        defer { rig.close() }
        try await rig.expectTraits("every trait") { $0.contrast == .high && $0.reducedMotion == true && $0.accentColor != nil }
        try await rig.portal!.send("trait-type \(command)")
        let key = String(command.split(separator: " ")[0])
        let r = try await rig.expectTraits("\(key) unset") { t in
            switch key {
            case "contrast": t.contrast == nil
            case "reduced-motion": t.reducedMotion == nil
            default: t.accentColor == nil
            }
        }
        #expect(r.scheme == .dark)
        try await rig.logs.wait(for: "a warning naming \(warning)") { $0.level == .warning && $0.message.contains(warning) }
    }

    @Test(arguments: ["-1 -1 -1", "0.5 1.5 0", "2 2 2"])
    func anAccentOutsideZeroToOneIsUnset(components: String) async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1, traits: ["--accent", "0 1 0"], started: true)
        defer { rig.close() }
        try await rig.expectTraits("a green accent") { $0.accentColor == Color(0, 255, 0) }
        try await rig.portal!.send("accent \(components)")
        try await rig.expectTraits("no accent") { $0.accentColor == nil }
        // The portal's way of saying "unset": no warning.
        #expect(rig.logs.all.filter { $0.level <= .warning }.isEmpty, "\(rig.logs.all)")
    }

    @Test func eachTraitSignalRereadsOnlyItsKey() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 0, traits: ["--contrast", "0"], started: true)
        defer { rig.close() }
        try await rig.expect(.noPreference)
        let before = try await rig.portal!.reads()
        try await rig.portal!.send("contrast 1")
        try await rig.expectTraits("high contrast") { $0.contrast == .high }
        #expect(try await rig.portal!.reads() == before + 1)
    }

    @Test func portalLeavingLosesTheTraits() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1, traits: ["--contrast", "1"], started: true)
        defer { rig.close() }
        try await rig.expectTraits("high contrast") { $0.contrast == .high }
        try await rig.portal!.send("release")
        let gone = try await rig.expect(.unavailable, "portal left the bus")
        #expect(gone.traits == .unavailable)
        try await rig.portal!.send("acquire")
        let back = try await rig.expect(.dark)
        #expect(back.traits.contrast == .high)
    }
}
