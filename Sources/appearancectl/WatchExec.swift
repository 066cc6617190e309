#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AppearanceKit
import Dispatch

// `appearancectl watch --exec CMD [ARGS…]`: runs CMD on start (unless --no-initial) and after each change,
// with APPEARANCE=dark|light and DARKMODE=1|0. Runs never overlap: changes that arrive during a run are
// coalesced into one more run with the newest mode. It follows the daemon across restarts (AppearanceKit's
// `changes()` reconnects) and reports lost and regained connections on stderr.

/// Runs the watch until interrupted; exits the process itself.
func watchExec(socket: String?, app: String?, command: [String], initial: Bool) async -> Never {
    let client: AppearanceClient
    do { client = try await AppearanceClient(socketPath: socket, app: app) } catch { fail(error) }
    // One slot holding the newest mode not yet run: a burst during a run leaves exactly one more run.
    // A command that cannot be started at all (a typo, a missing program) is a usage error now, not a
    // failure reported on every change for as long as the watch runs.
    if let reason = unstartable(command[0]) { usageError("watch: cannot run \(command[0]): \(reason)") }
    let (modes, pending) = AsyncStream.makeStream(of: Mode.self, bufferingPolicy: .bufferingNewest(1))
    let runner = Task.detached {
        for await mode in modes { await run(command, mode) }
    }
    do {
        for try await change in client.changes() {
            switch change {
            case .initial(let s): if initial { pending.yield(s.mode) }
            case .changed(let s, _): pending.yield(s.mode)
            case .connectionLost(let e): note("\(e); reconnecting")
            case .reconnected: note("reconnected to appearanced on \(client.socketPath)")
            case .paletteChanged: break
            }
        }
    } catch {
        pending.finish()
        _ = await runner.value
        fail(error)
    }
    exit(Exit.ok)
}

func note(_ message: String) { fputs("appearancectl: \(message)\n", stderr) }

/// Runs the command once for `mode` and waits for it; a failure is reported, never fatal.
func run(_ command: [String], _ mode: Mode) async {
    let pid: pid_t
    switch spawn(command, mode) {
    case .success(let p): pid = p
    case .failure(let e):
        note("watch: cannot run \(command[0]): \(String(cString: strerror(e.code)))")
        return
    }
    let status: Int32 = await withCheckedContinuation { done in
        DispatchQueue.global().async {
            var st: Int32 = 0
            while waitpid(pid, &st, 0) < 0 {
                if errno != EINTR { st = 0; break }
            }
            done.resume(returning: st)
        }
    }
    let signal = status & 0x7f
    if signal == 0 {
        let code = (status >> 8) & 0xff
        if code != 0 { note("watch: \(command[0]) exited with status \(code) (APPEARANCE=\(mode.rawValue))") }
    } else {
        note("watch: \(command[0]) was killed by signal \(signal) (APPEARANCE=\(mode.rawValue))")
    }
}

struct SpawnError: Error { var code: Int32 }

/// posix_spawnp with the caller's environment plus APPEARANCE and DARKMODE, a clear signal mask and default
/// dispositions (this may run on a thread that blocks signals, and masks are inherited across exec).
func spawn(_ command: [String], _ mode: Mode) -> Result<pid_t, SpawnError> {
    var environment: [String] = []
    var i = 0
    while let entry = environ[i] {
        let s = String(cString: entry)
        if !s.hasPrefix("APPEARANCE="), !s.hasPrefix("DARKMODE=") { environment.append(s) }
        i += 1
    }
    environment.append("APPEARANCE=\(mode.rawValue)")
    environment.append("DARKMODE=\(mode.isDark ? 1 : 0)")

    func cStrings(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] { strings.map { strdup($0) } + [nil] }
    let argv = cStrings(command), envp = cStrings(environment)
    defer { (argv + envp).forEach { free($0) } }

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t(), defaults = sigset_t()
    sigemptyset(&none)
    sigemptyset(&defaults)
    for s in [SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, s) }
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    var pid: pid_t = 0
    let rc = posix_spawnp(&pid, argv[0]!, nil, &attributes, argv, envp)
    return rc == 0 ? .success(pid) : .failure(SpawnError(code: rc))
}

/// Why `program` cannot be started (as posix_spawnp would look it up), or nil.
func unstartable(_ program: String) -> String? {
    if program.contains("/") {
        return access(program, X_OK) == 0 ? nil : String(cString: strerror(errno))
    }
    let path = ProcessPath.value
    for dir in path.split(separator: ":", omittingEmptySubsequences: false) {
        let candidate = (dir.isEmpty ? "." : String(dir)) + "/" + program
        var st = stat()
        if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 { return nil }
    }
    return "not found in PATH"
}

enum ProcessPath {
    static var value: String { getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin" }
}
