import AppearanceCore
import AppearanceDecide
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The daemon: wires its parts together (docs/architecture.md) and owns the engine, on one serial queue.
public final class Daemon: @unchecked Sendable {
    public static let version = packageVersion

    let queue: DispatchQueue
    let paths: Paths
    let log: Logger
    let clock = Clock()
    private let sentry: Sentry
    let logLevelOption: LogLevel?
    let store: StateStore
    var engine: Engine { didSet { persistence.engineChanged() } }
    /// What the portal backend serves now, when there is one.
    var outletStatus: OutletStatus?
    /// What the D-Bus service serves now, when there is one (`status`).
    var serviceDetail: String?
    /// The sentry's last reading as it came, before the outlet's own keys are taken out of it.
    var sentryReading: SystemReading?
    let settings: Settings
    let clients: Clients
    /// The writer of the files beside state.json; flushed at a clean stop.
    private let files: SmallFiles
    let persistence: Persistence
    let publisher: Publisher
    let timers: Timers
    let location: LocationTracker
    let sensors: SensorsInput
    var integrations: Integrations { publisher.integrations }
    let notices: Notices
    private var signalSources: [DispatchSourceSignal] = []
    /// The palette file watched and its source (`watchPalette`).
    var paletteWatch: (path: String, source: DispatchSourceRead)?
    /// The state folder, held while the daemon runs (`holdStateFolder`).
    private var stateFolderLock: Descriptor?

    /// How long client requests wait for the first system reading at start-up before being answered anyway.
    static let firstReadingGrace: DispatchTimeInterval = .seconds(3)

    public init(paths: Paths, logLevelOption: LogLevel?, sentry: Sentry, outlet: Outlet? = nil, services: [BusService] = [],
                locator: Locator? = nil, sensors: Sensors? = nil, notifier: Notifier? = nil, queue: DispatchQueue, logger: Logger) {
        (self.paths, self.logLevelOption, self.sentry, self.queue, self.log) = (paths, logLevelOption, sentry, queue, logger)
        let store = StateStore(path: paths.stateFile)
        self.store = store
        settings = Settings(paths: paths, log: logger)
        clients = Clients(queue: queue, log: logger, clock: clock)
        persistence = Persistence(queue: queue, saved: StateStore.Saved(override: .system)) { saved throws(Errno) in try store.save(saved) }
        files = SmallFiles(daemonQueue: queue)
        publisher = Publisher(clients: clients, hooks: HookRunner(queue: queue, log: logger, paths: paths),
                              integrations: Integrations(queue: queue, log: logger, paths: paths, files: files),
                              follower: DesktopFollower(queue: queue, log: logger, files: files), outlet: outlet, log: logger, clock: clock)
        timers = Timers(queue: queue, clock: clock)
        location = LocationTracker(queue: queue, log: logger, clock: clock, stateFile: paths.stateFile, locator: locator, files: files)
        notices = Notices(notifier: notifier)
        self.sensors = SensorsInput(sensors: sensors, queue: queue)
        publisher.services = services
        engine = Engine(inputs: Inputs(system: .unavailable, override: .system, defaultMode: .light),
                        instance: Self.makeInstanceID(), systemDetail: "not read yet")
        wire()
    }

    /// Who tells whom; weakly, as a daemon made in a test process may be gone when a source or a child reports.
    private func wire() {
        clients.onLine = { [weak self] c, line in self?.handle(line, from: c) }
        persistence.engine = { [weak self] in self?.engine ?? Engine(inputs: Inputs(system: .unavailable, override: .system, defaultMode: .light), instance: "") }
        persistence.onDurable = { [weak self] batch in self?.durable(batch) }
        persistence.onFailed = { [weak self] refused, error in self?.saveFailed(refused, error) }
        timers.onScheduleDue = { [weak self] in self?.planSchedule() }
        location.onChange = { [weak self] in self?.planSchedule() }
        timers.onTemporaryDue = { [weak self] end in self?.temporaryTimeCame(end) }
        timers.onNoticeDue = { [weak self] in self?.updateNotice() }
    }

    /// Loads config and state, binds the socket and starts watching, on `queue` (`signals: false` in a test process).
    public func start(signals: Bool = true) throws(StartupError) {
        do {
            try settings.loadConfig(fallback: "using the defaults until it is fixed")
        } catch {
            // A file named on the command line that is not there is a mistake in the command: no start.
            if paths.configExplicit, error.line == nil, error.message == "does not exist" {
                throw StartupError("config file \(paths.configFile) does not exist", exitCode: 78)
            }
            // A mistake in the file does not stop the daemon: it serves the defaults, and log and `status` say why.
            log.error("\(error); using the defaults until it is fixed (then reload: SIGHUP, or systemctl --user reload appearanced)")
        }
        let config = settings.config
        log.level = logLevelOption ?? config.logLevel ?? .info
        if let w = paths.socket.warning { log.warning(w) }
        settings.loadPalette()
        watchPalette()
        clients.maxConnections = config.maxConnections
        // The socket first (a second start of this instance says so), then the state folder (another instance).
        let stateFolder = FileSystem.directory(of: paths.stateFile)
        try? FileSystem.makeDirectories(stateFolder)  // a trial's socket is in it; what fails is said below
        let listener = try clients.listen(paths.socket)
        do { stateFolderLock = try Self.holdStateFolder(paths, log: log) } catch {
            clients.closeAll()
            throw error
        }
        // The status file only goes in appearanced's own directory (the default socket's, 0700 and ours).
        if paths.socket.ownsDirectory, listener.path == paths.socket.path {
            publisher.modeFile = ModeFile(path: FileSystem.directory(of: listener.path) + "/mode")
        } else {
            log.info("no status file: \(listener.path) is not in appearanced's own directory")
        }
        let saved = loadState()
        publisher.follower.remember(in: stateFolder + "/desktop.json")
        integrations.load()
        integrations.allowed = !paths.trial || paths.trialHooks
        publisher.openChangeLog(paths.changeLogFile, queue: queue, files: files)
        var temporary = saved.temporary
        if case .at(let t)? = temporary?.expiry, t <= clock.now() { temporary = nil }  // ended while the daemon was away
        var inputs = Inputs(system: .unavailable, override: saved.override, defaultMode: config.defaultMode, temporary: temporary)
        (inputs.apps, inputs.nextChange) = (saved.apps, saved.nextChange)
        engine = Engine(inputs: inputs, instance: engine.state.instance, systemDetail: "not read yet")
        timers.armTemporary(engine.inputs.temporary?.expiry)
        persistence.persistIfNeeded()

        if signals { installSignals() }
        ChildRunner.prepare()  // SIGCHLD heard well before the first hook
        log.info("listening on \(listener.path) (override: \(saved.override.rawValue), state: \(paths.stateFile))")

        // The outlet first: it decides whether the portal's color-scheme is ours before anything is read.
        publisher.outlet?.start(policy: config.portalBackend) { [weak self] status in self?.outletChanged(status) }
        // The schedule once it is known whether it ranks above the desktop (it does while following it).
        publisher.follower.configure(config.desktop, portalServed: outletStatus?.serving ?? false)
        planSchedule()
        timers.watchClock(tz: Posix.environment("TZ"), changed: { [weak self] why in self?.clockChanged(why) },
                          failed: { [log] in log.warning($0) })
        publisher.outlet?.publish(Publisher.served(engine, settings.palette))
        // The D-Bus services answer from the published state and write through `write` as the socket does.
        let requests = DaemonRequests(self)
        for service in publisher.services {
            service.start(BusServiceOptions(darkman: config.darkmanDBus), state: engine.state, requests: requests) { [weak self] detail in self?.serviceDetail = detail }
        }
        notices.notifier?.start { [weak self] report in self?.noticeReport(report) }
        // Connections wait in the backlog until the first reading, so the first `get` is already right.
        sentry.start { [weak self] reading in self?.systemReading(reading) }
        queue.asyncAfter(deadline: .now() + Self.firstReadingGrace) { [weak self] in self?.serve() }
    }

    /// Takes the state folder for this instance's lifetime (flock): two instances never share one, nor a trial
    /// the session's. One that cannot be opened is no reason not to serve (the saves report it): nil then.
    static func holdStateFolder(_ paths: Paths, log: Logger) throws(StartupError) -> Descriptor? {
        let dir = FileSystem.directory(of: paths.stateFile)
        if paths.trial, dir == paths.sessionStateDirectory
            || (try? FileSystem.status(dir).version.sameFile(as: FileSystem.status(paths.sessionStateDirectory).version)) == true {
            throw StartupError("--state-dir \(dir) is the session daemon's own state folder: a trial instance keeps its state "
                + "in a folder of its own (T=$(mktemp -d); appearanced --state-dir $T)", exitCode: 64)
        }
        let fd: Descriptor
        do {
            fd = try Descriptor.open(dir, [.readOnly, .directory])
        } catch {
            log.warning("cannot hold the state folder \(dir) (\(error.message)): another instance could use it too")
            return nil
        }
        guard (try? fd.tryLock()) != false else {
            throw StartupError("another appearanced instance uses the state folder \(dir); stop it first, or give this one "
                + "a folder of its own (--state-dir)")
        }
        return fd
    }

    /// The state file as the last instance left it (its temporary files removed; one that cannot be used kept aside).
    private func loadState() -> StateStore.Saved {
        let leftovers = FileSystem.removeLeftovers(of: paths.stateFile)
        if leftovers > 0 { log.info("removed \(leftovers) temporary file\(leftovers == 1 ? "" : "s") a stopped instance left next to \(paths.stateFile)") }
        switch store.load() {
        case .missing: return persistence.saved
        case .loaded(let s):
            for note in s.dropped { log.warning(note) }  // what was left out (the next save writes the file clean)
            persistence.restore(s)
            return s
        case .discarded(let problem, let kept):
            log.error("\(problem); " + (kept.map { "kept it as \($0); " } ?? "could not move it aside; ") + "following the system")
            return persistence.saved
        }
    }

    func serve() {
        guard !publisher.serving else { return }
        publisher.serving = true
        let s = engine.state
        publisher.started(s, describe())
        configureHooks()
        publisher.hooks.changed(to: s.mode, from: nil, cause: "start")
        publisher.followDesktop(Transition(state: s, previous: s), engine: engine)  // gives back what a stop kept
        integrations.refresh(mode: modeOf, cause: "start", all: true)
        clients.startAccepting()
        publisher.writeModeFile(s.mode)
        publisher.updateStatus(describe())
        updateNotice()
        // The start-up's code is done with (docs/decisions.md, "Idle memory").
        if !Self.keepStartupPages { Posix.releaseCodePages() }
    }

    /// `APPEARANCED_KEEP_STARTUP_PAGES=1`: keep them, for the benchmark's side-by-side figure.
    static let keepStartupPages = Posix.environment("APPEARANCED_KEEP_STARTUP_PAGES") == "1"

    /// For systemd's STATUS=: "dark (system, portal v1)", "light (override)", "dark (schedule: sunset)".
    func describe() -> String {
        let s = engine.state
        let detail = s.source == .system || s.source == .default ? ", \(engine.systemDetail)" : ""
        return "\(s.mode.rawValue) (\(s.source.rawValue)\(detail))"
    }

    /// Performs transitions' effects (Publisher.swift), then saves what they changed of the state file.
    func publish(_ steps: [Decide.Step]) {
        publisher.publish(steps, engine: engine, palette: settings.palette, status: describe())
        persistence.persistIfNeeded()
        updateNotice()
        syncLightClaim()
    }

    func configureHooks() {
        publisher.hooks.enabled = settings.config.hooks
        publisher.hooks.timeout = settings.config.hookTimeout
        integrations.settings = settings.config.integrations
        integrations.timeout = settings.config.hookTimeout
    }

    /// The mode an app id has now (an integration's).
    func modeOf(_ app: String) -> Mode { engine.state(for: app).mode }

    // MARK: Signals

    private func installSignals() {
        for (sig, action) in [(Signal.terminate, shutdown), (.interrupt, shutdown), (.hangUp, { _ = self.reload() })] as [(Signal, () -> Void)] {
            sig.ignore()
            let s = DispatchSource.makeSignalSource(signal: sig.rawValue, queue: queue)
            s.setEventHandler(handler: action)
            s.resume()
            signalSources.append(s)
        }
        Signal.pipe.ignore()
    }

    private func shutdown() {
        guard !notices.stopping else { return }
        log.info("stopping")
        Systemd.notify("STOPPING=1")
        // The notice first, before the sentry closes the bus it is sent on; the daemon serves as before meanwhile.
        closeNotice { [self] in
            publisher.stop()
            // integrations.json, location.json, desktop.json and log.jsonl as last written; a stuck disk does not hold the stop.
            if !files.flush(within: 5) { log.warning("the files beside \(paths.stateFile) were still being written after 5 s; stopping anyway") }
            sentry.stop()
            clients.closeAll()
            Posix.exit(0)
        }
    }

    private static func makeInstanceID() -> String {
        let hex = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
