import AppearanceCore

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
    /// Read the config and palette files again (as SIGHUP does).
    case reload
    /// The schedule's changes from now over the next `days` days (1 to 31).
    case schedule(days: Int)
    /// The integrations, after enabling and disabling the ones named; with `wait`, once their runs have ended.
    case integrations(enable: [String], disable: [String], wait: Int? = nil)
    /// The user's word on the next automatic change: `postpone` and `skip`, or their `cancel` (protocol 7).
    case nextChange(NextChange.Request)

    /// A plain `subscribe`: mode changes only.
    public static let subscribe = Call.subscribe(.mode)

    /// `schedule` without `days`: a week.
    public static let defaultScheduleDays = 7

    public var method: Method {
        switch self {
        case .get: .get
        case .set, .setTemporary: .set
        case .toggle, .toggleTemporary: .toggle
        case .log: .log
        case .apps: .apps
        case .reload: .reload
        case .schedule: .schedule
        case .integrations: .integrations
        case .subscribe: .subscribe
        case .status: .status
        case .resolve: .resolve
        case .palette: .palette
        case .nextChange(.postpone), .nextChange(.cancelPostpone): .postpone
        case .nextChange(.skip), .nextChange(.cancelSkip): .skip
        }
    }

    var params: JSON? {
        switch self {
        case .set(let o): return .object([("override", .string(o.rawValue))])
        case .setTemporary(let m, let l): return .object([("override", .string(m.rawValue))] + l.members)
        case .toggleTemporary(let l): return .object(l.members)
        case .log(let limit): return limit.map { .object([("limit", .int($0))]) }
        case .apps, .reload: return nil
        case .schedule(let days): return days == Call.defaultScheduleDays ? nil : .object([("days", .int(days))])
        case .integrations(let enable, let disable, let wait):
            let m = (enable.isEmpty ? [] : [("enable", JSON.array(enable.map(JSON.string)))])
                + (disable.isEmpty ? [] : [("disable", JSON.array(disable.map(JSON.string)))])
                + (wait.map { [("wait", JSON.int($0))] } ?? [])  // as given: the daemon names a bad one
            return m.isEmpty ? nil : .object(m)
        case .subscribe(let i):
            // A plain subscribe sends no params, so that a protocol 1 daemon accepts it.
            var m: [(String, JSON)] = []
            if i.traits { m.append(("traits", .bool(true))) }
            if i.palette { m.append(("palette", .bool(true))) }
            return m.isEmpty ? nil : .object(m)
        case .resolve(let tokens, let v): return .object([("tokens", .array(tokens.map(JSON.string)))] + v.members)
        case .palette(let v): return v.members.isEmpty ? nil : .object(v.members)
        case .get, .toggle, .status: return nil
        case .nextChange(.postpone(let seconds)): return .object([("for", .int(UInt64(max(0, seconds))))])
        case .nextChange(.cancelPostpone), .nextChange(.cancelSkip): return .object([("cancel", .bool(true))])
        case .nextChange(.skip): return nil
        }
    }
}
