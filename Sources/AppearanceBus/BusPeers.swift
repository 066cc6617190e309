// What the objects on the sentry's session-bus connection share: calls to the bus itself (RequestName, AddMatch,
// RemoveMatch), a signal handler added after the others, and NameOwnerChanged read within bounds. The sentry,
// the D-Bus face and the notifier each follow a name's owner this way.

/// Something else that lives on the sentry's session-bus connection.
protocol BusPeer: AnyObject {
    /// The connection is registered (Hello answered); called before the sentry's own matches and reads.
    func connected(_ connection: BusConnection)
    /// The connection is gone, or there is none.
    func disconnected(_ detail: String)
}

extension BusConnection {
    static let busName = "org.freedesktop.DBus"
    private static let busPath = "/org/freedesktop/DBus"

    /// A call to the bus itself; `reply` gets its answer (none when the connection is gone or out of memory,
    /// which is then false).
    @discardableResult
    func callBus(_ method: String, _ values: [BusValue], reply: @escaping (Message) -> Void = { _ in }) -> Bool {
        guard let message = Message.methodCall(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                                               method: method, values: values) else { return false }
        do { try call(message, reply: reply) } catch { return false }
        return true
    }

    /// The match rule that hears `name` change owner.
    static func ownerRule(_ name: String) -> String {
        "type='signal',sender='\(busName)',interface='\(busName)',member='NameOwnerChanged',arg0='\(name)'"
    }

    /// Adds `handler` after the signal handlers already on the connection: each peer hears every signal the
    /// connection's match rules bring, and takes its own.
    func alsoOnSignal(_ handler: @escaping (Message) -> Void) {
        let previous = onSignal
        onSignal = { message in
            previous?(message)
            handler(message)
        }
    }
}

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
        guard isSignal(interface: BusConnection.busName, member: "NameOwnerChanged"), sender == BusConnection.busName,
              hasSignature("sss"), let args = arguments(within: DecodeBounds(depth: 0, values: 3, bytes: 3 * 256)), args.count == 3,
              case .string(let name) = args[0], case .string(let old) = args[1], case .string(let new) = args[2]
        else { return nil }
        return (name, old, new)
    }
}
