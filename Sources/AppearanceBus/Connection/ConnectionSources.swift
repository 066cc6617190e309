import CDBus
import Dispatch
import AppearancePosix
import Glibc

// What drives libdbus's watches and timeouts (handed to libdbus by BusConnection): a reading thread and Dispatch
// sources, confined to the connection's queue.

/// One libdbus watch: a thread of its own for reading (`ReadingThread`, which runs libdbus on the queue with `sync`:
/// one wake-up a message, docs/decisions.md, "A reading thread for the bus"), a Dispatch source for writing (rare).
/// Both exist only while the watch is enabled (a suspended source on Linux made another on its fd miss events), and
/// each watches a duplicate of libdbus's descriptor, which libdbus closes while a cancellation may be pending.
final class WatchBox: @unchecked Sendable {
    // Confined to the connection's queue, like the connection itself.
    private let watch: OpaquePointer
    private weak var owner: BusConnection?
    private var sources: [DispatchSourceProtocol] = []
    private var reader: ReadingThread?

    init(watch: OpaquePointer, owner: BusConnection) {
        (self.watch, self.owner) = (watch, owner)
        update()
    }

    private var isOn: Bool { !sources.isEmpty || reader != nil }

    private func handle(_ condition: UInt32) {
        guard isOn, let owner, owner.isOpen else { return }
        owner.handle(watch, condition)
    }

    /// Follows libdbus's enabled flag: the write source, for example, only exists while output is queued.
    func update() {
        let enabled = dbus_watch_get_enabled(watch) != 0
        guard enabled != isOn else { return }
        guard enabled, let owner else { cancel(); return }
        let flags = dbus_watch_get_flags(watch)
        if flags & DBUS_WATCH_READABLE.rawValue != 0 {
            let queue = owner.queue
            // Short turns (docs/decisions.md, "A short slice for the bus's reader").
            let reader = ReadingThread(dbus_watch_get_unix_fd(watch), slice: 100_000) { [weak self] reader in
                // On the reader's thread: at once when the queue is idle, else after its current turn.
                queue.sync {
                    guard let self, self.reader === reader else { return }
                    self.handle(DBUS_WATCH_READABLE.rawValue)
                }
            }
            // Out of descriptors or threads: the calls' deadlines end what waits; the next toggle tries again.
            if reader.started { self.reader = reader }
        }
        guard flags & DBUS_WATCH_WRITABLE.rawValue != 0 else { return }
        // Closed by the source's cancel handler; out of descriptors, the calls' deadlines end what waits.
        let fd = fcntl(dbus_watch_get_unix_fd(watch), F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { return }
        let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: owner.queue)
        source.setEventHandler { [weak self] in self?.handle(DBUS_WATCH_WRITABLE.rawValue) }
        source.setCancelHandler { close(fd) }
        sources.append(source)
        source.resume()
    }

    func cancel() {
        for source in sources { source.cancel() }
        sources = []
        reader?.cancel()
        reader = nil
    }

    deinit { cancel() }
}

let addWatch: DBusAddWatchFunction = { watch, data in
    guard let watch else { return 0 }
    let box = WatchBox(watch: watch, owner: connection(data))
    dbus_watch_set_data(watch, Unmanaged.passRetained(box as AnyObject).toOpaque(), releaseBox)
    return 1
}

/// The box a watch or timeout carries as its data (`passRetained` by the add function, released by libdbus).
private func boxed<Box: AnyObject>(_ data: UnsafeMutableRawPointer?, _: Box.Type) -> Box? {
    data.flatMap { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() as? Box }
}

let removeWatch: DBusRemoveWatchFunction = { watch, _ in boxed(watch.flatMap(dbus_watch_get_data), WatchBox.self)?.cancel() }
let toggleWatch: DBusWatchToggledFunction = { watch, _ in boxed(watch.flatMap(dbus_watch_get_data), WatchBox.self)?.update() }

/// A libdbus timeout as a Dispatch timer (libdbus adds some still, though replies are matched by serial). Arming
/// and cancelling wait for the next turn of the queue, as they wake Dispatch's manager thread; the generation
/// keeps an older timer or arming from calling libdbus.
final class TimeoutBox: @unchecked Sendable {
    // Confined to the connection's queue.
    private let timeout: OpaquePointer
    private weak var owner: BusConnection?
    private var timer: DispatchSourceTimer?
    /// Bumped by every update and cancel.
    private var generation = 0

    init(timeout: OpaquePointer, owner: BusConnection) {
        (self.timeout, self.owner) = (timeout, owner)
        update()
    }

    /// libdbus restarts the interval whenever it toggles a timeout, so the timer is simply rebuilt.
    func update() {
        cancel()
        guard let owner, dbus_timeout_get_enabled(timeout) != 0 else { return }
        let interval = DispatchTimeInterval.milliseconds(Int(dbus_timeout_get_interval(timeout)))
        let armed = generation
        let deadline = DispatchTime.now() + interval
        owner.queue.async { [weak self] in self?.arm(armed, deadline: deadline, interval: interval) }
    }

    private func arm(_ armed: Int, deadline: DispatchTime, interval: DispatchTimeInterval) {
        guard armed == generation, let owner, owner.isOpen else { return }
        let timer = DispatchSource.makeTimerSource(queue: owner.queue)
        timer.schedule(deadline: deadline, repeating: interval)
        timer.setEventHandler { [weak self] in self?.fire(armed) }
        timer.resume()
        self.timer = timer
    }

    private func fire(_ armed: Int) {
        guard armed == generation, let owner, owner.isOpen else { return }
        _ = owner.inCallback { dbus_timeout_handle(timeout) }
    }

    func cancel() {
        generation += 1
        guard let timer else { return }
        self.timer = nil
        guard let queue = owner?.queue else { return timer.cancel() }
        let retired = RetiredTimer(timer)
        queue.async { retired.timer.cancel() }
    }

    deinit { cancel() }
}

/// A timer on its way to being cancelled (`dispatch_source_cancel` may be called from any thread).
final class RetiredTimer: @unchecked Sendable {
    let timer: DispatchSourceTimer
    init(_ timer: DispatchSourceTimer) { self.timer = timer }
}

let addTimeout: DBusAddTimeoutFunction = { timeout, data in
    guard let timeout else { return 0 }
    let box = TimeoutBox(timeout: timeout, owner: connection(data))
    dbus_timeout_set_data(timeout, Unmanaged.passRetained(box as AnyObject).toOpaque(), releaseBox)
    return 1
}

let removeTimeout: DBusRemoveTimeoutFunction = { t, _ in boxed(t.flatMap(dbus_timeout_get_data), TimeoutBox.self)?.cancel() }
let toggleTimeout: DBusTimeoutToggledFunction = { t, _ in boxed(t.flatMap(dbus_timeout_get_data), TimeoutBox.self)?.update() }
