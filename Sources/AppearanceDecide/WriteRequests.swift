import AppearanceCore
import AppearanceProtocol

/// The daemon's decisions, as pure functions from state and event to the change to make (no I/O, clock or log).
public enum Decide {
    /// What `set`, `toggle` and their temporary forms ask of `engine` (every accepted change applied) at `now`: the
    /// event, nil when it is already so (and for every other call), or the error to answer with.
    public static func write(_ call: Call, app: String?, on engine: Engine, now: Int64) -> Result<Event?, RPCError> {
        switch call {
        case .set(let o) where app != nil:
            return appChange(app!, o == .system ? nil : (o == .dark ? .dark : .light), engine)
        case .toggle where app != nil:
            return appChange(app!, engine.toggleTarget(app: app!), engine)
        case .set, .toggle:
            let o: Override = if case .set(let o) = call { o } else { engine.toggleTarget }
            guard o != engine.inputs.override || engine.inputs.temporary != nil else { return .success(nil) }
            return .success(.override(o))
        case .setTemporary(let mode, let lifetime):
            return .success(temporaryChange(mode, lifetime, engine, now: now))
        case .toggleTemporary(let lifetime):
            return .success(temporaryChange(engine.state.mode.opposite, lifetime, engine, now: now))
        case .get, .subscribe, .status, .resolve, .palette, .log, .apps, .reload, .schedule, .integrations, .nextChange:
            return .success(nil)
        }
    }

    /// An app's override set, or removed (nil); at most `AppID.maxOverrides`.
    static func appChange(_ app: String, _ mode: Mode?, _ engine: Engine) -> Result<Event?, RPCError> {
        guard engine.inputs.apps[app] != mode else { return .success(nil) }
        guard mode == nil || engine.inputs.apps[app] != nil || engine.inputs.apps.count < AppID.maxOverrides else {
            return .failure(RPCError(.requestFailed,
                                     "too many app overrides (the limit is \(AppID.maxOverrides)); remove one with set system --app ID"))
        }
        return .success(.app(app, mode))
    }

    /// A temporary override, persisted with its expiry: a duration ends at `now` plus the duration.
    static func temporaryChange(_ mode: Mode, _ lifetime: Lifetime, _ engine: Engine, now: Int64) -> Event? {
        let expiry: TemporaryOverride.Expiry = switch lifetime {
        case .untilNext: .nextChange
        case .seconds(let n): .at(now + n)
        }
        let t = TemporaryOverride(mode: mode, expiry: expiry)
        return t == engine.inputs.temporary ? nil : .temporary(t)
    }

    /// A temporary override's time came: the event that ends it, or nil (another one in force, or its time not come).
    public static func temporaryTimeCame(_ end: Int64, on engine: Engine, now: Int64) -> Event? {
        guard case .at(let t)? = engine.inputs.temporary?.expiry, t == end, now >= end else { return nil }
        return .temporary(nil)
    }

    /// How `log` names a client's change, before "set by WHO": "override dark", "app override kitty: light,".
    public static func cause(of event: Event) -> String {
        switch event {
        case .override(let o): "override \(o.rawValue)"
        case .temporary(let t): "temporary override \(t?.mode.rawValue ?? "ended")"
        case .app(let app, let mode): "app override \(app): \(mode?.rawValue ?? "system"),"
        case .nextChange(let n?) where n.skipped: "next change (\(n.mode.rawValue)) skipped"
        case .nextChange(let n?): "next change (\(n.mode.rawValue)) postponed by \(Schedule.describeOffset(n.postponedBy).dropFirst())"
        case .nextChange(nil): "next change as planned"
        default: "\(event)"
        }
    }

    /// The daemon's log line for a client's change; `time` shows a temporary override's end for people.
    public static func logLine(of event: Event, time: (Int64) -> String) -> String {
        switch event {
        case .override(let o): "override: \(o.rawValue)"
        case .app(let app, let mode): "app override \(app): \(mode?.rawValue ?? "removed")"
        case .temporary(let t?):
            switch t.expiry {
            case .nextChange: "temporary override: \(t.mode.rawValue) until the next automatic change"
            case .at(let end): "temporary override: \(t.mode.rawValue) until \(time(end))"
            }
        case .temporary(nil): "temporary override ended"
        case .nextChange(let n?) where n.skipped: "the next change, \(n.mode.rawValue) at \(time(n.time)), is skipped"
        case .nextChange(let n?): "the next change, \(n.mode.rawValue) at \(time(n.time)), is postponed to \(time(n.time + n.postponedBy))"
        case .nextChange(nil): "the next change comes as planned"
        default: "\(event)"
        }
    }
}
