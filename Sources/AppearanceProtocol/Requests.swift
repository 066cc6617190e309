import AppearanceCore

// What a client sends: the requests, their parameters, and how the daemon reads and checks them.

/// How long a temporary override lasts: until the next automatic change, or for a number of seconds.
public enum Lifetime: Equatable, Sendable {
    case untilNext
    case seconds(Int64)

    /// The longest `for`: a year.
    public static let maxSeconds: Int64 = 366 * 86_400

    var members: [(String, JSON)] {
        switch self {
        case .untilNext: [("until", .string("next"))]
        // As given, even out of range (the daemon refuses it with an error naming it), never a trapping conversion.
        case .seconds(let n): [("for", .int(n))]
        }
    }
}

/// A mode and contrast a client asks a palette to be resolved for; what it leaves out is the current state's.
public struct VariantRequest: Equatable, Sendable {
    public var mode: Mode?
    public var contrast: Contrast?

    public init(mode: Mode? = nil, contrast: Contrast? = nil) { (self.mode, self.contrast) = (mode, contrast) }

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

public struct Request: Equatable, Sendable {
    /// nil for a JSON-RPC notification (no reply is sent); otherwise a string, number or null.
    public var id: JSON?
    public var call: Call
    /// `"app"`: the app the request speaks for (get, set, toggle, subscribe, resolve, palette).
    public var app: String?

    public init(id: JSON?, call: Call, app: String? = nil) { (self.id, self.call, self.app) = (id, call, app) }

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

/// A failure that is answered (`reply`) to `id`.
private func invalid(_ code: ErrorCode, _ message: String, id: JSON? = .null, reply: Bool = true) -> RequestFailure {
    RequestFailure(id: id, wantsReply: reply, error: RPCError(code, message))
}

extension Request {
    /// Members a request object, or its params, may have (four at most are used): past it a line is refused early.
    public static let maxMembers = 16

    /// Validates one line from a client. Every failure names what is wrong.
    public static func decode(_ line: [UInt8]) throws(RequestFailure) -> Request { try decode(line[...]) }

    /// Validates one line from a client. Every failure names what is wrong. Concrete, not generic: see JSON.parse.
    public static func decode(_ line: ArraySlice<UInt8>) throws(RequestFailure) -> Request {
        if let quick = quick(line) { return quick }
        let json: JSON
        do {
            json = try JSON.parse(line, maxMembers: Request.maxMembers)
        } catch where error.overMemberLimit {
            throw invalid(.invalidRequest, "a request and its params have at most \(Request.maxMembers) members (refused at byte \(error.offset))")
        } catch {
            throw invalid(.parseError, "parse error \(error)")
        }
        return try decode(json: json)
    }

    /// A request given as a value (the D-Bus service's calls), with the same checks and messages as a line.
    public static func decode(method: String, params: JSON) throws(RequestFailure) -> Request {
        try decode(json: .object([("jsonrpc", .string("2.0")), ("id", .int(1)), ("method", .string(method)), ("params", params)]))
    }

    static func decode(json: JSON) throws(RequestFailure) -> Request {
        guard case .object = json else {
            if case .array = json { throw invalid(.invalidRequest, "batch requests are not supported: send one object per line") }
            throw invalid(.invalidRequest, "a request must be a JSON object")
        }
        let id = json["id"]
        switch id {
        case nil, .null?, .string?, .number?: break
        default: throw invalid(.invalidRequest, "\"id\" must be a string, a number or null")
        }
        guard json["jsonrpc"] == .string("2.0") else { throw invalid(.invalidRequest, "\"jsonrpc\" must be \"2.0\"", id: id ?? .null) }
        guard let name = json["method"]?.stringValue else { throw invalid(.invalidRequest, "\"method\" must be a string", id: id ?? .null) }
        guard let method = Method(rawValue: name) else {
            let known = Method.allCases.map(\.rawValue).joined(separator: ", ")
            throw invalid(.methodNotFound, "unknown method \"\(name)\" (known: \(known))", id: id ?? .null, reply: id != nil)
        }
        // From here on a failure is invalid params, and its message starts with the method's name.
        func bad(_ message: String) -> RequestFailure { invalid(.invalidParams, "\(name): \(message)", id: id ?? .null, reply: id != nil) }
        func badValue(_ what: String, _ v: JSON, _ expected: String) -> RequestFailure { bad("invalid \(what) \(v.text), expected \(expected)") }
        let given: [(String, JSON)]
        switch json["params"] {
        case nil, .null?: given = []
        case .object(let m)?: given = m
        case .array(let a)? where a.isEmpty: given = []
        default: throw invalid(.invalidParams, "\(name) takes its params as an object", id: id ?? .null, reply: id != nil)
        }
        let allowed: Set<String> = switch method {
        case .set: ["override", "until", "for", "app"]
        case .toggle: ["until", "for", "app"]
        case .log: ["limit", "app"]
        case .subscribe: ["traits", "palette", "app"]
        case .resolve: ["tokens", "mode", "contrast", "app"]
        case .palette: ["mode", "contrast", "app"]
        case .get: ["app"]
        case .status, .apps, .reload: []
        case .schedule: ["days"]
        case .integrations: ["enable", "disable", "wait"]
        case .postpone: ["for", "cancel"]
        case .skip: ["cancel"]
        }
        if let unknown = given.first(where: { !allowed.contains($0.0) }) { throw bad("unknown parameter \"\(unknown.0)\"") }
        // A parameter given as null is a type error, not "absent" (`"app": null` would set everyone's mode).
        if let key = given.first(where: { $0.1 == .null })?.0 {
            let required = (method == .set && key == "override") || (method == .resolve && key == "tokens")
            throw bad("\"\(key)\" is null, expected \(Self.expected(key))" + (required ? "" : " or no \"\(key)\" at all"))
        }
        func param(_ key: String) -> JSON? { given.first(where: { $0.0 == key })?.1 }
        func flag(_ key: String) throws(RequestFailure) -> Bool {
            guard let v = param(key) else { return false }
            guard let b = v.boolValue else { throw bad("\"\(key)\" must be true or false, got \(v.text)") }
            return b
        }
        /// A whole number in `range`, nil when not given.
        func whole(_ key: String, _ range: ClosedRange<UInt64>, expected: String) throws(RequestFailure) -> UInt64? {
            guard let v = param(key) else { return nil }
            guard let n = v.uint64Value, range.contains(n) else { throw badValue("\"\(key)\"", v, expected) }
            return n
        }
        /// An array of strings, nil when it is anything else.
        func strings(_ v: JSON) -> [String]? {
            guard case .array(let items) = v, case let strings = items.compactMap(\.stringValue), strings.count == items.count else { return nil }
            return strings
        }
        func variant() throws(RequestFailure) -> VariantRequest {
            let mode = param("mode"), contrast = param("contrast")
            let v = VariantRequest(mode: mode?.stringValue.flatMap(Mode.init(rawValue:)), contrast: contrast?.stringValue.flatMap(Contrast.init(rawValue:)))
            if let mode, v.mode == nil { throw badValue("mode", mode, Self.expected("mode")) }
            if let contrast, v.contrast == nil { throw badValue("contrast", contrast, Self.expected("contrast")) }
            return v
        }
        /// `until: "next"` or `for: SECONDS`, nil when neither is given.
        func lifetime() throws(RequestFailure) -> Lifetime? {
            switch (param("until"), param("for")) {
            case (nil, nil): return nil
            case (.some, .some): throw bad("give \"until\" or \"for\", not both")
            case (let u?, nil):
                guard u.stringValue == "next" else { throw badValue("\"until\"", u, Self.expected("until")) }
                return .untilNext
            case (nil, .some): return try whole("for", 1...UInt64(Lifetime.maxSeconds), expected: Self.expected("for")).map { .seconds(Int64($0)) }
            }
        }
        var app: String?
        if let a = param("app") {
            guard let s = a.stringValue, AppID.isValid(s) else {
                throw badValue("\"app\"", a, "1-255 characters of A-Z a-z 0-9 . _ - not starting with a dot")
            }
            guard param("until") == nil, param("for") == nil else {
                throw bad("an app override cannot be temporary (\"until\"/\"for\" are for everyone's mode)")
            }
            app = s
        }
        let call: Call
        switch method {
        case .apps: call = .apps
        case .reload: call = .reload
        case .schedule: call = .schedule(days: try whole("days", 1...31, expected: "a whole number from 1 to 31").map { Int($0) } ?? Call.defaultScheduleDays)
        case .integrations:
            func names(_ key: String) throws(RequestFailure) -> [String] {
                guard let v = param(key) else { return [] }
                guard let names = strings(v), names.count <= IntegrationName.maxPerRequest else {
                    throw bad("\"\(key)\" must be an array of at most \(IntegrationName.maxPerRequest) names, got \(v.text)")
                }
                if let n = names.first(where: { !IntegrationName.isValid($0) }) {
                    throw bad("invalid name \(JSON.string(n).text) in \"\(key)\", expected \(IntegrationName.rule)")
                }
                return names
            }
            let enable = try names("enable"), disable = try names("disable")
            if let both = enable.first(where: disable.contains) { throw bad("\"\(both)\" is in both \"enable\" and \"disable\"") }
            let wait = try whole("wait", 1...UInt64(IntegrationName.maxWait), expected: Self.expected("wait")).map { Int($0) }
            if wait != nil, enable.isEmpty, disable.isEmpty {
                throw bad("\"wait\" is for the runs \"enable\" or \"disable\" start, and neither is given")
            }
            call = .integrations(enable: enable, disable: disable, wait: wait)
        case .postpone:
            switch (param("for"), try flag("cancel")) {
            case (nil, true): call = .nextChange(.cancelPostpone)
            case (nil, false): throw bad("missing parameter \"for\" (\(Self.expected("postpone.for"))), or \"cancel\": true")
            case (.some, true): throw bad("give \"for\" or \"cancel\", not both")
            case (.some, false):
                let n = try whole("for", 1...UInt64(NextChange.maxPostpone), expected: Self.expected("postpone.for"))!
                call = .nextChange(.postpone(seconds: Int64(n)))
            }
        case .skip: call = .nextChange(try flag("cancel") ? .cancelSkip : .skip)
        case .get: call = .get
        case .toggle: call = try lifetime().map(Call.toggleTemporary) ?? .toggle
        case .log: call = .log(limit: try whole("limit", 1...UInt64.max, expected: Self.expected("limit")).map { Int(min($0, 1 << 20)) })
        case .subscribe: call = .subscribe(Interest(traits: try flag("traits"), palette: try flag("palette")))
        case .status: call = .status
        case .palette: call = .palette(try variant())
        case .resolve:
            guard let t = param("tokens") else { throw bad("missing parameter \"tokens\" (an array of token names)") }
            guard let names = strings(t), !names.isEmpty else { throw bad("\"tokens\" must be a non-empty array of strings, got \(t.text)") }
            call = .resolve(names, try variant())
        case .set:
            guard let value = param("override") else { throw bad("missing parameter \"override\" (expected \(Self.expected("override")))") }
            guard let s = value.stringValue, let o = Override(rawValue: s) else { throw badValue("override", value, Self.expected("override")) }
            if let l = try lifetime() {
                guard let mode = Mode(rawValue: s) else { throw bad("\"system\" cannot be temporary (it ends every override)") }
                call = .setTemporary(mode, l)
            } else {
                call = .set(o)
            }
        }
        return Request(id: id, call: call, app: app)
    }

    /// What a parameter takes, in words, for the error that names it when it is given as null.
    static func expected(_ key: String) -> String {
        switch key {
        case "override": #""light", "dark" or "system""#
        case "until": #""next""#
        case "for": "whole seconds from 1 to \(Lifetime.maxSeconds)"
        case "app": "an app id (1-255 characters of A-Z a-z 0-9 . _ - not starting with a dot)"
        case "limit": "a positive whole number"
        case "traits", "palette": "true or false"
        case "tokens": "a non-empty array of strings"
        case "mode": #""light" or "dark""#
        case "contrast": #""normal" or "high""#
        case "enable", "disable": "an array of integration names"
        case "wait": "whole seconds from 1 to \(IntegrationName.maxWait)"
        case "postpone.for": "whole seconds from 1 to \(NextChange.maxPostpone)"
        case "cancel": "true or false"
        default: "a value"
        }
    }
}
