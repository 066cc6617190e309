import AppearanceCore
import AppearanceDecide
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// Publishing: what a change of the published state does to the world, in the order `publish`
/// gives (docs/architecture.md). Confined to the daemon's queue.
final class Publisher: @unchecked Sendable {
    private let clients: Clients
    private let log: Logger
    private let clock: Clock
    let hooks: HookRunner
    let integrations: Integrations
    let follower: DesktopFollower
    let outlet: Outlet?
    /// The D-Bus services (appearanced's own interface and darkman's).
    var services: [BusService] = []
    var modeFile: ModeFile?
    /// What `appearancectl log` shows, and where it is kept across restarts (once `openChangeLog` ran).
    var transitions = TransitionLog()
    private var changeLog: ChangeLogStore?
    /// App overrides that changed their app's mode, by the seq of their transition, until `publish` logs them.
    var appChanges: [UInt64: (app: String, from: Mode, to: Mode, source: Source)] = [:]
    /// Set once the daemon serves (after the first reading): nothing is written or run before.
    var serving = false
    private var statusText = ""
    /// The state (by seq) the bus was last told of.
    private var busToldSeq: UInt64?

    init(clients: Clients, hooks: HookRunner, integrations: Integrations, follower: DesktopFollower, outlet: Outlet?,
         log: Logger, clock: Clock) {
        (self.clients, self.hooks, self.integrations, self.follower) = (clients, hooks, integrations, follower)
        (self.outlet, self.log, self.clock) = (outlet, log, clock)
    }

    /// Transitions one save made durable: each logged with its cause, their effects once for the whole step.
    func publish(_ steps: [Decide.Step], engine: Engine, palette: Palette, status: String) {
        guard let first = steps.first, let last = steps.last else { return }
        let t = Transition(state: last.transition.state, previous: first.transition.previous)
        // The mode file, then subscribers; the rest in the same turn, so their next request sees all of it.
        if t.modeChanged, serving { writeModeFile(t.state.mode) }
        offer(engine, palette)
        log.release()  // what the change's cause held back (a reading's lines), now that subscribers know
        tellBus(engine, palette, previous: t.previous.mode)
        // Real changes only: everyone's mode, or one app's own mode changed by its override.
        for step in steps where serving {
            let s = step.transition
            if let a = appChanges[s.state.seq] {
                record(.init(time: clock.now(), from: a.from, to: a.to, source: a.source, cause: step.cause, app: a.app))
            } else if s.modeChanged {
                record(.init(time: clock.now(), from: s.previous.mode, to: s.state.mode, source: s.state.source, cause: step.cause))
            }
        }
        appChanges = [:]
        if t.modeChanged, serving { hooks.changed(to: t.state.mode, from: t.previous.mode, cause: last.cause) }
        if serving { followDesktop(t, engine: engine) }
        if t.modeChanged {
            log.notice("appearance is now \(t.state.mode.rawValue) (source: \(t.state.source.rawValue))")
        }
        updateStatus(status)
        // Every integration whose app's mode changed (an app override moves one app's alone).
        integrations.refresh(mode: { engine.state(for: $0).mode }, cause: last.cause)
    }

    /// The desktop follows what the user told appearanced, and gets its own value back once nothing of ours decides.
    func followDesktop(_ t: Transition, engine: Engine) {
        if t.modeChanged, [.override, .temporary, .schedule].contains(t.state.source) {
            follower.write(t.state.mode, desktop: engine.inputs.system)
        } else if [.system, .default].contains(t.state.source) {
            follower.giveBack()
        }
    }

    /// The state for the bus's queue (the portal backend, the D-Bus services), once per state, before a write's answer.
    func tellBus(_ engine: Engine, _ palette: Palette, previous: Mode) {
        guard engine.state.seq != busToldSeq else { return }
        busToldSeq = engine.state.seq
        outlet?.publish(Self.served(engine, palette))
        for service in services { service.publish(engine.state, previous: previous) }
    }

    /// Reads the change log a previous instance left (log.jsonl); from now on each entry is written there too.
    func openChangeLog(_ path: String, queue: DispatchQueue, files: SmallFiles) {
        let store = ChangeLogStore(path: path, queue: queue, files: files, log: log)
        for e in store.load() { transitions.append(e, folding: false) }
        changeLog = store
    }

    /// The mode the daemon starts with: an entry when it differs from the last one logged (or none was).
    func started(_ state: AppearanceState, _ why: String) {
        guard transitions.lastMode != state.mode else { return }
        record(.init(time: clock.now(), from: transitions.lastMode, to: state.mode, source: state.source, cause: "start: \(why)"))
    }

    /// An entry in `log`, and in the file after the reply went (on the change log's own queue).
    private func record(_ entry: LogEntry) {
        let kept = transitions.append(entry)
        changeLog?.append(kept.entry, replacing: kept.replaced, all: transitions)
    }

    /// Subscribers still to be offered the newest state, in order, each at most once (`awaitingOffer`), from
    /// `nextToOffer` on; what they are offered, made once for all of them.
    private var toOffer: [Connection] = []
    private var nextToOffer = 0
    private var prepared: Prepared?
    private var offerTurnScheduled = false
    /// Subscribers offered in one turn of the queue: requests that came meanwhile are read between turns, so a
    /// large fan-out does not hold the next save back; a newer state reaches who is not told yet (docs/decisions.md).
    static let offersPerTurn = 32

    /// Offers the published state and palette (an app's own, to a subscriber for an app) to every subscriber.
    func offer(_ engine: Engine, _ palette: Palette) {
        prepared = Prepared(engine: engine, palette: palette)
        for c in clients.connections.values where c.delivery != nil && !c.awaitingOffer {
            c.awaitingOffer = true
            toOffer.append(c)
        }
        offerTurn()
    }

    private func offerTurn() {
        let end = min(nextToOffer + Self.offersPerTurn, toOffer.count)
        for c in toOffer[nextToOffer..<end] {
            c.awaitingOffer = false
            guard let interest = c.delivery?.interest else { continue }
            c.delivery!.offer(prepared!.offer(for: interest))
            c.deliverIfIdle { self.prepared!.encoded($0, previous: $1) }
        }
        nextToOffer = end
        guard end == toOffer.count else {
            if !offerTurnScheduled {
                offerTurnScheduled = true
                clients.queue.async { [self] in
                    offerTurnScheduled = false
                    offerTurn()
                }
            }
            return
        }
        toOffer.removeAll(keepingCapacity: toOffer.count <= 1024)
        (nextToOffer, prepared) = (0, nil)
    }

    /// One pass's offers (one per interest) and their encodings (one per offer and previous mode).
    private struct Prepared {
        struct Key: Hashable {
            let offer: ObjectIdentifier
            let previous: Mode
        }

        let engine: Engine
        let palette: Palette
        private var last: (interest: Interest, offer: Offer)?
        private var offers: [Interest: Offer] = [:]
        private var states: [String?: (state: AppearanceState, palette: ResolvedPalette?)] = [:]
        private var lastEncoded: (key: Key, bytes: [UInt8])?
        private var encodings: [Key: [UInt8]] = [:]

        init(engine: Engine, palette: Palette) { (self.engine, self.palette) = (engine, palette) }

        // The dictionaries are filled only once a second interest or encoding comes: most passes have one.
        mutating func offer(for interest: Interest) -> Offer {
            if let last, last.interest == interest { return last.offer }
            if let last { offers[last.interest] = last.offer }
            let o = offers[interest] ?? make(interest, keep: last != nil)
            last = (interest, o)
            return o
        }

        private mutating func make(_ interest: Interest, keep: Bool) -> Offer {
            var entry = states[interest.app] ?? (engine.state(for: interest.app), nil)
            if interest.palette, entry.palette == nil {
                entry.palette = palette.resolved(entry.state.variant, accent: entry.state.traits.accentColor)
            }
            if keep { states[interest.app] = entry }
            return Offer(entry.state, palette: entry.palette, interest: interest)
        }

        mutating func encoded(_ o: Offer, previous: Mode) -> [UInt8] {
            let key = Key(offer: ObjectIdentifier(o), previous: previous)
            if let lastEncoded, lastEncoded.key == key { return lastEncoded.bytes }
            if let lastEncoded { encodings[lastEncoded.key] = lastEncoded.bytes }
            let bytes = encodings[key] ?? Outgoing.changed(Notification(state: o.state, previous: previous, palette: o.palette))
            lastEncoded = (key, bytes)
            return bytes
        }
    }

    /// What the portal backend serves: the published mode, and the palette's own accent color when it has one.
    static func served(_ engine: Engine, _ palette: Palette) -> ServedValues {
        ServedValues(mode: engine.state.mode, accent: palette.resolve(Palette.accentToken, engine.state.variant, accent: nil)?.value.color)
    }

    func writeModeFile(_ mode: Mode) {
        do { try modeFile?.write(mode) } catch { log.warning("Failed to write \(modeFile?.path ?? ""): \(error), ignoring") }
    }

    /// systemd's STATUS=, sent when it changes (and READY=1 with the first).
    func updateStatus(_ text: String) {
        guard serving, text != statusText else { return }
        let first = statusText.isEmpty
        statusText = text
        Systemd.notify(first ? "READY=1\nSTATUS=\(text)" : "STATUS=\(text)")
    }

    /// The daemon is stopping: no mode file, no daemon (docs/protocol.md).
    func stop() {
        outlet?.stop()
        for service in services { service.stop() }
        modeFile?.remove()
    }
}
