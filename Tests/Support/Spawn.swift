import Foundation

/// A child process started with posix_spawn, not Foundation.Process: Process.run was seen to crash
/// (a bad read in memmove) while other test threads opened and closed many descriptors. The child gets
/// an empty signal mask and default signal dispositions (test threads block most signals, and a mask is
/// inherited across exec), and the three descriptors given; every other descriptor of the test process is
/// close-on-exec (sockets and pipes are made that way here).
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let lock = NSLock()
    private var status: Int32?

    /// `stdin`, `stdout`, `stderr`: descriptors to give the child as 0, 1, 2 (-1: /dev/null).
    public init(executable: String, arguments: [String], environment: [String: String]?,
                stdin: Int32 = -1, stdout: Int32 = -1, stderr: Int32 = -1) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, target) in [(stdin, Int32(0)), (stdout, 1), (stderr, 2)] {
            if fd >= 0 {
                posix_spawn_file_actions_adddup2(&actions, fd, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw TestSupportError("cannot start \(executable): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    /// Reaps the child if it has exited, without blocking: every wait for a child has a deadline.
    private func reap() -> Int32? {
        lock.withLock {
            if let status { return status }
            var raw: Int32 = 0
            while true {
                let r = waitpid(pid, &raw, WNOHANG)
                if r == pid { break }
                if r < 0, errno == EINTR { continue }
                return nil
            }
            // Like Foundation: the exit code, or the number of the signal that ended it.
            let signal = raw & 0x7f
            status = signal == 0 ? (raw >> 8) & 0xff : signal
            return status
        }
    }

    public var isRunning: Bool { reap() == nil }

    /// The exit code, or the signal's number for a killed child, once it has exited (nil while it runs).
    public var exitStatusIfExited: Int32? { reap() }

    /// Waits for the exit, at most `timeout`: the exit code, or the signal's number for a killed child.
    /// Fails naming the child if it is still running then (it is left running: the caller decides).
    public func exitStatus(within timeout: Duration = defaultTimeout) throws -> Int32 {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            if let status = reap() { return status }
            if clock.now >= deadline { throw TestSupportError("process \(pid) did not exit within \(timeout)") }
            usleep(2_000)
        }
    }

    public func signal(_ sig: Int32) { if isRunning { kill(pid, sig) } }
}

/// Reads a descriptor on a thread of its own until end of file, handing each chunk to `received`.
public func readUntilEOF(_ fd: Int32, name: String, _ received: @escaping @Sendable ([UInt8]) -> Void,
                         done: @escaping @Sendable () -> Void = {}) {
    let thread = Thread {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            received(Array(buffer[0..<n]))
        }
        close(fd)
        done()
    }
    thread.name = name
    thread.start()
}

/// A one-way channel whose both ends are close-on-exec from the start (the child gets its end through
/// dup2). A socket pair, because pipe2 is not visible to Swift and pipe + fcntl would leave a moment in
/// which a child spawned by another thread inherits the write end and holds the reader's EOF back.
public func cloexecPipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
        throw TestSupportError("socketpair: \(String(cString: strerror(errno)))")
    }
    shutdown(fds[0], Int32(SHUT_WR))
    shutdown(fds[1], Int32(SHUT_RD))
    return (fds[0], fds[1])
}
