import Foundation
import TestSupport

/// One of the project's D-Bus stand-ins (Scripts/fake-*.py, on stand_in.py's command loop): started with its
/// arguments, it owns its bus name and prints "ready"; each command, a line, is answered "ok" once its effects
/// are on the bus. What it printed before the "ok" comes back from `send`.
class StandIn {
    let process: Subprocess

    init(_ s: Sandbox, script: String, name: String, arguments: [String]) async throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/" + script).path
        process = try Subprocess(name: name, executable: "/usr/bin/python3", arguments: [path] + arguments, environment: s.env,
                                 stderrPath: s.root + "/\(script)-\(UUID().uuidString.prefix(8)).stderr")
        try await process.nextLine("ready") { $0 == "ready" }
    }

    @discardableResult
    func send(_ command: String) async throws -> [String] {
        try process.write(line: command)
        let (line, skipped) = try await process.nextLine("ok after \"\(command)\"") { $0 == "ok" || $0.hasPrefix("error") }
        if line != "ok" { throw TimedOut(description: "\(process.name): \"\(command)\" failed: \(line)") }
        return skipped
    }

    func stop() { process.terminate() }
    deinit { process.terminate() }
}
