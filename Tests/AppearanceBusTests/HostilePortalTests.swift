import AppearanceBus
import AppearanceCore
import Foundation
import Testing
import TestSupport

/// A portal that answers the sentry's reads with what no portal sends: a 20 MB value, a value wrapped in
/// dozens of variants. The sentry decodes none of it past its bounds, treats the setting as unusable, and
/// follows the next sane answer. Against a real dbus-daemon of the test's own.
@Suite struct HostilePortalTests {
    /// A minimal portal v2 (python3-dbus, Debian's python): `ReadOne` of color-scheme answers what the last
    /// command chose, every other key NotFound. Commands on stdin, each answered "ok" once its
    /// SettingChanged is on the bus: `normal N` (uint32 N in one variant), `huge N` (an `as` of N 11-byte
    /// strings: N × 16 bytes), `deep N` (uint32 1 in N variants), `quit`.
    static let script = #"""
        # No line starts with the word import: scripts/check-imports.py reads Swift files line by line.
        from importlib import import_module
        os, sys, dbus = (import_module(m) for m in ("os", "sys", "dbus"))
        for m in ("dbus.bus", "dbus.service", "dbus.mainloop.glib"): import_module(m)
        from gi.repository import GLib
        IFACE, NS = "org.freedesktop.portal.Settings", "org.freedesktop.appearance"
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        conn = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
        state = {"mode": "normal", "n": 1}

        class NotFound(dbus.exceptions.DBusException):
            _dbus_error_name = "org.freedesktop.portal.Error.NotFound"

        class Settings(dbus.service.Object):
            @dbus.service.method(IFACE, in_signature="ss", out_signature="v")
            def ReadOne(self, namespace, key):
                if namespace != NS or key != "color-scheme":
                    raise NotFound("Requested setting not found")
                mode, n = state["mode"], state["n"]
                if mode == "huge":
                    return dbus.Array(["org.exampl" + str(i % 10) for i in range(n)], signature="s", variant_level=1)
                if mode == "deep":
                    return dbus.UInt32(1, variant_level=n)
                return dbus.UInt32(n, variant_level=1)

            @dbus.service.signal(IFACE, signature="ssv")
            def SettingChanged(self, namespace, key, value):
                pass

        settings = Settings(conn, "/org/freedesktop/portal/desktop")
        conn.request_name("org.freedesktop.portal.Desktop", dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
        loop = GLib.MainLoop()

        def on_stdin(fd, condition):
            line = sys.stdin.readline()
            if not line or line.strip() == "quit":
                loop.quit()
                return False
            mode, n = line.split()
            state["mode"], state["n"] = mode, int(n)
            settings.SettingChanged(NS, "color-scheme", dbus.UInt32(0, variant_level=1))
            conn.flush()
            print("ok", flush=True)
            return True

        GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
        print("ready", flush=True)
        loop.run()
        """#

    final class HostilePortal: @unchecked Sendable {
        let process: Subprocess

        init(_ rig: SentryRig) async throws {
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = rig.bus!.address
            process = try Subprocess(name: "hostile portal", executable: FakePortal.python, arguments: ["-c", HostilePortalTests.script],
                                     environment: environment, stderrPath: rig.directory.file("hostile-portal.stderr"))
            try await process.nextLine("ready") { $0 == "ready" }
        }

        /// Switches the answer and signals a change; returns once the signal is on the bus.
        func answer(_ mode: String, _ n: Int) async throws {
            try process.write(line: "\(mode) \(n)")
            let (line, _) = try await process.nextLine("ok after \(mode) \(n)", timeout: .seconds(120)) { $0 == "ok" || $0.hasPrefix("Traceback") }
            if line != "ok" { throw TestSupportError("hostile portal failed: \(process.errorOutput)") }
        }

        func stop() { process.terminate() }
    }

    @Test func aHugeOrDeeplyNestedAnswerIsUnusableAndTheNextSaneOneCounts() async throws {
        let rig = try await SentryRig(portal: nil)
        defer { rig.close() }
        let portal = try await HostilePortal(rig)
        defer { portal.stop() }
        rig.startSentry()
        try await rig.expect(.dark, "portal v2")

        // 20 MB in the answer's variant: not decoded past the bounds, so no type to report, only "too large".
        try await portal.answer("huge", 1_250_000)
        try await rig.expect(.noPreference, "too large")
        try await rig.logs.wait(for: "a warning about the answer's size") {
            $0.level == .warning && $0.message.contains("larger or more deeply nested than any setting")
        }
        try await portal.answer("normal", 2)
        try await rig.expect(.light, "portal v2")

        // A uint32 in 30 variants is no setting (the 1.16 portal wraps twice), even though a uint32 is inside.
        try await portal.answer("deep", 30)
        try await rig.expect(.noPreference, "too large")
        try await portal.answer("normal", 1)
        try await rig.expect(.dark, "portal v2")
    }
}
