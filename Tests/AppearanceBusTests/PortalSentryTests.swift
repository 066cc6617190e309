import AppearanceBus
import AppearanceCore
import Testing
import TestSupport

// PortalSentry against a real dbus-daemon of each test's own and the project's fake portal.
// Every wait has a deadline and reports what it saw; nothing sleeps and then asserts.

@Suite struct PortalSentryTests {
    @Test func readsAPortalV2WithReadOne() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1, started: true)
        defer { rig.close() }
        try await rig.expect(.dark, "portal v2")
        try await rig.portal!.send("set 2")
        try await rig.expect(.light, "portal v2")
        try await rig.portal!.send("set 0")
        try await rig.expect(.noPreference, "portal v2")
        #expect(rig.logs.all.filter { $0.level <= .warning }.isEmpty, "\(rig.logs.all)")
    }

    @Test func fallsBackToReadOnAPortalV1() async throws {
        let rig = try await SentryRig(portal: .v1, colorScheme: 1, started: true)
        defer { rig.close() }
        // Read wraps the value twice: the sentry must unwrap both variants to see the uint32.
        let first = try await rig.expect(.dark)
        #expect(first.detail == "portal v1 (Read fallback)")
        try await rig.portal!.send("set 2")
        let second = try await rig.expect(.light)
        #expect(second.detail == "portal v1 (Read fallback)")
        #expect(rig.logs.all.filter { $0.level <= .warning }.isEmpty, "\(rig.logs.all)")
    }

    @Test func portalAbsentAtStartThenAppearing() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1, ownName: false, started: true)
        defer { rig.close() }
        try await rig.expect(.unavailable, "no portal on the session bus (org.freedesktop.portal.Desktop: org.freedesktop.DBus.Error.ServiceUnknown)")
        try await rig.portal!.send("acquire")
        try await rig.expect(.dark, "portal v2")
    }

    @Test func portalRestartedWithAnotherValueAndVersion() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1, started: true)
        defer { rig.close() }
        try await rig.expect(.dark, "portal v2")
        rig.portal!.stop()
        try await rig.expect(.unavailable, "portal left the bus")
        // A new owner may be another version: detection starts over.
        try await rig.startPortal(.v1, colorScheme: 2)
        try await rig.expect(.light, "portal v1 (Read fallback)")
    }

    @Test func releasedNameIsUnavailableUntilReacquired() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 2, started: true)
        defer { rig.close() }
        try await rig.expect(.light, "portal v2")
        try await rig.portal!.send("release")
        try await rig.expect(.unavailable, "portal left the bus")
        try await rig.portal!.send("store 1")
        try await rig.portal!.send("acquire")
        try await rig.expect(.dark, "portal v2")
    }

    @Test func duplicateSignalsAreReReadAndReportTheStoredValue() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 0, started: true)
        defer { rig.close() }
        try await rig.expect(.noPreference)
        let start = rig.mark
        try await rig.portal!.send("dup 1")
        try await rig.expect(.dark)
        // Barrier: the read for this signal starts only after every earlier read has finished.
        try await rig.portal!.send("set 2")
        try await rig.expect(.light)
        let between = rig.readings(start, rig.mark - 1)
        #expect(!between.isEmpty && between.allSatisfy { $0.scheme == .dark }, "\(between)")
    }

    /// Far more signals than one dispatch pass takes arrive together, and the first read's reply queues up
    /// behind them: every pass must be followed by the next without waiting for more input, or the reply
    /// would never be dispatched.
    @Test func aBurstOfSignalsIsFollowedToTheStoredValue() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 0, started: true)
        defer { rig.close() }
        try await rig.expect(.noPreference)
        let readsBefore = try await rig.portal!.reads()
        try await rig.portal!.send("burst 1 200")
        try await rig.expect(.dark)
        // Barrier: the read for this signal starts only after every read of the burst has finished.
        try await rig.portal!.send("set 2")
        try await rig.expect(.light)
        // The fake portal answers the first read only after its whole burst is on the bus, so the other 199
        // signals all came while that read was in flight: one more read covered them (then one for "set 2").
        #expect(try await rig.portal!.reads() - readsBefore == 3)
    }

    @Test func aSignalWhoseValueReadDoesNotReturnReportsTheStoredValue() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1, started: true)
        defer { rig.close() }
        try await rig.expect(.dark)
        let start = rig.mark
        // 1.16 forwards a lower-priority backend's signal: its value (2, light) must not count.
        try await rig.portal!.send("signal 2")
        try await rig.readings.wait(for: "the re-read after the signal", from: start) { _ in true }
        try await rig.portal!.send("set 0")
        try await rig.expect(.noPreference)
        let between = rig.readings(start, rig.mark - 1)
        #expect(!between.isEmpty && between.allSatisfy { $0.scheme == .dark }, "\(between)")
    }

    @Test func signalsForOtherNamespacesAndKeysAreNotFollowed() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 0, started: true)
        defer { rig.close() }
        try await rig.expect(.noPreference)
        let start = rig.mark
        let readsBefore = try await rig.portal!.reads()
        // xdg-desktop-portal-gtk's org.gnome.desktop.interface copy, and another appearance key.
        try await rig.portal!.send("gnome 1")
        try await rig.portal!.send("other-key 1")
        try await rig.portal!.send("set 1")
        try await rig.expect(.dark)
        try await rig.portal!.send("set 2")
        try await rig.expect(.light)
        #expect(rig.readings(start, rig.mark).map(\.scheme) == [.dark, .light])
        #expect(try await rig.portal!.reads() == readsBefore + 2)
    }

    @Test(arguments: [
        ("s dark", "'s'"), ("i 1", "'i'"), ("b true", "'b'"), ("d 1.0", "'d'"), ("t 1", "'t'"),
        ("u 7", "7, which is not 0, 1 or 2"),
    ])
    func aValueOfTheWrongTypeIsNoPreferenceAndAWarning(value: String, warning: String) async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1, started: true)
        defer { rig.close() }
        try await rig.expect(.dark)
        try await rig.portal!.send("set-type \(value)")
        try await rig.expect(.noPreference)
        try await rig.logs.wait(for: "a warning naming \(warning)") { $0.level == .warning && $0.message.contains(warning) }
        // Still following the portal afterwards.
        try await rig.portal!.send("set 2")
        try await rig.expect(.light, "portal v2")
    }

    @Test func wrongTypeThroughTheV1DoubleVariant() async throws {
        let rig = try await SentryRig(portal: .v1, colorScheme: 1, started: true)
        defer { rig.close() }
        try await rig.expect(.dark)
        try await rig.portal!.send("set-type s prefer-dark")
        try await rig.expect(.noPreference, "portal v1")
        try await rig.logs.wait(for: "a type warning") { $0.level == .warning && $0.message.contains("'s'") }
    }

    @Test func notFoundIsUnavailable() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1, started: true)
        defer { rig.close() }
        try await rig.expect(.dark)
        try await rig.portal!.send("notfound")
        try await rig.portal!.send("signal 1")
        try await rig.expect(.unavailable, "portal has no color-scheme setting (NotFound)")
        try await rig.portal!.send("set 2")
        try await rig.expect(.light, "portal v2")
    }

    @Test(arguments: [FakePortal.Version.v1, .v2])
    func missingSettingsInterfaceIsUnavailable(version: FakePortal.Version) async throws {
        let rig = try await SentryRig(portal: version, colorScheme: 1, ownName: true)
        defer { rig.close() }
        try await rig.portal!.send("no-settings")
        rig.startSentry()
        try await rig.expect(.unavailable, "portal has no Settings interface")
        try await rig.portal!.send("settings")
        try await rig.portal!.send("set 2")
        try await rig.expect(.light, version == .v2 ? "portal v2" : "portal v1 (Read fallback)")
    }

    @Test func noBusAtStartThenTheBusAppears() async throws {
        let rig = try await SentryRig(bus: false, started: true)
        defer { rig.close() }
        try await rig.expect(.unavailable, "no session bus: ")
        // The sentry retries with back-off; a bus (and a portal) at that address must be found.
        try await rig.startBus()
        try await rig.startPortal(.v2, colorScheme: 1)
        try await rig.expect(.dark, "portal v2")
        #expect(rig.readings.all.first?.detail.contains("Failed to connect") == true, "\(rig.readings.all)")
    }

    @Test func busLostThenBack() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 2, started: true)
        defer { rig.close() }
        try await rig.expect(.light)
        rig.portal!.stop()
        rig.bus!.stop()
        try await rig.expect(.unavailable, "the session bus went away")
        try await rig.startBus()
        try await rig.startPortal(.v1, colorScheme: 1)
        try await rig.expect(.dark, "portal v1 (Read fallback)")
    }

    @Test func stopEndsReadings() async throws {
        let rig = try await SentryRig(portal: .v2, colorScheme: 1, started: true)
        defer { rig.close() }
        try await rig.expect(.dark)
        rig.queue.sync { rig.sentry!.stop() }
        let count = rig.readings.count
        try await rig.portal!.send("set 2")
        // The bus connection is gone: the portal's signal has no subscriber left to reach.
        try await rig.portal!.send("release")
        try await rig.portal!.send("acquire")
        rig.queue.sync {}
        #expect(rig.readings.count == count)
    }
}
