import AppearanceCore

// What the daemon sends: the state object, status, log entries, notifications, and how a client reads them.

/// Extra facts `status` adds to the state object (docs/protocol.md, "status"); a detail is nil from an older
/// daemon, or where its feature is not configured.
public struct StatusInfo: Equatable, Sendable {
    public var state: AppearanceState
    /// Where the system value came from, or why there is none ("portal v2", "no session bus: …").
    public var systemDetail: String
    public var defaultMode: Mode
    public var subscribers: Int
    public var protocolVersion: Int
    public var version: String
    public var pid: Int
    /// The palette file and how it was read ("…/palette.toml: 9 tokens").
    public var paletteDetail: String? = nil
    /// Whether the daemon serves the portal's Settings, and why.
    public var portalBackendDetail: String? = nil
    /// The schedule's mode and next change ("dark until 07:12 (sunrise: light)").
    public var scheduleDetail: String? = nil
    /// The hooks' last run ("3 hooks for dark at 19:00: ok").
    public var hooksDetail: String? = nil
    /// The config file and how it was read, or why a reloaded one was not used.
    public var configDetail: String? = nil
    public var appOverrides: Int? = nil
    /// Whether appearanced drives the desktop's own setting (GNOME, KDE), and its last write.
    public var desktopDetail: String? = nil
    /// What is served on the session bus: appearanced's own name and darkman's, or why not.
    public var busDetail: String? = nil
    /// The schedule's place: typed, from GeoClue or cached, and how old the fix is.
    public var location: LocationInfo? = nil
    /// The integrations enabled and how their last runs went ("2 enabled (kitty, neovim): ok").
    public var integrationsDetail: String? = nil
    /// With a `[schedule]`: what `schedule` answers for the next two days.
    public var scheduleView: ScheduleInfo? = nil
    /// A trial instance's state folder (`appearanced --state-dir DIR`).
    public var trial: String? = nil
    /// With `[automatic] notify-before`: the notices before automatic changes, and how the last one went.
    public var noticesDetail: String? = nil
    /// With `[light-sensor]`, `[power]` or `wait-for-idle`: which automatic input decides, then each in words.
    public var automaticDetail: String? = nil
    public var lightSensorDetail: String? = nil
    public var powerDetail: String? = nil
    public var idleDetail: String? = nil

    public init(state: AppearanceState, systemDetail: String, defaultMode: Mode, subscribers: Int,
                protocolVersion: Int = AppearanceProtocol.protocolVersion, version: String, pid: Int) {
        (self.state, self.systemDetail, self.defaultMode, self.subscribers) = (state, systemDetail, defaultMode, subscribers)
        (self.protocolVersion, self.version, self.pid) = (protocolVersion, version, pid)
    }
}

extension AppearanceState {
    public var json: JSON { .object(members) }

    var members: [(String, JSON)] {
        [("mode", .string(mode.rawValue)), ("darkMode", .bool(darkMode)), ("system", .string(system.rawValue)),
         ("override", .string(override.rawValue)), ("source", .string(source.rawValue)),
         ("seq", .int(seq)), ("instance", .string(instance)), ("traits", traits.json),
         ("temporary", temporary.map(\.json) ?? .null)]
            + (app.map { [("app", .string($0)), ("globalMode", .string((globalMode ?? mode).rawValue)),
                          ("globalSource", .string((globalSource ?? source).rawValue))] } ?? [])
            + (configProblem.map { [("configProblem", .string($0))] } ?? [])
    }

    /// Reads a state object; unknown fields are ignored.
    public init(json: JSON) throws(RPCError) {
        func field<T: RawRepresentable<String>>(_ key: String, _: T.Type) throws(RPCError) -> T {
            guard let v: T = json.raw(key) else { throw bad(key) }
            return v
        }
        guard let seq = json["seq"]?.uint64Value else { throw bad("seq") }
        guard let instance = json["instance"]?.stringValue else { throw bad("instance") }
        // A protocol 1 daemon sends no traits: nothing is known about them.
        let traits = json["traits"].map(Traits.init(json:)) ?? .unavailable
        self.init(mode: try field("mode", Mode.self), system: try field("system", SystemScheme.self),
                  override: try field("override", Override.self), source: try field("source", Source.self),
                  traits: traits, temporary: json["temporary"].flatMap(TemporaryOverride.init(json:)), seq: seq, instance: instance)
        app = json["app"]?.stringValue
        (globalMode, globalSource) = (json.raw("globalMode"), json.raw("globalSource"))
        configProblem = json["configProblem"]?.stringValue
    }
}

/// One entry of `log`: a change of the mode, when, and why: everyone's mode, or one app's own (`app`).
public struct LogEntry: Equatable, Sendable {
    /// Unix time, seconds.
    public var time: Int64
    /// nil for the daemon's first start (no mode was logged before).
    public var from: Mode?
    public var to: Mode
    public var source: Source?
    /// Why, in words: "desktop: dark (portal v2)", "override dark set by appearancectl (pid 4242)", …
    public var cause: String
    /// The app whose own mode changed (its override set or removed); nil for everyone's mode.
    public var app: String?
    /// How many changes the entry stands for: more than 1 for a folded run of automatic changes (TransitionLog).
    public var changes: Int

    public init(time: Int64, from: Mode?, to: Mode, source: Source?, cause: String, app: String? = nil, changes: Int = 1) {
        (self.time, self.from, self.to, self.source, self.cause, self.app) = (time, from, to, source, cause, app)
        self.changes = changes
    }

    /// `{"time", "from", "to", "source", "app", "cause", "changes"}`; `app` and `changes` only where they apply.
    public var json: JSON {
        var members: [(String, JSON)] = [("time", .int(UInt64(max(0, time)))), ("from", from.map { .string($0.rawValue) } ?? .null),
                                         ("to", .string(to.rawValue)), ("source", source.map { .string($0.rawValue) } ?? .null)]
        if let app { members.append(("app", .string(app))) }
        members.append(("cause", .string(cause)))
        if changes > 1 { members.append(("changes", .int(UInt64(changes)))) }
        return .object(members)
    }

    public init?(json: JSON) {
        // A time that does not fit in an Int64 (2^63 and up) is no entry: refused, not trapped.
        guard let t = json.seconds("time"), let to: Mode = json.raw("to") else { return nil }
        self.init(time: t, from: json.raw("from"), to: to, source: json.raw("source"),
                  cause: json["cause"]?.stringValue ?? "", app: json["app"]?.stringValue,
                  changes: json["changes"]?.intValue ?? 1)
    }
}

extension TemporaryOverride {
    /// The `until` a state object or state file can hold: whole seconds from 1970 to the end of 9999 (every value
    /// a local calendar can show); anything else is refused, never converted with a trap.
    public static let untilRange: ClosedRange<Int64> = 0...253_402_300_799

    /// `{"mode", "until": "next" | UNIX_SECONDS}` (an `at` outside `untilRange` is written at its nearest end).
    public var json: JSON {
        let until: JSON = switch expiry {
        case .nextChange: .string("next")
        case .at(let t): .int(min(max(t, Self.untilRange.lowerBound), Self.untilRange.upperBound))
        }
        return .object([("mode", .string(mode.rawValue)), ("until", until)])
    }

    /// Reads it leniently: nil for null or anything unusable, an `until` outside `untilRange` included.
    public init?(json: JSON) {
        guard let mode: Mode = json.raw("mode"),
              let expiry = json["until"].flatMap(Expiry.init(json:)) else { return nil }
        self.init(mode: mode, expiry: expiry)
    }
}

extension TemporaryOverride.Expiry {
    /// `"next"`, or a whole number of seconds in `TemporaryOverride.untilRange`; nil for anything else.
    public init?(json: JSON) {
        if json.stringValue == "next" {
            self = .nextChange
        } else if let n = json.uint64Value, let t = Int64(exactly: n), TemporaryOverride.untilRange.contains(t) {
            self = .at(t)
        } else {
            return nil
        }
    }
}

extension Traits {
    /// `{"contrast", "reducedMotion", "accentColor"}`: null where the desktop does not say.
    public var json: JSON {
        .object([("contrast", contrast.map { .string($0.rawValue) } ?? .null),
                 ("reducedMotion", reducedMotion.map(JSON.bool) ?? .null),
                 ("accentColor", accentColor.map { .string($0.opaqueHex) } ?? .null)])
    }

    /// Reads traits leniently: a member that is missing or unusable is unknown (null).
    public init(json: JSON) {
        self.init(contrast: json.raw("contrast"), reducedMotion: json["reducedMotion"]?.boolValue,
                  accentColor: json["accentColor"]?.stringValue.flatMap(Color.init(parsing:)))
    }
}

extension PaletteValue {
    /// A color as `#rrggbb` (`#rrggbbaa` when translucent); an asset as its path.
    public var text: String {
        switch self {
        case .color(let c): c.hex
        case .asset(let p): p
        }
    }
}

extension ResolvedPalette {
    /// `{"mode", "contrast", "colors": {NAME: "#rrggbb", …}, "assets": {NAME: PATH, …}}`, in palette file order.
    public var json: JSON {
        .object([("mode", .string(variant.mode.rawValue)), ("contrast", .string(variant.contrast.rawValue)),
                 ("colors", .object(colors.map { ($0.name, .string($0.color.hex)) })),
                 ("assets", .object(assets.map { ($0.name, .string($0.path)) }))])
    }

    public init(json: JSON) throws(RPCError) {
        guard let mode: Mode = json.raw("mode") else { throw bad("palette mode") }
        guard let contrast: Contrast = json.raw("contrast") else { throw bad("palette contrast") }
        var tokens: [PaletteToken] = []
        for (kind, read) in [("colors", { $0.flatMap(Color.init(parsing:)).map(PaletteValue.color) }),
                             ("assets", { $0.map(PaletteValue.asset) })] as [(String, (String?) -> PaletteValue?)] {
            guard case .object(let members)? = json[kind] else { continue }
            for (name, value) in members {
                guard let v = read(value.stringValue) else { throw bad("\(kind).\(name)") }
                tokens.append(PaletteToken(name: name, value: v))
            }
        }
        self.init(variant: Variant(mode, contrast), tokens: tokens)
    }
}

/// The reply to `subscribe`: the state, plus the palette for subscribers that asked for it.
public struct Subscription: Equatable, Sendable {
    public var state: AppearanceState
    public var palette: ResolvedPalette?

    public init(state: AppearanceState, palette: ResolvedPalette?) { (self.state, self.palette) = (state, palette) }

    public var json: JSON {
        guard let palette else { return state.json }
        return .object(state.members + [("palette", palette.json)])
    }

    public init(json: JSON) throws(RPCError) {
        state = try AppearanceState(json: json)
        palette = try json["palette"].map { j throws(RPCError) in try ResolvedPalette(json: j) }
    }
}

private func bad(_ key: String) -> RPCError {
    RPCError(.internalError, "the daemon sent a state without a valid \"\(key)\"")
}

extension StatusInfo {
    /// The text members after the first six, by JSON name, in order (`json` slots the other three in between).
    private static var texts: [(String, WritableKeyPath<StatusInfo, String?>)] {
        [("paletteDetail", \.paletteDetail), ("portalBackend", \.portalBackendDetail), ("schedule", \.scheduleDetail),
         ("hooks", \.hooksDetail), ("config", \.configDetail), ("desktop", \.desktopDetail), ("bus", \.busDetail),
         ("integrations", \.integrationsDetail), ("trial", \.trial), ("notices", \.noticesDetail),
         ("automatic", \.automaticDetail), ("lightSensor", \.lightSensorDetail), ("power", \.powerDetail), ("idle", \.idleDetail)]
    }

    public var json: JSON {
        var optional = Self.texts.map { ($0.0, self[keyPath: $0.1].map(JSON.string)) }
        optional.insert(("appOverrides", appOverrides.map { .int(UInt64($0)) }), at: 5)
        optional.insert(("location", location?.json), at: 8)
        optional.insert(("scheduleView", scheduleView?.json), at: 10)
        return .object(state.members + [
            ("systemDetail", .string(systemDetail)), ("defaultMode", .string(defaultMode.rawValue)),
            ("subscribers", .int(subscribers)), ("protocol", .int(protocolVersion)),
            ("version", .string(version)), ("pid", .int(pid)),
        ] + optional.compactMap { name, value in value.map { (name, $0) } })
    }

    public init(json: JSON) throws(RPCError) {
        let state = try AppearanceState(json: json)
        guard let detail = json["systemDetail"]?.stringValue else { throw bad("systemDetail") }
        guard let dm: Mode = json.raw("defaultMode") else { throw bad("defaultMode") }
        guard let subs = json["subscribers"]?.intValue else { throw bad("subscribers") }
        guard let proto = json["protocol"]?.intValue else { throw bad("protocol") }
        guard let version = json["version"]?.stringValue else { throw bad("version") }
        guard let pid = json["pid"]?.intValue else { throw bad("pid") }
        self.init(state: state, systemDetail: detail, defaultMode: dm, subscribers: subs, protocolVersion: proto,
                  version: version, pid: pid)
        (appOverrides, location) = (json["appOverrides"]?.intValue, json["location"].map(LocationInfo.init(json:)))
        for (name, field) in Self.texts { self[keyPath: field] = json[name]?.stringValue }
        scheduleView = json["scheduleView"].flatMap { try? ScheduleInfo(json: $0) }
    }
}

extension Notification {
    /// The `changed` notification's params: the full state plus the mode the subscriber knew before.
    public var json: JSON {
        .object(state.members + [("previous", .string(previous.rawValue))] + (palette.map { [("palette", $0.json)] } ?? []))
    }

    public init(json: JSON) throws(RPCError) {
        guard let p: Mode = json.raw("previous") else { throw bad("previous") }
        let palette = try json["palette"].map { j throws(RPCError) in try ResolvedPalette(json: j) }
        self.init(state: try AppearanceState(json: json), previous: p, palette: palette)
    }
}

/// Lines the server writes (a notification and a state reply: DirectLines.swift).
public enum Outgoing {
    public static func reply(id: JSON, _ reply: Result<JSON, RPCError>) -> [UInt8] {
        switch reply {
        case .success(let json): result(id: id, json)
        case .failure(let e): error(id: id, e)
        }
    }

    public static func result(id: JSON, _ result: JSON) -> [UInt8] {
        frame(.object([("jsonrpc", .string("2.0")), ("id", id), ("result", result)]))
    }

    public static func error(id: JSON, _ error: RPCError) -> [UInt8] {
        frame(.object([("jsonrpc", .string("2.0")), ("id", id),
                       ("error", .object([("code", .int(error.code)), ("message", .string(error.message))]))]))
    }
}

/// What a client reads: a reply to one of its requests, or a notification.
public enum Incoming: Equatable, Sendable {
    case result(id: JSON, JSON)
    case error(id: JSON, RPCError)
    case changed(Notification)
    /// A notification this client does not know: ignore it (forward compatibility).
    case other(method: String)

    public static func decode(_ line: [UInt8]) throws(RPCError) -> Incoming { try decode(line[...]) }

    /// Concrete, not generic: see JSON.parse.
    public static func decode(_ line: ArraySlice<UInt8>) throws(RPCError) -> Incoming {
        let json: JSON
        do { json = try JSON.parse(line) } catch { throw RPCError(.parseError, "the daemon sent invalid JSON \(error)") }
        if let method = json["method"]?.stringValue {
            guard method == "changed" else { return .other(method: method) }
            guard let params = json["params"] else { throw bad("params") }
            return .changed(try Notification(json: params))
        }
        let id = json["id"] ?? .null
        if let r = json["result"] { return .result(id: id, r) }
        if let e = json["error"], let code = e["code"]?.intValue {
            return .error(id: id, RPCError(code: code, message: e["message"]?.stringValue ?? "(no message)"))
        }
        throw RPCError(.invalidRequest, "the daemon sent a message that is neither a reply nor a notification")
    }
}
