// What every object on a bus shares: one error for an unknown property, and NameOwnerChanged read within bounds.

extension BusError {
    /// A property an object does not have: one error for every object appearanced serves.
    static func unknownProperty(_ interface: String, _ name: String) -> BusError {
        BusError(name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(interface).\(name)")
    }
}

extension Message {
    /// The bus's NameOwnerChanged: the name, its old owner and its new one ("" for none), three names of at most
    /// 255 bytes; nil for any other message, one from another sender, or one past those bounds.
    var nameOwnerChange: (name: String, old: String, new: String)? {
        guard isSignal(interface: BusClient.busName, member: "NameOwnerChanged"), sender == BusClient.busName,
              hasSignature("sss"), let args = arguments(within: DecodeBounds(depth: 0, values: 3, bytes: 3 * 256)), args.count == 3,
              case .string(let name) = args[0], case .string(let old) = args[1], case .string(let new) = args[2]
        else { return nil }
        return (name, old, new)
    }
}
