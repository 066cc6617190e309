// What every object on a bus shares: one vocabulary for refusing a call, and NameOwnerChanged read within bounds.

extension BusError {
    private static func named(_ name: String, _ message: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error." + name, message: message)
    }

    static func invalidArgs(_ message: String) -> BusError { named("InvalidArgs", message) }
    static func unknownMethod(_ method: String, _ path: String) -> BusError { named("UnknownMethod", "no method \(method) at \(path)") }
    static func unknownInterface(_ interface: String, _ path: String) -> BusError {
        named("UnknownInterface", "no interface \(interface) at \(path)")
    }
    /// `interface` "" for any.
    static func unknownProperty(_ interface: String, _ name: String) -> BusError {
        named("UnknownProperty", "no property \(interface.isEmpty ? "" : interface + ".")\(name)")
    }
    static func propertyReadOnly(_ interface: String, _ name: String) -> BusError {
        named("PropertyReadOnly", "the property \(interface).\(name) is read-only")
    }
}

extension BusValue {
    /// An entry of an a{sv}.
    static func entry(_ key: String, _ value: BusValue) -> BusValue { .container(signature: "{sv}", [.string(key), .variant(value)]) }
}

extension Message {
    /// The bus's NameOwnerChanged (its new owner "" for none); nil for any other message or sender, or past bounds.
    var nameOwnerChange: (name: String, old: String, new: String)? {
        guard isSignal("org.freedesktop.DBus", "NameOwnerChanged"), sender == BusClient.busName,
              hasSignature("sss"), let args = arguments(within: DecodeBounds(depth: 0, values: 3, bytes: 3 * 256)), args.count == 3,
              case .string(let name) = args[0], case .string(let old) = args[1], case .string(let new) = args[2]
        else { return nil }
        return (name, old, new)
    }
}
