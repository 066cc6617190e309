// appearanced as the XDG desktop portal's Settings backend (`org.freedesktop.impl.portal.Settings`), for
// desktops that have none (sway, Hyprland, river, niri, i3, …): the portal frontend asks it for
// `org.freedesktop.appearance` and relays its `SettingChanged`, so every app that reads the portal follows
// the merged mode. It lives on the sentry's bus connection.
//
// No loop: while it serves, the keys it serves are appearanced's own, so the daemon ignores the sentry's
// reading of them (the frontend would hand our value back as "the desktop's"). No contradiction: where it
// does not serve, it answers no key and emits nothing, so the frontend's answers and signals come from the
// desktop's own backend alone. It owns its bus name in every case, so a frontend that activates it never
// waits for a name nobody takes.
import AppearanceCore
import AppearancePosix
import Dispatch

public final class PortalBackend: Outlet, @unchecked Sendable {
    // Confined to `queue`, like the sentry whose connection it shares.
    static let busName = "org.freedesktop.impl.portal.desktop.appearanced"
    /// The `.portal` file's name without the extension: what portals.conf lists.
    static let portalName = "appearanced"
    static let path = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.impl.portal.Settings"
    static let namespace = "org.freedesktop.appearance"
    static let version: UInt32 = 1
    private static let properties = "org.freedesktop.DBus.Properties"
    private static let introspectable = "org.freedesktop.DBus.Introspectable"
    private static let notFound = "org.freedesktop.portal.Error.NotFound"

    private let client: BusClient
    private let log: (LogLevel, String) -> Void
    private let environment: () -> (desktops: [String], portals: [PortalFile], conf: PortalsConf?)
    private var report: ((OutletStatus) -> Void)?
    private var choice = (serve: false, reason: "not started")
    private var bus: BusConnection?
    /// Whether this connection owns `busName`: nil while the request is under way.
    private var ownsName: Bool?
    private var busDetail = "no session bus yet"
    private var values: ServedValues?
    /// What the frontend was last given (answers and signals): SettingChanged goes out on a difference only.
    private var served: [(key: String, value: BusValue)] = []
    private var lastStatus: OutletStatus?

    /// - Parameter bus: the session bus's client, shared with the sentry. `auto` reads the environment the frontend reads:
    ///   `XDG_CURRENT_DESKTOP`, `$XDG_DESKTOP_PORTAL_DIR` (else `/usr/share/xdg-desktop-portal/portals`)
    ///   and portals.conf.
    public init(bus: BusClient, log: @escaping (LogLevel, String) -> Void) {
        self.client = bus
        self.log = log
        // The variables are read here, once, on the thread that makes the backend: the bus's queue must not call
        // getenv while the daemon's sets TZ (a time-zone change), and a running process's environment is fixed.
        let variables = PortalBackend.variables.reduce(into: [String: String]()) { $0[$1] = Posix.environment($1) }
        self.environment = { PortalBackend.readEnvironment(variables) }
    }

    public func start(policy: BackendPolicy, report: @escaping (OutletStatus) -> Void) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        self.report = report
        client.export(PortalBackend.path, for: self) { [weak self] message in self?.handle(message) ?? false }
        // Owned in every case, so a frontend that activates it never waits for a name nobody takes; asked for
        // before anything else on every connection, so no read of the sentry's is answered by a value not ours yet.
        client.own(PortalBackend.busName) { [weak self] state in self?.nameState(state) }
        client.add(self)
        setPolicy(policy)
    }

    public func setPolicy(_ policy: BackendPolicy) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        let env = environment()
        choice = BackendChoice.decide(policy, desktops: env.desktops, portals: env.portals, conf: env.conf)
        changed()
    }

    public func publish(_ values: ServedValues) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        self.values = values
        changed()
    }

    public func stop() {
        dispatchPrecondition(condition: .onQueue(client.queue))
        report = nil
        client.release(PortalBackend.busName)
        client.forget(self)
        bus = nil
    }

    /// Serving for the daemon's purposes: chosen, and the name is ours or being asked for (the request goes
    /// out before the sentry's first read, so no read can be answered by a value that is not ours yet).
    private var serving: Bool { choice.serve && bus != nil && ownsName != false }

    private var status: OutletStatus {
        guard choice.serve else { return OutletStatus(serving: false, detail: "not serving: \(choice.reason)") }
        guard bus != nil else { return OutletStatus(serving: false, detail: "not serving: \(busDetail)") }
        switch ownsName {
        case false?: return OutletStatus(serving: false, detail: "not serving: \(busDetail)")
        case nil: return OutletStatus(serving: true, detail: "serving as \(PortalBackend.busName) (name requested): \(choice.reason)")
        case true?: return OutletStatus(serving: true, detail: "serving as \(PortalBackend.busName): \(choice.reason)")
        }
    }

    /// The keys served now, in a fixed order.
    private var current: [(key: String, value: BusValue)] {
        guard serving, ownsName == true, let values else { return [] }
        var keys: [(key: String, value: BusValue)] = [("color-scheme", .uint32(values.mode.isDark ? 1 : 2))]
        if let a = values.accent {
            keys.append(("accent-color", .container(signature: "(ddd)", [
                .double(Double(a.red) / 255), .double(Double(a.green) / 255), .double(Double(a.blue) / 255),
            ])))
        }
        return keys
    }

    /// Reports a new status, and signals every served value that differs from what the frontend was given.
    private func changed() {
        let s = status
        if s != lastStatus {
            lastStatus = s
            log(.info, "portal backend: \(s.detail)")
            report?(s)
        }
        let next = current
        guard let bus else { served = next; return }
        for (key, value) in next where !served.contains(where: { $0.key == key && $0.value == value }) {
            guard let signal = Message.signal(path: PortalBackend.path, interface: PortalBackend.interface, name: "SettingChanged",
                                              [.string(PortalBackend.namespace), .string(key), .variant(value)]) else { continue }
            try? bus.send(signal)
        }
        served = next
    }

    // MARK: - The bus

    /// The session bus is registered, the name asked for.
    func connected(_ connection: BusConnection) {
        bus = connection
        ownsName = client.nameState(PortalBackend.busName) == .owned ? true : nil
        served = []
        changed()
    }

    /// The session bus is gone (or never came).
    func disconnected(_ detail: String) {
        bus = nil
        ownsName = nil
        busDetail = detail
        served = []
        changed()
    }

    private func nameState(_ state: NameState) {
        switch state {
        case .asking: ownsName = nil
        case .owned: ownsName = true
        case .refused(let why):
            ownsName = false
            busDetail = "\(PortalBackend.busName): \(why)"
            log(.warning, "\(busDetail); portal apps will not see appearanced's mode")
        case .taken:
            ownsName = false
            busDetail = "another process owns \(PortalBackend.busName)"
            log(.warning, "\(busDetail) (another appearanced?); portal apps will not see this daemon's mode")
        }
        changed()
    }

    // MARK: - Calls

    /// What a call may carry. The signature is checked before anything is decoded, and decoding stops at
    /// these bounds: a caller picks a call's size (docs/decisions.md, "One huge D-Bus call"). Real callers
    /// are far below them: the frontend forwards an app's few namespaces (GTK and Qt ask for two to five, of
    /// 20 to 40 bytes), and names and keys are tens of bytes.
    static let maxNameBytes = 1024
    static let maxNamespaces = 256
    static let maxNamespaceBytes = 16 * 1024

    /// A call answered with an error (InvalidArgs, NotFound).
    private struct Refused: Error { var error: BusError }

    private func handle(_ call: Message) -> Bool {
        guard call.path == PortalBackend.path, let member = call.member else { return false }
        let interface = call.interface
        let answer: Result<[BusValue], BusError>
        switch (interface, member) {
        case (PortalBackend.interface?, "Read"), (nil, "Read"):
            answer = read(call)
        case (PortalBackend.interface?, "ReadAll"), (nil, "ReadAll"):
            answer = readAll(call)
        case (PortalBackend.properties?, "Get"):
            answer = property(call)
        case (PortalBackend.properties?, "GetAll"):
            answer = Result { () throws(Refused) in
                let iface = try strings(of: call, "GetAll", "s")[0]
                let all: [BusValue] = iface == PortalBackend.interface || iface.isEmpty
                    ? [.container(signature: "{sv}", [.string("version"), .variant(.uint32(PortalBackend.version))])] : []
                return [.container(signature: "a{sv}", all)]
            }.mapError(\.error)
        case (PortalBackend.properties?, "Set"):
            answer = .failure(BusError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "the properties of \(PortalBackend.interface) are read-only"))
        case (PortalBackend.introspectable?, "Introspect"):
            answer = .success([.string(PortalBackend.introspection)])
        default:
            answer = .failure(BusError(name: "org.freedesktop.DBus.Error.UnknownMethod",
                                       message: "no method \(interface.map { "\($0)." } ?? "")\(member)(\(call.signature)) at \(PortalBackend.path)"))
        }
        // A refused call may have been huge: libdbus held all of it (docs/decisions.md, "One huge D-Bus call").
        if case .failure(let error) = answer, error.name != PortalBackend.notFound { bus?.returnFreeMemorySoon() }
        guard !call.noReplyExpected else { return true }
        let reply: Message? = switch answer {
        case .success(let values): Message.methodReturn(to: call, values)
        case .failure(let error): Message.errorReply(to: call, error)
        }
        guard let reply, let bus else { return true }
        try? bus.send(reply)
        return true
    }

    private func strings(of call: Message, _ method: String, _ signature: String) throws(Refused) -> [String] {
        do { return try call.strings(signature, method: method, maxBytes: PortalBackend.maxNameBytes) } catch { throw Refused(error: error) }
    }

    private func invalidArgs(_ method: String, _ expected: String, _ signature: String) -> BusError {
        invalidArgs("\(method) takes (\(expected)), not (\(signature))")
    }

    private func invalidArgs(_ message: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
    }

    private func read(_ call: Message) -> Result<[BusValue], BusError> {
        Result { () throws(Refused) in
            let args = try strings(of: call, "Read", "ss")
            guard args[0] == PortalBackend.namespace, let value = current.first(where: { $0.key == args[1] })?.value else {
                throw Refused(error: BusError(name: PortalBackend.notFound, message: "Requested setting not found"))
            }
            return [.variant(value)]
        }.mapError(\.error)
    }

    private func readAll(_ call: Message) -> Result<[BusValue], BusError> {
        guard call.hasSignature("as") else { return .failure(invalidArgs("ReadAll", "as", call.signature)) }
        // The array and its strings: decoding stops at the first namespace past either bound.
        let bounds = DecodeBounds(depth: 1, values: 1 + PortalBackend.maxNamespaces, bytes: PortalBackend.maxNamespaceBytes)
        guard case .container(_, let items)? = call.arguments(within: bounds)?.first else {
            return .failure(invalidArgs("ReadAll takes at most \(PortalBackend.maxNamespaces) namespaces, "
                                        + "\(PortalBackend.maxNamespaceBytes) bytes in all"))
        }
        let patterns = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        let keys = current
        var namespaces: [BusValue] = []
        if !keys.isEmpty, PortalBackend.matches(patterns, PortalBackend.namespace) {
            let dict = keys.map { BusValue.container(signature: "{sv}", [.string($0.key), .variant($0.value)]) }
            namespaces.append(.container(signature: "{sa{sv}}", [.string(PortalBackend.namespace), .container(signature: "a{sv}", dict)]))
        }
        return .success([.container(signature: "a{sa{sv}}", namespaces)])
    }

    /// ReadAll's namespace patterns: none or `""` means all; a trailing `*` matches any rest.
    static func matches(_ patterns: [String], _ namespace: String) -> Bool {
        if patterns.isEmpty || patterns.contains("") { return true }
        return patterns.contains { p in
            p.hasSuffix("*") ? namespace.hasPrefix(p.dropLast()) : p == namespace
        }
    }

    private func property(_ call: Message) -> Result<[BusValue], BusError> {
        Result { () throws(Refused) in
            let args = try strings(of: call, "Get", "ss")
            guard args[0] == PortalBackend.interface, args[1] == "version" else {
                throw Refused(error: BusError.unknownProperty(args[0], args[1]))
            }
            return [.variant(.uint32(PortalBackend.version))]
        }.mapError(\.error)
    }

    /// The interface as xdg-desktop-portal's org.freedesktop.impl.portal.Settings.xml declares it.
    static let introspection = """
        \(Introspection.doctype)
        <node>
          <interface name="org.freedesktop.impl.portal.Settings">
            <method name="ReadAll">
              <arg name="namespaces" type="as" direction="in"/>
              <arg name="value" type="a{sa{sv}}" direction="out"/>
            </method>
            <method name="Read">
              <arg name="namespace" type="s" direction="in"/>
              <arg name="key" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <signal name="SettingChanged">
              <arg name="namespace" type="s"/>
              <arg name="key" type="s"/>
              <arg name="value" type="v"/>
            </signal>
            <property name="version" type="u" access="read"/>
          </interface>
        \(Introspection.standardInterfaces(propertiesChanged: false))
        </node>

        """

    // MARK: - The environment the frontend sees

    /// The environment variables `readEnvironment` uses.
    static let variables = ["XDG_CURRENT_DESKTOP", "XDG_DESKTOP_PORTAL_DIR", "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS"]

    /// `XDG_CURRENT_DESKTOP`, the `*.portal` files and the portals.conf in force, as the frontend finds them.
    static func readEnvironment(_ variables: [String: String]) -> (desktops: [String], portals: [PortalFile], conf: PortalsConf?) {
        let env = { (name: String) in variables[name] }
        let desktops = (env("XDG_CURRENT_DESKTOP") ?? "").split(separator: ":").map(String.init)
        let dir = env("XDG_DESKTOP_PORTAL_DIR") ?? "/usr/share/xdg-desktop-portal/portals"
        let portals = (FileSystem.names(in: dir) ?? []).filter { $0.hasSuffix(".portal") }.sorted().compactMap { name in
            readSmallFile(dir + "/" + name).flatMap { PortalFile(name: name, text: $0) }
        }
        // ≥ 1.18: the first of DESKTOP-portals.conf (each desktop in order), then portals.conf, in the
        // user's config dir, the system config dirs, /etc and the data dir.
        let home = env("HOME") ?? ""
        var dirs = [(env("XDG_CONFIG_HOME") ?? home + "/.config") + "/xdg-desktop-portal"]
        dirs += (env("XDG_CONFIG_DIRS") ?? "/etc/xdg").split(separator: ":").map { $0 + "/xdg-desktop-portal" }
        dirs += ["/etc/xdg-desktop-portal", "/usr/share/xdg-desktop-portal"]
        var conf: PortalsConf?
        search: for d in dirs {
            for name in desktops.map({ $0.lowercased() + "-portals.conf" }) + ["portals.conf"] {
                if let text = readSmallFile(d + "/" + name) {
                    conf = PortalsConf(path: d + "/" + name, text: text)
                    break search
                }
            }
        }
        return (desktops, portals, conf)
    }

    /// A regular file of at most 64 KiB as text, or nil (missing, not regular, too big, unreadable).
    private static func readSmallFile(_ path: String) -> String? {
        (try? FileSystem.readAll(path, limit: 64 * 1024)).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension PortalBackend: BusPeer {}
