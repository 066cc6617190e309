// appearanced as the XDG desktop portal's Settings backend (`org.freedesktop.impl.portal.Settings`) for desktops
// that have none (sway, Hyprland, i3, …), on the session bus. Where it does not serve it answers no key and emits
// nothing; it owns its name in every case (docs/decisions.md, "The portal backend (reach)").
import AppearanceCore
import AppearancePosix
import Dispatch

public final class PortalBackend: Outlet, BusPeer, @unchecked Sendable {
    // Confined to `queue`, like the sentry whose connection it shares.
    static let busName = "org.freedesktop.impl.portal.desktop.appearanced"
    /// The `.portal` file's name without the extension: what portals.conf lists.
    static let portalName = "appearanced"
    static let path = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.impl.portal.Settings"
    static let namespace = "org.freedesktop.appearance"
    static let version: UInt32 = 1
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

    /// - Parameter bus: the session bus's client, shared. `auto` reads the environment the frontend reads.
    public init(bus: BusClient, log: @escaping (LogLevel, String) -> Void) {
        (self.client, self.log) = (bus, log)
        // Read once, on the thread that makes the backend: the bus's queue must not call getenv.
        let variables = PortalBackend.variables.reduce(into: [String: String]()) { $0[$1] = Posix.environment($1) }
        self.environment = { PortalBackend.readEnvironment(variables) }
    }

    public func start(policy: BackendPolicy, report: @escaping (OutletStatus) -> Void) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        self.report = report
        client.export(object, for: self)
        // Owned in every case, and asked for before the sentry's first read on every connection.
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

    /// Serving for the daemon's purposes: chosen, and the name is ours or being asked for.
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
        (bus, ownsName, busDetail, served) = (nil, nil, detail, [])
        changed()
    }

    private func nameState(_ state: NameState) {
        switch state {
        case .asking: ownsName = nil
        case .owned: ownsName = true
        case .refused(let why):
            (ownsName, busDetail) = (false, "\(PortalBackend.busName): \(why)")
            log(.warning, "\(busDetail); portal apps will not see appearanced's mode")
        case .taken:
            (ownsName, busDetail) = (false, "another process owns \(PortalBackend.busName)")
            log(.warning, "\(busDetail) (another appearanced?); portal apps will not see this daemon's mode")
        }
        changed()
    }

    // MARK: - Calls

    /// What ReadAll may carry (docs/decisions.md, "One huge D-Bus call"); apps ask for two to five namespaces.
    static let maxNamespaces = 256
    static let maxNamespaceBytes = 16 * 1024

    /// The object, as xdg-desktop-portal's org.freedesktop.impl.portal.Settings.xml declares it.
    private var object: ExportedObject {
        ExportedObject(PortalBackend.path, [ExportedInterface(name: PortalBackend.interface, methods: [
            ExportedMethod("ReadAll", in: ["namespaces": "as"], out: ["value": "a{sa{sv}}"],
                           bounds: DecodeBounds(depth: 1, values: 1 + PortalBackend.maxNamespaces, bytes: PortalBackend.maxNamespaceBytes),
                           tooBig: "ReadAll takes at most \(PortalBackend.maxNamespaces) namespaces, \(PortalBackend.maxNamespaceBytes) bytes in all") {
                [unowned self] in self.readAll($0)
            },
            ExportedMethod("Read", in: ["namespace": "s", "key": "s"], out: ["value": "v"]) { [unowned self] in self.read($0) },
        ], signals: [ExportedSignal("SettingChanged", ["namespace": "s", "key": "s", "value": "v"])],
           properties: [ExportedProperty("version", "u", constant: true) { .uint32(PortalBackend.version) }])])
    }

    private func read(_ call: BusCall) -> Answer {
        guard call.string(0) == PortalBackend.namespace, let value = current.first(where: { $0.key == call.string(1) })?.value else {
            return .failure(BusError(name: PortalBackend.notFound, message: "Requested setting not found"))
        }
        return .success([.variant(value)])
    }

    private func readAll(_ call: BusCall) -> Answer {
        let items = if case .container(_, let items)? = call.args.first { items } else { [BusValue]() }
        let patterns = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
        let keys = current
        var namespaces: [BusValue] = []
        if !keys.isEmpty, PortalBackend.matches(patterns, PortalBackend.namespace) {
            let dict = keys.map { BusValue.entry($0.key, $0.value) }
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
        // ≥ 1.18: the first DESKTOP-portals.conf, then portals.conf, in the config dirs, /etc and the data dir.
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
