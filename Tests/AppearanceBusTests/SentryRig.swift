import AppearanceBus
import AppearanceCore
import Dispatch
import TestSupport

struct LogLine: Sendable, CustomStringConvertible {
    var level: LogLevel
    var message: String
    var description: String { "\(level.name): \(message)" }
}

/// One test's world: its own directory and private bus, optionally a fake portal, and a PortalSentry on
/// its own queue whose readings and log lines are recorded. Everything is ended by `close()`; keep the
/// rig referenced until then (a `defer { rig.close() }` does), so nothing is released early.
final class SentryRig: @unchecked Sendable {
    // Mutated only by the test's own task (bus/portal replacement); the recorders are thread-safe.
    let directory: TemporaryDirectory
    var bus: PrivateBus?
    var portal: FakePortal?
    let queue = DispatchQueue(label: "appearanced.test.sentry")
    let readings = Recorder<SystemReading>()
    let logs = Recorder<LogLine>()
    private(set) var sentry: PortalSentry?
    /// Readings before this index have been looked at by `expect`.
    private(set) var mark = 0

    /// `started`: the sentry is started once the bus and portal are up.
    init(bus withBus: Bool = true, portal version: FakePortal.Version? = .v2, colorScheme: UInt32 = 0,
         ownName: Bool = true, traits: [String] = [], started: Bool = false) async throws {
        directory = try TemporaryDirectory(prefix: "apd-bus")
        if withBus {
            try await startBus()
            if let version {
                portal = try await FakePortal(bus: bus!, directory: directory, version: version,
                                              colorScheme: colorScheme, ownName: ownName, traits: traits)
            }
        }
        if started { startSentry() }
    }

    var address: String { "unix:path=" + directory.file("bus") }

    func startBus() async throws {
        bus = try await PrivateBus(in: directory)
    }

    func startPortal(_ version: FakePortal.Version = .v2, colorScheme: UInt32) async throws {
        portal = try await FakePortal(bus: bus!, directory: directory, version: version, colorScheme: colorScheme)
    }

    func startSentry() {
        let logs = logs, readings = readings
        let sentry = PortalSentry(queue: queue, busAddress: address) { level, message in
            logs.append(LogLine(level: level, message: message))
        }
        self.sentry = sentry
        queue.sync { sentry.start { readings.append($0) } }
    }

    /// Waits for the next reading (after the last one `expect` returned) with this scheme and a detail
    /// containing `detail`; returns it. Earlier, different readings are skipped, not failed.
    @discardableResult
    func expect(_ scheme: SystemScheme, _ detail: String = "") async throws -> SystemReading {
        let index = try await readings.wait(for: "a reading \(scheme) \"\(detail)\"", from: mark) {
            $0.scheme == scheme && (detail.isEmpty || $0.detail.contains(detail))
        }
        mark = index + 1
        return readings.all[index]
    }

    /// Waits for the next reading whose traits satisfy `condition`; returns it.
    @discardableResult
    func expectTraits(_ what: String, _ condition: @escaping @Sendable (Traits) -> Bool) async throws -> SystemReading {
        let index = try await readings.wait(for: "a reading with \(what)", from: mark) { condition($0.traits) }
        mark = index + 1
        return readings.all[index]
    }

    /// Readings from `start` up to (not including) `end`.
    func readings(_ start: Int, _ end: Int) -> [SystemReading] { Array(readings.all[start..<end]) }

    func close() {
        if let sentry { queue.sync { sentry.stop() } }
        portal?.stop()
        bus?.stop()
    }
}
