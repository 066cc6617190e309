import AppearanceCore
import AppearanceDecide
import AppearancePosix
import AppearanceProtocol

/// The publishing room: what a change of the published state does to the world, in order. The mode file
/// first, then every subscriber whose view changed, then the change log, the hooks, the desktop's own switch
/// (GNOME, KDE), systemd's STATUS=, the portal backend and the D-Bus faces. Confined to the daemon's queue.
final class Publisher: @unchecked Sendable {
    private let clients: Clients
    private let log: Logger
    private let clock: Clock
    let hooks: HookRunner
    let follower: DesktopFollower
    let outlet: Outlet?
    /// The D-Bus face (appearanced's own interface and darkman's), when there is one.
    var faces: [Face] = []
    /// `mode` next to the socket: "dark" or "light", for prompts that want no IPC at all ("": none).
    var modeFile = ""
    /// What `appearancectl log` shows.
    var transitions = TransitionLog()
    /// Set once the daemon serves (after the first reading): nothing is written or run before.
    var serving = false
    private var statusText = ""

    init(clients: Clients, hooks: HookRunner, follower: DesktopFollower, outlet: Outlet?, log: Logger, clock: Clock) {
        self.clients = clients
        self.hooks = hooks
        self.follower = follower
        self.outlet = outlet
        self.log = log
        self.clock = clock
    }

    /// Several transitions made together (the changes one save made durable): each is logged with its
    /// cause, and their effects happen once, for the whole step from the first state to the last.
    func publish(_ steps: [Decide.Step], engine: Engine, palette: Palette, status: String) {
        guard let first = steps.first, let last = steps.last else { return }
        let t = Transition(state: last.transition.state, previous: first.transition.previous)
        // Subscribers first: the mode file is replaced before any of them is told (docs/protocol.md), and
        // nothing below changes what they are told. The rest follows in the same turn of the queue, so a
        // request a subscriber sends on being told (`status`, `log`) already sees all of it.
        if t.modeChanged, serving { writeModeFile(t.state.mode) }
        offer(engine, palette)
        for step in steps where serving {
            let s = step.transition
            guard s.modeChanged || s.state.source != s.previous.source else { continue }
            transitions.append(.init(time: clock.now(), from: s.previous.mode, to: s.state.mode, source: s.state.source, cause: step.cause))
        }
        if t.modeChanged, serving { hooks.changed(to: t.state.mode, from: t.previous.mode, cause: last.cause) }
        // The desktop follows what the user told appearanced (not what the desktop itself said).
        if t.modeChanged, serving, [.override, .temporary, .schedule].contains(t.state.source) {
            follower.write(t.state.mode, desktop: engine.inputs.system)
        }
        if t.modeChanged {
            log.notice("appearance is now \(t.state.mode.rawValue) (source: \(t.state.source.rawValue))")
        }
        updateStatus(status)
        outlet?.publish(Self.served(engine, palette))
        for face in faces { face.publish(engine.state, previous: t.previous.mode) }
    }

    /// A line in `log` for something that changed no mode (start-up, an echo, a desktop write, a failed hook).
    func note(_ cause: String, mode: Mode, source: Source, time: Int64? = nil) {
        transitions.append(.init(time: time ?? clock.now(), from: mode, to: mode, source: source, cause: cause))
    }

    /// The first line in `log`: the mode the daemon started with, and why.
    func started(_ state: AppearanceState, _ why: String) {
        transitions.append(.init(time: clock.now(), from: nil, to: state.mode, source: state.source, cause: "start: \(why)"))
    }

    /// Offers the published state and palette to every subscriber; each is told only what changes its view.
    /// A subscriber for an app is offered that app's state (its own mode, source and palette).
    func offer(_ engine: Engine, _ palette: Palette) {
        let subscribers = clients.subscribers
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

    /// What the portal backend serves: the published mode, and the palette's own accent color when it has one.
    static func served(_ engine: Engine, _ palette: Palette) -> ServedValues {
        var accent: Color?
        if case .color(let c)? = palette.resolve(Palette.accentToken, engine.state.variant, accent: nil)?.value {
            accent = c
        }
        return ServedValues(mode: engine.state.mode, accent: accent)
    }

    func writeModeFile(_ mode: Mode) {
        guard !modeFile.isEmpty else { return }
        do {
            try FileSystem.writeAtomically(modeFile, Array("\(mode.rawValue)\n".utf8), permissions: 0o644, durable: false)
        } catch {
            log.warning("Failed to write \(modeFile): \(error), ignoring")
        }
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
        for face in faces { face.stop() }
        if !modeFile.isEmpty { try? FileSystem.remove(modeFile) }
    }
}
