import Foundation
import Testing

/// Runs the built binaries as a user would, each test in its own directory tree and environment.
/// Nothing here sleeps and hopes: every wait has a condition and a deadline, and fails with what it saw.

enum Bin {
    /// `make test` sets APPEARANCED_BIN_DIR; plain `swift test` uses the debug build next to the tests.
    static let dir: String = {
        if let d = ProcessInfo.processInfo.environment["APPEARANCED_BIN_DIR"], !d.isEmpty { return d }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug").path
    }()
    static var daemon: String { dir + "/appearanced" }
    static var ctl: String { dir + "/appearancectl" }
}

struct TimedOut: Error, CustomStringConvertible {
    var description: String
}

/// Waits for `condition` with a deadline (a slow machine makes this slower, never red).
func waitUntil(_ what: @autoclosure () -> String, timeout: Double = 20, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return }
        if Date() > deadline { throw TimedOut(description: "timed out after \(timeout) s waiting for \(what())") }
        usleep(5_000)
    }
}

/// Test threads run with most signals blocked, and a child inherits the mask across exec (and passes it to
/// whatever it starts: dbus-daemon to the services it activates). Spawn with an empty mask, as a shell would.
func withSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
    var none = sigset_t(), saved = sigset_t()
    sigemptyset(&none)
    pthread_sigmask(SIG_SETMASK, &none, &saved)
    defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
    return try body()
}

/// A private directory tree: HOME, XDG dirs, runtime dir (0700), no session bus unless one is given.
final class Sandbox: @unchecked Sendable {
    let root: String
    var env: [String: String]

    init() throws {
        var template = Array((NSTemporaryDirectory() + "appearanced-test-XXXXXX").utf8CString)
        guard let p = mkdtemp(&template) else { throw TimedOut(description: "mkdtemp failed") }
        root = String(cString: p)
        for d in ["home", "runtime", "state", "config"] {
            try FileManager.default.createDirectory(atPath: root + "/" + d, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        env = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": root + "/home",
            "XDG_RUNTIME_DIR": root + "/runtime",
            "XDG_STATE_HOME": root + "/state",
            "XDG_CONFIG_HOME": root + "/config",
            // A bus address where nothing listens: "no session bus" unless a test starts one.
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(root)/no-bus",
            "SWIFT_BACKTRACE": "enable=no",
        ]
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    var socket: String { root + "/runtime/appearanced/socket" }
    var stateFile: String { root + "/state/appearanced/state.json" }
    var configFile: String { root + "/config/appearanced/config.toml" }

    func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Runs appearancectl to completion.
    func ctl(_ args: String...) throws -> (status: Int32, out: String, err: String) {
        try run(Bin.ctl, Array(args))
    }

    func run(_ exe: String, _ args: [String]) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        p.environment = env
        let o = Pipe(), e = Pipe()
        p.standardOutput = o
        p.standardError = e
        p.standardInput = FileHandle.nullDevice
        try withSignalsUnblocked { try p.run() }
        let out = o.fileHandleForReading.readDataToEndOfFile()
        let err = e.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}

/// A child process whose output lines are collected as they come.
final class Child: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var outText = ""
    private var errText = ""

    init(_ exe: String, _ args: [String], env: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: exe)
        process.arguments = args
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        let o = Pipe(), e = Pipe()
        process.standardOutput = o
        process.standardError = e
        o.fileHandleForReading.readabilityHandler = { [weak self] h in self?.append(h.availableData, err: false) }
        e.fileHandleForReading.readabilityHandler = { [weak self] h in self?.append(h.availableData, err: true) }
        try withSignalsUnblocked { try process.run() }
    }

    deinit { stop(SIGKILL) }

    private func append(_ d: Data, err: Bool) {
        guard !d.isEmpty else { return }
        lock.lock(); defer { lock.unlock() }
        if err { errText += String(decoding: d, as: UTF8.self) } else { outText += String(decoding: d, as: UTF8.self) }
    }

    var stdout: String { lock.lock(); defer { lock.unlock() }; return outText }
    var stderr: String { lock.lock(); defer { lock.unlock() }; return errText }
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    func waitForLines(_ count: Int, timeout: Double = 20) throws -> [String] {
        try waitUntil("\(count) lines of output; have: \(stdout) stderr: \(stderr)", timeout: timeout) { lines.count >= count }
        return lines
    }

    func waitForStderr(_ text: String, timeout: Double = 20) throws {
        try waitUntil("\"\(text)\" in stderr; have: \(stderr)", timeout: timeout) { stderr.contains(text) }
    }

    func stop(_ sig: Int32 = SIGTERM) {
        if process.isRunning { kill(process.processIdentifier, sig) }
    }

    /// Waits for the process to exit and returns its status (a signal's number for a killed process).
    func waitForExit(timeout: Double = 20) throws -> Int32 {
        let pid = process.processIdentifier
        let sig = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8))?.split(separator: "\n").filter { $0.hasPrefix("Sig") || $0.hasPrefix("State") } ?? []
        try waitUntil("process \(pid) to exit; stderr: \(stderr) \(sig)", timeout: timeout) { !process.isRunning }
        return process.terminationStatus
    }
}

extension Sandbox {
    /// Starts appearanced and waits until its socket answers.
    func startDaemon(_ args: [String] = []) throws -> Child {
        let d = try Child(Bin.daemon, args, env: env)
        try waitUntil("the daemon to answer on \(socket); stderr: \(d.stderr)") {
            guard d.process.isRunning else { throw TimedOut(description: "the daemon exited: \(d.stderr)") }
            return (try? ctl("get"))?.status == 0
        }
        return d
    }
}
