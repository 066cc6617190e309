import AppearanceCore
import AppearanceFormats
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The integrations (docs/architecture.md): which are enabled (`integrations.json`), and their runs, one at a
/// time per integration. Confined to the daemon's queue.
final class Integrations: @unchecked Sendable {
    private let queue: DispatchQueue
    private let log: Logger
    private let finder: IntegrationFinder
    let file: String
    /// Where each integration keeps its own files (APPEARANCE_INTEGRATION_DIR): `integrations/NAME` next to it.
    private let filesRoot: String
    private let files: SmallFiles

    /// False in a trial instance (unless it runs hooks): nothing real is touched.
    var allowed = true
    var timeout: Double = 30
    /// `[integrations.NAME]` of the config.
    var settings: [String: [String: String]] = [:]
    private(set) var enabled: [String] = []
    private var last: [String: IntegrationInfo.Run] = [:]
    private var runs: [String: Int] = [:]
    /// The mode each one was last given (applied or under way).
    private var given: [String: Mode] = [:]
    private var running: Set<String> = []
    private var pending: [String: Job] = [:]

    enum Job {
        /// `enabling`: the first run after `integrations enable`; when it fails, the integration is left off.
        case apply(Mode, previous: Mode?, cause: String, enabling: Bool = false)
        /// `undoing`: after a failed first run, what it changed is restored and the failure is what is shown.
        case restore(undoing: Undo? = nil)
    }

    /// A failed first run after `enable`: its mode, why, and whether it ran (one not found or not trusted: no restore).
    typealias Undo = (mode: Mode, failure: String, ran: Bool)

    /// Names whose first run failed, on their way to being left off: not given the mode again meanwhile.
    private var leaving: Set<String> = []

    init(queue: DispatchQueue, log: Logger, paths: Paths, files: SmallFiles) {
        (self.files, self.queue, self.log) = (files, queue, log)
        finder = IntegrationFinder(paths: paths)
        let dir = FileSystem.directory(of: paths.stateFile)
        file = dir + "/integrations.json"
        filesRoot = dir + "/integrations"
    }

    // MARK: The list

    func appID(_ name: String) -> String { settings[name]?["app"] ?? name }

    /// What `integrations` answers: every one found, and every one enabled that is not found any more.
    func list() -> [IntegrationInfo] {
        let paths = finder.found()
        let names = Set(paths.keys).union(enabled)
        return names.sorted().map { name in
            IntegrationInfo(name: name, path: paths[name], enabled: enabled.contains(name), app: appID(name),
                            runs: runs[name] ?? 0, last: last[name])
        }
    }

    /// For `status`: "2 enabled (kitty, neovim): ok", or the failures.
    var statusDetail: String {
        guard !enabled.isEmpty else { return "none enabled" }
        let failed = enabled.compactMap { name in last[name].flatMap { $0.ok ? nil : "\(name): \($0.result)" } }
        let names = "\(enabled.count) enabled (\(enabled.joined(separator: ", ")))"
        if !allowed { return names + ": not run (trial instance without --hooks)" }
        return names + (failed.isEmpty ? (running.isEmpty ? ": ok" : ": running") : ": failed: " + failed.joined(separator: "; "))
    }

    // MARK: The enabled set

    /// Reads `integrations.json`; a file that cannot be used is kept aside (nothing enabled).
    func load() {
        let bytes: [UInt8]
        do { bytes = try FileSystem.readAll(file, limit: 64 * 1024) } catch where error.code == Errno.noSuchFile { return } catch {
            return log.error("cannot read \(file): \(error.message); no integration enabled")
        }
        guard case .array(let items)? = (try? JSON.parse(bytes))?["enabled"],
              case let names = items.compactMap(\.stringValue), names.count == items.count, names.allSatisfy(IntegrationName.isValid) else {
            let kept = try? FileSystem.moveAside(file)
            return log.error("\(file) is not a valid integrations file (expected {\"enabled\": [names]}); "
                + (kept.map { "kept it as \($0); " } ?? "") + "no integration enabled")
        }
        enabled = Array(Set(names)).sorted()
    }

    /// A change of the enabled set a client asked for, waiting for its turn to be saved.
    private struct Change {
        var enable: [String]
        var disable: [String]
        /// Seconds the answer may wait for the runs the change starts (`"wait"`); nil: answered once saved.
        var wait: Int? = nil
        /// The names among `disable` left off after a failed first run.
        var undo: [String: Undo] = [:]
        var mode: (String) -> Mode
        var answer: (Result<[IntegrationInfo], RPCError>) -> Void
    }
    private var changes: [Change] = []
    private var saving: (change: Change, next: [String], newly: [String], dropped: [String])?

    /// Enables and disables names (an unknown one refused), saved one change at a time in the order they came,
    /// then answers with the list: at once, or with `wait` once the runs it started have ended (or at `wait` s).
    func change(enable: [String], disable: [String], wait: Int? = nil, mode: @escaping (String) -> Mode,
                answer: @escaping (Result<[IntegrationInfo], RPCError>) -> Void) {
        changes.append(Change(enable: enable, disable: disable, wait: wait, mode: mode, answer: answer))
        if saving == nil { nextChange() }
    }

    private func nextChange() {
        guard !changes.isEmpty else { return }
        let c = changes.removeFirst()
        // One disabled meanwhile is off already (and its restore under way).
        for name in c.undo.keys where !enabled.contains(name) { leaving.remove(name) }
        settle()
        let paths = finder.found()
        if let unknown = c.enable.first(where: { paths[$0] == nil }) {
            let known = paths.keys.sorted().joined(separator: ", ")
            c.answer(.failure(RPCError(.invalidParams, "integrations: no integration named \"\(unknown)\" (found: \(known.isEmpty ? "none" : known); "
                + "searched \(finder.directories().joined(separator: ", ")))" + (known.isEmpty ? "; \(IntegrationName.howToGet)" : ""))))
            return nextChange()
        }
        if let unknown = c.disable.first(where: { !enabled.contains($0) && paths[$0] == nil }) {
            c.answer(.failure(RPCError(.invalidParams, "integrations: no integration named \"\(unknown)\" is enabled or found")))
            return nextChange()
        }
        let newly = c.enable.filter { !enabled.contains($0) }
        let dropped = c.disable.filter { enabled.contains($0) }
        guard !newly.isEmpty || !dropped.isEmpty else { c.answer(.success(list())); return nextChange() }
        let next = Set(enabled).union(newly).subtracting(dropped).sorted()
        saving = (c, next, newly, dropped)
        let bytes = JSON.object([("enabled", .array(next.map(JSON.string)))]).bytes + [0x0A]
        files.write(file, bytes) { [weak self] failure in self?.saved(failure) }
    }

    private func saved(_ failure: Errno?) {
        guard let (c, next, newly, dropped) = saving else { return }
        saving = nil
        if let failure {
            for name in c.undo.keys { leaving.remove(name) }
            settle()
            c.answer(.failure(RPCError(.requestFailed, "could not save \(file) (\(failure)); nothing was changed")))
            return nextChange()
        }
        enabled = next
        for name in dropped {
            given[name] = nil
            leaving.remove(name)
            if let undo = c.undo[name], !undo.ran {
                record(name, action: "apply", mode: undo.mode, result: undo.failure + "; left off")
            } else {
                schedule(name, .restore(undoing: c.undo[name]))
            }
        }
        for name in newly {
            let m = c.mode(appID(name))
            given[name] = m
            schedule(name, .apply(m, previous: nil, cause: "integration enabled", enabling: true))
        }
        log.info("integrations: " + [newly.isEmpty ? nil : "enabled " + newly.joined(separator: ", "),
                                     dropped.isEmpty ? nil : "disabled " + dropped.joined(separator: ", ")].compactMap { $0 }.joined(separator: "; "))
        // One left off without a run (its first run refused) is idle now: an answer held for it goes out.
        settle()
        if let wait = c.wait { hold(newly + dropped, seconds: wait, c.answer) } else { c.answer(.success(list())) }
        nextChange()
    }

    // MARK: Running

    /// Runs each enabled integration whose app's mode is not the one it was given (with `all`: every one).
    func refresh(mode: (String) -> Mode, cause: String, all: Bool = false) {
        for name in enabled where !leaving.contains(name) {
            let m = mode(appID(name))
            guard all || given[name] != m else { continue }
            let previous = given[name]
            given[name] = m
            schedule(name, .apply(m, previous: previous, cause: cause))
        }
    }

    private func schedule(_ name: String, _ job: Job) {
        guard allowed else { return }
        var job = job
        // A newer mode for a first run not started yet is still the first run.
        if case .apply(let m, let previous, let cause, false) = job, case .apply(_, _, _, true)? = pending[name] {
            job = .apply(m, previous: previous, cause: cause, enabling: true)
        }
        pending[name] = job
        if !running.contains(name) { runNext(name) }
    }

    private func runNext(_ name: String) {
        guard let job = pending.removeValue(forKey: name) else {
            running.remove(name)
            settle()
            return
        }
        guard let path = finder.path(of: name) else {
            return finish(name, job, "not found in \(finder.directories().joined(separator: ", "))", ran: false)
        }
        // Nothing runs that another user could have written (the check appearancectl integrations makes too).
        if let problem = Trust.integrationProblem(path) { return finish(name, job, problem + "; not run", ran: false) }
        running.insert(name)
        let own = filesRoot + "/" + name
        try? FileSystem.makeDirectories(own)
        var variables = ["APPEARANCE_APP=\(appID(name))", "APPEARANCE_INTEGRATION_DIR=\(own)"]
        for (key, value) in (settings[name] ?? [:]).sorted(by: { $0.key < $1.key }) where key != "app" {
            variables.append("APPEARANCE_OPT_" + String(key.uppercased().map { $0 == "-" ? "_" : $0 }) + "=" + value)
        }
        var argv = [path, "restore"]
        if case .apply(let mode, let previous, let cause, _) = job {
            argv[1] = "apply"
            variables += ChildRunner.modeVariables(mode, previous, cause)
        }
        let failure = ChildRunner.job(argv, who: "integration \(name)", variables: variables,
                                      timeout: timeout, keep: 4096, log: log, queue: queue) { [weak self] failed in
            self?.finish(name, job, failed ?? "ok")
        }
        if let failure { finish(name, job, "cannot run \(path): \(failure.message)", ran: false) }
    }

    private func finish(_ name: String, _ job: Job, _ result: String, ran: Bool = true) {
        switch job {
        case .apply(let m, _, _, true) where result != "ok":
            // The first run after enable failed: left off (saved like any change), what it changed restored; its failure shown.
            log.warning("integration \(name) apply failed: \(result); left off")
            leaving.insert(name)
            given[name] = nil
            if case .apply? = pending[name] { pending[name] = nil }  // a newer mode for it: it is left off instead
            changes.append(Change(enable: [], disable: [name], undo: [name: (m, result, ran)], mode: { _ in m },
                                  answer: { [log] in if case .failure(let e) = $0 { log.error("integration \(name) stays enabled: \(e.message)") } }))
            if saving == nil { nextChange() }
        case .apply(let m, _, _, _):
            record(name, action: "apply", mode: m, result: result)
            if result != "ok" {
                log.warning("integration \(name) apply failed: \(result)")
                given[name] = nil  // not given after all: the next change (or a reload) tries again
            } else {
                log.debug("integration \(name) apply done (\(m.rawValue))")
            }
        case .restore(let undo?):
            let restored = result == "ok" ? " (what it changed is restored)" : " (and restoring what it changed failed: \(result))"
            record(name, action: "apply", mode: undo.mode, result: undo.failure + "; left off" + restored)
        case .restore(nil):
            record(name, action: "restore", mode: nil, result: result)
            if result != "ok" { log.warning("integration \(name) restore failed: \(result)") } else { log.debug("integration \(name) restore done") }
        }
        runNext(name)
    }

    // MARK: Answers that wait for the runs (`"wait"`)

    /// Answers held until none of their names has a run under way, pending or leaving, or until their timer fires.
    private var held: [(id: Int, names: [String], timer: DispatchSourceTimer, answer: (Result<[IntegrationInfo], RPCError>) -> Void)] = []
    private var holds = 0

    private func busy(_ name: String) -> Bool { running.contains(name) || pending[name] != nil || leaving.contains(name) }

    private func hold(_ names: [String], seconds: Int, _ answer: @escaping (Result<[IntegrationInfo], RPCError>) -> Void) {
        holds += 1
        let id = holds, timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .seconds(seconds))
        timer.setEventHandler { [weak self] in self?.release(id) }
        held.append((id, names, timer, answer))
        timer.resume()
        settle()
    }

    /// Answers every held answer whose integrations are all idle: called wherever one may have become so.
    private func settle() { for h in held where !h.names.contains(where: busy) { release(h.id) } }

    /// Answers a held answer with the list as it is now (its runs' results in `last`), once.
    private func release(_ id: Int) {
        guard let i = held.firstIndex(where: { $0.id == id }) else { return }
        let h = held.remove(at: i)
        h.timer.cancel()
        h.answer(.success(list()))
    }

    /// A finished run, as `status` and `integrations` show it.
    private func record(_ name: String, action: String, mode: Mode?, result: String) {
        last[name] = .init(time: Posix.wallClockSeconds(), action: action, mode: mode, result: result)
        runs[name, default: 0] += 1
    }
}
