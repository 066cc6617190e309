import AppearanceCore
import AppearanceDecide
import AppearancePosix
import AppearanceProtocol

/// The requests: one client line in, one reply out; writes answered once durable (Persistence.swift).
extension Daemon {
    func handle(_ line: ArraySlice<UInt8>, from c: Connection) {
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
        let palette = settings.palette
        switch request.call {
        case .apps:
            result = .success(.object([("apps", .array(engine.inputs.apps.sorted { $0.key < $1.key }.map {
                JSON.object([("app", .string($0.key)), ("override", .string($0.value.rawValue))])
            }))]))
        case .get:
            var reply = mine
            reply.configProblem = settings.configProblem
            // The most frequent request, written straight to bytes.
            if let id = request.id { c.send(Outgoing.state(id: id, reply)) }
            return
        case .status:
            result = .success(status.json)
        case .subscribe(var interest):
            interest.app = request.app
            let resolved = interest.palette ? palette.resolved(mine.variant, accent: mine.traits.accentColor) : nil
            clients.subscribe(c, Delivery(subscribedAt: mine, palette: resolved, interest: interest))
            result = .success(Subscription(state: mine, palette: resolved).json)
        case .resolve(let tokens, let variant):
            result = resolve(tokens, variant, for: mine)
        case .palette(let variant):
            result = .success(palette.resolved(variant.variant(for: mine), accent: mine.traits.accentColor).json)
        case .set, .toggle, .setTemporary, .toggleTemporary:
            // A write is answered once durable (a `get` after a `set` sees the `set`).
            return answerLater(c, id: request.id) { reply in
                write(request.call, app: request.app, by: requester(c)) { reply($0.map(\.json)) }
            }
        case .log(let limit):
            result = .success(publisher.transitions.json(limit: limit, app: request.app))
        case .reload:
            // As SIGHUP: a config with a mistake is named (file:line) and the previous one stays in force.
            result = reload().map(\.json).mapError { RPCError(.requestFailed, "\($0); keeping the previous configuration") }
        case .schedule(let days):
            result = .success(scheduleReply(days: days).json)
        case .nextChange(let word):
            return answerLater(c, id: request.id) { reply in
                adjustNextChange(word, by: requester(c)) { reply($0.map(\.json)) }
            }
        case .integrations(let enable, let disable, let wait):
            // Answered once the change is durable, as a write is; with `wait`, once the runs it started have ended.
            return answerLater(c, id: request.id) { reply in
                integrations.change(enable: enable, disable: disable, wait: wait, mode: modeOf) {
                    reply($0.map { IntegrationInfo.reply($0, run: self.integrations.allowed) })
                }
            }
        }
        if let id = request.id { c.send(Outgoing.reply(id: id, result)) }
    }

    /// Starts what answers `c`, now or later; a later answer holds the connection's next requests until then.
    private func answerLater(_ c: Connection, id: JSON?, _ start: (@escaping (Result<JSON, RPCError>) -> Void) -> Void) {
        var answered = false, held = false
        start { result in
            answered = true
            if let id { c.send(Outgoing.reply(id: id, result)) }
            if held { c.resumeAfterSave() }
        }
        if !answered {
            held = true
            c.holdUntilSaved()
        }
    }

    /// A write from the socket or the bus, decided on every accepted change and answered once durable
    /// (at once when it changes nothing and nothing waits). `who` names the asker in `log`.
    func write(_ call: Call, app: String?, by who: @autoclosure () -> String, answer: @escaping (Result<AppearanceState, RPCError>) -> Void) {
        switch Decide.write(call, app: app, on: persistence.deciding(), now: clock.now()) {
        case .failure(let e):
            answer(.failure(e))
        case .success(nil) where persistence.idle:
            answer(.success(engine.state(for: app)))  // already so, and nothing before it waits
        case .success(let event):
            persistence.enqueue(.init(event: event, app: app, cause: event.map { "\(Decide.cause(of: $0)) set by \(who())" } ?? "",
                                      answer: answer))
        }
    }

    private var status: StatusInfo {
        var s = StatusInfo(state: engine.state, systemDetail: engine.systemDetail, defaultMode: engine.inputs.defaultMode,
                           subscribers: clients.subscriberCount, version: Self.version, pid: Int(Posix.processID))
        (s.paletteDetail, s.portalBackendDetail) = (settings.paletteDetail, outletStatus?.detail)
        (s.configDetail, s.scheduleDetail) = (settings.configDetail, scheduleDetail)
        (s.hooksDetail, s.appOverrides) = (publisher.hooks.statusDetail, engine.inputs.apps.count)
        (s.desktopDetail, s.busDetail, s.location) = (publisher.follower.statusDetail, serviceDetail, locationInfo)
        (s.integrationsDetail, s.noticesDetail) = (integrations.statusDetail, noticesDetail)
        s.automaticDetail = automaticDetail
        let c = settings.config
        if c.lightSensor != nil { s.lightSensorDetail = sensors.lightDetail }
        if c.powerOnBattery != nil { s.powerDetail = sensors.powerDetail }
        if c.automatic.waitForIdle { s.idleDetail = sensors.sessionDetail }
        if paths.trial {
            // What a trial instance leaves to the session's daemon, said as such (not as a missing feature).
            s.trial = FileSystem.directory(of: paths.stateFile)
            s.portalBackendDetail = "off (trial instance: the session's daemon serves the portal)"
            s.busDetail = "off (trial instance: it takes no name on the session bus)"
            if !paths.trialHooks { s.hooksDetail = "off (trial instance: --hooks runs them)" }
        }
        if s.scheduleDetail != nil { s.scheduleView = scheduleReply(days: 2) }
        return s
    }

    /// The tokens asked for, resolved; an unknown token is an error naming it (never a made-up color).
    private func resolve(_ tokens: [String], _ request: VariantRequest, for state: AppearanceState) -> Result<JSON, RPCError> {
        let variant = request.variant(for: state)
        let accent = state.traits.accentColor
        var found: [PaletteToken] = []
        var unknown: [String] = []
        var seen: Set<String> = []  // a token asked for twice is answered once; linear in the request's size
        for name in tokens where seen.insert(name).inserted {
            if let r = settings.palette.resolve(name, variant, accent: accent) {
                found.append(PaletteToken(name: name, value: r.value))
            } else {
                unknown.append(name)
            }
        }
        guard unknown.isEmpty else {
            let names = unknown.map(\.debugDescription).joined(separator: ", ")
            let hint = settings.palette.isEmpty ? " (the palette is empty: \(settings.paletteDetail))" : ""
            return .failure(RPCError(.invalidParams, "resolve: unknown token\(unknown.count == 1 ? "" : "s") \(names)\(hint)"))
        }
        return .success(ResolvedPalette(variant: variant, tokens: found).json)
    }

    /// "appearancectl (pid 4242)": who asked, from SO_PEERCRED and /proc.
    private func requester(_ c: Connection) -> String {
        guard let pid = c.peer.split(separator: " ").last.flatMap({ Int($0) }),
              let bytes = try? FileSystem.readAll("/proc/\(pid)/comm", limit: 64) else { return c.peer }
        let name = Self.printable(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: "\n"))
        return "\(name.isEmpty ? "?" : name) (pid \(pid))"
    }

    // MARK: Answers to writes, once durable

    /// A save is durable: its changes are applied and answered in the order they came, then published once.
    func durable(_ batch: [Persistence.Write]) {
        var steps: [Decide.Step] = []
        var answers: [(Persistence.Write, AppearanceState)] = []
        for w in batch {
            if let event = w.event {
                let app: String? = if case .app(let id, _) = event { id } else { nil }
                let before = app.map { engine.state(for: $0) }
                if let t = engine.apply(event) {
                    steps.append(.init(t, cause: w.cause))
                    // An app's own mode changed by its override: its own entry in `log`.
                    if let app, let before, case let after = engine.state(for: app), after.mode != before.mode {
                        publisher.appChanges[t.state.seq] = (app, before.mode, after.mode, after.source)
                    }
                }
                log.info(Decide.logLine(of: event, time: { Clock.describe($0, from: 0) }))
            }
            answers.append((w, engine.state(for: w.app)))
        }
        // The bus hears the new state before any writer does: a D-Bus read made after an answer sees it.
        if let first = steps.first { publisher.tellBus(engine, settings.palette, previous: first.transition.previous.mode) }
        for (w, state) in answers { w.answer(.success(state)) }
        if batch.contains(where: { $0.event != nil }) { timers.armTemporary(engine.inputs.temporary?.expiry) }
        if !steps.isEmpty { publish(steps) }
        if batch.contains(where: { if case .nextChange? = $0.event { true } else { false } }) { planSchedule() }
    }

    func saveFailed(_ refused: [Persistence.Write], _ error: Errno) {
        log.error("Failed to save the override to \(store.path): \(error)")
        let answer = RPCError(.requestFailed, "could not save the override to \(store.path) (\(error)); nothing was changed")
        for w in refused { w.answer(.failure(answer)) }
    }

    /// A name another process chose (its /proc comm), safe for a terminal: control characters as `\xNN`.
    static func printable(_ name: String) -> String {
        name.unicodeScalars.map { u in
            guard u.value < 0x20 || (0x7F...0x9F).contains(u.value) else { return String(u) }
            return "\\x" + (u.value < 0x10 ? "0" : "") + String(u.value, radix: 16)
        }.joined()
    }
}

/// The daemon as the D-Bus services see it: the published state, and the one entry for writes.
final class DaemonRequests: BusServiceRequests {
    private weak var daemon: Daemon?

    init(_ daemon: Daemon) { self.daemon = daemon }

    func state(for app: String, answer: @escaping (AppearanceState) -> Void) {
        if let daemon { answer(daemon.engine.state(for: app)) }
    }

    func write(_ call: Call, app: String?, by who: String, answer: @escaping (Result<AppearanceState, RPCError>) -> Void) {
        daemon?.write(call, app: app, by: who, answer: answer)
    }

    func nextChange(_ request: NextChange.Request, by who: String, answer: @escaping (Result<ScheduleInfo, RPCError>) -> Void) {
        daemon?.adjustNextChange(request, by: who, answer: answer)
    }
}
