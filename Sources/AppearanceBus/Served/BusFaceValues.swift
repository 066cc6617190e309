import AppearanceCore
import AppearanceProtocol
import Dispatch

/// The D-Bus face's values: the state as properties and signals, JSON to and from D-Bus values, errors, and
/// the comment its introspection XML carries.
extension BusFace {
    // MARK: - Signals

    /// The signals for a change of the published state, in order: the own interface's PropertiesChanged (the
    /// properties that changed), then, if the mode changed, its ModeChanged and darkman's two. Those three
    /// depend on the modes alone and are sent as copies of messages built once.
    func signals(_ changed: [String: BusValue], mode: Mode, before: Mode, own: Bool, darkman: Bool) -> [Message] {
        var out: [Message?] = []
        if own, !changed.isEmpty {
            let dict = changed.sorted { $0.key < $1.key }.map { BusValue.entry($0.key, $0.value) }
            out.append(Message.signal(path: BusFace.path, interface: ExportedInterface.propertiesName, name: "PropertiesChanged",
                                      [.string(BusFace.interface), .container(signature: "a{sv}", dict), .container(signature: "as", [])]))
        }
        guard mode != before else { return out.compactMap { $0 } }
        if own {
            out.append(modeSignals.copy(.init(signal: 0, mode: mode, before: before)) {
                Message.signal(path: BusFace.path, interface: BusFace.interface, name: "ModeChanged",
                               [.string(mode.rawValue), .string(before.rawValue)])
            })
        }
        if darkman {
            out.append(modeSignals.copy(.init(signal: 1, mode: mode, before: mode)) {
                Message.signal(path: BusFace.darkmanPath, interface: ExportedInterface.propertiesName, name: "PropertiesChanged",
                               [.string(BusFace.darkmanInterface), .container(signature: "a{sv}", [BusValue.entry("Mode", .string(mode.rawValue))]),
                                .container(signature: "as", [])])
            })
            out.append(modeSignals.copy(.init(signal: 2, mode: mode, before: mode)) {
                Message.signal(path: BusFace.darkmanPath, interface: BusFace.darkmanInterface, name: "ModeChanged", [.string(mode.rawValue)])
            })
        }
        return out.compactMap { $0 }
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
        let json = state.json
        return [
            "Mode": .string(state.mode.rawValue),
            "DarkMode": .boolean(state.darkMode),
            "Source": .string(state.source.rawValue),
            "Override": .string(state.override.rawValue),
            "System": .string(state.system.rawValue),
            "Temporary": json["temporary"].map(BusFace.value).flatMap { if case .container = $0 { $0 } else { nil } }
                ?? .container(signature: "a{sv}", []),
            "Traits": json["traits"].map(BusFace.value) ?? .container(signature: "a{sv}", []),
            "Seq": .uint64(state.seq),
            "Instance": .string(state.instance),
        ]
    }

    /// A socket JSON value as a D-Bus value: objects as a{sv} (null members left out), arrays as av; `seq` as
    /// t (uint64), the `Seq` property's type, whatever its size.
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

    /// What dbus/io.github.appearanced.Appearance1.xml says before its node (BusFaceTests compare the whole XML).
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

/// Messages built once and sent as copies (a message is locked once sent; a copy has a serial of its own).
/// libdbus rewrites a message's header for every top-level argument appended: building a small signal costs
/// it about 40 K instructions, a copy a fraction of that. Confined to the face's queue.
final class MessageTemplates {
    /// Which signal (the face's own numbering), for which mode, after which.
    struct Key: Hashable {
        var signal: Int
        var mode: Mode
        var before: Mode
    }

    private var built: [Key: Message] = [:]

    func copy(_ key: Key, _ build: () -> Message?) -> Message? {
        if built[key] == nil { built[key] = build() }
        return built[key]?.copy()
    }
}
