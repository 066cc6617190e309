import AppearanceCore

/// Integrations (protocol 6, docs/integrations.md): programs shipped with appearanced, each making one program
/// follow the mode; the `integrations` method lists, enables and disables them.
public enum IntegrationName {
    /// 1-64 bytes of `a-z 0-9 . _ -`, not starting with a dot or a dash: a file name, and safe in a shell word.
    public static func isValid(_ name: String) -> Bool {
        let b = Array(name.utf8)
        guard (1...64).contains(b.count), b[0] != UInt8(ascii: "."), b[0] != UInt8(ascii: "-") else { return false }
        return b.allSatisfy { c in (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x5F || c == 0x2D }
    }

    public static let rule = "1-64 characters of a-z 0-9 . _ - not starting with a dot or a dash"

    /// Names one request may enable or disable at once.
    public static let maxPerRequest = 64

    /// The longest `wait` (protocol 8), in seconds: the longest `hook-timeout`.
    public static let maxWait = 3600

    /// How to get the shipped integrations, for the messages that found none (the daemon's and appearancectl's).
    public static let howToGet = "the shipped ones come with the package, or with `make install PREFIX=~/.local` in the source tree; "
        + "`make run` there runs the daemon with the checkout's integrations/"
}

/// One integration as the daemon sees it: `{"name", "path", "enabled", "app", "runs", "last"}`.
public struct IntegrationInfo: Equatable, Sendable {
    /// The last run: when, for which mode, and how it ended ("ok", or why it failed).
    public struct Run: Equatable, Sendable {
        public var time: Int64
        public var action: String
        public var mode: Mode?
        public var result: String

        public init(time: Int64, action: String, mode: Mode?, result: String) {
            (self.time, self.action, self.mode, self.result) = (time, action, mode, result)
        }

        public var ok: Bool { result == "ok" }

        var json: JSON {
            .object([("time", .int(UInt64(max(0, time)))), ("action", .string(action)),
                     ("mode", mode.map { .string($0.rawValue) } ?? .null), ("result", .string(result))])
        }

        init?(json: JSON) {
            guard let t = json.seconds("time"), let action = json["action"]?.stringValue,
                  let result = json["result"]?.stringValue else { return nil }
            self.init(time: t, action: action, mode: json.raw("mode"), result: result)
        }
    }

    public var name: String
    /// The file the daemon runs (a user's copy wins); nil for an enabled name no directory holds any more.
    public var path: String?
    public var enabled: Bool
    /// The app id whose mode it is given (its name, unless the config's `app` says otherwise).
    public var app: String
    /// Its runs finished since the daemon started (a client waiting for the one it caused counts them).
    public var runs: Int
    /// The last run (nil: none since the daemon started).
    public var last: Run?

    public init(name: String, path: String?, enabled: Bool, app: String, runs: Int = 0, last: Run? = nil) {
        (self.name, self.path, self.enabled, self.app, self.runs, self.last) = (name, path, enabled, app, runs, last)
    }

    public var json: JSON {
        .object([("name", .string(name)), ("path", path.map(JSON.string) ?? .null), ("enabled", .bool(enabled)),
                 ("app", .string(app)), ("runs", .int(UInt64(max(0, runs)))), ("last", last?.json ?? .null)])
    }

    public init?(json: JSON) {
        guard let name = json["name"]?.stringValue, let enabled = json["enabled"]?.boolValue else { return nil }
        self.init(name: name, path: json["path"]?.stringValue, enabled: enabled, app: json["app"]?.stringValue ?? name,
                  runs: json["runs"]?.intValue ?? 0, last: json["last"].flatMap(Run.init(json:)))
    }

    /// The reply: `{"integrations": [...], "run": true}`, sorted by name (`run`: false where the daemon runs none).
    public static func reply(_ all: [IntegrationInfo], run: Bool) -> JSON {
        .object([("integrations", .array(all.map(\.json))), ("run", .bool(run))])
    }

    /// Whether the daemon that sent `reply` runs integrations (true from one that does not say).
    public static func run(in reply: JSON) -> Bool { reply["run"]?.boolValue ?? true }

    public static func list(from reply: JSON) -> [IntegrationInfo]? {
        guard case .array(let items)? = reply["integrations"] else { return nil }
        return items.compactMap(IntegrationInfo.init(json:))
    }
}
