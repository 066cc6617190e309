import AppearanceCore

/// The protocol version reported by `status`. Clients ignore fields they do not know; new methods and fields
/// never change the meaning of old ones; this number goes up when something is added.
/// 2: `traits` in the state object, `subscribe` params (`traits`, `palette`), the `resolve` and `palette` methods.
/// 3: temporary overrides (`set`/`toggle` params `until` and `for`, `temporary` in the state object), sources
///    `temporary` and `schedule`, the `log` method; `status` adds `schedule` and `portalBackend`.
/// 4: per-app overrides: `"app"` in the params of get, set, toggle, subscribe, resolve and palette; `app`,
///    `globalMode` and `globalSource` in an app's state object; source `app`; the `apps` method.
public let protocolVersion = 4

/// The longest line either side accepts, newline excluded.
public let maxLineLength = 65_536

/// JSON-RPC 2.0 error codes (and the one server-defined code this protocol uses).
public enum ErrorCode: Int, Sendable {
    case parseError = -32700
    case invalidRequest = -32600
    case methodNotFound = -32601
    case invalidParams = -32602
    case internalError = -32603
    /// The request was understood but could not be carried out (e.g. the override could not be saved).
    case requestFailed = -32000
}

public struct RPCError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code.rawValue
        self.message = message
    }

    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) (error \(code))" }
}

public enum Method: String, CaseIterable, Sendable {
    case get, set, toggle, subscribe, status, resolve, palette, log, apps
}

/// App ids (`"app"` in params): 1-255 bytes of `A-Z a-z 0-9 . _ -`, not starting with a dot; a desktop-file
/// or Flatpak style id (`org.gnome.TextEditor`, `kitty`).
public enum AppID {
    public static func isValid(_ id: String) -> Bool {
        let b = Array(id.utf8)
        guard (1...255).contains(b.count), b[0] != UInt8(ascii: ".") else { return false }
        return b.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x5F || c == 0x2D
        }
    }

    /// Overrides a daemon keeps at most.
    public static let maxOverrides = 4096
}

/// How long a temporary override lasts: until the next automatic change (a schedule transition or a change
/// of the desktop's own value), or for a number of seconds.
public enum Lifetime: Equatable, Sendable {
    case untilNext
    case seconds(Int64)

    /// The longest `for`: a year.
    public static let maxSeconds: Int64 = 366 * 86_400

    var members: [(String, JSON)] {
        switch self {
        case .untilNext: [("until", .string("next"))]
        case .seconds(let n): [("for", .int(UInt64(n)))]
        }
    }
}

/// A mode and contrast a client asks a palette to be resolved for; what it leaves out is taken from the
/// current state (its mode, and the desktop's contrast, normal when the desktop does not say).
public struct VariantRequest: Equatable, Sendable {
    public var mode: Mode?
    public var contrast: Contrast?

    public init(mode: Mode? = nil, contrast: Contrast? = nil) {
        self.mode = mode
        self.contrast = contrast
    }

    public static let current = VariantRequest()

    public func variant(for state: AppearanceState) -> Variant {
        Variant(mode ?? state.mode, contrast ?? state.traits.contrast ?? .normal)
    }

    var members: [(String, JSON)] {
        var m: [(String, JSON)] = []
        if let mode { m.append(("mode", .string(mode.rawValue))) }
        if let contrast { m.append(("contrast", .string(contrast.rawValue))) }
        return m
    }
}

/// A request after validation: what the client wants, with typed parameters.
public enum Call: Equatable, Sendable {
    case get
    case set(Override)
    case toggle
    case subscribe(Interest)
    case status
    /// Tokens to resolve, in the order asked.
    case resolve([String], VariantRequest)
    case palette(VariantRequest)
    /// `set` with `until` or `for`: a temporary override.
    case setTemporary(Mode, Lifetime)
    /// `toggle` with `until` or `for`.
    case toggleTemporary(Lifetime)
    /// The recent transitions, newest last (at most `limit`).
    case log(limit: Int?)
    /// Every app override.
    case apps

    /// A plain `subscribe`: mode changes only.
    public static let subscribe = Call.subscribe(.mode)

    public var method: Method {
        switch self {
        case .get: .get
        case .set, .setTemporary: .set
        case .toggle, .toggleTemporary: .toggle
        case .log: .log
        case .apps: .apps
        case .subscribe: .subscribe
        case .status: .status
        case .resolve: .resolve
        case .palette: .palette
        }
    }

    var params: JSON? {
        switch self {
        case .set(let o): return .object([("override", .string(o.rawValue))])
        case .setTemporary(let m, let l): return .object([("override", .string(m.rawValue))] + l.members)
        case .toggleTemporary(let l): return .object(l.members)
        case .log(let limit): return limit.map { .object([("limit", .int(UInt64($0)))]) }
        case .apps: return nil
        case .subscribe(let i):
            // A plain subscribe sends no params, so that a protocol 1 daemon accepts it.
            var m: [(String, JSON)] = []
            if i.traits { m.append(("traits", .bool(true))) }
            if i.palette { m.append(("palette", .bool(true))) }
            return m.isEmpty ? nil : .object(m)
        case .resolve(let tokens, let v): return .object([("tokens", .array(tokens.map(JSON.string)))] + v.members)
        case .palette(let v): return v.members.isEmpty ? nil : .object(v.members)
        case .get, .toggle, .status: return nil
        }
    }
}

public struct Request: Equatable, Sendable {
    /// nil for a JSON-RPC notification (no reply is sent); otherwise a string, number or null.
    public var id: JSON?
    public var call: Call
    /// `"app"`: the app the request speaks for (get, set, toggle, subscribe, resolve, palette).
    public var app: String?

    public init(id: JSON?, call: Call, app: String? = nil) {
        self.id = id
        self.call = call
        self.app = app
    }

    /// The request as one line, newline included.
    public var line: [UInt8] {
        var members: [(String, JSON)] = [("jsonrpc", .string("2.0"))]
        if let id { members.append(("id", id)) }
        members.append(("method", .string(call.method.rawValue)))
        var params = call.params
        if let app {
            if case .object(let m)? = params { params = .object(m + [("app", .string(app))]) } else { params = .object([("app", .string(app))]) }
        }
        if let p = params { members.append(("params", p)) }
        return frame(.object(members))
    }
}

/// Why a line is not a valid request, and the id to answer with (null when it could not be read).
public struct RequestFailure: Error, Equatable, Sendable {
    public var id: JSON?
    /// False when the line was a well-formed notification (no id): JSON-RPC sends no reply then.
    public var wantsReply: Bool
    public var error: RPCError
}

extension Request {
    /// Validates one line from a client. Every failure names what is wrong.
    public static func decode<C: Collection<UInt8>>(_ line: C) throws(RequestFailure) -> Request {
        func invalid(_ code: ErrorCode, _ msg: String, id: JSON? = .null, reply: Bool = true) -> RequestFailure {
            RequestFailure(id: id, wantsReply: reply, error: RPCError(code, msg))
        }
        let json: JSON
        do { json = try JSON.parse(line) } catch { throw invalid(.parseError, "parse error \(error)") }
        guard case .object = json else {
            if case .array = json { throw invalid(.invalidRequest, "batch requests are not supported: send one object per line") }
            throw invalid(.invalidRequest, "a request must be a JSON object")
        }
        let id = json["id"]
        switch id {
        case nil, .null?, .string?, .number?: break
        default: throw invalid(.invalidRequest, "\"id\" must be a string, a number or null")
        }
        let reply = id != nil
        guard json["jsonrpc"] == .string("2.0") else { throw invalid(.invalidRequest, "\"jsonrpc\" must be \"2.0\"", id: id ?? .null) }
        guard let name = json["method"]?.stringValue else {
            throw invalid(.invalidRequest, "\"method\" must be a string", id: id ?? .null)
        }
        guard let method = Method(rawValue: name) else {
            let known = Method.allCases.map(\.rawValue).joined(separator: ", ")
            throw invalid(.methodNotFound, "unknown method \"\(name)\" (known: \(known))", id: id ?? .null, reply: reply)
        }
        let params = json["params"]
        func members() throws(RequestFailure) -> [(String, JSON)] {
            switch params {
            case nil, .null?: return []
            case .object(let m)?: return m
            case .array(let a)? where a.isEmpty: return []
            default: throw invalid(.invalidParams, "\(name) takes its params as an object", id: id ?? .null, reply: reply)
            }
        }
        let given = try members()
        let allowed: Set<String> = switch method {
        case .set: ["override", "until", "for", "app"]
        case .toggle: ["until", "for", "app"]
        case .log: ["limit"]
        case .subscribe: ["traits", "palette", "app"]
        case .resolve: ["tokens", "mode", "contrast", "app"]
        case .palette: ["mode", "contrast", "app"]
        case .get: ["app"]
        case .status, .apps: []
        }
        if let unknown = given.first(where: { !allowed.contains($0.0) }) {
            throw invalid(.invalidParams, "\(name): unknown parameter \"\(unknown.0)\"", id: id ?? .null, reply: reply)
        }
        func param(_ key: String) -> JSON? {
            guard let v = given.first(where: { $0.0 == key })?.1, v != .null else { return nil }
            return v
        }
        func flag(_ key: String) throws(RequestFailure) -> Bool {
            guard let v = param(key) else { return false }
            guard let b = v.boolValue else {
                throw invalid(.invalidParams, "\(name): \"\(key)\" must be true or false, got \(v.text)", id: id ?? .null, reply: reply)
            }
            return b
        }
        func variant() throws(RequestFailure) -> VariantRequest {
            var v = VariantRequest()
            if let m = param("mode") {
                guard let s = m.stringValue, let mode = Mode(rawValue: s) else {
                    throw invalid(.invalidParams, "\(name): invalid mode \(m.text), expected \"light\" or \"dark\"", id: id ?? .null, reply: reply)
                }
                v.mode = mode
            }
            if let c = param("contrast") {
                guard let s = c.stringValue, let contrast = Contrast(rawValue: s) else {
                    throw invalid(.invalidParams, "\(name): invalid contrast \(c.text), expected \"normal\" or \"high\"", id: id ?? .null, reply: reply)
                }
                v.contrast = contrast
            }
            return v
        }
        /// `until: "next"` or `for: SECONDS`, nil when neither is given.
        func lifetime() throws(RequestFailure) -> Lifetime? {
            switch (param("until"), param("for")) {
            case (nil, nil): return nil
            case (.some, .some):
                throw invalid(.invalidParams, "\(name): give \"until\" or \"for\", not both", id: id ?? .null, reply: reply)
            case (let u?, nil):
                guard u.stringValue == "next" else {
                    throw invalid(.invalidParams, "\(name): invalid \"until\" \(u.text), expected \"next\"", id: id ?? .null, reply: reply)
                }
                return .untilNext
            case (nil, let f?):
                guard let n = f.uint64Value, n >= 1, n <= UInt64(Lifetime.maxSeconds) else {
                    throw invalid(.invalidParams, "\(name): invalid \"for\" \(f.text), expected whole seconds from 1 to \(Lifetime.maxSeconds)",
                                  id: id ?? .null, reply: reply)
                }
                return .seconds(Int64(n))
            }
        }
        var app: String?
        if let a = param("app") {
            guard let s = a.stringValue, AppID.isValid(s) else {
                throw invalid(.invalidParams, "\(name): invalid \"app\" \(a.text), expected 1-255 characters of A-Z a-z 0-9 . _ - not starting with a dot",
                              id: id ?? .null, reply: reply)
            }
            guard param("until") == nil, param("for") == nil else {
                throw invalid(.invalidParams, "\(name): an app override cannot be temporary (\"until\"/\"for\" are for everyone's mode)",
                              id: id ?? .null, reply: reply)
            }
            app = s
        }
        let call: Call
        switch method {
        case .apps: call = .apps
        case .get: call = .get
        case .toggle: call = try lifetime().map(Call.toggleTemporary) ?? .toggle
        case .log:
            if let l = param("limit") {
                guard let n = l.uint64Value, n >= 1 else {
                    throw invalid(.invalidParams, "log: invalid \"limit\" \(l.text), expected a positive whole number", id: id ?? .null, reply: reply)
                }
                call = .log(limit: Int(min(n, 1 << 20)))
            } else {
                call = .log(limit: nil)
            }
        case .subscribe: call = .subscribe(Interest(traits: try flag("traits"), palette: try flag("palette")))
        case .status: call = .status
        case .palette: call = .palette(try variant())
        case .resolve:
            guard let t = param("tokens") else {
                throw invalid(.invalidParams, "resolve: missing parameter \"tokens\" (an array of token names)", id: id ?? .null, reply: reply)
            }
            guard case .array(let items) = t, !items.isEmpty,
                  case let names = items.compactMap(\.stringValue), names.count == items.count else {
                throw invalid(.invalidParams, "resolve: \"tokens\" must be a non-empty array of strings, got \(t.text)", id: id ?? .null, reply: reply)
            }
            call = .resolve(names, try variant())
        case .set:
            let expected = "expected \"light\", \"dark\" or \"system\""
            guard let value = json["params"]?["override"] else {
                throw invalid(.invalidParams, "set: missing parameter \"override\" (\(expected))", id: id ?? .null, reply: reply)
            }
            guard let s = value.stringValue, let o = Override(rawValue: s) else {
                throw invalid(.invalidParams, "set: invalid override \(value.text), \(expected)", id: id ?? .null, reply: reply)
            }
            if let l = try lifetime() {
                guard let mode = Mode(rawValue: s) else {
                    throw invalid(.invalidParams, "set: \"system\" cannot be temporary (it ends every override)", id: id ?? .null, reply: reply)
                }
                call = .setTemporary(mode, l)
            } else {
                call = .set(o)
            }
        }
        return Request(id: id, call: call, app: app)
    }
}

// MARK: - Server → client

/// Extra facts `status` adds to the state object.
public struct StatusInfo: Equatable, Sendable {
    public var state: AppearanceState
    /// Where the system value came from, or why there is none ("portal v2", "no session bus: …").
    public var systemDetail: String
    public var defaultMode: Mode
    public var subscribers: Int
    public var protocolVersion: Int
    public var version: String
    public var pid: Int
    /// The palette file and how it was read ("…/palette.toml: 9 tokens"); nil from a protocol 1 daemon.
    public var paletteDetail: String?
    /// Whether the daemon serves the portal's Settings, and why ("serving as …: no other Settings backend
    /// for sway", "not serving: gtk.portal provides Settings for GNOME"); nil from an older daemon.
    public var portalBackendDetail: String?
    /// The schedule's mode and next change ("dark until 07:12 (sunrise: light)"); nil without a schedule.
    public var scheduleDetail: String?
    /// The hooks' last run ("3 hooks for dark at 19:00: ok"); nil from an older daemon.
    public var hooksDetail: String?
    /// The config file and how it was read, or why a reloaded one was not used; nil from an older daemon.
    public var configDetail: String?
    /// How many app overrides there are; nil from an older daemon.
    public var appOverrides: Int?
    /// Whether appearanced drives the desktop's own setting (GNOME, KDE), and its last write.
    public var desktopDetail: String?

    public init(state: AppearanceState, systemDetail: String, defaultMode: Mode, subscribers: Int,
                protocolVersion: Int = AppearanceProtocol.protocolVersion, version: String, pid: Int,
                paletteDetail: String? = nil, portalBackendDetail: String? = nil, scheduleDetail: String? = nil,
                hooksDetail: String? = nil, configDetail: String? = nil, appOverrides: Int? = nil,
                desktopDetail: String? = nil) {
        self.desktopDetail = desktopDetail
        self.appOverrides = appOverrides
        self.configDetail = configDetail
        self.hooksDetail = hooksDetail
        self.scheduleDetail = scheduleDetail
        self.paletteDetail = paletteDetail
        self.portalBackendDetail = portalBackendDetail
        self.state = state
        self.systemDetail = systemDetail
        self.defaultMode = defaultMode
        self.subscribers = subscribers
        self.protocolVersion = protocolVersion
        self.version = version
        self.pid = pid
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
    }

    /// Reads a state object; unknown fields are ignored.
    public init(json: JSON) throws(RPCError) {
        func field<T: RawRepresentable<String>>(_ key: String, _: T.Type) throws(RPCError) -> T {
            guard let s = json[key]?.stringValue, let v = T(rawValue: s) else { throw bad(key) }
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
        globalMode = json["globalMode"]?.stringValue.flatMap(Mode.init(rawValue:))
        globalSource = json["globalSource"]?.stringValue.flatMap(Source.init(rawValue:))
    }
}

/// One entry of `log`: a change of the mode, when, and why.
public struct LogEntry: Equatable, Sendable {
    /// Unix time, seconds.
    public var time: Int64
    /// nil for the daemon's start.
    public var from: Mode?
    public var to: Mode
    public var source: Source?
    /// Why, in words: "desktop: dark (portal v2)", "override dark set by appearancectl (pid 4242)", …
    public var cause: String

    public init(time: Int64, from: Mode?, to: Mode, source: Source?, cause: String) {
        (self.time, self.from, self.to, self.source, self.cause) = (time, from, to, source, cause)
    }

    public var json: JSON {
        .object([("time", .int(UInt64(max(0, time)))), ("from", from.map { .string($0.rawValue) } ?? .null),
                 ("to", .string(to.rawValue)), ("source", source.map { .string($0.rawValue) } ?? .null), ("cause", .string(cause))])
    }

    public init?(json: JSON) {
        guard let t = json["time"]?.uint64Value, let to = json["to"]?.stringValue.flatMap(Mode.init(rawValue:)) else { return nil }
        self.init(time: Int64(t), from: json["from"]?.stringValue.flatMap(Mode.init(rawValue:)), to: to,
                  source: json["source"]?.stringValue.flatMap(Source.init(rawValue:)), cause: json["cause"]?.stringValue ?? "")
    }
}

extension TemporaryOverride {
    /// `{"mode": "dark", "until": "next"}` or `{"mode": "dark", "until": UNIX_SECONDS}`.
    public var json: JSON {
        let until: JSON = switch expiry {
        case .nextChange: .string("next")
        case .at(let t): .int(UInt64(max(0, t)))
        }
        return .object([("mode", .string(mode.rawValue)), ("until", until)])
    }

    /// Reads it leniently: nil for null or anything unusable.
    public init?(json: JSON) {
        guard let mode = json["mode"]?.stringValue.flatMap(Mode.init(rawValue:)), let until = json["until"] else { return nil }
        if until.stringValue == "next" {
            self.init(mode: mode, expiry: .nextChange)
        } else if let t = until.uint64Value {
            self.init(mode: mode, expiry: .at(Int64(t)))
        } else {
            return nil
        }
    }
}

extension Traits {
    /// `{"contrast": "normal"|"high"|null, "reducedMotion": true|false|null, "accentColor": "#rrggbb"|null}`:
    /// null means the desktop does not say.
    public var json: JSON {
        .object([("contrast", contrast.map { .string($0.rawValue) } ?? .null),
                 ("reducedMotion", reducedMotion.map(JSON.bool) ?? .null),
                 ("accentColor", accentColor.map { .string($0.opaqueHex) } ?? .null)])
    }

    /// Reads traits leniently: a member that is missing or unusable is unknown (null).
    public init(json: JSON) {
        self.init(contrast: json["contrast"]?.stringValue.flatMap(Contrast.init(rawValue:)),
                  reducedMotion: json["reducedMotion"]?.boolValue,
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
    /// `{"mode":"dark","contrast":"normal","colors":{"fill.bg":"#262626",…},"assets":{"wallpaper":"/…",…}}`,
    /// tokens in palette file order.
    public var json: JSON {
        .object([("mode", .string(variant.mode.rawValue)), ("contrast", .string(variant.contrast.rawValue)),
                 ("colors", .object(colors.map { ($0.name, .string($0.color.hex)) })),
                 ("assets", .object(assets.map { ($0.name, .string($0.path)) }))])
    }

    public init(json: JSON) throws(RPCError) {
        guard let mode = json["mode"]?.stringValue.flatMap(Mode.init(rawValue:)) else { throw bad("palette mode") }
        guard let contrast = json["contrast"]?.stringValue.flatMap(Contrast.init(rawValue:)) else { throw bad("palette contrast") }
        var tokens: [PaletteToken] = []
        if case .object(let colors)? = json["colors"] {
            for (name, value) in colors {
                guard let c = value.stringValue.flatMap(Color.init(parsing:)) else { throw bad("colors.\(name)") }
                tokens.append(PaletteToken(name: name, value: .color(c)))
            }
        }
        if case .object(let assets)? = json["assets"] {
            for (name, value) in assets {
                guard let p = value.stringValue else { throw bad("assets.\(name)") }
                tokens.append(PaletteToken(name: name, value: .asset(p)))
            }
        }
        self.init(variant: Variant(mode, contrast), tokens: tokens)
    }
}

/// The reply to `subscribe`: the state, plus the palette for subscribers that asked for it.
public struct Subscription: Equatable, Sendable {
    public var state: AppearanceState
    public var palette: ResolvedPalette?

    public init(state: AppearanceState, palette: ResolvedPalette?) {
        self.state = state
        self.palette = palette
    }

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
    public var json: JSON {
        .object(state.members + [
            ("systemDetail", .string(systemDetail)), ("defaultMode", .string(defaultMode.rawValue)),
            ("subscribers", .int(subscribers)), ("protocol", .int(protocolVersion)),
            ("version", .string(version)), ("pid", .int(pid)),
        ] + (paletteDetail.map { [("paletteDetail", JSON.string($0))] } ?? [])
          + (portalBackendDetail.map { [("portalBackend", JSON.string($0))] } ?? [])
          + (scheduleDetail.map { [("schedule", JSON.string($0))] } ?? [])
          + (hooksDetail.map { [("hooks", JSON.string($0))] } ?? [])
          + (configDetail.map { [("config", JSON.string($0))] } ?? [])
          + (appOverrides.map { [("appOverrides", JSON.int(UInt64($0)))] } ?? [])
          + (desktopDetail.map { [("desktop", JSON.string($0))] } ?? []))
    }

    public init(json: JSON) throws(RPCError) {
        let state = try AppearanceState(json: json)
        guard let detail = json["systemDetail"]?.stringValue else { throw bad("systemDetail") }
        guard let dm = json["defaultMode"]?.stringValue.flatMap(Mode.init(rawValue:)) else { throw bad("defaultMode") }
        guard let subs = json["subscribers"]?.intValue else { throw bad("subscribers") }
        guard let proto = json["protocol"]?.intValue else { throw bad("protocol") }
        guard let version = json["version"]?.stringValue else { throw bad("version") }
        guard let pid = json["pid"]?.intValue else { throw bad("pid") }
        self.init(state: state, systemDetail: detail, defaultMode: dm, subscribers: subs,
                  protocolVersion: proto, version: version, pid: pid, paletteDetail: json["paletteDetail"]?.stringValue,
                  portalBackendDetail: json["portalBackend"]?.stringValue, scheduleDetail: json["schedule"]?.stringValue,
                  hooksDetail: json["hooks"]?.stringValue, configDetail: json["config"]?.stringValue,
                  appOverrides: json["appOverrides"]?.intValue, desktopDetail: json["desktop"]?.stringValue)
    }
}

extension Notification {
    /// The `changed` notification's params: the full state plus the mode the subscriber knew before.
    public var json: JSON {
        .object(state.members + [("previous", .string(previous.rawValue))] + (palette.map { [("palette", $0.json)] } ?? []))
    }

    public init(json: JSON) throws(RPCError) {
        guard let p = json["previous"]?.stringValue.flatMap(Mode.init(rawValue:)) else { throw bad("previous") }
        let palette = try json["palette"].map { j throws(RPCError) in try ResolvedPalette(json: j) }
        self.init(state: try AppearanceState(json: json), previous: p, palette: palette)
    }
}

/// Lines the server writes.
public enum Outgoing {
    public static func result(id: JSON, _ result: JSON) -> [UInt8] {
        frame(.object([("jsonrpc", .string("2.0")), ("id", id), ("result", result)]))
    }

    public static func error(id: JSON, _ error: RPCError) -> [UInt8] {
        frame(.object([("jsonrpc", .string("2.0")), ("id", id),
                       ("error", .object([("code", .int(error.code)), ("message", .string(error.message))]))]))
    }

    public static func changed(_ n: Notification) -> [UInt8] {
        frame(.object([("jsonrpc", .string("2.0")), ("method", .string("changed")), ("params", n.json)]))
    }
}

/// What a client reads: a reply to one of its requests, or a notification.
public enum Incoming: Equatable, Sendable {
    case result(id: JSON, JSON)
    case error(id: JSON, RPCError)
    case changed(Notification)
    /// A notification this client does not know: ignore it (forward compatibility).
    case other(method: String)

    public static func decode<C: Collection<UInt8>>(_ line: C) throws(RPCError) -> Incoming {
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

func frame(_ json: JSON) -> [UInt8] {
    var out = json.bytes
    out.append(0x0A)
    return out
}

/// The version of appearanced, appearancectl and AppearanceKit (they are released together).
public let packageVersion = "0.1.0"
