// The D-Bus face: appearanced's own interface (`io.github.appearanced.Appearance1`, docs/decisions.md, "The
// D-Bus face's names") and darkman's (`nl.whynothugo.darkman`), for programs that speak D-Bus rather than the
// socket's protocol. It lives on the sentry's session-bus connection, beside the portal backend: it follows
// the bus across its loss and return as they do, on the bus's own queue. Reads for everyone answer from the
// published state the face holds; one app's state and writes go to the daemon (`FaceRequests`), and are
// answered when they come back (a write once it is durable), without waiting. Every call's signature is checked before anything is decoded, and decoding has bounds.
import AppearanceCore
import AppearanceProtocol
import Dispatch

public final class BusFace: Face, BusPeer, @unchecked Sendable {
    // Confined to `queue`, like the sentry whose connection it shares.
    static let busName = "io.github.appearanced.Appearance1"
    static let path = "/io/github/appearanced/Appearance1"
    static let interface = "io.github.appearanced.Appearance1"
    static let darkmanName = "nl.whynothugo.darkman"
    static let darkmanPath = "/nl/whynothugo/darkman"
    static let darkmanInterface = "nl.whynothugo.darkman"
    static let properties = "org.freedesktop.DBus.Properties"
    private static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let invalidArgsName = "org.freedesktop.DBus.Error.InvalidArgs"

    private let client: BusClient
    private let log: (LogLevel, String) -> Void
    private var requests: FaceRequests?
    private var report: ((String) -> Void)?
    private var options = FaceOptions()
    private(set) var bus: BusConnection?
    private var busDetail = "no session bus yet"

    private typealias Name = NameState
    private var own: Name?
    /// nil while darkman's name is not wanted (off) or there is no bus.
    private var darkman: Name?
    /// What listeners were last told: properties (by name) and the mode.
    private var emitted: [String: BusValue] = [:]
    private var emittedMode: Mode?
    /// The signals that depend on the mode alone, built once.
    let modeSignals = MessageTemplates()
    /// The published state, as the daemon last gave it: what a read for everyone answers.
    private var published: AppearanceState?

    /// - Parameter bus: the session bus's client, shared with the sentry, the portal backend and the notifier.
    public init(bus: BusClient, log: @escaping (LogLevel, String) -> Void) {
        self.client = bus
        self.log = log
    }

    public func start(_ options: FaceOptions, state: AppearanceState, requests: FaceRequests, report: @escaping (String) -> Void) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        self.requests = requests
        self.report = report
        self.options = options
        published = state
        emitted = properties(state)
        emittedMode = state.mode
        client.export(BusFace.path, for: self) { [weak self] message in self?.handle(message) ?? false }
        client.export(BusFace.darkmanPath, for: self) { [weak self] message in self?.handle(message) ?? false }
        client.own(BusFace.busName) { [weak self] state in self?.ownState(state) }
        if options.darkman { askForDarkman() }
        client.add(self)
        changed()
    }

    public func setOptions(_ options: FaceOptions) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        guard options != self.options else { return }
        self.options = options
        if options.darkman { askForDarkman() } else { releaseDarkman() }
        changed()
    }

    public func publish(_ state: AppearanceState, previous: Mode) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        guard requests != nil else { return }
        published = state
        let now = properties(state)
        let changedProperties = now.filter { emitted[$0.key] != $0.value }
        let before = emittedMode ?? previous
        emitted = now
        emittedMode = state.mode
        guard let bus else { return }
        for message in signals(changedProperties, mode: state.mode, before: before,
                               own: own == .owned || own == .asking, darkman: darkman == .owned || darkman == .asking) {
            try? bus.send(message)
        }
    }

    public func stop() {
        dispatchPrecondition(condition: .onQueue(client.queue))
        report = nil
        requests = nil
        client.release(BusFace.busName)
        releaseDarkman()
        client.forget(self)
        bus = nil
    }

    // MARK: - Status

    private var status: String {
        guard bus != nil else { return "not on the bus: \(busDetail)" }
        var parts: [String] = []
        switch own {
        case .owned?: parts.append(BusFace.busName)
        case .asking?, nil: parts.append("\(BusFace.busName) (name requested)")
        case .taken?: parts.append("not \(BusFace.busName): another process owns it (taken when it lets it go)")
        case .refused(let why)?: parts.append("not \(BusFace.busName): \(why)")
        }
        if !options.darkman {
            parts.append("not \(BusFace.darkmanName): off (darkman-dbus = false)")
        } else {
            switch darkman {
            case .owned?: parts.append(BusFace.darkmanName)
            case .asking?, nil: parts.append("\(BusFace.darkmanName) (name requested)")
            case .taken?: parts.append("not \(BusFace.darkmanName): darkman (or another process) holds it")
            case .refused(let why)?: parts.append("not \(BusFace.darkmanName): \(why)")
            }
        }
        return parts.joined(separator: "; ")
    }

    private func changed() {
        let s = status
        guard s != lastStatusSent else { return }
        lastStatusSent = s
        log(.info, "D-Bus: \(s)")
        report?(s)
    }

    private var lastStatusSent: String?

    // MARK: - The bus

    func connected(_ connection: BusConnection) {
        bus = connection
        own = client.nameState(BusFace.busName)
        darkman = options.darkman ? client.nameState(BusFace.darkmanName) : nil
        changed()
    }

    func disconnected(_ detail: String) {
        bus = nil
        own = nil
        darkman = options.darkman ? .asking : nil
        busDetail = detail
        changed()
    }

    private func ownState(_ state: Name) {
        own = state
        if state == .taken { log(.warning, "another process owns \(BusFace.busName) (another appearanced?); D-Bus clients will not see this daemon until it lets the name go") }
        changed()
    }

    /// darkman's name, asked for (and asked again whenever its holder lets it go) while `darkman-dbus` is on.
    private func askForDarkman() {
        guard client.nameState(BusFace.darkmanName) == nil else { return }
        darkman = .asking
        client.own(BusFace.darkmanName) { [weak self] state in
            guard let self, self.options.darkman else { return }
            self.darkman = state
            if state == .taken { self.log(.notice, "\(BusFace.darkmanName) is held by another process (darkman?): not taking it") }
            self.changed()
        }
    }

    private func releaseDarkman() {
        client.release(BusFace.darkmanName)
        darkman = nil
    }

    private func send(_ message: Message?, on bus: BusConnection) {
        guard let message else { return }
        try? bus.send(message)
    }

    // MARK: - Calls

    /// A call answered with an error.
    struct Refused: Error { var error: BusError }

    private func handle(_ call: Message) -> Bool {
        guard let path = call.path, let member = call.member, let requests, let published else { return false }
        let answer: Result<[BusValue], BusError>?
        if path == BusFace.path {
            answer = ownCall(call, member, requests, published)
        } else if path == BusFace.darkmanPath, darkman == .owned || darkman == .asking {
            answer = darkmanCall(call, member, requests, published)
        } else {
            return false
        }
        // nil: answered later (a write, once durable).
        guard let answer else { return true }
        reply(to: call, answer)
        return true
    }

    func reply(to call: Message, _ answer: Result<[BusValue], BusError>) {
        if case .failure = answer { bus?.returnFreeMemorySoon() }  // a refused call may have been huge
        guard !call.noReplyExpected, let bus else { return }
        let message: Message? = switch answer {
        case .success(let values): Message.methodReturn(to: call, values)
        case .failure(let error): Message.errorReply(to: call, error)
        }
        send(message, on: bus)
    }

    func unknownMethod(_ call: Message, _ member: String, _ path: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownMethod",
                 message: "no method \(call.interface.map { "\($0)." } ?? "")\(member)(\(call.signature)) at \(path)")
    }

    private func ownCall(_ call: Message, _ member: String, _ requests: FaceRequests, _ published: AppearanceState) -> Result<[BusValue], BusError>? {
        switch (call.interface, member) {
        case (BusFace.interface?, "Get"), (nil, "Get"),
             (BusFace.interface?, "Set"), (nil, "Set"),
             (BusFace.interface?, "Toggle"), (nil, "Toggle"),
             (BusFace.interface?, "Postpone"), (nil, "Postpone"), (BusFace.interface?, "Skip"), (nil, "Skip"):
            return method(call, member, requests, published)
        case (BusFace.properties?, "Get"):
            return Result { () throws(Refused) in
                let args = try strings(of: call, "Get", "ss")
                guard args[0] == BusFace.interface || args[0].isEmpty, let value = emitted[args[1]] else {
                    throw Refused(error: BusError.unknownProperty(args[0], args[1]))
                }
                return [.variant(value)]
            }.mapError(\.error)
        case (BusFace.properties?, "GetAll"):
            return Result { () throws(Refused) in
                let iface = try strings(of: call, "GetAll", "s")[0]
                let all = iface == BusFace.interface || iface.isEmpty ? emitted.sorted { $0.key < $1.key }.map { entry($0.key, $0.value) } : []
                return [.container(signature: "a{sv}", all)]
            }.mapError(\.error)
        case (BusFace.properties?, "Set"):
            return .failure(BusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly",
                                     message: "the properties of \(BusFace.interface) are read-only: call Set or Toggle"))
        case (BusFace.introspectable?, "Introspect"):
            return .success([.string(BusFace.introspection)])
        default:
            return .failure(unknownMethod(call, member, BusFace.path))
        }
    }

    private func darkmanCall(_ call: Message, _ member: String, _ requests: FaceRequests, _ published: AppearanceState) -> Result<[BusValue], BusError>? {
        let mode = BusValue.string(published.mode.rawValue)
        switch (call.interface, member) {
        case (BusFace.properties?, "Get"):
            return Result { () throws(Refused) in
                let args = try strings(of: call, "Get", "ss")
                guard args[0] == BusFace.darkmanInterface || args[0].isEmpty, args[1] == "Mode" else {
                    throw Refused(error: BusError.unknownProperty(args[0], args[1]))
                }
                return [.variant(mode)]
            }.mapError(\.error)
        case (BusFace.properties?, "GetAll"):
            return Result { () throws(Refused) in
                let iface = try strings(of: call, "GetAll", "s")[0]
                return [.container(signature: "a{sv}", iface == BusFace.darkmanInterface || iface.isEmpty ? [entry("Mode", mode)] : [])]
            }.mapError(\.error)
        case (BusFace.properties?, "Set"):
            guard call.hasSignature("ssv") else { return .failure(invalidArgs("Set takes (ssv), not (\(call.signature))")) }
            // Two names and a small variant: a longer string is refused, never copied.
            guard let args = call.arguments(within: DecodeBounds(depth: 1, values: 4, bytes: 3 * BusFace.maxNameBytes)),
                  args.count == 3, case .string(let iface) = args[0], case .string(let name) = args[1], case .variant(let value) = args[2]
            else { return .failure(invalidArgs("Set: the mode is \"light\" or \"dark\"")) }
            guard iface == BusFace.darkmanInterface, name == "Mode" else {
                return .failure(BusError.unknownProperty(iface, name))
            }
            guard case .string(let s) = value, let m = Mode(rawValue: s) else {
                return .failure(invalidArgs("Mode is \"light\" or \"dark\", not \(value)"))
            }
            write(.set(Override(m)), app: nil, for: call, requests) { _ in [] }
            return nil
        case (BusFace.introspectable?, "Introspect"):
            return .success([.string(BusFace.darkmanIntrospection)])
        default:
            return .failure(unknownMethod(call, member, BusFace.darkmanPath))
        }
    }
}
