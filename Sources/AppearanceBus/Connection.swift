// The connection half of the libdbus wrapper: a private connection driven by Dispatch sources on one
// serial queue. libdbus tells us which fds and timeouts it needs (watch and timeout functions) and when
// messages are waiting (dispatch status function); we never poll, so an idle connection costs no wake-ups.
import AppearancePosix
import CDBus
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A private libdbus connection confined to `queue`: every method must be called there, and every
/// callback (signal handler, reply handler) runs there. That confinement is why it may be
/// `@unchecked Sendable`: Dispatch closures capture it, but only ever run it on `queue`.
final class BusConnection: @unchecked Sendable {
    let queue: DispatchQueue
    private var raw: OpaquePointer?
    /// Set between `close()` and the libdbus teardown, which waits for libdbus's callback to return.
    private var closing: OpaquePointer?
    /// Called for every signal the bus routes to us (our match rules), and for libdbus's local
    /// `org.freedesktop.DBus.Local.Disconnected` when the bus goes away.
    var onSignal: ((Message) -> Void)?
    /// Called for every method call addressed to us; returns true when it answered (or will never answer)
    /// the call. Calls it does not take get libdbus's own `UnknownMethod` error.
    var onMethodCall: ((Message) -> Bool)?
    private var pendingCalls: [ObjectIdentifier: PendingCall] = [:]
    private var dispatchScheduled = false
    /// Depth of libdbus callbacks on the stack: libdbus must not be torn down underneath itself.
    private var callbackDepth = 0

    /// Opens a private connection to `address` (a D-Bus address such as `unix:path=/run/user/1000/bus`).
    /// Only the socket is connected here: authentication and everything after run on `queue`, so this
    /// never waits for the bus. The connection is not registered yet: send `Hello` first.
    init(address: String, queue: DispatchQueue) throws(BusError) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.queue = queue
        var error = DBusError()
        dbus_error_init(&error)
        guard let connection = dbus_connection_open_private(address, &error) else {
            throw BusError(taking: &error)
        }
        raw = connection
        // A session daemon must outlive its bus: the default for bus connections is to exit(1).
        dbus_connection_set_exit_on_disconnect(connection, 0)
        // libdbus's limits stay (messages up to 128 MiB, 63 MiB queued): a message past the limit is not
        // dropped, the connection is, and with it the backend's name and the sentry's reading (the mode
        // would fall back and return). What a huge message costs is bounded where it is decoded instead
        // (`DecodeBounds`, then `returnFreeMemorySoon`): 560 ms and a transient 127 MB for 60 MB, where a
        // 1 MiB limit cost 10 ms and a reconnect (docs/decisions.md, "One huge D-Bus call").
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard dbus_connection_add_filter(connection, filterFunction, me, nil) != 0,
              dbus_connection_set_watch_functions(connection, addWatch, removeWatch, toggleWatch, me, nil) != 0,
              dbus_connection_set_timeout_functions(connection, addTimeout, removeTimeout, toggleTimeout, me, nil) != 0
        else {
            close()
            throw .noMemory
        }
        dbus_connection_set_dispatch_status_function(connection, dispatchStatusChanged, me, nil)
        scheduleDispatch()
    }

    deinit {
        close()
        tearDown()
    }

    var isOpen: Bool { raw != nil }

    /// Sends a method call; `reply` gets the answer (an error message on failure or after `timeout`
    /// milliseconds, -1 being libdbus's default of 25 s), unless the connection is closed first. Never
    /// blocks: libdbus writes the call at once when the socket takes it.
    func call(_ message: Message, timeout: Int32 = -1, reply: @escaping (Message) -> Void) throws(BusError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let connection = raw else { throw BusError(name: "org.freedesktop.DBus.Error.Disconnected", message: "connection closed") }
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(connection, message.raw, &pending, timeout) != 0 else { throw .noMemory }
        guard let pending else {
            throw BusError(name: "org.freedesktop.DBus.Error.Disconnected", message: "not connected to the bus")
        }
        let call = PendingCall(pending: pending, reply: reply)
        pendingCalls[ObjectIdentifier(call)] = call
        call.owner = self
        guard dbus_pending_call_set_notify(pending, pendingCallNotify, Unmanaged.passUnretained(call).toOpaque(), nil) != 0 else {
            pendingCalls[ObjectIdentifier(call)] = nil
            call.cancel()
            throw .noMemory
        }
    }

    /// Queues a message that expects no reply (a method return, an error, a signal). Never blocks.
    func send(_ message: Message) throws(BusError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let connection = raw else { throw BusError(name: "org.freedesktop.DBus.Error.Disconnected", message: "connection closed") }
        guard dbus_connection_send(connection, message.raw, nil) != 0 else { throw .noMemory }
    }

    /// Whether a trim of the heap is queued.
    private var trimQueued = false

    /// Returns the freed heap to the system in a later turn of the queue, after libdbus has let go of the
    /// message being handled: for a message that was (or may have been) huge, refused or cut short by its
    /// bounds. libdbus held all of it, twice over while reading it, and glibc keeps what is freed below its
    /// mmap threshold, which rises to 32 MiB after big frees (docs/decisions.md, "One huge D-Bus call").
    /// One trim per turn, however many messages ask for it.
    func returnFreeMemorySoon() {
        guard !trimQueued else { return }
        trimQueued = true
        queue.async { [weak self] in
            self?.trimQueued = false
            Posix.returnFreeMemory()
        }
    }

    /// Closes and releases the connection. No handler runs afterwards. Safe from inside a handler: the
    /// libdbus side is then torn down right after the current callback returns.
    func close() {
        guard let connection = raw else { return }
        raw = nil
        onSignal = nil
        onMethodCall = nil
        let calls = pendingCalls.values
        pendingCalls = [:]
        for call in calls { call.cancel() }
        closing = connection
        if callbackDepth > 0 {
            queue.async { self.tearDown() }
        } else {
            tearDown()
        }
    }

    private func tearDown() {
        guard let connection = closing else { return }
        closing = nil
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_remove_filter(connection, filterFunction, me)
        dbus_connection_set_dispatch_status_function(connection, nil, nil, nil)
        dbus_connection_close(connection)
        // Removes (and cancels the sources of) whatever watches and timeouts are still registered.
        dbus_connection_set_watch_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_unref(connection)
    }

    // MARK: - Dispatching

    /// Messages dispatched in one pass. What libdbus has just read is dispatched in the same turn of the
    /// queue (a signal's handler sends its `Read` at once, a reply reaches the daemon without another hop);
    /// past this many, the rest waits for a pass at the back of the queue, so a flood from the bus cannot
    /// starve the daemon's other sources (clients, signals) on the same queue.
    static let messagesPerPass = 8

    /// True while `dbus_watch_handle` reads: the watch handler dispatches right after it, so the dispatch
    /// status function need not schedule a pass.
    fileprivate var handlingWatch = false

    fileprivate func scheduleDispatch() {
        guard !dispatchScheduled, !handlingWatch, raw != nil else { return }
        dispatchScheduled = true
        queue.async { [weak self] in
            guard let self else { return }
            self.dispatchScheduled = false
            self.dispatchPending()
        }
    }

    /// Dispatches what libdbus has queued, at most `messagesPerPass` messages; one more pass is scheduled for
    /// the rest. Never from inside a libdbus callback: from the queue, with nothing of libdbus on the stack.
    fileprivate func dispatchPending() {
        guard let connection = raw else { return }
        var status = dbus_connection_get_dispatch_status(connection)
        var budget = Self.messagesPerPass
        while status == DBUS_DISPATCH_DATA_REMAINS {
            guard budget > 0 else {
                scheduleDispatch()
                return
            }
            budget -= 1
            status = inCallback { dbus_connection_dispatch(connection) }
            // A handler may have closed the connection: libdbus's side is then torn down after this turn.
            guard raw != nil else { return }
        }
    }

    /// Lets libdbus read or write for a watch, then dispatches what it read in the same turn.
    fileprivate func handle(_ watch: OpaquePointer, _ condition: UInt32) {
        handlingWatch = true
        // Reading may queue messages or find the peer gone (libdbus then removes the watch and queues
        // `Disconnected`).
        _ = inCallback { dbus_watch_handle(watch, condition) }
        handlingWatch = false
        dispatchPending()
    }

    fileprivate func inCallback<T>(_ body: () -> T) -> T {
        callbackDepth += 1
        defer { callbackDepth -= 1 }
        return body()
    }

    /// Routes an incoming message; true when it was a method call that a handler took.
    fileprivate func deliver(_ message: Message) -> Bool {
        guard raw != nil else { return false }
        switch message.type {
        case MessageType.signal:
            onSignal?(message)
            return false
        case MessageType.methodCall:
            let taken = onMethodCall?(message) ?? false
            // libdbus answers UnknownMethod; the call may have been huge all the same.
            if !taken { returnFreeMemorySoon() }
            return taken
        default:
            return false
        }
    }

    fileprivate func complete(_ call: PendingCall) {
        guard pendingCalls.removeValue(forKey: ObjectIdentifier(call)) != nil else { return }
        guard let reply = call.stealReply() else { return }
        call.reply(reply)
    }
}

/// A reply we are waiting for. Kept alive by the connection's table, not by libdbus.
private final class PendingCall {
    private var pending: OpaquePointer?
    let reply: (Message) -> Void
    weak var owner: BusConnection?

    init(pending: OpaquePointer, reply: @escaping (Message) -> Void) {
        self.pending = pending
        self.reply = reply
    }

    func stealReply() -> Message? {
        guard let p = pending else { return nil }
        pending = nil
        defer { dbus_pending_call_unref(p) }
        return dbus_pending_call_steal_reply(p).map { Message(adopting: $0) }
    }

    func cancel() {
        guard let p = pending else { return }
        pending = nil
        dbus_pending_call_cancel(p)
        dbus_pending_call_unref(p)
    }

    deinit { cancel() }
}

// MARK: - libdbus callbacks
// C function pointers cannot capture: the object comes back through the user-data pointer. The
// connection's user data is unretained (it unregisters everything before it goes away); watch and
// timeout boxes are retained by libdbus and released through `releaseBox` when libdbus frees them.

private func connection(_ data: UnsafeMutableRawPointer?) -> BusConnection {
    Unmanaged<BusConnection>.fromOpaque(data!).takeUnretainedValue()
}

private let filterFunction: DBusHandleMessageFunction = { _, message, data in
    let owner = connection(data)
    // Signals are never claimed; a method call nobody takes gets libdbus's own UnknownMethod error.
    guard let message, owner.deliver(Message(borrowing: message)) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    return DBUS_HANDLER_RESULT_HANDLED
}

private let pendingCallNotify: DBusPendingCallNotifyFunction = { _, data in
    let call = Unmanaged<PendingCall>.fromOpaque(data!).takeUnretainedValue()
    call.owner?.complete(call)
}

private let dispatchStatusChanged: DBusDispatchStatusFunction = { _, status, data in
    // Called from inside libdbus: only schedule (or leave it to the watch handler), never dispatch from here.
    if status == DBUS_DISPATCH_DATA_REMAINS { connection(data).scheduleDispatch() }
}

private let releaseBox: DBusFreeFunction = { data in
    Unmanaged<AnyObject>.fromOpaque(data!).release()
}

/// The Dispatch sources for one libdbus watch (an fd plus readable and/or writable interest).
///
/// Sources exist only while libdbus has the watch enabled: they are made on enable and cancelled on
/// disable, never left suspended. With libdispatch on Linux, a suspended (or never resumed) source on an
/// fd was seen to make another source on the same fd miss events: a read could go unseen for good.
///
/// The sources watch a duplicate of libdbus's descriptor, closed by the last of their cancel handlers.
/// libdbus closes its own descriptor right after removing a watch (on every loss of the bus), while the
/// cancellation of the sources is still pending: watching that number directly, a source could outlive it
/// and end up watching whatever the next `socket()` or `accept()` received (a client, the new bus).
private final class WatchBox: @unchecked Sendable {
    // Confined to the connection's queue, like the connection itself.
    private let watch: OpaquePointer
    private weak var owner: BusConnection?
    private var sources: [DispatchSourceProtocol] = []

    init(watch: OpaquePointer, owner: BusConnection) {
        self.watch = watch
        self.owner = owner
        update()
    }

    private func handle(_ condition: UInt32) {
        guard !sources.isEmpty, let owner, owner.isOpen else { return }
        owner.handle(watch, condition)
    }

    /// Follows libdbus's enabled flag: the write source, for example, only exists while output is queued.
    func update() {
        let enabled = dbus_watch_get_enabled(watch) != 0
        guard enabled != !sources.isEmpty else { return }
        guard enabled, let owner else { cancel(); return }
        let flags = dbus_watch_get_flags(watch)
        // The duplicate lives exactly as long as the sources made here: closed after the last cancel.
        let fd = fcntl(dbus_watch_get_unix_fd(watch), F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else {
            // Out of descriptors: libdbus's own timeouts (pending calls) still end what waits on this bus.
            return
        }
        if flags & DBUS_WATCH_READABLE.rawValue != 0 {
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: owner.queue)
            source.setEventHandler { [weak self] in self?.handle(DBUS_WATCH_READABLE.rawValue) }
            sources.append(source)
        }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: owner.queue)
            source.setEventHandler { [weak self] in self?.handle(DBUS_WATCH_WRITABLE.rawValue) }
            sources.append(source)
        }
        let duplicate = SharedDescriptor(fd, users: sources.count)
        for source in sources { source.setCancelHandler { duplicate.release() } }
        for source in sources { source.resume() }
    }

    func cancel() {
        for source in sources { source.cancel() }
        sources = []
    }

    deinit { cancel() }
}

/// A descriptor closed when its last user lets go. Confined to the connection's queue (cancel handlers
/// run there), hence `@unchecked Sendable`.
private final class SharedDescriptor: @unchecked Sendable {
    private let fd: Int32
    private var users: Int

    init(_ fd: Int32, users: Int) {
        self.fd = fd
        self.users = users
        if users == 0 { close(fd) }
    }

    func release() {
        users -= 1
        if users == 0 { close(fd) }
    }
}

private let addWatch: DBusAddWatchFunction = { watch, data in
    guard let watch else { return 0 }
    let box = WatchBox(watch: watch, owner: connection(data))
    dbus_watch_set_data(watch, Unmanaged.passRetained(box as AnyObject).toOpaque(), releaseBox)
    return 1
}

private let removeWatch: DBusRemoveWatchFunction = { watch, _ in
    guard let watch, let data = dbus_watch_get_data(watch) else { return }
    (Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? WatchBox)?.cancel()
}

private let toggleWatch: DBusWatchToggledFunction = { watch, _ in
    guard let watch, let data = dbus_watch_get_data(watch) else { return }
    (Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? WatchBox)?.update()
}

/// A one-timer-per-timeout mirror of a libdbus timeout (used for method-call timeouts: they exist only
/// while a call is pending).
///
/// Arming or cancelling a Dispatch timer wakes Dispatch's manager thread (a write to its eventfd). libdbus
/// adds a call's timeout before it writes the call, and removes it when the reply is read, before the reply
/// is dispatched; so both are done in the next turn of the queue, and neither delays the call or its
/// reply. The generation keeps that safe: a timer, or an arming still to come, of an earlier generation
/// never calls libdbus.
private final class TimeoutBox: @unchecked Sendable {
    // Confined to the connection's queue.
    private let timeout: OpaquePointer
    private weak var owner: BusConnection?
    private var timer: DispatchSourceTimer?
    /// Bumped by every update and cancel.
    private var generation = 0

    init(timeout: OpaquePointer, owner: BusConnection) {
        self.timeout = timeout
        self.owner = owner
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
        guard let queue = owner?.queue else {
            timer.cancel()
            return
        }
        let retired = RetiredTimer(timer)
        queue.async { retired.timer.cancel() }
    }

    deinit { cancel() }
}

/// A timer on its way to being cancelled (`dispatch_source_cancel` may be called from any thread).
private final class RetiredTimer: @unchecked Sendable {
    let timer: DispatchSourceTimer
    init(_ timer: DispatchSourceTimer) { self.timer = timer }
}

private let addTimeout: DBusAddTimeoutFunction = { timeout, data in
    guard let timeout else { return 0 }
    let box = TimeoutBox(timeout: timeout, owner: connection(data))
    dbus_timeout_set_data(timeout, Unmanaged.passRetained(box as AnyObject).toOpaque(), releaseBox)
    return 1
}

private let removeTimeout: DBusRemoveTimeoutFunction = { timeout, _ in
    guard let timeout, let data = dbus_timeout_get_data(timeout) else { return }
    (Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? TimeoutBox)?.cancel()
}

private let toggleTimeout: DBusTimeoutToggledFunction = { timeout, _ in
    guard let timeout, let data = dbus_timeout_get_data(timeout) else { return }
    (Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? TimeoutBox)?.update()
}
