import Foundation

/// The project's fake `org.freedesktop.portal.Desktop` (fake-portal.py next to this file) on a
/// `PrivateBus`, driven command by command. See the script's docstring for the commands:
/// `set N`, `store N`, `signal N`, `dup N`, `set-type T V`, `notfound`, `no-settings`, `gnome N`,
/// `release`, `acquire`, `reads`, `quit`, and for the traits `contrast N`, `motion N`, `accent R G B`,
/// `trait-type K T V`, `unset K`, ...
public final class FakePortal: @unchecked Sendable {
    public enum Version: Int, Sendable {
        /// xdg-desktop-portal 1.16 (bookworm): only `Read`, value wrapped twice.
        case v1 = 1
        /// xdg-desktop-portal ≥ 1.17.1: `ReadOne`, `Read`, `ReadAll`.
        case v2 = 2
    }

    /// Debian's python, which has python3-dbus and python3-gi (the first `python3` on PATH may not).
    public static let python = "/usr/bin/python3"
    public static let scriptPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("fake-portal.py").path

    public let process: Subprocess

    /// Starts the fake portal and waits until it owns the portal name (or, with `ownName: false`, until
    /// it is connected: send `acquire` later).
    /// `traits` are extra options of the script: `--contrast N`, `--reduced-motion N`, `--accent "R G B"`.
    public init(bus: PrivateBus, directory: TemporaryDirectory, version: Version = .v2, colorScheme: UInt32 = 0,
                ownName: Bool = true, traits: [String] = []) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let arguments = [FakePortal.scriptPath, "--version", "\(version.rawValue)", "--value", "\(colorScheme)"]
            + (ownName ? [] : ["--no-acquire"]) + traits
        let tag = UUID().uuidString.prefix(8)
        process = try Subprocess(name: "fake portal v\(version.rawValue)", executable: FakePortal.python,
                                 arguments: arguments, environment: environment,
                                 stderrPath: directory.file("fake-portal-\(tag).stderr"))
        try await process.nextLine("ready") { $0 == "ready" }
    }

    /// Runs one command and waits until the fake portal has done it (its effects, e.g. a signal, are on
    /// the bus). Returns the lines it printed before "ok"; throws on "error …".
    @discardableResult
    public func send(_ command: String) async throws -> [String] {
        try process.write(line: command)
        let (line, skipped) = try await process.nextLine("ok after \"\(command)\"") {
            $0 == "ok" || $0.hasPrefix("error")
        }
        if line != "ok" { throw TestSupportError("fake portal: \"\(command)\" failed: \(line)") }
        return skipped
    }

    /// How many Read/ReadOne calls the fake portal has answered.
    public func reads() async throws -> Int {
        let lines = try await send("reads")
        guard let last = lines.last, last.hasPrefix("reads "), let n = Int(last.dropFirst(6)) else {
            throw TestSupportError("fake portal: unexpected answer to reads: \(lines)")
        }
        return n
    }

    /// Ends the fake portal (its name leaves the bus).
    public func stop() { process.terminate() }

    deinit { stop() }
}
