import AppearanceCore
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// Persistence: the state file's group commit (docs/decisions.md), with the save injected. Confined to
/// the daemon's queue, but for the save.
final class Persistence: @unchecked Sendable {
    /// A change a client asked for, waiting to be durable; `event` nil: nothing to change, still answered in
    /// order. `answer` is told once: the state as the asker sees it, or why nothing was made.
    struct Write {
        var event: Event?
        var app: String?
        var cause: String
        var answer: (Result<AppearanceState, RPCError>) -> Void = { _ in }
    }

    typealias Save = @Sendable (StateStore.Saved) throws(Errno) -> Void

    private let queue: DispatchQueue
    private let saveQueue = DispatchQueue(label: "appearanced.store")
    private let save: Save
    /// What the state file holds, so that an override that ended by itself is written out once.
    private(set) var saved: StateStore.Saved
    private var unsaved: [Write] = []
    /// The writes the save in flight covers (nil: no save running).
    private var inFlight: [Write]?
    /// `engine()` with every accepted change applied; rebuilt after the engine changes.
    private var decidingCache: Engine?

    var engine: () -> Engine = { Engine(inputs: Inputs(system: .unavailable, override: .system, defaultMode: .light), instance: "") }
    /// A save is durable: the writes it covers, in order (the daemon applies, answers and publishes them).
    var onDurable: ([Write]) -> Void = { _ in }
    /// A save failed: the writes it covers and every one decided on top of them, none of which is made.
    var onFailed: ([Write], Errno) -> Void = { _, _ in }

    init(queue: DispatchQueue, saved: StateStore.Saved, save: @escaping Save) {
        (self.queue, self.saved, self.save) = (queue, saved, save)
    }

    /// The state file as read at start-up.
    func restore(_ saved: StateStore.Saved) { self.saved = saved }

    /// Nothing is accepted and not yet durable: a request that changes nothing can be answered at once.
    var idle: Bool { inFlight == nil && unsaved.isEmpty }

    /// The engine changed (an event that is not a client's write): decisions are made on it again.
    func engineChanged() { decidingCache = nil }

    /// The engine as it will be once every accepted change is durable: what a new request is decided on
    /// (a second `toggle` toggles the first one's result).
    func deciding() -> Engine {
        if let e = decidingCache { return e }
        decidingCache = applying((inFlight ?? []) + unsaved)
        return decidingCache!
    }

    /// `engine()` with `writes` applied.
    private func applying(_ writes: [Write]) -> Engine {
        var e = engine()
        for w in writes { if let event = w.event { _ = e.apply(event) } }
        return e
    }

    /// Queues an accepted change; a save starts now unless one is running (then the next one takes it).
    func enqueue(_ w: Write) {
        if let event = w.event, decidingCache != nil { _ = decidingCache!.apply(event) }
        unsaved.append(w)
        if inFlight == nil { startSave() }
    }

    /// Starts a save when the engine's inputs differ from the file (an override ended, a desktop flip) and none is queued.
    func persistIfNeeded() {
        guard idle else { return }  // the next save writes the engine's inputs anyway
        let i = engine().inputs
        guard saved.override != i.override || saved.temporary != i.temporary || saved.apps != i.apps
            || saved.nextChange != i.nextChange else { return }
        startSave()  // an empty batch: the save writes the engine's inputs
    }

    /// Saves what every queued change makes of the state file, off the daemon's queue.
    private func startSave() {
        let batch = unsaved
        unsaved = []
        inFlight = batch
        let after = applying(batch)
        let next = StateStore.Saved(override: after.inputs.override, temporary: after.inputs.temporary, apps: after.inputs.apps,
                                    nextChange: after.inputs.nextChange)
        guard next != saved else {
            queue.async { [weak self] in self?.finishSave(next, error: nil) }  // nothing new to write
            return
        }
        let save = save
        // Weak: a persistence let go while its save runs (a test's daemon) is not touched again.
        let weakSelf = WeakRef(self)
        saveQueue.async { [queue] in
            let failure: Errno?
            do throws(Errno) { try save(next); failure = nil } catch { failure = error }
            queue.async { weakSelf.value?.finishSave(next, error: failure) }
        }
    }

    /// The save is durable (or failed): its writes go on in order; the next save takes what came meanwhile.
    private func finishSave(_ next: StateStore.Saved, error: Errno?) {
        let batch = inFlight ?? []
        inFlight = nil
        if let error {
            // The changes queued behind these were decided on top of them: none of them is made.
            let refused = batch + unsaved
            unsaved = []
            decidingCache = nil
            onFailed(refused, error)
            return
        }
        saved = next
        onDurable(batch)
        if unsaved.isEmpty { persistIfNeeded() } else if inFlight == nil { startSave() }
    }
}

/// A reference that does not keep its object: a save's end comes back through it to an object not let go.
final class WeakRef<T: AnyObject>: @unchecked Sendable {
    weak var value: T?
    init(_ value: T) { self.value = value }
}
