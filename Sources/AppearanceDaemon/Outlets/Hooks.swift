import AppearanceCore
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// Hooks: executables run on every change of the mode, darkman's layout plus appearanced's own.
///
/// - `dark-mode.d/` or `light-mode.d/` under `$XDG_DATA_HOME` (default `~/.local/share`), then under each of
///   `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`): darkman's directories; a name found earlier
///   shadows the same name later.
/// - `$XDG_CONFIG_HOME/appearanced/hooks.d/`: run on every change, for either mode.
///
/// All of them run in name order (for the same name, hooks.d first), one at a time, never overlapping:
/// changes during a run give one more run with the newest mode (as `appearancectl watch --exec` does). Each
/// gets `APPEARANCE`, `DARKMODE`, `APPEARANCE_PREVIOUS` and `APPEARANCE_CAUSE` and its own process group.
///
/// - A hook that exits is done: programs it started in the background (`swaybg -i dark.png &`,
///   `nohup prog &`) are left running, as darkman leaves them, and the next hook does not wait for them.
/// - A hook still running at its timeout (`hook-timeout`) is stopped with its whole process group: SIGTERM
///   to the group, SIGKILL to what is left of it 2 s later. That includes the programs it started that are
///   still in its group (not those that left it with `setsid`).
/// - A hook someone else could have written is not run (unlike darkman): one whose file, directory or anything
///   in that directory (what it may source or run from there) is writable by every user, or is owned by a user
///   other than root and the daemon's own (`Trust`, the check the integrations share). `status` and the log
///   say why.
///
/// Output (standard output and error, of the hook and of what it leaves in the background) goes to the
/// daemon's log, at most `logLines` lines or `logBytes` bytes per run, each line cut at 1,000 bytes; the
/// rest is read and dropped, and one line says how much. It is read a slice at a time (`ChildRunner`):
/// a hook printing without end neither stalls the daemon nor keeps its timeout from firing. Everything runs
/// off the request path: a hook never delays a reply or a notification.
final class HookRunner: @unchecked Sendable {
    // Confined to the daemon's queue.
    struct Outcome: Equatable {
        var time: Int64
        var mode: Mode
        var ran: Int
        var failures: [String]
    }

    private let queue: DispatchQueue
    private let log: Logger
    /// Where the hook directories are (the XDG base directories).
    private let paths: Paths
    /// Told when a round had failures (the daemon says it in its journal; `status` shows the last round).
    var onFailure: ((Outcome) -> Void)?
    var enabled = true
    var timeout: Double = 30
    /// The newest change not yet run: (mode, previous, cause).
    private var pending: (Mode, Mode?, String)?
    private var running = false
    /// The last finished round, for `status`.
    private(set) var last: Outcome?
    private var current: Running?

    /// Per run of one hook, what reaches the log.
    static let logLines = 100
    static let logBytes = 16 * 1024

    /// The hook under way. Confined to the daemon's queue, like the runner.
    private final class Running {
        let name: String
        let timeout: Double

        init(name: String, timeout: Double) {
            self.name = name
            self.timeout = timeout
        }
    }

    init(queue: DispatchQueue, log: Logger, paths: Paths) {
        self.queue = queue
        self.log = log
        self.paths = paths
    }

    /// Listens for SIGCHLD. Done once, well before the first hook: a Dispatch signal source is armed
    /// asynchronously, and a child that exited before that would not be noticed by it.
    func prepare() {
        dispatchPrecondition(condition: .onQueue(queue))
        ChildRunner.prepare()
    }

    /// A change of the mode: run the hooks for it now, or once the round under way is done.
    func changed(to mode: Mode, from previous: Mode?, cause: String) {
        guard enabled else { return }
        pending = (mode, previous, cause)
        if !running { startRound() }
    }

    /// What `status` says.
    var statusDetail: String {
        guard enabled else { return "off (hooks = false)" }
        guard let last else { return running ? "running" : "none run yet" }
        let what = "\(last.ran) hook\(last.ran == 1 ? "" : "s") for \(last.mode.rawValue)"
        let state = last.failures.isEmpty ? "ok" : "failed: " + last.failures.joined(separator: "; ")
        return "\(what) at \(Clock.describe(last.time, from: last.time)): \(state)" + (running ? " (running again)" : "")
    }

    // MARK: Rounds

    private var queueOfHooks: [(name: String, path: String)] = []
    private var round: (mode: Mode, previous: Mode?, cause: String, ran: Int, failures: [String])?

    private func startRound() {
        guard let (mode, previous, cause) = pending else { running = false; return }
        pending = nil
        running = true
        queueOfHooks = hooks(for: mode)
        round = (mode, previous, cause, 0, [])
        if queueOfHooks.isEmpty {
            finishRound()
            return
        }
        log.debug("hooks: \(queueOfHooks.count) for \(mode.rawValue): \(queueOfHooks.map(\.name).joined(separator: ", "))")
        runNext()
    }

    private func finishRound() {
        if let r = round, r.ran > 0 || !r.failures.isEmpty {
            let outcome = Outcome(time: Posix.wallClockSeconds(), mode: r.mode, ran: r.ran, failures: r.failures)
            last = outcome
            if !outcome.failures.isEmpty { onFailure?(outcome) }
        }
        round = nil
        running = false
        if pending != nil { startRound() }
    }

    private var busyRetries = 0

    private func runNext() {
        guard var r = round else { return }
        guard !queueOfHooks.isEmpty else { finishRound(); return }
        let hook = queueOfHooks.removeFirst()
        switch spawn(hook, r.mode, r.previous, r.cause) {
        case .success(let child):
            current = child
            busyRetries = 0
            r.ran += 1
            round = r
        case .failure(let message) where message.code == Errno.textBusy && busyRetries < 10:
            // The file is open for writing right now (an editor saving it, or a process that forked while
            // it was being written): try again shortly instead of skipping it.
            busyRetries += 1
            queueOfHooks.insert(hook, at: 0)
            queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [weak self] in self?.runNext() }
        case .failure(let message):
            busyRetries = 0
            log.warning("hook \(hook.path): \(message), skipping it")
            r.failures.append("\(hook.name): \(message)")
            round = r
            runNext()
        }
    }

    /// The hooks for `mode`, in the order they run.
    func hooks(for mode: Mode) -> [(name: String, path: String)] {
        let sub = mode == .dark ? "dark-mode.d" : "light-mode.d"
        var found: [String: (order: Int, path: String)] = [:]
        var own: [(String, String)] = []
        let hooksD = paths.configHome + "/appearanced/hooks.d"
        for name in Self.entries(hooksD) { own.append((name, hooksD + "/" + name)) }
        for dir in [paths.dataHome] + paths.dataDirs {
            for name in Self.entries(dir + "/" + sub) where found[name] == nil {
                found[name] = (1, dir + "/" + sub + "/" + name)
            }
        }
        let all = own.map { (name: $0.0, path: $0.1, order: 0) } + found.map { (name: $0.key, path: $0.value.path, order: 1) }
        return all.sorted { ($0.name, $0.order) < ($1.name, $1.order) }.map { (name: $0.name, path: $0.path) }.filter(runnable)
    }

    /// The hooks left out because they are regular files nobody may run (a README, a .bak), as run-parts
    /// leaves them out: said once each, not a failure.
    private var skipped: Set<String> = []

    private func runnable(_ hook: (name: String, path: String)) -> Bool {
        guard (try? FileSystem.status(hook.path))?.kind == .regular, FileSystem.executableProblem(hook.path) != nil else { return true }
        if skipped.insert(hook.path).inserted { log.info("hook \(hook.name): \(hook.path) is not executable; skipped (chmod +x runs it)") }
        return false
    }

    /// Names in `dir`, without dot files and editor leftovers (`~` suffix).
    private static func entries(_ dir: String) -> [String] {
        (FileSystem.names(in: dir) ?? []).filter { !$0.hasPrefix(".") && !$0.hasSuffix("~") }
    }

    // MARK: One hook

    private func spawn(_ hook: (name: String, path: String), _ mode: Mode, _ previous: Mode?, _ cause: String) -> Result<Running, HookError> {
        let st: FileStatus
        do { st = try FileSystem.status(hook.path) } catch { return .failure(HookError("cannot stat: \(error.message)")) }
        guard st.kind == .regular else { return .failure(HookError("not a regular file")) }
        // The hook, its folder and everything in it (what the hook may source or run from there): one check,
        // shared with the integrations.
        if let problem = Trust.problem(program: hook.path) {
            return .failure(HookError(problem))
        }
        guard FileSystem.executableProblem(hook.path) == nil else { return .failure(HookError("not executable")) }

        let environment = Posix.environmentEntries.filter { s in
            !["APPEARANCE=", "DARKMODE=", "APPEARANCE_PREVIOUS=", "APPEARANCE_CAUSE=", "NOTIFY_SOCKET=", "LISTEN_"].contains(where: s.hasPrefix)
        } + ["APPEARANCE=\(mode.rawValue)", "DARKMODE=\(mode.isDark ? 1 : 0)",
             "APPEARANCE_PREVIOUS=\(previous?.rawValue ?? "")", "APPEARANCE_CAUSE=\(cause)"]
        let child = Running(name: hook.name, timeout: timeout)
        let name = hook.name, log = self.log, timeout = self.timeout
        let started = ChildRunner.run(
            [hook.path], environment: environment, stderr: .captured, newProcessGroup: true,
            timeout: timeout, killGrace: 2, outputLimit: 0, lineBytes: 1000,
            logLimit: Self.logBytes, logLines: Self.logLines, queue: queue,
            onOutput: { output in
                // Also after the hook exits, for what it left in the background: still within the run's caps.
                switch output {
                case .line(let text): log.info("hook \(name): \(text)")
                case .capped: log.info("hook \(name): [output past \(Self.logLines) lines or \(Self.logBytes / 1024) KiB is not logged]")
                case .ended(let dropped) where dropped > 0: log.info("hook \(name): [\(dropped) bytes of output not logged]")
                case .ended: break
                }
            },
            onTimeout: {
                log.warning("hook \(name) did not finish within \(timeout) s; stopping it and its children")
            },
            completion: { [weak self, child] ending in self?.finished(child, ending) })
        switch started {
        case .success:
            return .success(child)  // the runner keeps itself alive (its read source and the reaper) until the end
        case .failure(let e):
            return .failure(HookError("cannot run: \(e.message)", code: e.code))
        }
    }

    private func finished(_ child: Running, _ ending: ChildRunner.Ending) {
        guard current === child else { return }
        let failed: String?
        if ending.timedOut {
            failed = "timed out after \(child.timeout) s"
        } else {
            failed = ending.status.succeeded ? nil : ending.status.description
        }
        if let failed {
            log.warning("hook \(child.name) failed: \(failed)")
            round?.failures.append("\(child.name): \(failed)")
        } else {
            log.debug("hook \(child.name) done")
        }
        current = nil
        // What it left running, and its output, are left alone (see the type's comment): the next hook does
        // not wait for them.
        runNext()
    }
}

struct HookError: Error, CustomStringConvertible {
    var description: String
    var code: Int32 = 0
    init(_ d: String, code: Int32 = 0) {
        description = d
        self.code = code
    }
}
