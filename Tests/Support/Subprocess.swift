import Foundation

/// A child process for tests (see ChildProcess): stdin is a pipe you `write` lines to,
/// stdout is collected line by line (and can be waited on with a deadline), stderr goes to a file you
/// can show when something fails. The process is ended on `terminate()` and at the latest on deinit,
/// so a failing test does not leave it running (or holding the test runner's output open).
public final class Subprocess: @unchecked Sendable {
    // Mutable state is behind `lock`; `process` is only touched by the owning test.
    public let name: String
    public let stderrPath: String
    private let process: ChildProcess
    /// Our end of the child's stdin, a socket pair rather than a pipe: `send(MSG_NOSIGNAL)` turns
    /// writing to a child that died into an error instead of a SIGPIPE that kills the test runner.
    private let stdinSocket: Int32
    private let lock = NSLock()
    private var lines: [String] = []
    private var partial: [UInt8] = []
    private var cursor = 0
    private var stdoutClosed = false
    private var stdinClosed = false

    /// Starts `executable` with `arguments`. `environment` replaces the inherited one when given.
    /// stderr is written to `stderrPath`.
    public init(name: String, executable: String, arguments: [String], environment: [String: String]? = nil,
                stderrPath: String) throws {
        self.name = name
        self.stderrPath = stderrPath
        let stderr = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard stderr >= 0 else { throw TestSupportError("\(name): cannot create \(stderrPath)") }
        defer { close(stderr) }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw TestSupportError("\(name): socketpair: \(String(cString: strerror(errno)))")
        }
        stdinSocket = pair[0]
        // A child that stops reading its stdin must not hang a test in `write(line:)`: sends have a deadline.
        var tv = timeval(tv_sec: 20 * timeoutScale, tv_usec: 0)
        setsockopt(stdinSocket, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        defer { close(pair[1]) }
        let out = try cloexecPipe()
        do {
            process = try ChildProcess(executable: executable, arguments: arguments, environment: environment,
                                       stdin: pair[1], stdout: out.write, stderr: stderr)
        } catch {
            close(out.read); close(out.write); close(pair[0])
            throw TestSupportError("\(name): \(error)")
        }
        close(out.write)
        readUntilEOF(out.read, name: "\(name) stdout", { [weak self] in self?.received($0) },
                     done: { [weak self] in self?.lock.withLock { self?.stdoutClosed = true } })
    }

    private func received(_ data: [UInt8]) {
        lock.withLock {
            partial.append(contentsOf: data)
            while let newline = partial.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: partial[..<newline], as: UTF8.self))
                partial.removeSubrange(...newline)
            }
        }
    }

    public var pid: Int32 { process.pid }
    public var isRunning: Bool { process.isRunning }

    /// Every stdout line so far.
    public var output: [String] { lock.withLock { lines } }

    /// What the process wrote to stderr so far (for failure messages).
    public var errorOutput: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Writes one line to the process's stdin.
    public func write(line: String) throws {
        var bytes = Array((line + "\n").utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.send(stdinSocket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let why = errno == EAGAIN ? "it did not read its input within \(20 * timeoutScale) s" : String(cString: strerror(errno))
                throw TestSupportError("\(name): cannot write \"\(line)\": \(why) (exited? stdout: \(output), stderr: \(errorOutput))")
            }
            bytes = bytes.dropFirst(n)
        }
    }

    /// Waits for the next stdout line (after those already returned by this method) that matches, and
    /// returns it with the lines skipped on the way. Fails early, with stderr, if the process exits first.
    @discardableResult
    public func nextLine(_ what: String, timeout: Duration = defaultTimeout,
                         where predicate: (String) -> Bool) async throws -> (line: String, skipped: [String]) {
        try await waitUntil("\(name) to print \(what)", timeout: timeout, seen: { describe() }) {
            try lock.withLock { () throws -> (String, [String])? in
                if let i = lines[cursor...].firstIndex(where: predicate) {
                    let skipped = Array(lines[cursor..<i])
                    cursor = i + 1
                    return (lines[i], skipped)
                }
                if stdoutClosed {
                    throw TestSupportError("\(name) closed its output before printing \(what); \(describeLocked())")
                }
                return nil
            }
        }
    }

    private func describe() -> String { lock.withLock { describeLocked() } }

    private func describeLocked() -> String {
        "stdout \(lines[cursor...]), running \(process.isRunning), stderr: \(errorOutput)"
    }

    /// Ends the process: SIGTERM, then SIGKILL if it is still there after `grace`. Idempotent.
    public func terminate(grace: Duration = .seconds(5)) {
        closeStdin()
        guard process.isRunning else { return }
        process.signal(SIGTERM)
        let clock = ContinuousClock()
        let deadline = clock.now + grace
        while process.isRunning, clock.now < deadline { usleep(5_000) }
        if process.isRunning { kill(process.pid, SIGKILL) }
        // SIGKILL cannot be ignored; the bound is for a child stuck in the kernel (uninterruptible sleep).
        _ = try? process.exitStatus(within: .seconds(10 * timeoutScale))
    }

    /// Sends `signal` (for tests that kill a peer on purpose) without waiting.
    public func send(signal: Int32) { process.signal(signal) }

    /// Waits until the process has exited (after it was told to quit), with a deadline.
    public func waitForExit(timeout: Duration = defaultTimeout) async throws -> Int32 {
        try await waitUntil("\(name) to exit", timeout: timeout, seen: { describe() }) {
            process.exitStatusIfExited
        }
    }

    /// Ends the child's stdin (programs that read commands take that as "quit").
    public func closeStdin() {
        lock.withLock {
            if !stdinClosed { stdinClosed = true; close(stdinSocket) }
        }
    }

    deinit { terminate() }
}
