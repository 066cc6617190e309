// The connection half of the libdbus wrapper: a private connection confined to one serial queue, read by a
// thread of its own that runs libdbus on that queue, written and timed by Dispatch sources. libdbus tells us
// which fds and timeouts it needs (watch and timeout functions) and when messages are waiting (dispatch status
// function); nothing polls with a timeout, so an idle connection costs no wake-ups.
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
    /// Calls waiting for their reply, by serial (`call`).
    private var pendingCalls: [UInt32: PendingCall] = [:]
    /// Ends calls at their deadline: armed for the earliest one when none is armed, or an earlier one comes.
    private var expiry: DispatchSourceTimer?
    private var expiryArmedFor: DispatchTime = .distantFuture
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

    /// Sends a method call; `reply` gets the answer (an error message on failure, when the bus is lost, or
    /// `NoReply` after `timeout` milliseconds, -1 being libdbus's default of 25 s), unless the connection is
    /// closed first. Never blocks: libdbus writes the call at once when the socket takes it.
    ///
    /// Replies are matched here, by serial, not by libdbus's pending calls: `dbus_connection_send_with_reply`
    /// builds the timeout's error message up front for every call (21 K instructions for a `Read`, on the way
    /// from the portal's signal to its re-read) and arms and disarms a timeout per call (docs/decisions.md, "A
    /// reading thread for the bus"). dbus-daemon delivers a reply only from the callee, as for libdbus's own.
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

    /// Arms the expiry for `deadline`, in the next turn of the queue: arming a Dispatch timer wakes Dispatch's
    /// manager thread, which must not stand between a call and what it was made for.
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
        let due = pendingCalls.filter { $0.value.deadline <= now }.sorted { $0.key < $1.key }
        for (serial, _) in due { pendingCalls[serial] = nil }
        for (_, call) in due {
            guard raw != nil else { return }
            call.fail("org.freedesktop.DBus.Error.NoReply", "Did not receive a reply within its timeout")
        }
        if let next = pendingCalls.values.map(\.deadline).min() { armExpiry(next) }
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

    /// Messages dispatched in one pass. What libdbus has just read is dispatched in the same turn of the
    /// queue (a signal's handler sends its `Read` at once, a reply reaches the daemon without another hop);
    /// past this many, the rest waits for a pass at the back of the queue, and the thread yields the CPU
    /// first (`sched_yield`): a flood from the bus then gives way to other work after every two messages,
    /// the socket clients' thread on the same CPU included (docs/decisions.md, "The bus's own queue"; 8 a
    /// pass measured a pinned victim's p99 at 2.0× idle, 2 at 1.4×, for about 7 % more CPU a call).
    static let messagesPerPass = 2

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
        // Reading may queue messages or find the peer gone (libdbus then removes the watch and queues
        // `Disconnected`).
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
        case MessageType.methodReturn, MessageType.error:
            guard let call = pendingCalls.removeValue(forKey: dbus_message_get_reply_serial(message.raw)) else { return false }
            call.reply(message)
            return true
        case MessageType.signal:
            if message.isSignal("org.freedesktop.DBus.Local", "Disconnected") {
                // As libdbus does for its own pending calls: every call still waiting ends before the loss is told.
                let calls = pendingCalls.sorted { $0.key < $1.key }
                pendingCalls = [:]
                for (_, call) in calls where raw != nil {
                    call.fail("org.freedesktop.DBus.Error.NoReply", "The connection was lost before a reply came")
                }
                guard raw != nil else { return false }
            }
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
}

/// A call waiting for its reply: the call itself (for the error that ends it otherwise), its deadline, and who
/// gets the reply.
private struct PendingCall {
    let call: Message
    let deadline: DispatchTime
    let reply: (Message) -> Void

    func fail(_ name: String, _ text: String) {
        guard let error = Message.errorReply(to: call, BusError(name: name, message: text)) else { return }
        reply(error)
    }
}

// MARK: - libdbus callbacks
// C function pointers cannot capture: the object comes back through the user-data pointer. The
// connection's user data is unretained (it unregisters everything before it goes away); watch and
// timeout boxes are retained by libdbus and released through `releaseBox` when libdbus frees them.

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
