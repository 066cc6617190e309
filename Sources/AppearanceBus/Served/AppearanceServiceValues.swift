import AppearanceCore
import AppearanceProtocol
import Dispatch

/// The D-Bus service's values: the state as properties and signals, JSON and D-Bus values, errors, its XML comment.
extension AppearanceService {
    // MARK: - Signals

    /// The signals for a change: PropertiesChanged for `changed`, then, if the mode changed, ModeChanged and darkman's
    /// two, which depend on the modes alone and are copies of messages built once.
    func signals(_ changed: [BusValue], mode: Mode, before: Mode, own: Bool, darkman: Bool) -> [Message] {
        var out: [Message] = []
        out.reserveCapacity(4)
        func add(_ message: Message?) { if let message { out.append(message) } }
        if own, !changed.isEmpty {
            add(Message.signal(path: AppearanceService.path, interface: ExportedInterface.propertiesName, name: "PropertiesChanged",
                                      [.string(AppearanceService.interface), .container(signature: "a{sv}", changed), .container(signature: "as", [])]))
        }
        guard mode != before else { return out }
        if own {
            add(modeSignals.copy(.init(signal: 0, mode: mode, before: before)) {
                Message.signal(path: AppearanceService.path, interface: AppearanceService.interface, name: "ModeChanged",
                               [.string(mode.rawValue), .string(before.rawValue)])
            })
        }
        if darkman {
            add(modeSignals.copy(.init(signal: 1, mode: mode, before: mode)) {
                Message.signal(path: AppearanceService.darkmanPath, interface: ExportedInterface.propertiesName, name: "PropertiesChanged",
                               [.string(AppearanceService.darkmanInterface), .container(signature: "a{sv}", [BusValue.entry("Mode", .string(mode.rawValue))]),
                                .container(signature: "as", [])])
            })
            add(modeSignals.copy(.init(signal: 2, mode: mode, before: mode)) {
                Message.signal(path: AppearanceService.darkmanPath, interface: AppearanceService.darkmanInterface, name: "ModeChanged", [.string(mode.rawValue)])
            })
        }
        return out
    }

    // MARK: - Values

    /// The socket's errors as named D-Bus errors, with the socket's messages.
    static func busError(_ e: RPCError) -> BusError {
        let name = switch e.code {
        case ErrorCode.invalidParams.rawValue: "\(interface).Error.InvalidParams"
        case ErrorCode.requestFailed.rawValue: "\(interface).Error.RequestFailed"
        default: "\(interface).Error.Failed"
        }
        return BusError(name: name, message: e.message)
    }

    /// The interface's properties for a state (everyone's).
    func properties(_ state: AppearanceState) -> [String: BusValue] {
        var all: [String: BusValue] = [:]
        for case .container(_, let entry) in changes(from: nil, to: state) {
            if case .string(let name) = entry[0], case .variant(let value) = entry[1] { all[name] = value }
        }
        return all
    }

    /// The properties that differ between two states (all when `old` is nil), as a{sv} entries in name order; only
    /// those are built (Temporary and Traits compared as values once their fields differ).
    func changes(from old: AppearanceState?, to new: AppearanceState) -> [BusValue] {
        var out: [BusValue] = []
        func add(_ name: String, _ differs: Bool, _ value: @autoclosure () -> BusValue) {
            if differs { out.append(.entry(name, value())) }
        }
        add("DarkMode", old?.darkMode != new.darkMode, .boolean(new.darkMode))
        add("Instance", old?.instance != new.instance, .string(new.instance))
        add("Mode", old?.mode != new.mode, .string(new.mode.rawValue))
        add("Override", old?.override != new.override, .string(new.override.rawValue))
        add("Seq", old?.seq != new.seq, .uint64(new.seq))
        add("Source", old?.source != new.source, .string(new.source.rawValue))
        add("System", old?.system != new.system, .string(new.system.rawValue))
        if old == nil || old?.temporary != new.temporary {
            let value = Self.temporaryValue(new.temporary)
            add("Temporary", old.map { Self.temporaryValue($0.temporary) != value } ?? true, value)
        }
        if old == nil || old?.traits != new.traits {
            let value = Self.value(new.traits.json)
            add("Traits", old.map { Self.value($0.traits.json) != value } ?? true, value)
        }
        return out
    }

    /// The Temporary property: the temporary override's object, an empty a{sv} for none.
    private static func temporaryValue(_ temporary: TemporaryOverride?) -> BusValue {
        if case .container(let signature, let entries) = value(temporary?.json ?? .null) { return .container(signature: signature, entries) }
        return .container(signature: "a{sv}", [])
    }

    /// A socket JSON value as a D-Bus value: objects as a{sv} (nulls left out), arrays as av, `seq` as t.
    static func value(_ json: JSON) -> BusValue {
        switch json {
        case .object(let members):
            return .container(signature: "a{sv}", members.compactMap { k, v in
                if k == "seq", case .number(let n) = v, let u = UInt64(n) { return .container(signature: "{sv}", [.string(k), .variant(.uint64(u))]) }
                return v == .null ? nil : .container(signature: "{sv}", [.string(k), .variant(value(v))])
            })
        case .array(let items): return .container(signature: "av", items.map { .variant(value($0)) })
        case .string(let s): return .string(s)
        case .bool(let b): return .boolean(b)
        case .number(let n):
            if let i = Int64(n) { return .int64(i) }
            if let u = UInt64(n) { return .uint64(u) }
            return .double(Double(n) ?? 0)
        case .null: return .container(signature: "a{sv}", [])
        }
    }

    /// An option's value as the socket's JSON; nil for a type the socket has no word for.
    static func json(_ v: BusValue) -> JSON? {
        switch v {
        case .string(let s): .string(s)
        case .boolean(let b): .bool(b)
        case .byte(let n): .int(n)
        case .int16(let n): .number(String(n))
        case .uint16(let n): .int(n)
        case .int32(let n): .number(String(n))
        case .uint32(let n): .int(n)
        case .int64(let n): .number(String(n))
        case .uint64(let n): .int(n)
        case .double(let d): d.isFinite ? .number(String(d)) : nil  // NaN and infinities are no JSON number
        default: nil
        }
    }

    /// What dbus/io.github.appearanced.Appearance1.xml says before its node (AppearanceServiceTests compare the whole XML).
    static let comment = """
        <!-- appearanced's own D-Bus interface: the name io.github.appearanced.Appearance1 owns the object
             /io/github/appearanced/Appearance1. The state object (a{sv}) has the socket protocol's fields
             (docs/protocol.md): mode, darkMode, system, override, source, seq (t), instance, traits, temporary
             and, for an app, app, globalMode, globalSource; a member the socket gives as null is left out (a
             trait the desktop does not give, no temporary override). Options (a{sv}) are the socket's params: "app" (s),
             "until" ("next"), "for" (seconds, any integer type); Postpone's "for" and "cancel" (b) and Skip's
             "cancel", answered with what the socket's schedule method gives for two days. Errors: ….Error.InvalidParams,
             ….Error.RequestFailed, with the socket's messages. -->
        """
}

/// Messages built once and sent as copies (30 K instructions to build a small signal, under 1 K to copy), in a table
/// by key. Confined to the service's queue.
final class MessageTemplates {
    /// Which signal (the service's own numbering, below `signals`), for which mode, after which.
    struct Key {
        var signal: Int
        var mode: Mode
        var before: Mode

        var slot: Int { signal * 4 + (mode.isDark ? 2 : 0) + (before.isDark ? 1 : 0) }
    }

    static let signals = 3
    private var built = [Message?](repeating: nil, count: signals * 4)

    func copy(_ key: Key, _ build: () -> Message?) -> Message? {
        precondition(key.signal < Self.signals)
        if built[key.slot] == nil { built[key.slot] = build() }
        return built[key.slot]?.copy()
    }
}
