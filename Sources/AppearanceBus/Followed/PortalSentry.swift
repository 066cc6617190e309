// The real sentry: follows the XDG desktop portal's `org.freedesktop.appearance` `color-scheme` and the traits
// `contrast`, `reduced-motion` and `accent-color` (one missing is unavailable, one of the wrong type unset).
// The portal's faults: 1.16 has no ReadOne (Read wraps the value twice); it forwards duplicate and contradicting
// SettingChanged signals (a signal only triggers a re-read); it may start late, restart or vanish, as may the bus.
import AppearanceCore
import CDBus
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

public final class PortalSentry: Sentry, BusPeer, @unchecked Sendable {
    // Confined to the session bus client's queue.
    let bus: BusClient
    let log: (LogLevel, String) -> Void

    private var report: ((SystemReading) -> Void)?
    /// The portal API detected for the current owner of the portal name; nil until a read succeeds.
    var shape: Shape?
    /// The Read/ReadOne calls sent so far, by key (its place in `keys`, twice: ReadOne, Read): each read sends a copy.
    private var readCalls = [Message?](repeating: nil, count: 2 * PortalSentry.keys.count)
    /// Keys being read, and keys to read once more when their read ends (signals during a read).
    private var inFlight: Set<String> = []
    private var readAgain: Set<String> = []
    /// The latest value of each key; reported together once no read is in flight.
    private var scheme: SystemReading?
    var traits = Traits.unavailable
    /// Bumped whenever the portal name changes owner or the bus is lost: answers from before are dropped.
    private var ownerEpoch = 0
    var connection: BusConnection?

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
    private static let matchRules = keys.map { key in
        // arg0/arg1 make the bus drop xdg-desktop-portal-gtk's org.gnome.* duplicate and other keys.
        "type='signal',sender='\(portal)',path='\(path)',interface='\(settings)',member='SettingChanged',"
            + "arg0='\(namespace)',arg1='\(key)'"
    }

    /// - Parameter bus: the session bus's client, shared; `start`, `stop` and every report happen on its queue.
    public init(bus: BusClient, log: @escaping (LogLevel, String) -> Void) { (self.bus, self.log) = (bus, log) }

    /// A sentry with a session bus client of its own: `busAddress` for tests, nil for the session bus.
    public convenience init(queue: DispatchQueue, busAddress: String? = nil, log: @escaping (LogLevel, String) -> Void) {
        self.init(bus: BusClient.session(queue: queue, address: busAddress, log: log), log: log)
    }

    public func start(report: @escaping (SystemReading) -> Void) {
        dispatchPrecondition(condition: .onQueue(bus.queue))
        guard self.report == nil else { return }
        self.report = report
        for rule in Self.matchRules { bus.addMatch(rule, for: self) }
        bus.onSignal(Self.settings, "SettingChanged", for: self) { [weak self] message in self?.settingChanged(message) }
        bus.follow(Self.portal, for: self) { [weak self] owner in self?.portalOwner(owner) }
        bus.add(self)
        bus.start(retrying: true)
    }

    /// Closes the session bus's connection: the backend, the D-Bus service and the notifier are told too.
    public func stop() {
        dispatchPrecondition(condition: .onQueue(bus.queue))
        report = nil
        bus.stop()
        bus.forget(self)
    }

    // MARK: - The bus

    func connected(_ connection: BusConnection) {
        self.connection = connection
        log(.info, "connected to the session bus")
        shape = nil
        // The client owned the backend's name and added the rules first: no change slips in, no value not ours yet.
        readAll()
    }

    func disconnected(_ detail: String) {
        connection = nil
        ownerEpoch += 1
        (inFlight, readAgain, shape, scheme) = ([], [], nil, nil)
        guard detail != "stopped" else { return }
        emit(.unavailable, detail)
        if let delay = bus.retryIn {
            log(bus.failures == 1 ? .warning : .debug, "\(detail); trying again in \(delay) s")
        } else {
            // No address at all: nothing could ever change a running process's environment; no retry timer.
            log(.notice, "\(detail); the daemon is its own source")
        }
    }

    // MARK: - Reading

    private func readAll() {
        for key in PortalSentry.keys { read(key) }
    }

    private func read(_ key: String) {
        guard connection != nil else { return }
        if inFlight.contains(key) {
            // Coalesce: however many signals arrive meanwhile, one more read after this one covers them.
            readAgain.insert(key)
            return
        }
        inFlight.insert(key)
        sendRead(key: key, method: shape == .read ? "Read" : "ReadOne")
    }

    private func sendRead(key: String, method: String) {
        let epoch = ownerEpoch
        // Built once per key and method and copied for each read, which costs less (docs/benchmarks.md).
        guard let index = PortalSentry.keys.firstIndex(of: key) else { return }
        let id = 2 * index + (method == "Read" ? 1 : 0)
        if readCalls[id] == nil {
            readCalls[id] = Message.methodCall(destination: PortalSentry.portal, path: PortalSentry.path,
                                               interface: PortalSentry.settings, method: method,
                                               values: [.string(PortalSentry.namespace), .string(key)])
        }
        guard let connection, let call = readCalls[id]?.copy() else {
            return log(.error, "out of memory building a D-Bus call")
        }
        do {
            try connection.call(call) { [weak self] reply in
                self?.readFinished(reply, key: key, method: method, epoch: epoch)
            }
        } catch {
            // Only a dead connection gets here; the client hears of it and says so.
            inFlight.remove(key)
        }
    }

    private func readFinished(_ reply: Message, key: String, method: String, epoch: Int) {
        guard connection != nil, inFlight.contains(key) else { return }
        let current = epoch == ownerEpoch
        if current, method == "ReadOne", reply.error?.name == "org.freedesktop.DBus.Error.UnknownMethod" {
            // Portal version 1 (xdg-desktop-portal < 1.17.1): only Read exists.
            sendRead(key: key, method: "Read")
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
        // One report per round of reads: the first carries every key (the daemon waits for it to answer anyone).
        if current, inFlight.isEmpty, let scheme {
            emit(scheme.scheme, scheme.detail)
        }
    }

    // MARK: - Signals

    private func settingChanged(_ message: Message) {
        // Checked again (a rule may be missing); only the two names are read: the value a read returns counts.
        guard message.hasSignature("ssv"),
              let i = message.stringPair(first: PortalSentry.namespace, secondIn: PortalSentry.keys) else { return }
        read(PortalSentry.keys[i])
    }

    private func portalOwner(_ owner: String?) {
        guard connection != nil else { return }
        ownerEpoch += 1
        shape = nil
        if let owner {
            log(.info, "the portal is on the session bus (\(owner))")
            readAll()
        } else {
            (readAgain, scheme, traits) = ([], nil, .unavailable)
            log(.notice, "the portal left the session bus")
            emit(.unavailable, "portal left the bus")
        }
    }

    // MARK: - Helpers

    /// Reports a reading with the traits as last read (none when the portal or the bus is gone).
    private func emit(_ scheme: SystemScheme, _ detail: String) {
        if scheme == .unavailable && self.scheme == nil { traits = .unavailable }
        report?(SystemReading(scheme, detail: detail, traits: traits))
    }
}
