// The connection half of the libdbus wrapper: a private connection confined to one queue, driven by libdbus's
// watch, timeout and dispatch status functions (ConnectionSources.swift); an idle connection costs no wake-ups.
import AppearancePosix
import CDBus
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A private libdbus connection confined to `queue` (hence `@unchecked Sendable`): every method is called and every
/// handler runs there.
final class BusConnection: @unchecked Sendable {
    let queue: DispatchQueue
    private var raw: OpaquePointer?
    /// Set between `close()` and the libdbus teardown, which waits for libdbus's callback to return.
    private var closing: OpaquePointer?
    /// Every signal the bus routes to us, and libdbus's local `Disconnected` when the bus goes away.
    var onSignal: ((Message) -> Void)?
    /// Every method call to us; true when it answered (or will never answer) it, else libdbus answers UnknownMethod.
    var onMethodCall: ((Message) -> Bool)?
    /// Calls waiting for their reply, by serial (`call`).
    private var pendingCalls: [UInt32: PendingCall] = [:]
    /// Ends calls at their deadline: armed for the earliest one when none is armed, or an earlier one comes.
    private var expiry: DispatchSourceTimer?
    private var expiryArmedFor: DispatchTime = .distantFuture
    private var dispatchScheduled = false
    /// Depth of libdbus callbacks on the stack: libdbus must not be torn down underneath itself.
    private var callbackDepth = 0

    /// Opens a private connection to `address`: only the socket is connected here (authentication runs on `queue`,
    /// never waited for); `Hello` is the caller's.
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
        // libdbus's size limits stay: a huge message is bounded where it is decoded instead (`DecodeBounds`,
        // `returnFreeMemorySoon`; docs/decisions.md, "One huge D-Bus call").
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

    /// Sends a method call without blocking; `reply` gets the answer, an error, or `NoReply` when the bus is lost or
    /// after `timeout` ms (-1: 25 s), unless the connection is closed first. Replies are matched here by serial, not
    /// by libdbus's pending calls, 21 K instructions each (docs/decisions.md, "A reading thread for the bus").
    func call(_ message: Message, timeout: Int32 = -1, reply: @escaping (Message) -> Void) throws(BusError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let connection = raw else { throw BusError(name: "org.freedesktop.DBus.Error.Disconnected", message: "connection closed") }
        guard dbus_connection_get_is_connected(connection) != 0 else {
            throw BusError(name: "org.freedesktop.DBus.Error.Disconnected", message: "not connected to the bus")
        }
        var serial: UInt32 = 0
        guard dbus_connection_send(connection, message.raw, &serial) != 0 else { throw .noMemory }
        let deadline = DispatchTime.now() + .milliseconds(Int(timeout < 0 ? Self.defaultTimeout : timeout))
        pendingCalls[serial] = PendingCall(call: message, deadline: deadline, reply: reply)
        if deadline < expiryArmedFor { armExpiry(deadline) }
    }

    /// libdbus's default for a call's reply.
    static let defaultTimeout: Int32 = 25_000

    /// Arms the expiry for `deadline` in the next turn of the queue (arming wakes Dispatch's manager thread).
    private func armExpiry(_ deadline: DispatchTime) {
        expiryArmedFor = deadline
        queue.async { [weak self] in
            guard let self, self.raw != nil, self.expiryArmedFor == deadline else { return }
            let timer = self.expiry ?? DispatchSource.makeTimerSource(queue: self.queue)
            if self.expiry == nil {
                timer.setEventHandler { [weak self] in self?.expire() }
                timer.activate()
                self.expiry = timer
            }
            timer.schedule(deadline: deadline, repeating: .never)
        }
    }

    /// Ends the calls whose deadline has passed with `NoReply`, then arms for the next one, if any.
    private func expire() {
        expiryArmedFor = .distantFuture
        let now = DispatchTime.now()
        end(pendingCalls.filter { $0.value.deadline <= now }.map(\.key), "Did not receive a reply within its timeout")
        // Closed by a handler, the list is empty.
        if let next = pendingCalls.values.map(\.deadline).min() { armExpiry(next) }
    }

    /// Takes these calls off the list, then ends them in the order they were sent with NoReply (while still open).
    private func end(_ serials: [UInt32], _ text: String) {
        let calls = serials.sorted().compactMap { pendingCalls.removeValue(forKey: $0) }
        let noReply = BusError(name: "org.freedesktop.DBus.Error.NoReply", message: text)
        for call in calls where raw != nil {
            if let error = Message.errorReply(to: call.call, noReply) { call.reply(error) }
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

    /// Returns the freed heap to the system in a later turn (once per turn), after a message that may have been
    /// huge is let go (docs/decisions.md, "One huge D-Bus call").
    func returnFreeMemorySoon() {
        guard !trimQueued else { return }
        trimQueued = true
        queue.async { [weak self] in
            self?.trimQueued = false
            Posix.returnFreeMemory()
        }
    }

    /// Closes the connection; no handler runs afterwards. From inside a handler, libdbus's side goes after it returns.
    func close() {
        guard let connection = raw else { return }
        raw = nil
        onSignal = nil
        onMethodCall = nil
        pendingCalls = [:]
        expiry?.cancel()
        expiry = nil
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

    /// Messages dispatched in one turn of the queue; the rest wait for a later pass, after `sched_yield`, so a flood
    /// gives way to other work (docs/decisions.md, "The bus's own queue").
    static let messagesPerPass = 2

    /// True while `dbus_watch_handle` reads: the watch handler dispatches right after, no pass is scheduled.
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

    /// Dispatches at most `messagesPerPass` queued messages, scheduling a pass for the rest; never inside libdbus.
    fileprivate func dispatchPending() {
        guard let connection = raw else { return }
        var status = dbus_connection_get_dispatch_status(connection)
        var budget = Self.messagesPerPass
        while status == DBUS_DISPATCH_DATA_REMAINS {
            guard budget > 0 else {
                sched_yield()
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
    func handle(_ watch: OpaquePointer, _ condition: UInt32) {
        handlingWatch = true
        // Reading may queue messages or find the peer gone (libdbus then queues `Disconnected`).
        _ = inCallback { dbus_watch_handle(watch, condition) }
        handlingWatch = false
        dispatchPending()
    }

    func inCallback<T>(_ body: () -> T) -> T {
        callbackDepth += 1
        defer { callbackDepth -= 1 }
        return body()
    }

    /// Routes an incoming message; true when it was a method call that a handler took.
    fileprivate func deliver(_ message: Message) -> Bool {
        guard raw != nil else { return false }
        switch message.type {
        case DBUS_MESSAGE_TYPE_METHOD_RETURN, DBUS_MESSAGE_TYPE_ERROR:
            guard let call = pendingCalls.removeValue(forKey: dbus_message_get_reply_serial(message.raw)) else { return false }
            call.reply(message)
            return true
        case DBUS_MESSAGE_TYPE_SIGNAL:
            if message.isSignal("org.freedesktop.DBus.Local", "Disconnected") {
                // As libdbus does for its own pending calls: every call still waiting ends before the loss is told.
                end(Array(pendingCalls.keys), "The connection was lost before a reply came")
                guard raw != nil else { return false }
            }
            onSignal?(message)
            return false
        case DBUS_MESSAGE_TYPE_METHOD_CALL:
            let taken = onMethodCall?(message) ?? false
            // libdbus answers UnknownMethod; the call may have been huge all the same.
            if !taken { returnFreeMemorySoon() }
            return taken
        default:
            return false
        }
    }
}

/// A call waiting for its reply: the call (for the error that may end it), its deadline, who gets the reply.
private struct PendingCall {
    let call: Message
    let deadline: DispatchTime
    let reply: (Message) -> Void
}

// MARK: - libdbus callbacks
// The object comes back through the user-data pointer: the connection's unretained, the boxes retained by libdbus.

func connection(_ data: UnsafeMutableRawPointer?) -> BusConnection {
    Unmanaged<BusConnection>.fromOpaque(data!).takeUnretainedValue()
}

private let filterFunction: DBusHandleMessageFunction = { _, message, data in
    let owner = connection(data)
    // Signals are never claimed; a method call nobody takes gets libdbus's own UnknownMethod error.
    guard let message, owner.deliver(Message(borrowing: message)) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    return DBUS_HANDLER_RESULT_HANDLED
}

private let dispatchStatusChanged: DBusDispatchStatusFunction = { _, status, data in
    // Called from inside libdbus: only schedule (or leave it to the watch handler), never dispatch from here.
    if status == DBUS_DISPATCH_DATA_REMAINS { connection(data).scheduleDispatch() }
}

let releaseBox: DBusFreeFunction = { data in
    Unmanaged<AnyObject>.fromOpaque(data!).release()
}
