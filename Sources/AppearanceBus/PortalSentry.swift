// The real sentry: reads `org.freedesktop.appearance` `color-scheme`, and the traits `contrast`,
// `reduced-motion` and `accent-color`, from the XDG desktop portal and follows them. A trait the portal does
// not have (NotFound: too old, or no backend provides it) is unavailable; a value of the wrong type is
// logged and treated as unset, as is an accent color outside 0…1 (the portal's own "unset"). What it does about the portal's known faults:
//  - 1.16 (bookworm) has no ReadOne: fall back to Read, which wraps the value twice.
//  - 1.16 forwards duplicate and contradicting SettingChanged signals: a signal only triggers a re-read,
//    and the re-read's answer is what gets reported.
//  - The portal may start late, restart or vanish, and the bus itself may go away: each is a reading,
//    followed by recovery (NameOwnerChanged, reconnect with back-off). Nothing a peer does ends the process.
import AppearanceCore
import CDBus
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

public final class PortalSentry: Sentry, @unchecked Sendable {
    // Confined to `queue`: every stored property below is read and written only there (the libdbus
    // callbacks run there too). Dispatch closures capture `self`, which is why this is `@unchecked Sendable`.
    private let queue: DispatchQueue
    /// The bus to connect to, or why there is none.
    private let address: Result<String, BusError>
    let log: (LogLevel, String) -> Void

    private var report: ((SystemReading) -> Void)?
    /// The portal backend, when the daemon serves the portal too: it shares this connection.
    weak var peer: BusPeer?
    private(set) var bus: BusConnection?
    private var retryTimer: DispatchSourceTimer?
    private var backoff = Backoff(firstMilliseconds: 250, longestMilliseconds: 30_000)
    /// The portal API detected for the current owner of the portal name; nil until a read succeeds.
    var shape: Shape?
    /// The Read/ReadOne calls sent so far, by "method key": each read sends a copy.
    private var readCalls: [String: Message] = [:]
    /// Keys being read, and keys to read once more when their read ends (signals during a read).
    private var inFlight: Set<String> = []
    private var readAgain: Set<String> = []
    /// The latest value of each key; reported together once no read is in flight.
    private var scheme: SystemReading?
    var traits = Traits.unavailable
    /// Bumped whenever the portal name changes owner: answers from a previous owner are dropped.
    private var ownerEpoch = 0

    enum Shape { case readOne, read }


    static let portal = "org.freedesktop.portal.Desktop"
    private static let path = "/org/freedesktop/portal/desktop"
    private static let settings = "org.freedesktop.portal.Settings"
    private static let namespace = "org.freedesktop.appearance"
    private static let key = "color-scheme"
    static let contrastKey = "contrast"
    static let reducedMotionKey = "reduced-motion"
    static let accentKey = "accent-color"
    /// Every key followed; color-scheme first.
    static let keys = [key, contrastKey, reducedMotionKey, accentKey]
    private static let busName = "org.freedesktop.DBus"
    private static let matchRules = keys.map { key in
        // arg0/arg1 make the bus drop xdg-desktop-portal-gtk's org.gnome.* duplicate and other keys.
        "type='signal',sender='\(portal)',path='\(path)',interface='\(settings)',member='SettingChanged',"
            + "arg0='\(namespace)',arg1='\(key)'"
    } + [BusConnection.ownerRule(portal)]

    /// - Parameters:
    ///   - queue: its serial queue (appearanced's: the session bus's own); `start`, `stop` and every report
    ///     happen on it.
    ///   - busAddress: a D-Bus address for tests; nil means the session bus (`DBUS_SESSION_BUS_ADDRESS`,
    ///     else `$XDG_RUNTIME_DIR/bus`).
    ///   - log: where the sentry's own diagnostics go.
    public init(queue: DispatchQueue, busAddress: String? = nil, log: @escaping (LogLevel, String) -> Void) {
        self.queue = queue
        // Worked out here, on the thread that makes the sentry: its queue must not call getenv while the daemon's
        // sets TZ (a time-zone change), and a running process's environment does not change.
        self.address = if let busAddress { .success(busAddress) } else { Result { () throws(BusError) in try PortalSentry.sessionBusAddress() } }
        self.log = log
    }

    /// Call `stop()` (on the queue) before releasing the sentry.
    deinit { retryTimer?.cancel() }

    public func start(report: @escaping (SystemReading) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard self.report == nil else { return }
        self.report = report
        connect()
    }

    public func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        report = nil
        retryTimer?.cancel()
        retryTimer = nil
        bus?.close()
        bus = nil
        inFlight = []
        readAgain = []
        peer?.disconnected("stopped")
    }

    // MARK: - Connection

    private func connect() {
        guard report != nil else { return }
        let connection: BusConnection
        let address: String
        do throws(BusError) {
            address = try self.address.get()
        } catch {
            // No address at all: the environment of a running process does not change, so retrying could
            // never succeed. Report once and stay idle (no timer: zero wake-ups on a headless box).
            emit(.unavailable, "no session bus: \(error.message)")
            peer?.disconnected("no session bus: \(error.message)")
            log(.notice, "no session bus: \(error.message); the daemon is its own source")
            return
        }
        do throws(BusError) {
            connection = try BusConnection(address: address, queue: queue)
        } catch {
            busUnavailable("no session bus: \(error.message)")
            return
        }
        bus = connection
        connection.onSignal = { [weak self, unowned connection] message in
            self?.handle(message, from: connection)
        }
        // Registration (Hello) is asynchronous like everything else, so a wedged bus cannot stall the queue.
        send(on: connection, PortalSentry.busName, "/org/freedesktop/DBus", PortalSentry.busName, "Hello") { [weak self] reply in
            self?.registered(connection, reply: reply)
        }
    }

    private func registered(_ connection: BusConnection, reply: Message) {
        guard bus === connection else { return }
        if let error = reply.error {
            lose(connection, "no session bus: \(error)")
            return
        }
        log(.info, "connected to the session bus")
        backoff.reset()
        shape = nil
        // The backend's name request goes out first: no read below can be answered before it is ours.
        peer?.connected(connection)
        // Matches go out before the read; the bus handles one connection's messages in order, so no
        // change can slip between the read and the subscription.
        for rule in PortalSentry.matchRules {
            send(on: connection, PortalSentry.busName, "/org/freedesktop/DBus", PortalSentry.busName, "AddMatch", [rule]) { [weak self] reply in
                if let error = reply.error {
                    self?.log(.warning, "the session bus refused a match rule (\(error)); portal changes may be missed until the next restart")
                }
            }
        }
        readAll()
    }

    /// The bus went away (or never answered): report, drop the connection, try again later.
    private func lose(_ connection: BusConnection, _ detail: String) {
        guard bus === connection else { return }
        bus = nil
        connection.close()
        inFlight = []
        readAgain = []
        shape = nil
        busUnavailable(detail)
    }

    private func busUnavailable(_ detail: String) {
        peer?.disconnected(detail)
        scheme = nil
        emit(.unavailable, detail)
        let first = backoff.atFirst
        let delay = backoff.next()
        log(first ? .warning : .debug, "\(detail); trying again in \(delay) s")
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + delay)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.retryTimer?.cancel()
            self.retryTimer = nil
            self.connect()
        }
        retryTimer?.cancel()
        retryTimer = timer
        timer.resume()
    }

    /// libdbus's own lookup for the session bus, minus X11 autolaunch (a daemon must not spawn one).
    static func sessionBusAddress() throws(BusError) -> String {
        if let address = getenv("DBUS_SESSION_BUS_ADDRESS").map({ String(cString: $0) }), !address.isEmpty {
            return address
        }
        guard let runtime = getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !runtime.isEmpty,
              let escaped = dbus_address_escape_value(runtime + "/bus")
        else {
            throw BusError(name: "org.freedesktop.DBus.Error.NotSupported",
                           message: "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set; start appearanced inside the user session")
        }
        defer { dbus_free(escaped) }
        return "unix:path=" + String(cString: escaped)
    }

    // MARK: - Reading

    private func readAll() {
        for key in PortalSentry.keys { read(key) }
    }

    private func read(_ key: String) {
        guard let connection = bus else { return }
        if inFlight.contains(key) {
            // Coalesce: however many signals arrive meanwhile, one more read after this one covers them.
            readAgain.insert(key)
            return
        }
        inFlight.insert(key)
        sendRead(on: connection, key: key, method: shape == .read ? "Read" : "ReadOne")
    }

    private func sendRead(on connection: BusConnection, key: String, method: String) {
        let epoch = ownerEpoch
        // The call is built once per key and method and copied for each read: libdbus validates every
        // name and string as a message is built, which costs more than the copy (docs/benchmarks.md).
        let id = method + " " + key
        if readCalls[id] == nil {
            readCalls[id] = Message.methodCall(destination: PortalSentry.portal, path: PortalSentry.path,
                                               interface: PortalSentry.settings, method: method,
                                               arguments: [PortalSentry.namespace, key])
        }
        send(on: connection, readCalls[id]?.copy()) { [weak self] reply in
            self?.readFinished(reply, key: key, method: method, epoch: epoch, on: connection)
        }
    }

    private func readFinished(_ reply: Message, key: String, method: String, epoch: Int, on connection: BusConnection) {
        guard bus === connection else { return }
        let current = epoch == ownerEpoch
        if current, method == "ReadOne", reply.error?.name == "org.freedesktop.DBus.Error.UnknownMethod" {
            // Portal version 1 (xdg-desktop-portal < 1.17.1): only Read exists.
            sendRead(on: connection, key: key, method: "Read")
            return
        }
        inFlight.remove(key)
        if current {
            if key == PortalSentry.key {
                scheme = interpret(reply, method: method)
            } else {
                interpretTrait(reply, key: key, method: method)
            }
        }
        if readAgain.remove(key) != nil { read(key) }
        // One report per round: a start or a new portal reads every key, and the first report already
        // carries all of them (the daemon waits for it before answering anyone).
        if current, inFlight.isEmpty, let scheme {
            emit(scheme.scheme, scheme.detail)
        }
    }

    // MARK: - Signals

    private func handle(_ message: Message, from connection: BusConnection) {
        guard bus === connection else { return }
        if message.isSignal(interface: "org.freedesktop.DBus.Local", member: "Disconnected") {
            lose(connection, "session bus lost")
        } else if message.isSignal(interface: PortalSentry.settings, member: "SettingChanged") {
            // The bus filtered on arg0/arg1 already; check again in case a rule was not installed.
            // The signal's own value is ignored: only what a read returns counts.
            // Only the two names are decoded (a key is tens of bytes), and only from a signal of the right type.
            guard message.hasSignature("ssv"),
                  let args = message.arguments(limit: 2, within: DecodeBounds(depth: 0, values: 2, bytes: 2 * 1024)) else { return }
            if args.count == 2, args[0] == .string(PortalSentry.namespace), case .string(let key) = args[1],
               PortalSentry.keys.contains(key) {
                read(key)
            }
        } else if let change = message.nameOwnerChange {
            guard change.name == PortalSentry.portal else { return }
            let newOwner = change.new
            ownerEpoch += 1
            shape = nil
            if newOwner.isEmpty {
                readAgain = []
                scheme = nil
                traits = .unavailable
                log(.notice, "the portal left the session bus")
                emit(.unavailable, "portal left the bus")
            } else {
                log(.info, "the portal is on the session bus (\(newOwner))")
                readAll()
            }
        }
    }

    // MARK: - Helpers

    /// Reports a reading with the traits as last read (none when the portal or the bus is gone).
    private func emit(_ scheme: SystemScheme, _ detail: String) {
        if scheme == .unavailable && self.scheme == nil { traits = .unavailable }
        report?(SystemReading(scheme, detail: detail, traits: traits))
    }

    /// Sends a method call with string arguments; a failure to send counts as losing the bus.
    private func send(on connection: BusConnection, _ destination: String, _ path: String, _ interface: String,
                      _ method: String, _ arguments: [String] = [], reply: @escaping (Message) -> Void) {
        send(on: connection, Message.methodCall(destination: destination, path: path, interface: interface,
                                                method: method, arguments: arguments), reply: reply)
    }

    /// Sends a built method call (nil: building it ran out of memory).
    private func send(on connection: BusConnection, _ message: Message?, reply: @escaping (Message) -> Void) {
        guard let message else {
            log(.error, "out of memory building a D-Bus call")
            return
        }
        do {
            try connection.call(message, reply: reply)
        } catch {
            // Only a dead connection gets here; libdbus also queues Disconnected, but do not count on it.
            let connection = connection
            queue.async { [weak self] in self?.lose(connection, "session bus lost") }
        }
    }
}
