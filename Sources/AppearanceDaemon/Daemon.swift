import AppearanceCore
import AppearanceDecide
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The daemon shell: owns the engine and performs its effects. Everything runs on one serial queue,
/// driven by Dispatch sources (listening socket, clients, signals) and the sentry's reports; when nothing
/// happens, nothing runs.
public final class Daemon: @unchecked Sendable {
    public static let version = packageVersion

    private let queue: DispatchQueue
    private let paths: Paths
    private let log: Logger
    private let sentry: Sentry
    /// The portal backend, when there is one: what it serves, the daemon never reads back as the desktop's.
    private let outlet: Outlet?
    private var outletStatus: OutletStatus?
    /// The sentry's last reading as it came, before the outlet's own keys are taken out of it.
    private var sentryReading: SystemReading?
    private let logLevelOption: LogLevel?
    private let store: StateStore
    private var config = Config()
    private var engine: Engine {
        didSet { decidingCache = nil }
    }
    /// The palette in force, and what `status` says about it. A palette that cannot be read leaves the
    /// previous one in force (at start-up: the empty palette).
    private var palette = Palette.empty
    private var paletteDetail = "not read yet"
    /// The config file and how it was read, for `status`.
    private var configDetail = "not read yet"
    private var listener: Listener?
    private var acceptSource: DispatchSourceRead?
    private var signalSources: [DispatchSourceSignal] = []
    private var connections: [UInt64: Connection] = [:]
    private var nextConnectionID: UInt64 = 0
    private var subscriberCount = 0
    private var peakConnections = 0
    /// Bytes of unhandled requests across all connections (each holds at most one unfinished line).
    private var bufferedInput = 0
    private var lastRefusalLog: Int64 = 0

    /// All connections together may hold this much of unfinished requests; past it, the connection holding
    /// the most is closed with an error (20,000 clients each holding a 64 KiB unfinished line would be 1.3 GB).
    static let inputBudget = 16 << 20
    /// Connections beyond this are refused with an error (config `max-connections`; by default the
    /// descriptor limit less 64 for the daemon's own files, the bus and hooks).
    private var connectionCap: Int {
        if let c = config.maxConnections { return c }
        return max(16, Int(min(Posix.fileLimit, 1 << 20)) - 64)
    }
    private var serving = false
    /// `mode` next to the socket: "dark" or "light", for prompts that want no IPC at all.
    private var modeFile = ""
    private var statusText = ""
    private let uid = Posix.userID
    private let clock = Clock()
    /// The schedule's current plan (for `status`) and the one-shot timer for its next change.
    private var schedulePlan: Schedule.Plan?
    private var scheduleTimer: DispatchSourceTimer?
    /// The one-shot timer that ends a temporary override `--for` a time.
    private var temporaryTimer: DispatchSourceTimer?
    /// What the state file holds, so that an override that ended by itself is written out once.
    private var saved = StateStore.Saved(override: .system)
    /// Group commit: changes clients asked for, accepted but not yet durable. Their replies and notifications
    /// wait for the save that covers them; what arrives while a save runs goes into the next single save.
    private var unsaved: [PendingWrite] = []
    /// The changes the save in flight covers (nil: no save running).
    private var inFlight: [PendingWrite]?
    /// Saves run here, so the daemon's queue serves reads and notifications meanwhile.
    private let storeQueue = DispatchQueue(label: "appearanced.store")
    /// `engine` with every accepted change applied, which new requests are decided on; rebuilt when the
    /// engine changes.
    private var decidingCache: Engine?
    private var transitions = TransitionLog()
    private lazy var follower: DesktopFollower = {
        let f = DesktopFollower(queue: queue, log: log)
        f.onWritten = { [unowned self] _, result in
            let s = self.engine.state
            self.transitions.append(.init(time: self.clock.now(), from: s.mode, to: s.mode, source: s.source, cause: "desktop written: \(result)"))
        }
        return f
    }()
    private lazy var hooks: HookRunner = {
        let h = HookRunner(queue: queue, log: log, home: paths.home)
        h.onFailure = { [unowned self] outcome in
            self.transitions.append(.init(time: outcome.time, from: outcome.mode, to: outcome.mode, source: self.engine.state.source,
                                          cause: "hooks for \(outcome.mode.rawValue) failed: " + outcome.failures.joined(separator: "; ")))
        }
        return h
    }()

    /// How long client requests wait for the first system reading at start-up before being answered anyway.
    static let firstReadingGrace: DispatchTimeInterval = .seconds(3)

    public init(paths: Paths, logLevelOption: LogLevel?, sentry: Sentry, outlet: Outlet? = nil, queue: DispatchQueue,
                logger: Logger) {
        self.paths = paths
        self.logLevelOption = logLevelOption
        self.sentry = sentry
        self.outlet = outlet
        self.queue = queue
        self.log = logger
        self.store = StateStore(path: paths.stateFile)
        engine = Engine(inputs: Inputs(system: .unavailable, override: .system, defaultMode: .light),
                        instance: Self.makeInstanceID(), systemDetail: "not read yet")
    }

    /// Loads config and state, binds the socket and starts watching. Call on `queue`.
    public func start() throws(StartupError) {
        do {
            config = try loadConfig(fallback: "using the defaults until it is fixed")
        } catch {
            // A file named on the command line that is not there is a mistake in the command: no start.
            if paths.configExplicit, error.line == nil, error.message == "does not exist" {
                throw StartupError("config file \(paths.configFile) does not exist", exitCode: 78)
            }
            // A mistake in the file does not stop the daemon (systemd would restart it in a loop and every
            // client would only hear "not running"): it serves with the defaults, and the log and `status`
            // name the file, line and problem, as a reload with the same mistake does.
            log.error("\(error); using the defaults until it is fixed (then reload: SIGHUP, or systemctl --user reload appearanced)")
            config = Config()
        }
        log.level = logLevelOption ?? config.logLevel ?? .info
        if let w = paths.socket.warning { log.warning(w) }
        loadPalette()
        let listener: Listener
        if let fd = try Systemd.activatedSocket() {
            listener = Listener.adopt(fd, location: paths.socket)
        } else {
            listener = try Listener.open(paths.socket)
        }
        self.listener = listener
        // The status file only goes in appearanced's own directory (the default socket's, 0700 and ours): a
        // socket named with --socket or APPEARANCED_SOCKET may sit in a directory with files of the user's.
        if paths.socket.ownsDirectory, listener.path == paths.socket.path {
            modeFile = FileSystem.directory(of: listener.path) + "/mode"
        } else {
            log.info("no status file: \(listener.path) is not in appearanced's own directory")
        }

        let leftovers = FileSystem.removeLeftovers(of: paths.stateFile)
        if leftovers > 0 { log.info("removed \(leftovers) temporary file\(leftovers == 1 ? "" : "s") a stopped instance left next to \(paths.stateFile)") }
        switch store.load() {
        case .missing: break
        case .loaded(let s): saved = s
        case .discarded(let problem, let kept):
            log.error("\(problem); " + (kept.map { "kept it as \($0); " } ?? "could not move it aside; ") + "following the system")
        }
        let override = saved.override
        var temporary = saved.temporary
        if case .at(let t)? = temporary?.expiry, t <= clock.now() { temporary = nil }  // ended while the daemon was away
        var inputs = Inputs(system: .unavailable, override: override, defaultMode: config.defaultMode, temporary: temporary)
        inputs.apps = saved.apps
        engine = Engine(inputs: inputs,
                        instance: engine.state.instance, systemDetail: "not read yet")
        armTemporaryTimer()
        persistIfNeeded()

        installSignals()
        hooks.prepare()
        log.info("listening on \(listener.path) (override: \(override.rawValue), state: \(paths.stateFile))")

        // The outlet first: it decides whether the portal's color-scheme is ours before anything is read.
        outlet?.start(policy: config.portalBackend) { [unowned self] status in self.outletChanged(status) }
        // The schedule once it is known whether it ranks above the desktop (it does while following it).
        follower.configure(config.desktop, portalServed: outletStatus?.serving ?? false)
        planSchedule()
        outlet?.publish(servedValues)
        // Connections wait in the backlog until the first reading, so the first `get` is already right.
        sentry.start { [unowned self] reading in self.systemReading(reading) }
        queue.asyncAfter(deadline: .now() + Self.firstReadingGrace) { [weak self] in self?.serve() }
    }

    private func serve() {
        guard !serving else { return }
        serving = true
        let s = engine.state
        transitions.append(.init(time: clock.now(), from: nil, to: s.mode, source: s.source, cause: "start: \(describe())"))
        configureHooks()
        hooks.changed(to: s.mode, from: nil, cause: "start")
        startAccepting()
        writeModeFile()
        statusText = describe()
        Systemd.notify("READY=1\nSTATUS=\(statusText)")
    }

    /// For systemd's STATUS=: "dark (system, portal v1)", "light (override)", "dark (schedule: sunset)".
    private func describe() -> String {
        let s = engine.state
        return switch s.source {
        case .override, .temporary, .app: "\(s.mode.rawValue) (\(s.source.rawValue))"
        case .schedule: "\(s.mode.rawValue) (schedule)"
        case .system, .default: "\(s.mode.rawValue) (\(s.source.rawValue), \(engine.systemDetail))"
        }
    }

    // MARK: Schedule and temporary overrides

    /// Plans the schedule from now: applies what it says and sets one timer for its next change.
    /// Called at start, when the timer fires, on SIGHUP, and on resume from suspend (`clockChanged()`).
    private func planSchedule() {
        scheduleTimer?.cancel()
        scheduleTimer = nil
        let now = clock.now()
        schedulePlan = config.schedule.plan(now: now, days: Clock.localDays(around: now))
        // While appearanced drives the desktop's setting, the schedule decides before the desktop's value.
        if let t = engine.apply(.schedule(schedulePlan?.mode, aboveDesktop: config.schedule.aboveDesktop || follower.kind != nil)) {
            publish(t, cause: "schedule: \(scheduleCause(at: now))")
        }
        guard let plan = schedulePlan else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(wallDeadline: clock.deadline(for: plan.replanAt))
        timer.setEventHandler { [weak self] in self?.planSchedule() }
        timer.resume()
        scheduleTimer = timer
    }

    /// The event that made the schedule's current mode ("sunset", "dark-at", "polar night").
    private func scheduleCause(at now: Int64) -> String {
        let events = config.schedule.events(on: Clock.localDays(around: now))
        return events.last { $0.time <= now }?.cause ?? "planned"
    }

    /// What `status` says of the schedule.
    private var scheduleDetail: String? {
        guard let plan = schedulePlan else { return nil }
        let now = clock.now()
        guard let next = plan.next else { return "\(plan.mode.rawValue) (no change in the next days: polar day or night)" }
        return "\(plan.mode.rawValue) until \(Clock.describe(next.time, from: now)) (\(next.cause): \(next.mode.rawValue))"
    }

    private func configureHooks() {
        hooks.enabled = config.hooks
        hooks.timeout = config.hookTimeout
    }

    /// A one-shot timer for a temporary override's end, if it has a time.
    private func armTemporaryTimer() {
        temporaryTimer?.cancel()
        temporaryTimer = nil
        guard case .at(let end)? = engine.inputs.temporary?.expiry else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(wallDeadline: clock.deadline(for: end))
        timer.setEventHandler { [weak self] in self?.temporaryTimeCame(end) }
        timer.resume()
        temporaryTimer = timer
    }

    private func temporaryTimeCame(_ end: Int64) {
        guard case .at(let t)? = engine.inputs.temporary?.expiry, t == end else { return }
        guard let ended = Decide.temporaryTimeCame(end, on: engine, now: clock.now()) else {
            armTemporaryTimer()  // fired early: the clock was set back
            return
        }
        temporaryTimer = nil
        if let t = engine.apply(ended) { publish(t, cause: "temporary override ended (its time came)") }
    }

    /// The clock may have jumped (resume from suspend, a clock or time-zone change): plan again now.
    public func clockChanged(_ why: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        log.info("\(why): planning the schedule again")
        planSchedule()
        if case .at(let end)? = engine.inputs.temporary?.expiry, clock.now() >= end {
            temporaryTimeCame(end)
        } else {
            armTemporaryTimer()
        }
    }

    /// When the engine's inputs differ from the state file (a temporary override ended, or a flip in the
    /// desktop started one) and no save is queued, a save writes them.
    private func persistIfNeeded() {
        guard inFlight == nil, unsaved.isEmpty else { return }  // the next save writes the engine's inputs anyway
        let i = engine.inputs
        guard saved.override != i.override || saved.temporary != i.temporary || saved.apps != i.apps else { return }
        startSave()  // an empty batch: the save writes the engine's inputs
    }

    private func updateStatus() {
        guard serving else { return }
        let text = describe()
        if text != statusText {
            statusText = text
            Systemd.notify("STATUS=\(text)")
        }
    }

    private func writeModeFile() {
        guard !modeFile.isEmpty else { return }
        do {
            try FileSystem.writeAtomically(modeFile, Array("\(engine.state.mode.rawValue)\n".utf8), permissions: 0o644, durable: false)
        } catch {
            log.warning("Failed to write \(modeFile): \(error), ignoring")
        }
    }

    /// Reads the config file (none: the defaults). A file that cannot be used throws, and `configDetail` says
    /// why and what is in force instead (`fallback`).
    private func loadConfig(fallback: String) throws(ConfigError) -> Config {
        do {
            if let c = try Config.load(path: paths.configFile) {
                configDetail = paths.configFile
                return c
            }
        } catch {
            configDetail = "\(paths.configFile): not used, \(error.message)\(error.line.map { " (line \($0))" } ?? ""); \(fallback)"
            throw error
        }
        if paths.configExplicit {
            configDetail = "\(paths.configFile): does not exist; \(fallback)"
            throw ConfigError(path: paths.configFile, message: "does not exist")
        }
        configDetail = "\(paths.configFile): no such file (the defaults)"
        return Config()
    }

    /// Reads the palette the config names. Returns true when the palette in force changed.
    @discardableResult
    private func loadPalette() -> Bool {
        let path = paths.paletteFile(for: config)
        let next: Palette
        do {
            if let p = try PaletteFile.load(path: path, home: paths.home) {
                next = p
                paletteDetail = "\(path): \(p.names.count) token\(p.names.count == 1 ? "" : "s")"
            } else {
                next = .empty
                paletteDetail = "\(path): no such file (empty palette)"
            }
        } catch {
            let kept = palette.isEmpty ? "the palette stays empty" : "keeping the previous palette"
            log.error("\(error); \(kept)")
            paletteDetail = "\(path): not used, \(error.message)\(error.line.map { " (line \($0))" } ?? ""); \(kept)"
            return false
        }
        log.info(paletteDetail)
        guard next != palette else { return false }
        palette = next
        return true
    }

    // MARK: Events

    private func systemReading(_ reading: SystemReading) {
        sentryReading = reading
        desktopReading(withoutOwnKeys(reading))
    }

    /// While the outlet serves, the portal's color-scheme (and accent, when the palette gives one) is the
    /// daemon's own value coming back: the desktop has no say then (DESIGN.md, merge rule 4).
    private func withoutOwnKeys(_ reading: SystemReading) -> SystemReading {
        guard let outletStatus, outletStatus.serving else { return reading }
        var own = reading
        own.scheme = .unavailable
        own.detail = "appearanced is the portal's Settings backend"
        if servedValues.accent != nil { own.traits.accentColor = nil }
        return own
    }

    private func outletChanged(_ status: OutletStatus) {
        let wasServing = outletStatus?.serving ?? false
        outletStatus = status
        if wasServing != status.serving, let sentryReading { desktopReading(withoutOwnKeys(sentryReading)) }
    }

    /// What the outlet serves: the published mode, and the palette's own accent color when it has one.
    private var servedValues: ServedValues {
        var accent: Color?
        if case .color(let c)? = palette.resolve(Palette.accentToken, engine.state.variant, accent: nil)?.value {
            accent = c
        }
        return ServedValues(mode: engine.state.mode, accent: accent)
    }

    private func desktopReading(_ reading: SystemReading) {
        let before = (engine.inputs.system, engine.systemDetail)
        let traitsBefore = engine.inputs.traits
        let outcome = Decide.desktopReading(reading, engine: &engine, writes: &follower.inFlight,
                                            following: serving && follower.kind != nil)
        if outcome.echo {
            log.info("desktop: \(reading.scheme.rawValue) is the echo of appearanced's write")
            let s = engine.state
            transitions.append(.init(time: clock.now(), from: s.mode, to: s.mode, source: s.source,
                                     cause: "desktop: \(reading.scheme.rawValue) is the echo of appearanced's write"))
        }
        if before != (reading.scheme, reading.detail) {
            log.info("system: \(reading.scheme.rawValue) (\(reading.detail))")
        }
        if traitsBefore != reading.traits {
            let r = reading.traits
            log.info("traits: contrast \(r.contrast?.rawValue ?? "unavailable"), reduced motion "
                     + "\(r.reducedMotion.map { $0 ? "yes" : "no" } ?? "unavailable"), accent \(r.accentColor?.opaqueHex ?? "unavailable")")
        }
        for step in outcome.steps { publish(step.transition, cause: step.cause) }
        if outcome.manualFlip != nil {
            armTemporaryTimer()  // an until-next flip replaced any timed one
            persistIfNeeded()    // the flip is kept like a temporary override set with appearancectl
        }
        serve()
        updateStatus()
    }

    private func reload() {
        log.info("reloading \(paths.configFile)")
        Systemd.notify("RELOADING=1\nMONOTONIC_USEC=\(Systemd.monotonicMicroseconds())")
        defer { Systemd.notify("READY=1") }
        do {
            let c = try loadConfig(fallback: "keeping the previous configuration")
            config = c
            log.level = logLevelOption ?? c.logLevel ?? .info
            if let t = engine.apply(.defaultMode(c.defaultMode)) { publish(t, cause: "config reloaded: default-mode \(c.defaultMode.rawValue)") }
            outlet?.setPolicy(c.portalBackend)
            follower.configure(c.desktop, portalServed: outletStatus?.serving ?? false)
            planSchedule()
            configureHooks()
        } catch {
            log.error("\(error); keeping the previous configuration")
        }
        // The palette is reloaded even when the config is bad: it is its own file.
        if loadPalette() {
            offerToSubscribers()
            outlet?.publish(servedValues)
            if let sentryReading { desktopReading(withoutOwnKeys(sentryReading)) }
        }
    }

    /// Performs a transition's effects: tell every subscriber whose view changed; log what made the mode.
    private func publish(_ t: Transition, cause: String) {
        publish([(t, cause)])
    }

    /// Several transitions made together (the changes one save made durable): each is logged with its
    /// cause, and their effects happen once, for the whole step from the first state to the last.
    private func publish(_ steps: [(Transition, String)]) {
        let t = Transition(state: steps[steps.count - 1].0.state, previous: steps[0].0.previous)
        let cause = steps[steps.count - 1].1
        // Subscribers first: the mode file is replaced before any of them is told (docs/protocol.md), and
        // nothing below changes what they are told. The rest follows in the same turn of the queue, so a
        // request a subscriber sends on being told (`status`, `log`) already sees all of it.
        if t.modeChanged, serving { writeModeFile() }
        offerToSubscribers()
        for (t, cause) in steps where (t.modeChanged || t.state.source != t.previous.source) && serving {
            transitions.append(.init(time: clock.now(), from: t.previous.mode, to: t.state.mode, source: t.state.source, cause: cause))
        }
        if t.modeChanged, serving { hooks.changed(to: t.state.mode, from: t.previous.mode, cause: cause) }
        // The desktop follows what the user told appearanced (not what the desktop itself said).
        if t.modeChanged, serving, [.override, .temporary, .schedule].contains(t.state.source) {
            follower.write(t.state.mode, desktop: engine.inputs.system)
        }
        if t.modeChanged {
            log.notice("appearance is now \(t.state.mode.rawValue) (source: \(t.state.source.rawValue))")
        }
        updateStatus()
        outlet?.publish(servedValues)
        persistIfNeeded()
    }

    /// Offers the published state and palette to every subscriber; each is told only what changes its view.
    /// A subscriber for an app is offered that app's state (its own mode, source and palette).
    private func offerToSubscribers() {
        let subscribers = connections.values.filter { $0.delivery != nil }
        guard !subscribers.isEmpty else { return }
        // Within one pass every notification for the same app carries the same state (and palette, for
        // those that asked): they differ only in `previous` and in carrying the palette. Each state, palette
        // and encoding is made once per app.
        var states: [String: AppearanceState] = [:]
        var palettes: [String: ResolvedPalette] = [:]
        var encoded: [String: [UInt8]] = [:]
        for c in subscribers {
            let interest = c.delivery!.interest
            let key = interest.app ?? ""
            let state = states[key] ?? engine.state(for: interest.app)
            states[key] = state
            var resolved: ResolvedPalette?
            if interest.palette {
                resolved = palettes[key] ?? palette.resolved(state.variant, accent: state.traits.accentColor)
                palettes[key] = resolved
            }
            c.delivery!.offer(state, palette: resolved)
            c.deliverIfIdle { n in
                let k = "\(key) \(n.previous.rawValue) \(n.palette != nil)"
                if let bytes = encoded[k] { return bytes }
                let bytes = Outgoing.changed(n)
                encoded[k] = bytes
                return bytes
            }
        }
    }

    /// The tokens asked for, resolved; an unknown token is an error naming it (never a made-up color).
    private func resolve(_ tokens: [String], _ request: VariantRequest, for state: AppearanceState) -> Result<JSON, RPCError> {
        let variant = request.variant(for: state)
        let accent = state.traits.accentColor
        var found: [PaletteToken] = []
        var unknown: [String] = []
        var seen: Set<String> = []  // a token asked for twice is answered once; linear in the request's size
        for name in tokens where seen.insert(name).inserted {
            if let r = palette.resolve(name, variant, accent: accent) {
                found.append(PaletteToken(name: name, value: r.value))
            } else {
                unknown.append(name)
            }
        }
        guard unknown.isEmpty else {
            let names = unknown.map(\.debugDescription).joined(separator: ", ")
            let hint = palette.isEmpty ? " (the palette is empty: \(paletteDetail))" : ""
            return .failure(RPCError(.invalidParams, "resolve: unknown token\(unknown.count == 1 ? "" : "s") \(names)\(hint)"))
        }
        return .success(ResolvedPalette(variant: variant, tokens: found).json)
    }

    // MARK: Writes (group commit)

    /// A change a client asked for, accepted and waiting to be durable. `event` is nil when there is nothing
    /// to change (it is already so): such a request is still answered in order, after the changes before it.
    private struct PendingWrite {
        let event: Event?
        let connection: Connection?
        let id: JSON?
        let app: String?
        let cause: String
    }

    /// The engine as it will be once every accepted change is durable: what a new request is decided on
    /// (a second `toggle` toggles the first one's result).
    private func deciding() -> Engine {
        if let e = decidingCache { return e }
        var e = engine
        for w in (inFlight ?? []) + unsaved { if let event = w.event { _ = e.apply(event) } }
        decidingCache = e
        return e
    }

    /// Queues an accepted change; a save starts now unless one is running (then the next one takes it).
    private func enqueue(_ w: PendingWrite) {
        if let event = w.event, decidingCache != nil { _ = decidingCache!.apply(event) }
        unsaved.append(w)
        if inFlight == nil { startSave() }
    }

    /// Saves what every queued change makes of the state file, off the daemon's queue; `finishSave` answers them.
    private func startSave() {
        let batch = unsaved
        unsaved = []
        inFlight = batch
        var after = engine
        for w in batch { if let event = w.event { _ = after.apply(event) } }
        let next = StateStore.Saved(override: after.inputs.override, temporary: after.inputs.temporary, apps: after.inputs.apps)
        guard next != saved else {
            queue.async { [unowned self] in self.finishSave(next, error: nil) }  // nothing new to write
            return
        }
        let store = store
        storeQueue.async { [unowned self] in
            let failure: Errno?
            do throws(Errno) { try store.save(next); failure = nil } catch { failure = error }
            self.queue.async { self.finishSave(next, error: failure) }
        }
    }

    /// The save is durable (or failed): the changes it covers are applied and answered in the order they
    /// came, then published once; the next save takes what came meanwhile.
    private func finishSave(_ next: StateStore.Saved, error: Errno?) {
        let batch = inFlight ?? []
        inFlight = nil
        if let error {
            log.error("Failed to save the override to \(store.path): \(error)")
            // The changes queued behind these were decided on top of them: none of them is made.
            let refused = RPCError(.requestFailed, "could not save the override to \(store.path) (\(error)); nothing was changed")
            for w in batch + unsaved {
                if let c = w.connection, let id = w.id { c.send(Outgoing.error(id: id, refused)) }
                w.connection?.resumeAfterSave()
            }
            unsaved = []
            decidingCache = nil
            return
        }
        saved = next
        var steps: [(Transition, String)] = []
        for w in batch {
            if let event = w.event, let t = engine.apply(event) { steps.append((t, w.cause)) }
            if let event = w.event { log.info(Decide.logLine(of: event, time: { Clock.describe($0, from: 0) })) }
            if let c = w.connection, let id = w.id { c.send(Outgoing.result(id: id, engine.state(for: w.app).json)) }
            w.connection?.resumeAfterSave()
        }
        if batch.contains(where: { $0.event != nil }) { armTemporaryTimer() }
        if !steps.isEmpty { publish(steps) }
        if unsaved.isEmpty { persistIfNeeded() } else { startSave() }
    }

    /// "appearancectl (pid 4242)": who asked, from SO_PEERCRED and /proc.
    private func requester(_ c: Connection) -> String {
        guard let pid = c.peer.split(separator: " ").last.flatMap({ Int($0) }),
              let bytes = try? FileSystem.readAll("/proc/\(pid)/comm", limit: 64) else { return c.peer }
        let name = Self.printable(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: "\n"))
        return "\(name.isEmpty ? "?" : name) (pid \(pid))"
    }

    /// A name another process chose (its /proc comm), safe for a terminal: control characters as `\xNN`.
    static func printable(_ name: String) -> String {
        var out = ""
        for u in name.unicodeScalars {
            if u.value < 0x20 || (0x7F...0x9F).contains(u.value) {
                let hex = String(u.value, radix: 16)
                out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            } else {
                out.unicodeScalars.append(u)
            }
        }
        return out
    }

    // MARK: Clients

    /// The accept source exists only while the daemon accepts: made when serving starts (connections wait in
    /// the backlog until the first reading) and after a pause, cancelled for one. Like every source here it
    /// is never left suspended (docs/architecture.md).
    private func startAccepting() {
        guard acceptSource == nil, let listener else { return }
        let accept = DispatchSource.makeReadSource(fileDescriptor: listener.fd, queue: queue)
        accept.setEventHandler { [unowned self] in self.acceptClients() }
        acceptSource = accept
        accept.resume()
    }

    private func acceptClients() {
        guard let listener else { return }
        while true {
            let accepted: Descriptor?
            do { accepted = try listener.socket.accept(nonBlocking: true) } catch {
                switch error.code {
                case Errno.tooManyFiles, Errno.tooManyFilesInSystem:
                    // Out of descriptors: stop accepting for a moment instead of spinning on the ready socket.
                    log.warning("too many open files (\(connections.count) clients); pausing new connections for 1 s")
                    acceptSource?.cancel()
                    acceptSource = nil
                    queue.asyncAfter(deadline: .now() + 1) { [weak self] in self?.startAccepting() }
                    return
                default:
                    log.warning("accept on \(listener.path) failed: \(error.message), ignoring")
                    return
                }
            }
            guard let client = accepted else { return }  // none waiting
            guard let cred = client.peerCredentials, cred.uid == uid else {
                let who = client.peerCredentials.map { "uid \($0.uid) (pid \($0.pid))" } ?? "an unknown peer"
                log.warning("rejected a connection from \(who): only uid \(uid) may use \(listener.path)")
                client.close()
                continue
            }
            if connections.count >= connectionCap {
                refuse(client, pid: cred.pid)
                continue
            }
            nextConnectionID += 1
            let c = Connection(socket: client, id: nextConnectionID, peer: "pid \(cred.pid)", queue: queue)
            c.onInputChange = { [unowned self] c, delta in self.inputChanged(c, delta) }
            c.onLine = { [unowned self] c, line in self.handle(line, from: c) }
            c.onLineTooLong = { [unowned self] (c: Connection) in
                self.log.warning("client \(c.peer) sent a line over \(maxLineLength) bytes; closing it")
                c.send(Outgoing.error(id: .null, RPCError(.invalidRequest, "request line longer than \(maxLineLength) bytes; closing the connection")))
                c.closeAfterFlush()
            }
            c.onClose = { [unowned self] (c: Connection) in
                if c.delivery != nil { self.subscriberCount -= 1 }
                self.connections[c.id] = nil
                self.log.debug("client \(c.peer) disconnected")
                self.returnMemoryAfterACrowd()
            }
            connections[c.id] = c
            peakConnections = max(peakConnections, connections.count)
            c.start()
        }
    }

    /// Over the connection cap: one error line, written without waiting, then closed. Logged at most once a minute.
    private func refuse(_ client: Descriptor, pid: Int32) {
        let message = Outgoing.error(id: .null, RPCError(.requestFailed,
            "too many connections (\(connections.count), the limit is \(connectionCap)); try again later"))
        client.sendWithoutWaiting(message)
        client.close()
        let now = clock.now()
        if now - lastRefusalLog >= 60 {
            lastRefusalLog = now
            log.warning("refusing connections: \(connections.count) clients are connected, the limit is \(connectionCap) (pid \(pid) refused; max-connections in the config)")
        }
    }

    private func inputChanged(_ c: Connection, _ delta: Int) {
        bufferedInput += delta
        guard bufferedInput > Self.inputBudget else { return }
        // Over budget: the client holding the most unfinished input goes (found by a scan, which only an
        // attack makes happen).
        guard let worst = connections.values.max(by: { $0.bufferedInput < $1.bufferedInput }), worst.bufferedInput > 0 else { return }
        log.warning("unfinished requests hold \(bufferedInput) bytes, over \(Self.inputBudget); closing client \(worst.peer), which holds \(worst.bufferedInput)")
        worst.send(Outgoing.error(id: .null, RPCError(.requestFailed, "the daemon is holding too much unfinished input from its clients; closing this connection")))
        worst.close()
    }

    private func handle(_ line: ArraySlice<UInt8>, from c: Connection) {
        let request: Request
        do {
            request = try Request.decode(line)
        } catch {
            log.debug("client \(c.peer): \(error.error.message)")
            if error.wantsReply { c.send(Outgoing.error(id: error.id ?? .null, error.error)) }
            return
        }
        let result: Result<JSON, RPCError>
        let mine = engine.state(for: request.app)
        switch request.call {
        case .apps:
            result = .success(.object([("apps", .array(engine.inputs.apps.sorted { $0.key < $1.key }.map {
                JSON.object([("app", .string($0.key)), ("override", .string($0.value.rawValue))])
            }))]))
        case .get:
            result = .success(mine.json)
        case .status:
            result = .success(StatusInfo(state: engine.state, systemDetail: engine.systemDetail,
                                         defaultMode: engine.inputs.defaultMode, subscribers: subscriberCount,
                                         version: Self.version, pid: Int(Posix.processID), paletteDetail: paletteDetail,
                                         portalBackendDetail: outletStatus?.detail, scheduleDetail: scheduleDetail,
                                         hooksDetail: hooks.statusDetail, configDetail: configDetail,
                                         appOverrides: engine.inputs.apps.count, desktopDetail: follower.statusDetail).json)
        case .subscribe(var interest):
            if c.delivery == nil { subscriberCount += 1 }
            interest.app = request.app
            let resolved = interest.palette ? palette.resolved(mine.variant, accent: mine.traits.accentColor) : nil
            c.delivery = Delivery(subscribedAt: mine, palette: resolved, interest: interest)
            result = .success(Subscription(state: mine, palette: resolved).json)
        case .resolve(let tokens, let variant):
            result = resolve(tokens, variant, for: mine)
        case .palette(let variant):
            result = .success(palette.resolved(variant.variant(for: mine), accent: mine.traits.accentColor).json)
        case .set, .toggle, .setTemporary, .toggleTemporary:
            switch Decide.write(request.call, app: request.app, on: deciding(), now: clock.now()) {
            case .failure(let e):
                result = .failure(e)
            case .success(nil) where inFlight == nil && unsaved.isEmpty:
                result = .success(mine.json)  // already so, and nothing before it waits: answered now
            case .success(let event):
                enqueue(PendingWrite(event: event, connection: c, id: request.id, app: request.app,
                                     cause: event.map { "\(Decide.cause(of: $0)) set by \(requester(c))" } ?? ""))
                c.holdUntilSaved()
                return  // answered when the save that covers it is durable
            }
        case .log(let limit):
            result = .success(transitions.json(limit: limit))
        }
        if let id = request.id {
            switch result {
            case .success(let json): c.send(Outgoing.result(id: id, json))
            case .failure(let e): c.send(Outgoing.error(id: id, e))
            }
        }
    }

    /// When most of a large crowd of clients has left, hand the freed heap back to the system once
    /// (glibc keeps it otherwise: 10,000 subscribers that came and went would leave ~18 MB resident).
    private func returnMemoryAfterACrowd() {
        guard peakConnections >= 256, connections.count <= peakConnections / 4 else { return }
        peakConnections = connections.count
        queue.async { Posix.returnFreeMemory() }  // after the closes of this burst have run
    }

    // MARK: Signals

    private func installSignals() {
        for (sig, action) in [(Signal.terminate, shutdown), (.interrupt, shutdown), (.hangUp, reload)] as [(Signal, () -> Void)] {
            sig.ignore()
            let s = DispatchSource.makeSignalSource(signal: sig.rawValue, queue: queue)
            s.setEventHandler(handler: action)
            s.resume()
            signalSources.append(s)
        }
        Signal.pipe.ignore()
    }

    private func shutdown() {
        log.info("stopping")
        Systemd.notify("STOPPING=1")
        outlet?.stop()
        sentry.stop()
        if !modeFile.isEmpty { try? FileSystem.remove(modeFile) }  // no file: no daemon, as docs/protocol.md says
        for c in connections.values { c.close() }
        listener?.remove()
        Posix.exit(0)
    }

    private static func makeInstanceID() -> String {
        var g = SystemRandomNumberGenerator()
        let n = g.next() as UInt64
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
