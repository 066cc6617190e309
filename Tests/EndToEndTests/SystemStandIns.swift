import Foundation
import class TestSupport.Subprocess

/// One of the system services of Scripts/fake-sensors.py on `bus` ("light": iio-sensor-proxy, "power": UPower,
/// "login": systemd-logind), driven command by command (see the script's docstring). Each is its own process:
/// letting go of it takes its name off the bus, and a new one brings it back.
final class SystemStandIn {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/fake-sensors.py").path
    let service: String
    let process: Subprocess

    init(_ s: Sandbox, _ bus: GeoClueTests.SystemBus, service: String, options: [String] = []) async throws {
        self.service = service
        process = try Subprocess(name: "fake \(service) service", executable: "/usr/bin/python3",
                                 arguments: [Self.script, bus.address, "--service", service] + options, environment: s.env,
                                 stderrPath: s.root + "/fake-\(service)-\(UUID().uuidString.prefix(8)).stderr")
        try await process.nextLine("ready") { $0 == "ready" }
    }

    /// Sends `command` and waits for its "ok"; returns the lines printed before it (e.g. "claims 1").
    @discardableResult
    func send(_ command: String) async throws -> [String] {
        try process.write(line: command)
        let (line, skipped) = try await process.nextLine("ok after \"\(command)\"") { $0 == "ok" || $0.hasPrefix("error") }
        if line != "ok" { throw TimedOut(description: "fake \(service) service: \"\(command)\" failed: \(line)") }
        return skipped
    }

    deinit { process.terminate() }
}
