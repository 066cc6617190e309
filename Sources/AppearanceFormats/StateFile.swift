import AppearanceCore
import AppearanceProtocol

/// state.json's format: bytes in, `Saved` out and back; reading and writing the file is the daemon's StateStore.
public enum StateFile {
    /// The longest app id, in bytes (`AppID.isValid` takes 1 to 255).
    public static let maxAppIDBytes = 255

    /// The latest `until` a state file holds (the end of the year 9999): see `TemporaryOverride.untilRange`.
    public static let latestUntil = TemporaryOverride.untilRange.upperBound

    /// The largest file `encode` writes: 256 bytes for all but the apps (158 at most), and the most app
    /// overrides the daemon keeps at their longest (`"ID":"light",`): 256 + 4,096 × 266 = 1,089,792 bytes.
    public static let largestWritten = 256 + AppID.maxOverrides * (maxAppIDBytes + 11)

    /// What is persisted: the override and the temporary one with its expiry.
    public struct Saved: Equatable, Sendable {
        public var override: Override
        public var temporary: TemporaryOverride?
        /// App overrides (app id → mode).
        public var apps: [String: Mode]
        /// The user's word on the next automatic change (`postpone`, `skip`).
        public var nextChange: NextChange?
        /// What `parse` left out of the file, a sentence each, for the daemon's log; never saved.
        public var dropped: [String]

        public init(override: Override, temporary: TemporaryOverride? = nil, apps: [String: Mode] = [:],
                    nextChange: NextChange? = nil, dropped: [String] = []) {
            (self.override, self.temporary, self.apps, self.nextChange, self.dropped) = (override, temporary, apps, nextChange, dropped)
        }
    }

    /// Why a state file cannot be used at all, in words that follow its path ("is not a valid state file: …").
    public struct Invalid: Error, Equatable, Sendable {
        public var problem: String
    }

    /// `{"override": "dark", "temporary": {"mode": "light", "until": "next"|UNIX}, "apps": {"ID": "dark", …}}`:
    /// invalid when not JSON, without a valid `override`, or with an `until` out of range (no daemon wrote it);
    /// what is merely unusable is left out and said in `dropped` (past `AppID.maxOverrides`, the first sorted kept).
    public static func parse(_ bytes: [UInt8]) -> Result<Saved, Invalid> {
        let expectedOverride = #"expected {"override": "system"|"light"|"dark", …}"#
        let json: JSON
        do { json = try JSON.parse(bytes) } catch {
            return .failure(Invalid(problem: "is not a valid state file: not JSON (\(error)); \(expectedOverride)"))
        }
        guard let s = json["override"]?.stringValue, let o = Override(rawValue: s) else {
            let found = json["override"].map { "\"override\" is \(shown($0))" } ?? "no \"override\""
            return .failure(Invalid(problem: "is not a valid state file: \(found); \(expectedOverride)"))
        }
        var dropped: [String] = []

        var temporary: TemporaryOverride?
        if let t = json["temporary"], t != .null {
            if case .number? = t["until"], let until = t["until"], TemporaryOverride.Expiry(json: until) == nil {
                return .failure(Invalid(problem: "is not a valid state file: \"until\" \(shown(until)) in \"temporary\" is out of range, expected whole seconds from "
                    + "\(TemporaryOverride.untilRange.lowerBound) to \(TemporaryOverride.untilRange.upperBound) (1970 to the end of 9999) or \"next\""))
            }
            temporary = TemporaryOverride(json: t)
            if temporary == nil {
                dropped.append(#"dropped the temporary override \#(shown(t)): expected {"mode": "light"|"dark", "until": "next"|UNIX_SECONDS}"#)
            }
        }

        var apps: [String: Mode] = [:]
        var invalid: [String] = []
        switch json["apps"] {
        case nil, .null?: break
        case .object(let members)?:
            for (id, value) in members {
                guard AppID.isValid(id) else {
                    invalid.append("dropped app override \(shown(.string(id))): not a valid app id (1-255 characters of A-Z a-z 0-9 . _ - not starting with a dot)")
                    continue
                }
                guard let m = value.stringValue.flatMap(Mode.init(rawValue:)) else {
                    invalid.append("dropped app override \(shown(.string(id))): invalid mode \(shown(value)), expected \"light\" or \"dark\"")
                    continue
                }
                apps[id] = m
            }
        case let other?:
            dropped.append("dropped \"apps\" \(shown(other)): expected an object of app id → \"light\"|\"dark\"")
        }
        // Each kind said at most this many times, so a hostile file cannot flood the log.
        let listed = 10
        dropped += invalid.prefix(listed)
        if invalid.count > listed { dropped.append("dropped \(invalid.count - listed) more invalid app overrides") }
        if apps.count > AppID.maxOverrides {
            let over = apps.keys.sorted().dropFirst(AppID.maxOverrides)
            for id in over { apps[id] = nil }
            let names = over.prefix(listed).map { shown(.string($0)) }.joined(separator: ", ") + (over.count > listed ? ", …" : "")
            dropped.append("dropped \(over.count) app overrides over the limit of \(AppID.maxOverrides) (kept the first "
                + "\(AppID.maxOverrides) in sorted order): \(names)")
        }
        var nextChange: NextChange?
        if let n = json["next"], n != .null {
            nextChange = Self.nextChange(n)
            if nextChange == nil {
                dropped.append(#"dropped "next" \#(shown(n)): expected {"time": UNIX_SECONDS, "mode": "light"|"dark", "postpone": SECONDS, "skip": true|false}"#)
            }
        }
        return .success(Saved(override: o, temporary: temporary, apps: apps, nextChange: nextChange, dropped: dropped))
    }

    /// `{"time": UNIX_SECONDS, "mode": "dark", "postpone": SECONDS, "skip": false}` in range, or nil.
    static func nextChange(_ json: JSON) -> NextChange? {
        guard let t = json["time"]?.uint64Value.flatMap({ Int64(exactly: $0) }), TemporaryOverride.untilRange.contains(t),
              let mode = json["mode"]?.stringValue.flatMap(Mode.init(rawValue:)),
              let by = json["postpone"]?.uint64Value.flatMap({ Int64(exactly: $0) }), by <= NextChange.maxPostpone,
              let skip = json["skip"]?.boolValue, by > 0 || skip else { return nil }
        return NextChange(time: t, mode: mode, postponedBy: by, skipped: skip)
    }

    /// The file's bytes for `saved`: keys in a fixed order, app overrides sorted by id, a final newline.

    public static func encode(_ saved: Saved) -> [UInt8] {
        var members: [(String, JSON)] = [("override", .string(saved.override.rawValue))]
        if let t = saved.temporary { members.append(("temporary", t.json)) }
        if !saved.apps.isEmpty {
            members.append(("apps", .object(saved.apps.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value.rawValue)) })))
        }
        if let n = saved.nextChange {
            members.append(("next", .object([("time", .int(UInt64(max(0, n.time)))), ("mode", .string(n.mode.rawValue)),
                                             ("postpone", .int(UInt64(max(0, n.postponedBy)))), ("skip", .bool(n.skipped))])))
        }
        var bytes = JSON.object(members).bytes
        bytes.append(0x0A)
        return bytes
    }
}

/// A value from a file as JSON, cut at 80 bytes: enough to find it, not a flood in the log.
func shown(_ value: JSON) -> String {
    let text = value.text
    return text.utf8.count <= 80 ? text : String(decoding: text.utf8.prefix(80), as: UTF8.self) + "…"
}
