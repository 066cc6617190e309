// The D-Bus service on the session bus: appearanced's own interface and darkman's (docs/decisions.md, "The D-Bus
// service's names"). Reads for everyone answer from the published state; one app's state and writes go to the daemon
// (`BusServiceRequests`) and are answered when they come back. The objects are tables (AppearanceServiceObjects.swift).
import AppearanceCore
import AppearanceProtocol
import Dispatch

public final class AppearanceService: BusService, BusPeer, @unchecked Sendable {
    // Confined to `queue`, like the sentry whose connection it shares.
    static let busName = "io.github.appearanced.Appearance1"
    static let path = "/io/github/appearanced/Appearance1"
    static let interface = "io.github.appearanced.Appearance1"
    static let darkmanName = "nl.whynothugo.darkman"
    static let darkmanPath = "/nl/whynothugo/darkman"
    static let darkmanInterface = "nl.whynothugo.darkman"

    private let client: BusClient
    private let log: (LogLevel, String) -> Void
    private(set) var requests: BusServiceRequests?
    private var report: ((String) -> Void)?
    private var options = BusServiceOptions()
    private(set) var bus: BusConnection?
    private var busDetail = "no session bus yet"

    private var own: NameState?
    /// nil while darkman's name is not wanted (off) or there is no bus.
    private(set) var darkman: NameState?
    /// What listeners were last told, by property name: the properties of `published`, built when a reader asks.
    var emitted: [String: BusValue] {
        if emittedCache == nil, let published { emittedCache = properties(published) }
        return emittedCache ?? [:]
    }
    private var emittedCache: [String: BusValue]?
    /// The mode listeners were last told.
    private var emittedMode: Mode?
    /// The signals that depend on the mode alone, built once.
    let modeSignals = MessageTemplates()
    /// The published state, as the daemon last gave it: what a read for everyone answers.
    private(set) var published: AppearanceState?

    /// - Parameter bus: the session bus's client, shared.
    public init(bus: BusClient, log: @escaping (LogLevel, String) -> Void) { (self.client, self.log) = (bus, log) }

    public func start(_ options: BusServiceOptions, state: AppearanceState, requests: BusServiceRequests, report: @escaping (String) -> Void) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        (self.requests, self.report, self.options, published) = (requests, report, options, state)
        (emittedCache, emittedMode) = (nil, state.mode)
        client.export(ownObject, for: self)
        client.export(darkmanObject, for: self) { [unowned self] in darkman == .owned || darkman == .asking }
        client.own(AppearanceService.busName) { [weak self] state in self?.ownState(state) }
        if options.darkman { askForDarkman() }
        client.add(self)
        changed()
    }

    public func setOptions(_ options: BusServiceOptions) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        guard options != self.options else { return }
        self.options = options
        if options.darkman { askForDarkman() } else { releaseDarkman() }
        changed()
    }

    public func publish(_ state: AppearanceState, previous: Mode) {
        dispatchPrecondition(condition: .onQueue(client.queue))
        guard requests != nil else { return }
        let changedProperties = changes(from: published, to: state)
        published = state
        let before = emittedMode ?? previous
        (emittedCache, emittedMode) = (nil, state.mode)
        guard let bus else { return }
        for message in signals(changedProperties, mode: state.mode, before: before,
                               own: own == .owned || own == .asking, darkman: darkman == .owned || darkman == .asking) {
            try? bus.send(message)
        }
    }

    public func stop() {
        dispatchPrecondition(condition: .onQueue(client.queue))
        (report, requests) = (nil, nil)
        client.release(AppearanceService.busName)
        releaseDarkman()
        client.forget(self)
        bus = nil
    }

    // MARK: - Status

    private var status: String {
        guard bus != nil else { return "not on the bus: \(busDetail)" }
        let darkmanPart = options.darkman ? Self.shown(AppearanceService.darkmanName, darkman, taken: "darkman (or another process) holds it")
            : "not \(AppearanceService.darkmanName): off (darkman-dbus = false)"
        return Self.shown(AppearanceService.busName, own, taken: "another process owns it (taken when it lets it go)") + "; " + darkmanPart
    }

    /// One name in the status: owned, requested, or why not.
    private static func shown(_ name: String, _ state: NameState?, taken: String) -> String {
        switch state {
        case .owned?: name
        case .asking?, nil: "\(name) (name requested)"
        case .taken?: "not \(name): \(taken)"
        case .refused(let why)?: "not \(name): \(why)"
        }
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
        (bus, own) = (connection, client.nameState(AppearanceService.busName))
        darkman = options.darkman ? client.nameState(AppearanceService.darkmanName) : nil
        changed()
    }

    func disconnected(_ detail: String) {
        (bus, own, darkman, busDetail) = (nil, nil, options.darkman ? .asking : nil, detail)
        changed()
    }

    private func ownState(_ state: NameState) {
        own = state
        if state == .taken { log(.warning, "another process owns \(AppearanceService.busName) (another appearanced?); D-Bus clients will not see this daemon until it lets the name go") }
        changed()
    }

    /// darkman's name, asked for (and asked again whenever its holder lets it go) while `darkman-dbus` is on.
    private func askForDarkman() {
        guard client.nameState(AppearanceService.darkmanName) == nil else { return }
        darkman = .asking
        client.own(AppearanceService.darkmanName) { [weak self] state in
            guard let self, self.options.darkman else { return }
            self.darkman = state
            if state == .taken { self.log(.notice, "\(AppearanceService.darkmanName) is held by another process (darkman?): not taking it") }
            self.changed()
        }
    }

    private func releaseDarkman() {
        client.release(AppearanceService.darkmanName)
        darkman = nil
    }
}
