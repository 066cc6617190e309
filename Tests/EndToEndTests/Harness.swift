import Foundation
import Testing
import TestSupport

/// Runs the built binaries as a user would, each test in its own directory tree and environment.
/// Nothing here sleeps and hopes: every wait has a condition and a deadline, and fails with what it saw.

enum Bin {
    /// `make test` sets APPEARANCED_BIN_DIR; plain `swift test` uses the build next to the test bundle (whatever
    /// `--scratch-path` made it), else the debug build in .build.
    static let dir: String = {
        if let d = ProcessInfo.processInfo.environment["APPEARANCED_BIN_DIR"], !d.isEmpty { return d }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
        if FileManager.default.isExecutableFile(atPath: bundle + "/appearanced") { return bundle }
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
    let timeout = timeout * Double(timeoutScale)
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return }
        if Date() > deadline { throw TimedOut(description: "timed out after \(timeout) s waiting for \(what())") }
        usleep(5_000)
    }
}

/// A private directory tree: HOME, XDG dirs, runtime dir (0700), no session bus unless one is given.
final class Sandbox: @unchecked Sendable {
    let root: String
    var env: [String: String]
    /// What ends with the sandbox, last first: the daemons, buses and clients started in it, and `atEnd`'s.
    private var ends: [() -> Void] = []

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

    deinit {
        for end in ends.reversed() { end() }
        try? FileManager.default.removeItem(atPath: root)
    }

    var socket: String { root + "/runtime/appearanced/socket" }
    var stateFile: String { root + "/state/appearanced/state.json" }
    var configFile: String { root + "/config/appearanced/config.toml" }

    /// Runs `end` when the sandbox goes, at the test's end.
    func atEnd(_ end: @escaping () -> Void) { ends.append(end) }

    /// Stops `child` at the sandbox's end: SIGTERM, then SIGKILL after 10 s.
    func adopt(_ child: Child) -> Child {
        atEnd {
            child.stop()
            if (try? child.waitForExit(timeout: 10)) == nil { child.stop(SIGKILL) }
        }
        return child
    }

    /// Starts `exe` in the sandbox's environment, to be stopped at the sandbox's end.
    @discardableResult
    func start(_ exe: String, _ args: [String]) throws -> Child {
        adopt(try Child(exe, args, env: env))
    }

    func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Runs appearancectl to completion.
    func ctl(_ args: String...) throws -> (status: Int32, out: String, err: String) {
        try run(Bin.ctl, Array(args))
    }

    func run(_ exe: String, _ args: [String], timeout: Double = 60) throws -> (status: Int32, out: String, err: String) {
        let c = try Child(exe, args, env: env)
        let status = try c.waitForEnd(timeout: timeout)
        return (status, c.stdout, c.stderr)
    }
}

/// A child process whose output is collected as it comes (see TestSupport.ChildProcess).
final class Child: @unchecked Sendable {
    let process: ChildProcess
    private let lock = NSLock()
    private var outBytes: [UInt8] = []
    private var errBytes: [UInt8] = []
    private var open = 2
    private let ended = DispatchSemaphore(value: 0)

    init(_ exe: String, _ args: [String], env: [String: String]) throws {
        let o = try cloexecPipe(), e = try cloexecPipe()
        defer { close(o.write); close(e.write) }
        do {
            process = try ChildProcess(executable: exe, arguments: args, environment: env, stdout: o.write, stderr: e.write)
        } catch {
            close(o.read); close(e.read)
            throw error
        }
        for (fd, err) in [(o.read, false), (e.read, true)] {
            readUntilEOF(fd, name: "\(exe) \(err ? "stderr" : "stdout")", { [weak self] in self?.append($0, err: err) },
                         done: { [weak self] in self?.closed() })
        }
    }

    deinit { stop(SIGKILL) }

    var pid: pid_t { process.pid }
    var isRunning: Bool { process.isRunning }

    private func append(_ d: [UInt8], err: Bool) {
        lock.lock(); defer { lock.unlock() }
        if err { errBytes += d } else { outBytes += d }
    }

    private func closed() {
        lock.lock(); defer { lock.unlock() }
        open -= 1
        if open == 0 { ended.signal() }
    }

    /// Waits for end of output and the exit (for commands run to completion). Past the deadline the child
    /// is killed and the wait fails with what it printed: a hung command cannot hang the suite.
    func waitForEnd(timeout: Double = 60) throws -> Int32 {
        let seconds = timeout * Double(timeoutScale)
        guard ended.wait(timeout: .now() + seconds) == .success else {
            process.signal(SIGKILL)
            throw TimedOut(description: "process \(pid) did not end within \(seconds) s; stdout: \(stdout) stderr: \(stderr)")
        }
        ended.signal()
        // The output is closed, but a child may close it and go on running: the exit has a deadline too.
        do { return try process.exitStatus(within: .seconds(seconds)) } catch {
            process.signal(SIGKILL)
            throw TimedOut(description: "process \(pid) closed its output but did not exit within \(seconds) s; stdout: \(stdout) stderr: \(stderr)")
        }
    }

    var stdout: String { lock.lock(); defer { lock.unlock() }; return String(decoding: outBytes, as: UTF8.self) }
    var stderr: String { lock.lock(); defer { lock.unlock() }; return String(decoding: errBytes, as: UTF8.self) }
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    func waitForLines(_ count: Int, timeout: Double = 20) throws -> [String] {
        try waitUntil("\(count) lines of output; have: \(stdout) stderr: \(stderr)", timeout: timeout) { lines.count >= count }
        return lines
    }

    func waitForStderr(_ text: String, timeout: Double = 20) throws {
        try waitUntil("\"\(text)\" in stderr; have: \(stderr)", timeout: timeout) { stderr.contains(text) }
    }

    func stop(_ sig: Int32 = SIGTERM) { process.signal(sig) }

    /// `stop`, then waits for the exit.
    func end(_ sig: Int32 = SIGTERM) throws { stop(sig); _ = try waitForExit() }

    /// Waits for the process to exit and returns its status (a signal's number for a killed process).
    func waitForExit(timeout: Double = 20) throws -> Int32 {
        var status: Int32?
        try waitUntil("process \(pid) to exit; stdout: \(stdout) stderr: \(stderr)", timeout: timeout) {
            status = process.exitStatusIfExited
            return status != nil
        }
        return status!
    }
}

extension Sandbox {
    /// Starts appearanced and waits until its socket answers; the sandbox stops it at the test's end.
    @discardableResult
    func startDaemon(_ args: [String] = []) throws -> Child {
        let d = adopt(try Child(Bin.daemon, args, env: env))
        try waitUntil("the daemon to answer on \(socket); stderr: \(d.stderr)") {
            guard d.isRunning else { throw TimedOut(description: "the daemon exited: \(d.stderr)") }
            return (try? ctl("get"))?.status == 0
        }
        return d
    }

    /// A new sandbox whose session bus is a private one with the fake portal on it; both end with the sandbox.
    static func withFakePortal(_ version: FakePortal.Version = .v2, colorScheme: UInt32,
                               traits: [String] = []) async throws -> (Sandbox, FakePortal) {
        let dir = try TemporaryDirectory()
        let bus = try await PrivateBus(in: dir)
        let portal = try await FakePortal(bus: bus, directory: dir, version: version, colorScheme: colorScheme, traits: traits)
        let s = try Sandbox()
        s.env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        s.atEnd { portal.stop(); bus.stop(); withExtendedLifetime(dir) {} }
        return (s, portal)
    }

    /// A new sandbox with a daemon started in it.
    static func started(_ args: [String] = []) throws -> Sandbox {
        let s = try Sandbox()
        try s.startDaemon(args)
        return s
    }
}

/// A dbus-daemon of the sandbox's own, nothing activatable but `serviceDir`: its session bus, or its system bus
/// (DBUS_SYSTEM_BUS_ADDRESS). Stopped by `close()` or at the sandbox's end.
final class SandboxBus {
    let child: Child
    let address: String

    init(_ s: Sandbox, system: Bool = false, serviceDir: String? = nil) throws {
        let name = system ? "systembus" : "sessionbus"
        address = "unix:path=\(s.root)/\(name)"
        let extra = system ? "" : "  <limit name=\"max_replies_per_connection\">50000</limit>\n"
            + (serviceDir.map { "  <servicedir>\($0)</servicedir>\n" } ?? "")
        try s.write(PrivateBus.config(type: system ? "system" : "session", listen: address, extra: extra), to: s.root + "/\(name).conf")
        try? FileManager.default.removeItem(atPath: s.root + "/" + name)  // left by a bus stopped before
        s.env[system ? "DBUS_SYSTEM_BUS_ADDRESS" : "DBUS_SESSION_BUS_ADDRESS"] = address
        child = s.adopt(try Child("/usr/bin/dbus-daemon", ["--config-file=\(s.root)/\(name).conf", "--nofork", "--nopidfile", "--print-address=1"],
                                  env: s.env))
        try waitUntil("dbus-daemon's address; stderr: \(child.stderr)") { !child.lines.isEmpty }
    }

    func close() {
        child.stop(SIGTERM)
        _ = try? child.waitForExit(timeout: 10)
    }
}
