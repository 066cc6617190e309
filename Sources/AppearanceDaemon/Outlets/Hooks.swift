import AppearanceCore
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// Hooks (man appearanced, HOOKS): darkman's `dark-mode.d/` and `light-mode.d/` and appearanced's `hooks.d/`, run
/// in name order, one at a time (changes during a round give one more round); each a `ChildRunner.job`.
final class HookRunner: @unchecked Sendable {
    // Confined to the daemon's queue.
    private let queue: DispatchQueue
    private let log: Logger
    private let paths: Paths
    var enabled = true
    var timeout: Double = 30
    /// The newest change not yet run.
    private var pending: (mode: Mode, previous: Mode?, cause: String)?
    private var running: Bool { round != nil }
    /// The last finished round, for `status`.
    private(set) var last: (time: Int64, mode: Mode, ran: Int, failures: [String])?
    private var queueOfHooks: [(name: String, path: String)] = []
    private var round: (mode: Mode, previous: Mode?, cause: String, ran: Int, failures: [String])?
    private var busyRetries = 0
    /// Regular files nobody may run (a README, a .bak), left out as run-parts leaves them: said once each.
    private var skipped: Set<String> = []

    init(queue: DispatchQueue, log: Logger, paths: Paths) { (self.queue, self.log, self.paths) = (queue, log, paths) }

    /// A change of the mode: run the hooks for it now, or once the round under way is done.
    func changed(to mode: Mode, from previous: Mode?, cause: String) {
        guard enabled else { return }
        pending = (mode, previous, cause)
        if !running { startRound() }
    }

    var statusDetail: String {
        guard enabled else { return "off (hooks = false)" }
        guard let last else { return running ? "running" : "none run yet" }
        let what = "\(last.ran) hook\(last.ran == 1 ? "" : "s") for \(last.mode.rawValue)"
        let state = last.failures.isEmpty ? "ok" : "failed: " + last.failures.joined(separator: "; ")
        return "\(what) at \(Clock.describe(last.time, from: last.time)): \(state)" + (running ? " (running again)" : "")
    }

    // MARK: Rounds

    private func startRound() {
        guard let (mode, previous, cause) = pending else { return }
        pending = nil
        queueOfHooks = hooks(for: mode)
        round = (mode, previous, cause, 0, [])
        guard !queueOfHooks.isEmpty else { return finishRound() }
        log.debug("hooks: \(queueOfHooks.count) for \(mode.rawValue): \(queueOfHooks.map(\.name).joined(separator: ", "))")
        runNext()
    }

    private func finishRound() {
        if let r = round, r.ran > 0 || !r.failures.isEmpty {
            last = (Posix.wallClockSeconds(), r.mode, r.ran, r.failures)
            if !r.failures.isEmpty {
                log.info("hooks for \(r.mode.rawValue) failed: " + r.failures.joined(separator: "; "))
            }
        }
        round = nil
        if pending != nil { startRound() }
    }

    private func runNext() {
        guard let r = round else { return }
        guard !queueOfHooks.isEmpty else { return finishRound() }
        let hook = queueOfHooks.removeFirst()
        guard let (problem, code) = start(hook, r.mode, r.previous, r.cause) else {
            busyRetries = 0
            round?.ran += 1
            return
        }
        if code == Errno.textBusy && busyRetries < 10 {
            // The file is open for writing right now (an editor saving it): try again shortly.
            busyRetries += 1
            queueOfHooks.insert(hook, at: 0)
            queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [weak self] in self?.runNext() }
            return
        }
        busyRetries = 0
        log.warning("hook \(hook.path): \(problem), skipping it")
        round?.failures.append("\(hook.name): \(problem)")
        runNext()
    }

    /// The folders listed for a change (the paths are the daemon's for its life): hooks.d, then darkman's.
    private lazy var folders: (own: String, dark: [String], light: [String]) = {
        let data = [paths.dataHome] + paths.dataDirs
        return (paths.configHome + "/appearanced/hooks.d", data.map { $0 + "/dark-mode.d" }, data.map { $0 + "/light-mode.d" })
    }()

    /// The hooks for `mode`, in the order they run.
    func hooks(for mode: Mode) -> [(name: String, path: String)] {
        let hooksD = folders.own
        var found: [String: String] = [:]
        for dir in mode == .dark ? folders.dark : folders.light {
            for name in Self.entries(dir) where found[name] == nil { found[name] = dir + "/" + name }
        }
        let own = Self.entries(hooksD)
        if own.isEmpty && found.isEmpty { return [] }
        let all = own.map { (name: $0, path: hooksD + "/" + $0, order: 0) } + found.map { (name: $0.key, path: $0.value, order: 1) }
        return all.sorted { ($0.name, $0.order) < ($1.name, $1.order) }.map { (name: $0.name, path: $0.path) }.filter(runnable)
    }

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

    /// Starts one hook: nil, or why not and the errno behind it (0: none).
    private func start(_ hook: (name: String, path: String), _ mode: Mode, _ previous: Mode?, _ cause: String) -> (String, Int32)? {
        let st: FileStatus
        do { st = try FileSystem.status(hook.path) } catch { return ("cannot stat: \(error.message)", 0) }
        guard st.kind == .regular else { return ("not a regular file", 0) }
        if let problem = Trust.problem(program: hook.path) { return (problem, 0) }
        guard FileSystem.executableProblem(hook.path) == nil else { return ("not executable", 0) }
        let (name, log) = (hook.name, log)
        let failure = ChildRunner.job([hook.path], who: "hook \(name)", variables: ChildRunner.modeVariables(mode, previous, cause),
                                      timeout: timeout, log: log, queue: queue) { [weak self] failed in
            if let failed {
                log.warning("hook \(name) failed: \(failed)")
                self?.round?.failures.append("\(name): \(failed)")
            } else {
                log.debug("hook \(name) done")
            }
            self?.runNext()
        }
        return failure.map { ("cannot run: \($0.message)", $0.code) }
    }
}

extension ChildRunner {
    /// The variables a hook and an integration's `apply` are given.
    static func modeVariables(_ mode: Mode, _ previous: Mode?, _ cause: String) -> [String] {
        ["APPEARANCE=\(mode.rawValue)", "DARKMODE=\(mode.isDark ? 1 : 0)", "APPEARANCE_PREVIOUS=\(previous?.rawValue ?? "")",
         "APPEARANCE_CAUSE=\(cause)"]
    }

    /// Runs a hook or an integration in a process group of its own (`Posix.childEnvironment` plus `variables`);
    /// its output in `log`.
    /// `done` gets nil or why it failed; returns why it did not run.
    static func job(_ argv: [String], who: String, variables: [String], timeout: Double,
                    keep: Int = 0, log: Logger, queue: DispatchQueue,
                    done: @escaping (String?) -> Void) -> Errno? {
        let started = run(argv, environment: Posix.childEnvironment(variables), newProcessGroup: true, timeout: timeout, killGrace: 2, outputLimit: keep,
                          queue: queue, onOutput: { output in
            // Also after it exits, for what it left in the background: still within the run's caps.
            switch output {
            case .line(let text): log.info("\(who): \(text)")
            case .capped: log.info("\(who): [output past \(logLines) lines or \(logBytes / 1024) KiB is not logged]")
            case .ended(let dropped) where dropped > 0: log.info("\(who): [\(dropped) bytes of output not logged]")
            case .ended: break
            }
        }, onTimeout: {
            log.warning("\(who) did not finish within \(timeout) s; stopping it and its children")
        }, completion: { ending in
            if ending.timedOut { return done("timed out after \(timeout) s") }
            if ending.status.succeeded { return done(nil) }
            // Its last line of output says why (an integration's contract: one line on stderr).
            let said = String(decoding: ending.output, as: UTF8.self).split(separator: "\n").last.map { ": " + $0 } ?? ""
            done(ending.status.description + said)
        })
        if case .failure(let e) = started { return e }
        return nil
    }
}
