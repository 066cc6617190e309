@preconcurrency import Glibc
import CPosix
import Dispatch

/// The process and its surroundings: ids, environment, signals, children, threads, clocks, memory.
public enum Posix {
    public static var processID: Int32 { getpid() }
    public static var userID: UInt32 { getuid() }

    /// getenv(3); an empty value counts as unset.
    public static func environment(_ name: String) -> String? {
        guard let v = getenv(name), v.pointee != 0 else { return nil }
        return String(cString: v)
    }

    /// unsetenv(3) (before any thread that reads the environment starts).
    public static func unsetEnvironment(_ name: String) { unsetenv(name) }

    /// Every `NAME=value` of the environment, in order.
    public static var environmentEntries: [String] {
        var entries: [String] = []
        while let entry = environ[entries.count] { entries.append(String(cString: entry)) }
        return entries
    }

    /// What a child is given (hooks, integrations, `watch --exec`): this environment less systemd's variables for
    /// this process (NOTIFY_SOCKET, LISTEN_*) and every APPEARANCE, APPEARANCE_* and DARKMODE, then `variables`.
    public static func childEnvironment(_ variables: [String] = []) -> [String] {
        let drop = ["NOTIFY_SOCKET=", "LISTEN_", "APPEARANCE=", "APPEARANCE_", "DARKMODE="]
        return environmentEntries.filter { s in !drop.contains(where: s.hasPrefix) } + variables
    }

    /// The home directory in the password database (getpwuid(3)).
    public static var passwordHome: String? {
        guard let pw = getpwuid(getuid()), let dir = pw.pointee.pw_dir else { return nil }
        return String(cString: dir)
    }

    public static func exit(_ status: Int32) -> Never { Glibc.exit(status) }

    /// Writes `text` to stderr in one go, ignoring failure (nothing better can be done with it).
    public static func printError(_ text: String) { try? Descriptor.standardError.writeAll(text) }

    /// Sleeps until a signal ends the process.
    public static func waitForever() -> Never { while true { pause() } }

    /// Lifts the soft limit on open files to the hard one, as systemd recommends; returns the soft limit in force.
    @discardableResult
    public static func raiseFileLimit() -> UInt64 {
        var files = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < files.rlim_max else { return fileLimit }
        files.rlim_cur = files.rlim_max
        return setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0 ? UInt64(files.rlim_cur) : fileLimit
    }

    public static var fileLimit: UInt64 {
        var files = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0 else { return 1024 }
        return UInt64(files.rlim_cur)
    }

    /// malloc_trim(0): gives freed heap back to the system (glibc keeps it otherwise).
    public static func returnFreeMemory() { _ = cposix_malloc_trim(0) }

    /// Lets go of the code and read-only data pages touched so far (docs/decisions.md, "Idle memory"); the bytes.
    @discardableResult
    public static func releaseCodePages() -> Int { cposix_release_readonly_pages() }

    /// Bounds the heap glibc keeps (docs/decisions.md, "The heap after a flood of writes"); false if refused.
    @discardableResult
    public static func boundHeap(arenas: Int32, mmapThreshold: Int32) -> Bool { cposix_malloc_bound(arenas, mmapThreshold) != 0 }

    /// Sleeps for `seconds` (nanosleep(2), resumed after a signal).
    public static func sleep(seconds: Double) {
        var t = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var left = timespec()
        while nanosleep(&t, &left) != 0, errno == EINTR { t = left }
    }

    // MARK: Threads

    /// Runs `body` on a new detached thread; false if none could be created.
    public static func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        final class Box {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { Unmanaged<Box>.fromOpaque($0!).takeRetainedValue().body(); return nil }, context)
        if rc != 0 { Unmanaged<Box>.fromOpaque(context).release() }
        return rc == 0
    }

    // MARK: Clocks

    /// CLOCK_MONOTONIC in microseconds (sd_notify's MONOTONIC_USEC).
    public static func monotonicMicroseconds() -> UInt64 { Deadline.now() / 1000 }

    /// CLOCK_REALTIME: Unix time in whole seconds.
    public static func wallClockSeconds() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec)
    }

    /// A Dispatch wall-clock deadline at Unix time `seconds`.
    public static func wallTime(_ seconds: Int64) -> DispatchWallTime {
        DispatchWallTime(timespec: timespec(tv_sec: Int(seconds), tv_nsec: 0))
    }

    /// A moment in the local time zone (localtime_r(3)).
    public struct LocalTime: Equatable, Sendable {
        public var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
        /// 0 Sunday … 6 Saturday.
        public var weekday: Int

        /// `2026-11-27` (the year with four digits: `0099-01-02`), as the daemon and the CLI write dates.
        public var date: String { "\(Self.digits(year, 4))-\(Self.digits(month, 2))-\(Self.digits(day, 2))" }
        /// `14:05`.
        public var clock: String { "\(Self.digits(hour, 2)):\(Self.digits(minute, 2))" }
        /// `14:05:09`.
        public var clockWithSeconds: String { clock + ":" + Self.digits(second, 2) }
        /// `Fri`.
        public var weekdayName: String { ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][max(0, min(6, weekday))] }

        static func digits(_ n: Int, _ width: Int) -> String {
            let text = String(n)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
    }

    public static func localTime(_ time: Int64) -> LocalTime {
        var t = time_t(time)
        var parts = tm()
        localtime_r(&t, &parts)
        return LocalTime(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                         hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec), weekday: Int(parts.tm_wday))
    }
}

// MARK: Signals

/// The signals appearanced and its tools handle, by name.
public enum Signal: Int32, Sendable {
    case hangUp = 1, interrupt = 2, quit = 3, kill = 9, user1 = 10, user2 = 12, pipe = 13, terminate = 15
    case child = 17, `continue` = 18, stop = 19

    /// Ignores the signal (SIG_IGN), e.g. before a Dispatch signal source takes it over.
    public func ignore() { _ = Glibc.signal(rawValue, SIG_IGN) }

    /// Back to the default action (SIG_DFL).
    public func setDefault() { _ = Glibc.signal(rawValue, SIG_DFL) }

    /// Makes the signal end the process with status 0 (`_exit(0)`, nothing else runs): how a watch ends.
    public func exitQuietly() { _ = Glibc.signal(rawValue) { _ in _exit(0) } }

    /// Unblocks `signals` for the calling thread (before any thread starts, so that all inherit the mask).
    public static func unblock(_ signals: [Signal]) {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s.rawValue) }
        sigprocmask(SIG_UNBLOCK, &set, nil)
    }
}

// MARK: Children

/// How a child process ended.
public enum ExitStatus: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    init(wait status: Int32) {
        let signal = status & 0x7f
        self = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    public var succeeded: Bool { self == .exited(0) }

    public var description: String {
        switch self {
        case .exited(let code): "exit status \(code)"
        case .signalled(let signal): "killed by signal \(signal)"
        }
    }
}

/// A child started with posix_spawn(3).
public struct Spawned: Sendable {
    public let pid: Int32

    /// Where a child's standard stream goes.
    public enum Stream: Sendable {
        case null
        case inherit
        case descriptor(Descriptor)
    }

    /// Starts `arguments[0]` with an empty signal mask and default actions; `newProcessGroup`: in a group of its own.
    public static func spawn(_ arguments: [String], environment: [String]? = nil, searchPath: Bool = false,
                             stdin: Stream = .null, stdout: Stream = .inherit, stderr: Stream = .inherit,
                             newProcessGroup: Bool = false) -> Result<Spawned, Errno> {
        func cStrings(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] { strings.map { strdup($0) } + [nil] }
        let argv = cStrings(arguments), envp = cStrings(environment ?? Posix.environmentEntries)
        defer { (argv + envp).forEach { free($0) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, target) in [(stdin, Int32(0)), (stdout, 1), (stderr, 2)] {
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .inherit: break
            case .descriptor(let d): posix_spawn_file_actions_adddup2(&actions, d.raw, target)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for s in [Signal.interrupt, .terminate, .pipe, .hangUp, .quit, .child, .user1, .user2] { sigaddset(&defaults, s.rawValue) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var pid: pid_t = 0
        let rc = searchPath ? posix_spawnp(&pid, argv[0]!, &actions, &attributes, argv, envp)
            : posix_spawn(&pid, argv[0]!, &actions, &attributes, argv, envp)
        return rc == 0 ? .success(Spawned(pid: pid)) : .failure(Errno(rc, "spawn", path: arguments.first))
    }

    /// waitpid(WNOHANG): how the child ended, or nil while it runs.
    public func reap() -> ExitStatus? {
        var status: Int32 = 0, r: pid_t
        repeat { r = waitpid(pid, &status, WNOHANG) } while r < 0 && errno == EINTR
        return r == pid ? ExitStatus(wait: status) : nil
    }

    /// waitpid(2), blocking until the child ends.
    public func wait() -> ExitStatus {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return .exited(0) }  // not our child (already reaped): nothing to wait for
        }
        return ExitStatus(wait: status)
    }

    public func signal(_ signal: Signal) { kill(pid, signal.rawValue) }

    /// kill(-pid): the child's whole process group (see `newProcessGroup`).
    public func signalGroup(_ signal: Signal) { kill(-pid, signal.rawValue) }

    /// A descriptor readable once the child has ended (not reaping it), or nil; `pidfd: false` is for tests.
    func endWatch(pidfd: Bool = true) -> Descriptor? {
        if pidfd, case let fd = cposix_pidfd_open(pid), fd >= 0 { return Descriptor(adopting: fd, name: "pidfd of \(pid)") }
        // No pidfd (ENOSYS before Linux 5.3): a thread blocked in waitid(WNOWAIT) closes a pipe's end at the child's end.
        guard let (reader, writer) = try? Descriptor.pipe() else { return nil }
        let pid = self.pid
        let started = Posix.startThread {
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
            writer.close()
        }
        if !started { reader.close(); writer.close() }
        return started ? reader : nil
    }
}
