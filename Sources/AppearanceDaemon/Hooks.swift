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
/// gets `APPEARANCE`, `DARKMODE`, `APPEARANCE_PREVIOUS` and `APPEARANCE_CAUSE`, its own process group, and a
/// timeout after which the group is stopped (SIGTERM, then SIGKILL 2 s later); children it leaves behind when
/// it exits are stopped too. Output goes to the daemon's log. Everything runs off the request path: a hook
/// never delays a reply or a notification.
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
    private let home: String
    /// Told when a round had failures (the daemon puts it in `log`).
    var onFailure: ((Outcome) -> Void)?
    var enabled = true
    var timeout: Double = 30
    /// The newest change not yet run: (mode, previous, cause).
    private var pending: (Mode, Mode?, String)?
    private var running = false
    /// The last finished round, for `status`.
    private(set) var last: Outcome?
    private var childSource: DispatchSourceSignal?
    private var current: Running?

    /// Confined to the daemon's queue, like the runner.
    private final class Running: @unchecked Sendable {
        let process: Spawned
        let name: String
        var output: [UInt8] = []
        var readSource: DispatchSourceRead?
        var timer: DispatchSourceTimer?
        var timedOut = false
        var exitStatus: ExitStatus?
        var outputClosed = false

        init(process: Spawned, name: String) {
            self.process = process
            self.name = name
        }
    }

    init(queue: DispatchQueue, log: Logger, home: String) {
        self.queue = queue
        self.log = log
        self.home = home
    }

    /// Listens for SIGCHLD. Done once, well before the first hook: a Dispatch signal source is armed
    /// asynchronously, and a child that exited before that would not be noticed by it.
    func prepare() {
        dispatchPrecondition(condition: .onQueue(queue))
        installChildSource()
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
        let env = { (name: String) in Posix.environment(name) }
        let dataHome = env("XDG_DATA_HOME") ?? home + "/.local/share"
        let dataDirs = (env("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        let configHome = env("XDG_CONFIG_HOME") ?? home + "/.config"
        let sub = mode == .dark ? "dark-mode.d" : "light-mode.d"
        var found: [String: (order: Int, path: String)] = [:]
        var own: [(String, String)] = []
        for name in Self.entries(configHome + "/appearanced/hooks.d") { own.append((name, configHome + "/appearanced/hooks.d/" + name)) }
        for dir in [dataHome] + dataDirs where dir.hasPrefix("/") {
            for name in Self.entries(dir + "/" + sub) where found[name] == nil {
                found[name] = (1, dir + "/" + sub + "/" + name)
            }
        }
        let all = own.map { (name: $0.0, path: $0.1, order: 0) } + found.map { (name: $0.key, path: $0.value.path, order: 1) }
        return all.sorted { ($0.name, $0.order) < ($1.name, $1.order) }.map { (name: $0.name, path: $0.path) }
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
        guard FileSystem.executableProblem(hook.path) == nil else { return .failure(HookError("not executable")) }
        installChildSource()
        let output: (read: Descriptor, write: Descriptor)
        do { output = try Descriptor.pipe() } catch { return .failure(HookError("\(error)")) }

        let environment = Posix.environmentEntries.filter { s in
            !["APPEARANCE=", "DARKMODE=", "APPEARANCE_PREVIOUS=", "APPEARANCE_CAUSE=", "NOTIFY_SOCKET=", "LISTEN_"].contains(where: s.hasPrefix)
        } + ["APPEARANCE=\(mode.rawValue)", "DARKMODE=\(mode.isDark ? 1 : 0)",
             "APPEARANCE_PREVIOUS=\(previous?.rawValue ?? "")", "APPEARANCE_CAUSE=\(cause)"]
        let spawned = Spawned.spawn([hook.path], environment: environment, stdin: .null,
                                    stdout: .descriptor(output.write), stderr: .descriptor(output.write), newProcessGroup: true)
        output.write.close()
        let process: Spawned
        switch spawned {
        case .success(let p): process = p
        case .failure(let e):
            output.read.close()
            return .failure(HookError("cannot run: \(e.message)", code: e.code))
        }

        let child = Running(process: process, name: hook.name)
        let readEnd = output.read
        readEnd.setNonBlocking()
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd.raw, queue: queue)
        // The source keeps the child's record until end of output (helpers may hold the pipe after it exits).
        source.setEventHandler { [weak self] in self?.readOutput(child, readEnd) }
        source.setCancelHandler { readEnd.close() }
        child.readSource = source
        source.resume()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + timeout)
        timer.setEventHandler { [weak self, weak child] in
            guard let self, let child else { return }
            self.timedOut(child)
        }
        child.timer = timer
        timer.resume()
        // A child that exits before SIGCHLD's source hears of it (right after start-up) is found here.
        queue.async { [weak self] in self?.reap() }
        return .success(child)
    }

    private func readOutput(_ child: Running, _ output: Descriptor) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let read: Int?
            do { read = try output.read(into: buffer) } catch { read = 0 }  // an error ends the output like end of file
            guard let n = read else { return }  // nothing more for now
            if n > 0 {
                child.output += buffer[..<n]
                flushLines(child, all: false)
                continue
            }
            // End of output: the hook and everything it started closed it.
            flushLines(child, all: true)
            child.readSource?.cancel()
            child.readSource = nil
            child.outputClosed = true
            return
        }
    }

    /// Each complete line of output goes to the log, at most 1,000 bytes of it (a hook cannot flood the log).
    private func flushLines(_ child: Running, all: Bool) {
        while let nl = child.output.firstIndex(of: 0x0A) {
            log.info("hook \(child.name): \(String(decoding: child.output[..<min(nl, 1000)], as: UTF8.self))")
            child.output.removeSubrange(...nl)
        }
        if child.output.count > 4096 || (all && !child.output.isEmpty) {
            log.info("hook \(child.name): \(String(decoding: child.output.prefix(1000), as: UTF8.self))")
            child.output = []
        }
    }

    private func timedOut(_ child: Running) {
        guard current === child, child.exitStatus == nil else { return }
        reap()  // it may have exited unheard
        guard current === child else { return }
        child.timedOut = true
        log.warning("hook \(child.name) did not finish within \(timeout) s; stopping it and its children")
        child.process.signalGroup(.terminate)
        queue.asyncAfter(deadline: .now() + 2) { [weak child] in
            guard let child else { return }
            child.process.signalGroup(.kill)
        }
    }

    private func installChildSource() {
        guard childSource == nil else { return }
        Signal.child.setDefault()
        let s = DispatchSource.makeSignalSource(signal: Signal.child.rawValue, queue: queue)
        s.setEventHandler { [weak self] in self?.reap() }
        s.resume()
        childSource = s
    }

    private func reap() {
        guard let child = current, child.exitStatus == nil else { return }
        guard let status = child.process.reap() else { return }
        child.exitStatus = status
        child.timer?.cancel()
        // Whatever it left running in its group is stopped: a hook's helpers do not outlive it.
        child.process.signalGroup(.terminate)
        let failed: String?
        if child.timedOut {
            failed = "timed out after \(timeout) s"
        } else {
            failed = status.succeeded ? nil : status.description
        }
        if let failed {
            log.warning("hook \(child.name) failed: \(failed)")
            round?.failures.append("\(child.name): \(failed)")
        } else {
            log.debug("hook \(child.name) done")
        }
        current = nil
        // Its output may still be draining; the next hook does not wait for that.
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
