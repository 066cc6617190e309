// The one client of a bus (session or system), shared by everything appearanced does there: it registers, owns
// names first, keeps its users' match rules, follows names, routes signals and calls, and reconnects with one
// back-off (docs/decisions.md, "One client per bus"). Confined to its queue.
import AppearanceCore
import AppearancePosix
import CDBus
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Something that uses a bus: told when a connection is registered and when it is gone.
protocol BusPeer: AnyObject {
    /// The connection is registered (Hello answered), the owned names asked for and the match rules added.
    func connected(_ connection: BusConnection)
    /// The connection is gone, or there is none; `detail` says why.
    func disconnected(_ detail: String)
}

/// Whether a name asked for with `BusClient.own` is ours.
enum NameState: Equatable { case asking, owned, taken, refused(String) }

/// What a `PropertyWatch` reports: every property of the interface as last read and changed, or why
/// there are none (the service absent or gone, the bus gone, a refusal, an answer past its bounds).
enum PropertyReading: Equatable {
    case values([String: BusValue])
    case absent(String)
}

public final class BusClient: @unchecked Sendable {
    // Confined to `queue`: every stored property is read and written only there, and every handler runs there.
    let queue: DispatchQueue
    /// "session bus" or "system bus", for messages.
    let label: String
    private let address: Result<String, BusError>
    private let log: (LogLevel, String) -> Void
    private var backoff: Backoff
    private(set) var connection: BusConnection?
    /// Hello answered on `connection`.
    private var registered = false
    private var started = false
    /// Whether a failed connection is tried again (a user asked for it: `start(retrying:)`).
    private var retrying = false
    private let retryTimer: OneShot
    /// Seconds until the next attempt, while one is planned.
    private(set) var retryIn: Double?
    /// Attempts failed or connections lost since the last registration.
    private(set) var failures = 0
    /// Users, in the order they came: told of a connection in that order.
    private var users: [User] = []
    private var names: [String: Owned] = [:]

    private final class User {
        weak var owner: AnyObject?
        weak var peer: BusPeer?
        var rules: [String] = []
        /// Interface and member as C strings: compared with the message's own, nothing decoded.
        var signals: [(interface: ContiguousArray<CChar>, member: ContiguousArray<CChar>, handle: (Message) -> Void)] = []
        var follows: [(name: String, handle: (String?) -> Void)] = []
        var objects: [(path: String, handle: (Message) -> Bool)] = []
        init(_ owner: AnyObject) { self.owner = owner }
    }

    private struct Owned {
        var state: NameState
        let done: (NameState) -> Void
    }

    /// The session bus (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`; never X11 autolaunch) or `address`.
    public static func session(queue: DispatchQueue, address: String? = nil, log: @escaping (LogLevel, String) -> Void) -> BusClient {
        BusClient(queue: queue, label: "session bus", log: log, backoff: Backoff(firstMilliseconds: 250, longestMilliseconds: 30_000),
                  address: address.map { .success($0) } ?? Result { () throws(BusError) in try sessionBusAddress() })
    }

    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`) or `address`.
    public static func system(queue: DispatchQueue, address: String? = nil, log: @escaping (LogLevel, String) -> Void) -> BusClient {
        BusClient(queue: queue, label: "system bus", log: log, backoff: Backoff(firstMilliseconds: 1_000, longestMilliseconds: 300_000),
                  address: .success(address ?? Posix.environment("DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/run/dbus/system_bus_socket"))
    }

    /// The address is worked out once, on the caller's thread: the bus's queue must not call getenv.
    private init(queue: DispatchQueue, label: String, log: @escaping (LogLevel, String) -> Void, backoff: Backoff,
                 address: Result<String, BusError>) {
        (self.queue, self.label, self.log, self.backoff, self.address) = (queue, label, log, backoff, address)
        retryTimer = OneShot(queue)
    }

    /// libdbus's own lookup for the session bus, minus X11 autolaunch (a daemon must not spawn one).
    static func sessionBusAddress() throws(BusError) -> String {
        if let address = Posix.environment("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty { return address }
        guard let runtime = Posix.environment("XDG_RUNTIME_DIR"), !runtime.isEmpty,
              let escaped = dbus_address_escape_value(runtime + "/bus")
        else {
            throw BusError(name: "org.freedesktop.DBus.Error.NotSupported",
                           message: "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set; start appearanced inside the user session")
        }
        defer { dbus_free(escaped) }
        return "unix:path=" + String(cString: escaped)
    }

    // MARK: - Starting and stopping

    /// Connects unless connected or connecting; `retrying`: a failed or lost connection is tried again (else left).
    func start(retrying: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        if retrying && !self.retrying {
            self.retrying = true
            // A user that needs the bus: try now rather than never.
            if started, connection == nil, !retryTimer.pending, case .success = address { connect() }
        }
        guard !started else { return }
        started = true
        connect()
    }

    /// Closes the connection; every peer is told. `start` connects again.
    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        (started, retrying) = (false, false)
        retryTimer.cancel()
        retryIn = nil
        drop("stopped")
    }

    /// Removes what `owner` added (rules, handlers, objects, names, peer); rules nobody else uses leave the bus.
    func forget(_ owner: AnyObject) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let i = users.firstIndex(where: { $0.owner === owner }) else { return }
        let gone = users.remove(at: i)
        for rule in gone.rules where !users.contains(where: { $0.rules.contains(rule) }) {
            if registered { callBus("RemoveMatch", [.string(rule)]) }
        }
    }

    private func user(_ owner: AnyObject) -> User {
        users.first { $0.owner === owner } ?? { let u = User(owner); users.append(u); return u }()
    }

    /// Adds a peer, told of every connection and loss from now on (at once when connected already).
    func add(_ peer: BusPeer) {
        dispatchPrecondition(condition: .onQueue(queue))
        user(peer).peer = peer
        if registered, let connection { peer.connected(connection) }
    }

    // MARK: - Rules, signals, names, objects

    /// A match rule kept on the bus while `owner` is here, on every connection.
    func addMatch(_ rule: String, for owner: AnyObject) {
        let u = user(owner)
        guard !u.rules.contains(rule) else { return }
        let known = users.contains { $0.rules.contains(rule) }
        u.rules.append(rule)
        if registered, !known { addMatchNow(rule) }
    }

    /// Takes a match rule of `owner`'s off the bus (unless another user has it too).
    func removeMatch(_ rule: String, for owner: AnyObject) {
        guard let u = users.first(where: { $0.owner === owner }), let i = u.rules.firstIndex(of: rule) else { return }
        u.rules.remove(at: i)
        if registered, !users.contains(where: { $0.rules.contains(rule) }) { callBus("RemoveMatch", [.string(rule)]) }
    }

    /// `handle` gets every signal of `interface`.`member` the connection's rules bring (and a signal sent to us).
    func onSignal(_ interface: String, _ member: String, for owner: AnyObject, _ handle: @escaping (Message) -> Void) {
        user(owner).signals.append((interface.utf8CString, member.utf8CString, handle))
    }

    /// `handle` gets the new owner of `name` (nil: it left the bus) each time it changes.
    func follow(_ name: String, for owner: AnyObject, _ handle: @escaping (String?) -> Void) {
        addMatch(BusClient.ownerRule(name), for: owner)
        user(owner).follows.append((name, handle))
    }

    /// Method calls to `path` go to `handle`, which returns true when it answered (or will answer) the call.
    func export(_ path: String, for owner: AnyObject, _ handle: @escaping (Message) -> Bool) {
        user(owner).objects.append((path, handle))
    }

    /// Asks for `name` (DO_NOT_QUEUE) on every connection before its users are told of it, and again when another
    /// owner lets it go.
    func own(_ name: String, _ done: @escaping (NameState) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard names[name] == nil else { return }
        names[name] = Owned(state: .asking, done: done)
        if registered { requestName(name) }
    }

    /// Lets `name` go (if ours) and stops asking for it.
    func release(_ name: String) {
        guard let owned = names.removeValue(forKey: name) else { return }
        guard registered else { return }
        if owned.state == .owned || owned.state == .asking { callBus("ReleaseName", [.string(name)]) }
        callBus("RemoveMatch", [.string(BusClient.ownerRule(name))])
    }

    func nameState(_ name: String) -> NameState? { names[name]?.state }

    private func requestName(_ name: String) {
        guard let connection else { return }
        names[name]?.state = .asking
        addMatchNow(BusClient.ownerRule(name))
        callBus("RequestName", [.string(name), .uint32(4)]) { [weak self] reply in
            guard let self, self.connection === connection, self.names[name] != nil else { return }
            let state: NameState
            if let error = reply.error {
                state = .refused("the \(self.label) refused it (\(error))")
            } else if reply.hasSignature("u"), case .uint32(let code)? = reply.arguments(limit: 1)?.first, code == 1 || code == 4 {
                state = .owned
            } else {
                state = .taken
            }
            self.names[name]?.state = state
            self.names[name]?.done(state)
        }
    }

    // MARK: - Calls

    static let busName = "org.freedesktop.DBus"
    private static let busPath = "/org/freedesktop/DBus"

    /// A call; `reply` gets its answer, an error, or NoReply (deadline, loss). False, and no reply, if not sent.
    @discardableResult
    func call(_ destination: String, _ path: String, _ interface: String, _ method: String, _ values: [BusValue] = [],
              timeout: Int32 = BusConnection.defaultTimeout, reply: @escaping (Message) -> Void = { _ in }) -> Bool {
        guard let connection else { return false }
        guard let message = Message.methodCall(destination: destination, path: path, interface: interface, method: method, values: values)
        else {
            log(.error, "out of memory building a D-Bus call")
            return false
        }
        do { try connection.call(message, timeout: timeout, reply: reply) } catch {
            // Only a dead connection gets here; libdbus also queues Disconnected, but do not count on it.
            queue.async { [weak self] in self?.lose(connection, "the \(self?.label ?? "bus") went away") }
            return false
        }
        return true
    }

    /// A call to the bus itself.
    @discardableResult
    func callBus(_ method: String, _ values: [BusValue], reply: @escaping (Message) -> Void = { _ in }) -> Bool {
        call(Self.busName, Self.busPath, Self.busName, method, values, reply: reply)
    }

    /// The match rule that hears `name` change owner.
    static func ownerRule(_ name: String) -> String {
        "type='signal',sender='\(busName)',interface='\(busName)',member='NameOwnerChanged',arg0='\(name)'"
    }

    private func addMatchNow(_ rule: String) {
        callBus("AddMatch", [.string(rule)]) { [weak self] reply in
            guard let self, let error = reply.error else { return }
            self.log(.warning, "the \(self.label) refused a match rule (\(error)); changes it carries may be missed until a reconnect")
        }
    }

    // MARK: - The connection

    private func connect() {
        retryTimer.cancel()
        retryIn = nil
        let address: String
        do throws(BusError) { address = try self.address.get() } catch {
            // No address at all: said once, then idle.
            let why = "no \(label): \(error.message)"
            tell { $0.disconnected(why) }
            return
        }
        let connection: BusConnection
        do throws(BusError) { connection = try BusConnection(address: address, queue: queue) } catch {
            return failed("no \(label): \(error.message)")
        }
        (self.connection, registered) = (connection, false)
        connection.onSignal = { [weak self, unowned connection] message in self?.signal(message, on: connection) }
        connection.onMethodCall = { [weak self] message in self?.methodCall(message) ?? false }
        // Asynchronous, so a wedged bus cannot stall the queue.
        let asked = callBus("Hello", []) { [weak self] reply in
            guard let self, self.connection === connection else { return }
            if let error = reply.error { return self.lose(connection, "the \(self.label) refused appearanced (\(error))") }
            self.registered = true
            self.backoff.reset()
            self.failures = 0
            // The names first: no answer to a later call can come before they are asked for.
            for name in self.names.keys.sorted() { self.requestName(name) }
            var added = Set<String>()
            for rule in self.users.flatMap(\.rules) where added.insert(rule).inserted { self.addMatchNow(rule) }
            self.tell { $0.connected(connection) }
        }
        if !asked { queue.async { [weak self] in self?.lose(connection, "the \(self?.label ?? "bus") went away") } }
    }

    /// The bus went away or refused us: every peer is told, and the back-off plans the next attempt.
    private func lose(_ connection: BusConnection, _ why: String) {
        guard self.connection === connection else { return }
        failed(why)
    }

    private func failed(_ why: String) {
        failures += 1
        // Known before the peers are told, for those that say when the next attempt is.
        retryIn = started && retrying ? backoff.next() : nil
        drop(why)
        guard let delay = retryIn else { return }
        log(.debug, "\(why); trying again in \(delay) s")
        retryTimer.schedule(after: delay) { [weak self] in self?.connect() }
    }

    /// Closes the connection, if any, and tells the peers why.
    private func drop(_ why: String) {
        for key in names.keys { names[key]?.state = .asking }
        let had = connection != nil || started
        connection?.close()
        (connection, registered) = (nil, false)
        if had { tell { $0.disconnected(why) } }
    }

    private func tell(_ body: (BusPeer) -> Void) {
        for u in users { if let peer = u.peer { body(peer) } }
    }

    private func signal(_ message: Message, on connection: BusConnection) {
        guard self.connection === connection else { return }
        if message.isSignal("org.freedesktop.DBus.Local", "Disconnected") {
            return lose(connection, "the \(label) went away")
        }
        if let change = message.nameOwnerChange {
            if change.new.isEmpty, names[change.name]?.state == .taken { requestName(change.name) }
            for u in users { for f in u.follows where f.name == change.name { f.handle(change.new.isEmpty ? nil : change.new) } }
        }
        guard let interface = dbus_message_get_interface(message.raw), let member = dbus_message_get_member(message.raw) else { return }
        func same(_ name: ContiguousArray<CChar>, _ other: UnsafePointer<CChar>) -> Bool {
            name.withUnsafeBufferPointer { strcmp($0.baseAddress!, other) == 0 }
        }
        for u in users { for s in u.signals where same(s.interface, interface) && same(s.member, member) { s.handle(message) } }
    }

    private func methodCall(_ message: Message) -> Bool {
        guard let path = message.path else { return false }
        for u in users { for o in u.objects where o.path == path { if o.handle(message) { return true } } }
        return false
    }
}

/// A timer that fires once on a queue: scheduling replaces the one pending. Confined to that queue.
final class OneShot: @unchecked Sendable {
    private let queue: DispatchQueue
    private var timer: DispatchSourceTimer?
    var pending: Bool { timer != nil }

    init(_ queue: DispatchQueue) { self.queue = queue }

    deinit { timer?.cancel() }

    func schedule(after seconds: Double, _ fire: @escaping @Sendable () -> Void) {
        timer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + seconds)
        timer.setEventHandler { [weak self] in
            self?.timer = nil
            fire()
        }
        self.timer = timer
        timer.resume()
    }

    func cancel() {
        timer?.cancel()
        timer = nil
    }
}
