// The connection half of the libdbus wrapper: a private connection driven by Dispatch sources on one
// serial queue. libdbus tells us which fds and timeouts it needs (watch and timeout functions) and when
// messages are waiting (dispatch status function); we never poll, so an idle connection costs no wake-ups.
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

    /// Sends a method call; `reply` gets the answer (an error message on failure or timeout, libdbus's
    /// default 25 s), unless the connection is closed first. Never blocks.
    func call(_ message: Message, reply: @escaping (Message) -> Void) throws(BusError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let connection = raw else { throw BusError(name: "org.freedesktop.DBus.Error.Disconnected", message: "connection closed") }
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(connection, message.raw, &pending, -1) != 0 else { throw .noMemory }
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

    /// One message per pass, then back to the queue: a flood from the bus cannot starve the daemon's
    /// other sources (clients, signals) on the same queue.
    fileprivate func scheduleDispatch() {
        guard !dispatchScheduled, raw != nil else { return }
        dispatchScheduled = true
        queue.async { [weak self] in self?.dispatchOnce() }
    }

    private func dispatchOnce() {
        dispatchScheduled = false
        guard let connection = raw else { return }
        let status = inCallback { dbus_connection_dispatch(connection) }
        if status == DBUS_DISPATCH_DATA_REMAINS { scheduleDispatch() }
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
            return onMethodCall?(message) ?? false
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
    // Called from inside libdbus: only schedule, never dispatch from here.
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
        // Reading may queue messages (the status function then schedules a dispatch pass) or find the
        // peer gone (libdbus then removes this watch and queues `Disconnected`).
        _ = owner.inCallback { dbus_watch_handle(watch, condition) }
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
private final class TimeoutBox: @unchecked Sendable {
    // Confined to the connection's queue.
    private let timeout: OpaquePointer
    private weak var owner: BusConnection?
    private var timer: DispatchSourceTimer?

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
        let timer = DispatchSource.makeTimerSource(queue: owner.queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.resume()
        self.timer = timer
    }

    private func fire() {
        guard let owner, owner.isOpen else { return }
        _ = owner.inCallback { dbus_timeout_handle(timeout) }
    }

    func cancel() {
        timer?.cancel()
        timer = nil
    }

    deinit { cancel() }
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
