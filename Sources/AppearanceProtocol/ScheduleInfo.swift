import AppearanceCore

/// The reply to `schedule` (protocol 5): what the schedule says now and its changes over the days asked for.
/// `{"configured": true, "mode": "light", "hiddenBy": "override", "events": [{"time", "mode", "cause"}, …]}`.
public struct ScheduleInfo: Equatable, Sendable {
    /// A change of the mode the schedule makes (with the user's word on it).
    public typealias Change = Schedule.Event

    /// A schedule is configured (`[schedule]` in the config).
    public var configured: Bool
    /// What the schedule says now (nil without a schedule).
    public var mode: Mode?
    /// What decides everyone's mode before the schedule now; nil when the schedule decides (or there is none).
    public var hiddenBy: Source?
    /// Changes of the mode the schedule makes, oldest first (only those that change it).
    public var changes: [Change]
    /// The place the sun's times are for (typed, GeoClue's or cached); nil when the schedule uses none.
    public var location: LocationInfo?
    /// An automatic change held until the session is idle or locked (`wait-for-idle`, protocol 8).
    public var waiting: (mode: Mode, since: Int64, cause: String)?

    public static func == (a: ScheduleInfo, b: ScheduleInfo) -> Bool {
        (a.configured, a.mode, a.hiddenBy, a.changes, a.location) == (b.configured, b.mode, b.hiddenBy, b.changes, b.location)
            && a.waiting?.mode == b.waiting?.mode && a.waiting?.since == b.waiting?.since && a.waiting?.cause == b.waiting?.cause
    }

    public init(configured: Bool, mode: Mode?, hiddenBy: Source?, changes: [Change], location: LocationInfo? = nil) {
        (self.configured, self.mode, self.hiddenBy, self.changes, self.location) = (configured, mode, hiddenBy, changes, location)
    }

    public var json: JSON {
        .object([("configured", .bool(configured)), ("mode", mode.map { .string($0.rawValue) } ?? .null),
                 ("hiddenBy", hiddenBy.map { .string($0.rawValue) } ?? .null),
                 ("events", .array(changes.map(\.json)))]
                + (location.map { [("location", $0.json)] } ?? [])
                + (waiting.map { [("waiting", .object([("mode", .string($0.mode.rawValue)), ("since", .int(UInt64(max(0, $0.since)))),
                                                      ("cause", .string($0.cause))]))] } ?? []))
    }

    public init(json: JSON) throws(RPCError) {
        guard let configured = json["configured"]?.boolValue, case .array(let items)? = json["events"] else {
            throw RPCError(.internalError, "the daemon's schedule reply has no \"configured\" or \"events\"")
        }
        var changes: [Change] = []
        for item in items {
            guard let t = item.seconds("time"), let m: Mode = item.raw("mode") else {
                throw RPCError(.internalError, "the daemon's schedule reply has an event without a time or a mode")
            }
            changes.append(Change(time: t, mode: m, cause: item["cause"]?.stringValue ?? "",
                                  postponedFrom: item.seconds("postponedFrom"),
                                  skipped: item["skipped"]?.boolValue ?? false))
        }
        self.init(configured: configured, mode: json.raw("mode"), hiddenBy: json.raw("hiddenBy"), changes: changes,
                  location: json["location"].map(LocationInfo.init(json:)))
        if let w = json["waiting"], let m: Mode = w.raw("mode"), let since = w.seconds("since") {
            waiting = (m, since, w["cause"]?.stringValue ?? "")
        }
    }
}

extension Schedule.Event {
    /// `{"time", "mode", "cause"}`, with `postponedFrom` and `skipped` when the user moved or dropped it.
    var json: JSON {
        var m: [(String, JSON)] = [("time", .int(UInt64(max(0, time)))), ("mode", .string(mode.rawValue)), ("cause", .string(cause))]
        if let p = postponedFrom { m.append(("postponedFrom", .int(UInt64(max(0, p))))) }
        if skipped { m.append(("skipped", .bool(true))) }
        return .object(m)
    }
}
