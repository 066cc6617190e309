import AppearanceCore
@testable import AppearanceDaemon
import AppearancePosix
import Dispatch
import Foundation
import Testing

/// Group commit in-process, with a save the test stalls and fails: what is covered by which save, the order
/// of the answers, and what a failed save refuses.
@Suite struct PersistenceTests {
    /// A save that waits for the test's word, and records what it was given.
    final class StalledSave: @unchecked Sendable {
        private let lock = NSLock()
        private var saves: [StateStore.Saved] = []
        private var outcomes: [Errno?] = []
        private let go = DispatchSemaphore(value: 0)
        private let started = DispatchSemaphore(value: 0)

        func save(_ s: StateStore.Saved) throws(Errno) {
            lock.lock(); saves.append(s); lock.unlock()
            started.signal()
            _ = go.wait(timeout: .now() + 20)
            lock.lock(); let outcome = outcomes.isEmpty ? nil : outcomes.removeFirst(); lock.unlock()
            if let outcome { throw outcome }
        }

        /// Lets the save under way finish, failing with `error` if given.
        func finish(failing error: Errno? = nil) {
            lock.lock(); outcomes.append(error); lock.unlock()
            go.signal()
        }

        func waitForStart() -> Bool { started.wait(timeout: .now() + 20) == .success }
        var given: [StateStore.Saved] { lock.lock(); defer { lock.unlock() }; return saves }
    }

    /// The room on a queue of its own, the engine beside it, and what it hands back.
    final class Rig: @unchecked Sendable {
        let queue = DispatchQueue(label: "persistence-test")
        let store = StalledSave()
        var engine = Engine(inputs: Inputs(system: .light, override: .system, defaultMode: .light), instance: "t")
        var durable: [[String]] = []
        var failed: [([String], Errno)] = []
        let room: Persistence

        init() {
            let store = store
            room = Persistence(queue: queue, saved: StateStore.Saved(override: .system)) { s throws(Errno) in try store.save(s) }
            room.engine = { [unowned self] in self.engine }
            room.onDurable = { [unowned self] batch in
                for w in batch { if let e = w.event { _ = self.engine.apply(e) } }
                self.durable.append(batch.map(\.cause))
            }
            room.onFailed = { [unowned self] refused, error in self.failed.append((refused.map(\.cause), error)) }
        }

        func write(_ event: Event?, _ cause: String) {
            queue.sync { room.enqueue(.init(event: event, app: nil, cause: cause)) }
        }

        func on<T>(_ f: () -> T) -> T { queue.sync(execute: f) }

        func waitUntil(_ what: String, _ condition: () -> Bool) throws {
            let deadline = Date().addingTimeInterval(20)
            while !on(condition) {
                if Date() > deadline { throw TimedOutWaiting(what: what) }
                usleep(2_000)
            }
        }
    }

    struct TimedOutWaiting: Error { var what: String }

    @Test func whatComesDuringASaveGoesIntoTheNextSingleSaveInOrder() throws {
        let rig = Rig()
        rig.write(.override(.dark), "a")
        #expect(rig.store.waitForStart())
        // While the first save is stalled, three more arrive; they are decided on top of it.
        rig.write(.override(.light), "b")
        rig.write(nil, "c")  // already so, but answered in its turn
        rig.write(.temporary(TemporaryOverride(mode: .dark, expiry: .nextChange)), "d")
        #expect(rig.on { rig.room.deciding().state.mode } == .dark)
        #expect(rig.on { !rig.room.idle })
        rig.store.finish()
        #expect(rig.store.waitForStart())
        #expect(rig.store.given.count == 2)
        #expect(rig.store.given[1].override == .light && rig.store.given[1].temporary?.mode == .dark)
        rig.store.finish()
        try rig.waitUntil("both saves handed on") { rig.durable.count == 2 }
        #expect(rig.on { rig.durable } == [["a"], ["b", "c", "d"]])
        #expect(rig.on { rig.room.idle && rig.room.saved.override == .light })
        #expect(rig.on { rig.engine.state.mode } == .dark)
    }

    @Test func aFailedSaveRefusesItsWritesAndEveryOneDecidedOnTopOfThem() throws {
        let rig = Rig()
        rig.write(.override(.dark), "a")
        #expect(rig.store.waitForStart())
        rig.write(.override(.light), "b")
        rig.store.finish(failing: Errno(Errno.tooBig, "write"))
        try rig.waitUntil("the failure handed on") { !rig.failed.isEmpty }
        #expect(rig.on { rig.failed.map(\.0) } == [["a", "b"]])
        #expect(rig.on { rig.durable.isEmpty && rig.room.idle })
        #expect(rig.on { rig.engine.state.mode } == .light)  // nothing was made
        #expect(rig.on { rig.room.deciding().inputs.override } == .system)
        #expect(rig.store.given.count == 1)
    }

    @Test func aChangeThatIsAlreadySoSavesNothingButIsStillHandedOn() throws {
        let rig = Rig()
        rig.write(nil, "a")
        try rig.waitUntil("handed on") { rig.durable == [["a"]] }
        #expect(rig.store.given.isEmpty)
    }

    @Test func anInputChangedOutsideARequestIsWrittenOnce() throws {
        let rig = Rig()
        rig.on { _ = rig.engine.apply(.temporary(TemporaryOverride(mode: .dark, expiry: .nextChange))); rig.room.engineChanged() }
        rig.on { rig.room.persistIfNeeded() }
        #expect(rig.store.waitForStart())
        rig.on { rig.room.persistIfNeeded() }  // a save is under way: no second one
        rig.store.finish()
        try rig.waitUntil("saved") { rig.room.idle && rig.room.saved.temporary?.mode == .dark }
        rig.on { rig.room.persistIfNeeded() }
        #expect(rig.on { rig.room.idle })  // nothing differs from the file: no save started (it would be in flight now)
        #expect(rig.store.given.count == 1)
    }
}
