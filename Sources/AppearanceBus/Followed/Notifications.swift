// The notice before an automatic change as a desktop notification (`org.freedesktop.Notifications`) on the session
// bus: the notice the daemon wants (`show`) is shown, updated in place and closed; the server's buttons, closes,
// leaving and return are followed, only for the notice shown. Nothing is sent, no rule kept, while none is wanted.
import AppearanceCore
import Dispatch

public final class BusNotifier: Notifier, BusPeer, @unchecked Sendable {
    // Confined to `queue`, like the sentry whose connection it shares.
    static let name = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"
    static let interface = "org.freedesktop.Notifications"
    /// While a notice is wanted: its buttons and closing (from servers that broadcast them), the server's owner.
    static let rules = ["ActionInvoked", "NotificationClosed"].map {
        "type='signal',sender='\(name)',path='\(path)',interface='\(interface)',member='\($0)'"
    } + [BusClient.ownerRule(name)]

    private let client: BusClient
    private let log: (LogLevel, String) -> Void
    private var report: ((NoticeReport) -> Void)?
    private var bus: BusConnection?
    private var busDetail = "no session bus yet"
    /// The notice the daemon wants shown now.
    private var wanted: Notice?
    /// The notice showing: its id, the server that gave it (a unique name), and what it says.
    private var shown: (id: UInt32, server: String, notice: Notice)?
    /// The server that answered GetCapabilities (a unique name), and whether it shows buttons ("actions").
    private var server: (owner: String, buttons: Bool)?
    /// Why no notice can be shown now; tried again for another change, or when a server takes the name.
    private var missing: String?
    /// A call to the server is under way: what comes next waits for its answer.
    private var calling = false
    /// The notice the user or the server closed: not shown again.
    private var dismissed: Notice.Key?
    /// Whether `rules` are on this connection.
    private var listening = false
    /// What to call once the notice is closed, after `stop`.
    private var stopping: (@Sendable () -> Void)?
    private var lastStatus: String?

    /// - Parameter bus: the session bus's client, shared.
    public init(bus: BusClient, log: @escaping (LogLevel, String) -> Void) { (self.client, self.log) = (bus, log) }

    public func start(report: @escaping (NoticeReport) -> Void) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        self.report = report
        for member in ["ActionInvoked", "NotificationClosed"] {
            client.onSignal(Self.interface, member, for: self) { [weak self] message in self?.signal(message) }
        }
        client.onSignal(BusClient.busName, "NameOwnerChanged", for: self) { [weak self] message in self?.signal(message) }
        client.add(self)
        changed()
    }

    public func show(_ notice: Notice?) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        guard notice != wanted else { return }
        if let notice, notice.key != wanted?.key { missing = nil }  // another change: the server is asked again
        wanted = notice
        sync()
    }

    public func stop(done: @escaping @Sendable () -> Void) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        (report, wanted) = (nil, nil)
        // Once no call is under way and the notice shown is closed (answered, or past its deadline).
        stopping = done
        sync()
    }

    // MARK: - The bus

    func connected(_ connection: BusConnection) {
        bus = connection
        (shown, server, missing, calling, listening) = (nil, nil, nil, false, false)
        for rule in Self.rules { client.removeMatch(rule, for: self) }
        sync()
    }

    func disconnected(_ detail: String) {
        bus = nil
        (shown, server, missing, calling, listening) = (nil, nil, nil, false, false)
        busDetail = detail
        sync()
    }

    /// Brings what shows to what is wanted, one call at a time.
    private func sync() {
        defer { changed() }
        guard let bus else { return finishStopping() }
        guard !calling else { return }
        if (wanted != nil) != listening {
            listening = wanted != nil
            for rule in Self.rules {
                if listening { client.addMatch(rule, for: self) } else { client.removeMatch(rule, for: self) }
            }
            // Not heard from while no notice is wanted: its capabilities are asked again for the next one.
            if !listening { server = nil }
        }
        guard let wanted, wanted.key != dismissed else {
            guard let s = shown else { return finishStopping() }
            shown = nil
            let finish = stopping
            stopping = nil
            let sent = call("CloseNotification", [.uint32(s.id)]) { [weak self] reply in
                if let error = reply.error { self?.log(.info, "the notification server did not close the notice (\(error))") }
                finish?()
            }
            if !sent { finish?() }
            return
        }
        guard missing == nil else { return }
        guard let server else { return askCapabilities(on: bus) }
        if let s = shown, s.notice == wanted, s.server == server.owner { return }
        notify(wanted, replacing: shown.flatMap { $0.server == server.owner ? $0.id : nil } ?? 0, buttons: server.buttons, on: bus)
    }

    private func finishStopping() {
        let finish = stopping
        stopping = nil
        finish?()
    }

    private func askCapabilities(on bus: BusConnection) {
        calling = call("GetCapabilities", []) { [weak self] reply in
            guard let self, self.bus === bus else { return }
            self.calling = false
            if let error = reply.error {
                self.serverMissing(error)
            } else {
                // A list of names (the specification's are a few short words): anything else is read as no buttons.
                let list = reply.hasSignature("as") ? reply.arguments(limit: 1, within: DecodeBounds(depth: 1, values: 257, bytes: 16 * 1024))?.first : nil
                guard case .container(_, let names)? = list else {
                    self.log(.warning, "the notification server answered GetCapabilities with (\(reply.signature)) where a list of names (as) was expected: notices go without buttons")
                    self.server = (reply.sender ?? "", false)
                    return self.sync()
                }
                let buttons = names.contains(.string("actions"))
                if !buttons { self.log(.info, "the notification server shows no buttons: the notice names the commands instead") }
                self.server = (reply.sender ?? "", buttons)
            }
            self.sync()
        }
    }

    private func notify(_ notice: Notice, replacing id: UInt32, buttons: Bool, on bus: BusConnection) {
        let actions: [BusValue] = buttons ? notice.actions.flatMap { [BusValue.string($0.key.rawValue), .string($0.label)] } : []
        let hints = BusValue.container(signature: "a{sv}", [.container(signature: "{sv}", [.string("urgency"), .variant(.byte(1))])])
        // Expires never (0): it is closed when the change happens, moves away or the daemon stops.
        let values: [BusValue] = [.string(Notice.appName), .uint32(id), .string(""), .string(notice.summary),
                                  .string(notice.body(buttons: buttons)), .container(signature: "as", actions), hints, .int32(0)]
        calling = call("Notify", values) { [weak self] reply in
            guard let self, self.bus === bus else { return }
            self.calling = false
            if let error = reply.error {
                if id != 0 { self.shown = nil }
                self.serverMissing(error)
            } else if reply.hasSignature("u"), case .uint32(let given)? = reply.arguments(limit: 1)?.first {
                if id == 0 { self.log(.info, "notice shown: \(notice.summary)") }
                self.shown = (given, reply.sender ?? "", notice)
            } else {
                self.shown = nil
                self.missing = "the notification server answered Notify with (\(reply.signature)), not an id (u): the notice cannot be followed or closed"
                self.log(.warning, self.missing!)
            }
            self.sync()
        }
    }

    private func serverMissing(_ error: BusError) {
        switch error.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            missing = "no notification server on the session bus (\(BusNotifier.name): \(error.name))"
            log(.info, "\(missing!): the notice is not shown")
        default:
            missing = "the notification server refused (\(error))"
            log(.warning, "\(missing!): the notice is not shown")
        }
    }

    /// A call to the server; false, and no reply, when it could not be sent (the connection is gone).
    private func call(_ method: String, _ values: [BusValue], reply: @escaping (Message) -> Void) -> Bool {
        client.call(Self.name, Self.path, Self.interface, method, values, reply: reply)
    }

    // MARK: - Signals

    private func signal(_ message: Message) {
        if let change = message.nameOwnerChange {
            if change.name == Self.name { ownerChanged(change.new) }
            return
        }
        let action = message.isSignal(interface: Self.interface, member: "ActionInvoked")
        guard action || message.isSignal(interface: Self.interface, member: "NotificationClosed") else { return }
        // Only the notice showing, from the server that showed it.
        guard let s = shown, message.sender == s.server else { return }
        let signature = action ? "us" : "uu"
        guard message.hasSignature(signature), let args = message.arguments(within: DecodeBounds(depth: 0, values: 2, bytes: 1024)),
              args.count == 2, case .uint32(let id) = args[0] else {
            return log(.info, "the notification server sent \(action ? "ActionInvoked" : "NotificationClosed") as (\(message.signature)), not (\(signature)): ignored")
        }
        guard id == s.id else { return }
        if action {
            guard case .string(let key) = args[1], let button = NoticeAction(rawValue: key) else {
                return log(.info, "the notice's action \(args[1]) is not one of its buttons: ignored")
            }
            report?(.action(button, s.notice))
        } else {
            (shown, dismissed) = (nil, s.notice.key)
            log(.info, "the notice \"\(s.notice.summary)\" was closed (reason \(args[1])): not shown again for this change")
            sync()
        }
    }

    /// The server left, came, or was replaced: its notice goes with it, shown again by the next (unless closed).
    private func ownerChanged(_ owner: String) {
        if owner.isEmpty {
            (server, shown) = (nil, nil)
            missing = "the notification server left the session bus"
            log(.info, "\(missing!)")
        } else {
            missing = nil
            if server?.owner != owner { server = nil }
            if let s = shown, s.server != owner { shown = nil }
            log(.info, "a notification server is on the session bus (\(owner))")
        }
        sync()
    }

    // MARK: - Status

    private var status: String {
        guard bus != nil else { return "none sent: \(busDetail)" }
        if let s = shown {
            return "showing \"\(s.notice.summary)\"" + (server?.buttons == false ? " (the notification server shows no buttons: it names the commands)" : "")
        }
        if let missing { return "none showing: \(missing)" }
        if let wanted, wanted.key == dismissed { return "none showing: \"\(wanted.summary)\" was closed" }
        return wanted == nil ? "none showing" : "sending \"\(wanted!.summary)\""
    }

    private func changed() {
        let s = status
        guard s != lastStatus else { return }
        lastStatus = s
        report?(.status(s))
    }
}
