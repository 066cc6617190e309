import AppearanceKit
import AppearancePosix
import Dispatch

// `appearancectl watch --exec CMD [ARGS…]`: runs CMD on start and after each change, never two at once.

/// Runs the watch until interrupted; exits the process itself.
func watchExec(socket: String?, app: String?, command: [String], initial: Bool) async -> Never {
    let client: AppearanceClient
    do { client = try await AppearanceClient(socketPath: socket, app: app) } catch { fail(error) }
    // A command that cannot be started at all is a usage error now, not a failure on every change.
    if let reason = unstartable(command[0]) { usageError("watch: cannot run \(command[0]): \(reason)") }
    // One slot holding the newest mode not yet run: a burst during a run leaves exactly one more run.
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
    Posix.exit(Exit.ok)
}

/// Runs the command once for `mode` and waits for it; a failure is reported, never fatal.
func run(_ command: [String], _ mode: Mode) async {
    let child: Spawned
    do { child = try spawn(command, mode).get() } catch { return note("watch: cannot run \(command[0]): \(error.message)") }
    let status: ExitStatus = await withCheckedContinuation { done in
        DispatchQueue.global().async { done.resume(returning: child.wait()) }
    }
    switch status {
    case .exited(0): break
    case .exited(let code): note("watch: \(command[0]) exited with status \(code) (APPEARANCE=\(mode.rawValue))")
    case .signalled(let signal): note("watch: \(command[0]) was killed by signal \(signal) (APPEARANCE=\(mode.rawValue))")
    }
}

/// posix_spawnp with the caller's environment (`Posix.childEnvironment`) plus APPEARANCE and DARKMODE.
func spawn(_ command: [String], _ mode: Mode) -> Result<Spawned, Errno> {
    let environment = Posix.childEnvironment(["APPEARANCE=\(mode.rawValue)", "DARKMODE=\(mode.isDark ? 1 : 0)"])
    return Spawned.spawn(command, environment: environment, searchPath: true, stdin: .inherit)
}

/// Why `program` cannot be started (as posix_spawnp would look it up), or nil.
func unstartable(_ program: String) -> String? {
    if program.contains("/") {
        return FileSystem.executableProblem(program)?.message
    }
    let path = Posix.environment("PATH") ?? "/usr/local/bin:/usr/bin:/bin"
    for dir in path.split(separator: ":", omittingEmptySubsequences: false) {
        let candidate = (dir.isEmpty ? "." : String(dir)) + "/" + program
        if (try? FileSystem.status(candidate))?.kind == .regular, FileSystem.executableProblem(candidate) == nil { return nil }
    }
    return "not found in PATH"
}

/// Starts the watch in a task of its own, apart from main (whose entry would otherwise set up its types).

@inline(never)
func startWatchExec(socket: String?, app: String?, command: [String], initial: Bool) {
    Task.detached { await watchExec(socket: socket, app: app, command: command, initial: initial) }
}
