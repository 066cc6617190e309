// The schedule's place from GeoClue on the system bus (`location = "geoclue"`, docs/decisions.md, "The schedule's
// place from GeoClue"): one client at city accuracy, quiet below 40 km and 4 h; a wait for GeoClue is a match rule,
// only a lost bus or a failed call is retried; a refusal is reported in words that say what to do.
import AppearanceCore
import Dispatch

public final class GeoClueLocator: Locator, BusPeer, @unchecked Sendable {
    // Confined to the system bus client's queue.
    private let bus: BusClient
    private let log: (LogLevel, String) -> Void
    private var report: ((LocatorReport) -> Void)?
    /// Whether the bus is registered: GeoClue is asked only then.
    private var connected = false
    private let retryTimer: OneShot
    private var backoff = Backoff(firstMilliseconds: 1_000, longestMilliseconds: 300_000)
    /// The client object GeoClue made for this connection; nil until GetClient answers.
    private var client: String?
    /// Bumped for every new attempt: answers to an earlier one are dropped.
    private var attempt = 0
    private var lastState: LocatorReport?

    /// The name GeoClue knows appearanced by: its .desktop file for an agent, its geoclue.conf section.
    public static let desktopID = "appearanced"
    /// GeoClue's accuracy levels: 4 is city.
    static let cityAccuracy: UInt32 = 4
    /// Metres GeoClue keeps quiet for: 40 km moves the sun's times by about a minute and a half.
    public static let distanceThreshold: UInt32 = 40_000
    /// Seconds between two fixes at least (4 h).
    public static let timeThreshold: UInt32 = 14_400
    /// Milliseconds each call may take before it counts as unanswered.
    static let callTimeout: Int32 = 25_000

    static let service = "org.freedesktop.GeoClue2"
    private static let managerPath = "/org/freedesktop/GeoClue2/Manager"
    private static let managerInterface = "org.freedesktop.GeoClue2.Manager"
    private static let clientInterface = "org.freedesktop.GeoClue2.Client"
    private static let locationInterface = "org.freedesktop.GeoClue2.Location"
    private static let properties = "org.freedesktop.DBus.Properties"
    private static let fixRule = "type='signal',sender='\(service)',interface='\(clientInterface)',member='LocationUpdated'"
    /// What geoclue.conf needs for appearanced when no agent runs (a desktop without one: sway, i3).
    public static let confStanza = "[\(desktopID)]\nallowed=true\nsystem=false\nusers="
    /// What to do where no agent runs.
    static let withoutAgent = "without one (GNOME and KDE run theirs), start /usr/libexec/geoclue-2.0/demos/agent, "
        + "or add to /etc/geoclue/geoclue.conf:\n" + confStanza + "\nthen restart geoclue"

    /// - Parameter bus: the system bus's client, shared with the other system-bus inputs.
    public init(bus: BusClient, log: @escaping (LogLevel, String) -> Void) {
        (self.bus, self.log, retryTimer) = (bus, log, OneShot(bus.queue))
    }

    public func start(report: @escaping (LocatorReport) -> Void) {
        dispatchPrecondition(condition: .onQueue(bus.queue))
        guard self.report == nil else { return }
        self.report = report
        backoff.reset()
        bus.addMatch(Self.fixRule, for: self)
        bus.onSignal(Self.clientInterface, "LocationUpdated", for: self) { [weak self] message in self?.fixSignal(message) }
        bus.follow(Self.service, for: self) { [weak self] owner in self?.ownerChanged(owner) }
        bus.add(self)
        bus.start(retrying: true)
    }

    public func stop() {
        dispatchPrecondition(condition: .onQueue(bus.queue))
        report = nil
        retryTimer.cancel()
        // The connection is shared: the client is stopped and handed back (GeoClue drops it with its connection too).
        if let client, connected {
            bus.call(Self.service, client, Self.clientInterface, "Stop", timeout: Self.callTimeout)
            bus.call(Self.service, Self.managerPath, Self.managerInterface, "DeleteClient", [.objectPath(client)], timeout: Self.callTimeout)
        }
        bus.forget(self)
        attempt += 1
        (client, lastState) = (nil, nil)
    }

    // MARK: - The bus

    func connected(_ connection: BusConnection) {
        connected = true
        getClient()
    }

    func disconnected(_ detail: String) {
        (connected, client) = (false, nil)
        attempt += 1
        retryTimer.cancel()
        guard report != nil else { return }
        state(detail, trouble: true, retryIn: bus.retryIn.map { Int($0) })
    }

    /// Asks GeoClue again after the back-off, once a call failed.
    private func retryLater(_ why: String) {
        let delay = backoff.next()
        state(why, trouble: true, retryIn: Int(delay))
        retryTimer.schedule(after: delay) { [weak self] in
            if let self, self.connected { self.getClient() }
        }
    }

    // MARK: - The client

    /// GetClient, then the client's properties, then Start; each answer checked against its attempt.
    private func getClient() {
        attempt += 1
        let attempt = self.attempt
        client = nil
        state("waiting for an answer to GetClient")
        call(Self.service, Self.managerPath, Self.managerInterface, "GetClient", []) { [weak self] reply in
            guard let self, self.attempt == attempt else { return }
            if let error = reply.error { return self.failed(error, doing: "GetClient") }
            guard reply.hasSignature("o"), case .objectPath(let path)? = reply.arguments(limit: 1)?.first else {
                return self.retryLater("answered GetClient with (\(reply.signature)), not an object path")
            }
            self.client = path
            self.configure(path, attempt: attempt)
        }
    }

    private func configure(_ path: String, attempt: Int) {
        let settings: [(String, BusValue)] = [
            ("DesktopId", .string(Self.desktopID)),
            ("RequestedAccuracyLevel", .uint32(Self.cityAccuracy)),
            ("DistanceThreshold", .uint32(Self.distanceThreshold)),
            ("TimeThreshold", .uint32(Self.timeThreshold)),
        ]
        // One connection's messages reach GeoClue in order: every Set is done before Start is handled.
        for (name, value) in settings {
            call(Self.service, path, Self.properties, "Set",
                 [.string(Self.clientInterface), .string(name), .variant(value)]) { [weak self] reply in
                guard let self, self.attempt == attempt, let error = reply.error else { return }
                self.log(.warning, "GeoClue did not take the client's \(name) (\(error))")
            }
        }
        state("waiting for an answer to Start")
        call(Self.service, path, Self.clientInterface, "Start", []) { [weak self] reply in
            guard let self, self.attempt == attempt else { return }
            if let error = reply.error { return self.failed(error, doing: "Start") }
            self.backoff.reset()
            self.log(.info, "GeoClue started a client for appearanced (\(path), city accuracy)")
            self.state("started (city accuracy), waiting for a first fix")
            // A fix GeoClue had already may have come before the match rule: read the client's Location.
            self.call(Self.service, path, Self.properties, "Get",
                      [.string(Self.clientInterface), .string("Location")]) { [weak self] reply in
                guard let self, self.attempt == attempt, reply.error == nil,
                      case .objectPath(let location)? = reply.arguments(limit: 1)?.first?.unwrapped, location != "/" else { return }
                self.read(location, attempt: attempt)
            }
        }
    }

    /// What an error from GeoClue means, and what happens next.
    private func failed(_ error: BusError, doing method: String) {
        client = nil
        switch error.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            // Nothing to retry until it appears: NameOwnerChanged says when.
            state("not on the system bus (\(Self.service): \(error.name)); install and enable geoclue (geoclue-2.0)", trouble: true)
        case "org.freedesktop.DBus.Error.AccessDenied":
            let said = error.message.isEmpty ? "" : " (\(error.message))"
            if error.message.lowercased().contains("disabled for") || error.message.lowercased().contains("disabled by user") {
                state("refused\(said): location services are off for this user; turn them on in the desktop's privacy settings", trouble: true)
            } else {
                state("refused\(said): no location agent allows appearanced; " + Self.withoutAgent, trouble: true)
            }
            // A refusal stands until GeoClue restarts (NameOwnerChanged); nothing polls.
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
            // GeoClue 2.6 holds GetClient until a location agent of the user's registers: silence, not a refusal.
            retryLater("no answer to \(method) within \(Self.callTimeout / 1000) s (it waits for a location agent; "
                       + Self.withoutAgent.replacingNewlines() + ")")
        case _ where error.name.hasPrefix("org.freedesktop.DBus.Error.Spawn"):
            state("the system bus could not start GeoClue (\(error))", trouble: true)
        case "org.freedesktop.DBus.Error.Disconnected":
            break  // the client says so (`disconnected`) and connects again
        default:
            retryLater("\(method) failed (\(error))")
        }
    }

    // MARK: - Signals and fixes

    private func fixSignal(_ message: Message) {
        guard let client, message.path == client, message.hasSignature("oo"),
              let args = message.arguments(limit: 2), case .objectPath(let new)? = args.last else { return }
        read(new, attempt: attempt)
    }

    private func ownerChanged(_ owner: String?) {
        guard report != nil, connected else { return }
        retryTimer.cancel()
        if let owner {
            log(.info, "GeoClue is on the system bus (\(owner)): asking it for a client")
            backoff.reset()
            getClient()
        } else {
            attempt += 1
            client = nil
            state("left the system bus; waiting for it to return")
        }
    }

    /// Reads a Location object's Latitude, Longitude and Timestamp, and reports the fix.
    private func read(_ path: String, attempt: Int) {
        call(Self.service, path, Self.properties, "GetAll", [.string(Self.locationInterface)]) { [weak self] reply in
            guard let self, self.attempt == attempt else { return }
            if let error = reply.error { return self.log(.warning, "reading GeoClue's location \(path) failed (\(error))") }
            // A Location has eight properties; these bounds are far above them.
            let bounds = DecodeBounds(depth: 4, values: 256, bytes: 16 * 1024)
            guard reply.hasSignature("a{sv}"), let all = reply.arguments(limit: 1, within: bounds)?.first,
                  let values = PropertyWatch.dictionary(all)
            else { return self.log(.warning, "GeoClue's location \(path) is not a{sv} within bounds (\(reply.signature)); ignored") }
            guard case .double(let latitude)? = values["Latitude"], case .double(let longitude)? = values["Longitude"] else {
                return self.log(.warning, "GeoClue's location \(path) has no Latitude/Longitude doubles; ignored")
            }
            var time: Int64 = 0  // none given: the daemon stamps it on arrival
            if case .container(_, let parts)? = values["Timestamp"], parts.count == 2, case .uint64(let seconds) = parts[0],
               seconds > 0, let t = Int64(exactly: seconds) {
                time = t
            }
            let fix = LocationFix(latitude: latitude, longitude: longitude, time: time)
            guard fix.isValid else {
                return self.log(.warning, "GeoClue's location \(path) is out of range (\(latitude), \(longitude)); ignored")
            }
            self.lastState = nil
            self.report?(.fix(fix))
            self.state("following (city accuracy)")
        }
    }

    // MARK: - Helpers

    /// Reports why there is no fix now, once per change; a trouble is the daemon's to log, the rest is logged here.
    private func state(_ text: String, trouble: Bool = false, retryIn: Int? = nil) {
        let report = LocatorReport.state(text, trouble: trouble, retryIn: retryIn)
        guard report != lastState else { return }
        lastState = report
        if !trouble { log(.info, "GeoClue: " + text.replacingNewlines()) }
        self.report?(report)
    }

    private func call(_ destination: String, _ path: String, _ interface: String, _ method: String, _ values: [BusValue],
                      reply: @escaping (Message) -> Void) {
        bus.call(destination, path, interface, method, values, timeout: Self.callTimeout, reply: reply)
    }
}

private extension String {
    func replacingNewlines() -> String { split(separator: "\n").joined(separator: " ") }
}
