// The objects appearanced serves, declared as tables, and the one place that answers calls to them: signature
// checked before decoding, decoding bounded, Properties and Introspect from the table (docs/decisions.md,
// "Exported objects as tables"). Confined to the bus's queue.

/// What a call is answered with: values, or an error.
typealias Answer = Result<[BusValue], BusError>

/// A method call as its handler gets it: its arguments already decoded, within the method's bounds.
struct BusCall {
    let message: Message
    let args: [BusValue]
    /// Sends an answer that comes later, on the connection the call came on (none if the bus has changed since).
    let reply: (Answer) -> Void

    /// Argument `i` as a string ("" if it is none; the signature was checked).
    func string(_ i: Int) -> String { if i < args.count, case .string(let s) = args[i] { s } else { "" } }
}

/// A method or a signal's argument.
struct BusArg {
    let name, type: String
    static func list(_ pairs: KeyValuePairs<String, String>) -> [BusArg] { pairs.map { BusArg(name: $0.key, type: $0.value) } }
}

struct ExportedMethod {
    let name: String
    let inArgs, outArgs: [BusArg]
    /// What decoding the arguments may build, and the InvalidArgs message for a call past that.
    let bounds: DecodeBounds
    let tooBig: String
    /// The answer now, or nil when `BusCall.reply` sends it later.
    let handle: (BusCall) -> Answer?

    /// The longest name (interface, property, namespace, key) a call may carry.
    static let maxNameBytes = 1024

    /// `bounds` by default: names, every argument a string of at most `maxNameBytes`.
    init(_ name: String, in inArgs: KeyValuePairs<String, String> = [:], out outArgs: KeyValuePairs<String, String> = [:],
         bounds: DecodeBounds? = nil, tooBig: String? = nil, _ handle: @escaping (BusCall) -> Answer?) {
        let n = inArgs.count, max = ExportedMethod.maxNameBytes
        (self.name, self.handle) = (name, handle)
        (self.inArgs, self.outArgs) = (BusArg.list(inArgs), BusArg.list(outArgs))
        self.bounds = bounds ?? DecodeBounds(depth: 0, values: n, bytes: n * max, stringBytes: max)
        self.tooBig = tooBig ?? "\(name)'s strings are at most \(max) bytes each"
    }

    var signature: String { inArgs.map(\.type).joined() }
}

struct ExportedSignal {
    let name: String
    let args: [BusArg]
    init(_ name: String, _ args: KeyValuePairs<String, String>) { (self.name, self.args) = (name, BusArg.list(args)) }
}

struct ExportedProperty {
    let name, type: String
    /// Never changes: no PropertiesChanged for it.
    let constant: Bool
    /// The value now; nil when there is none (UnknownProperty).
    let get: () -> BusValue?
    /// nil: read-only. Else it checks the value (of `type` already) and answers now or later, as a method.
    let set: ((BusValue, BusCall) -> Answer?)?

    init(_ name: String, _ type: String, constant: Bool = false, get: @escaping () -> BusValue?,
         set: ((BusValue, BusCall) -> Answer?)? = nil) {
        (self.name, self.type, self.constant, self.get, self.set) = (name, type, constant, get, set)
    }
}

struct ExportedInterface {
    let name: String
    var methods: [ExportedMethod] = []
    var signals: [ExportedSignal] = []
    var properties: [ExportedProperty] = []
}

/// The standard interfaces an object answers from its own ones; Peer is libdbus's.
extension ExportedInterface {
    static let propertiesName = "org.freedesktop.DBus.Properties"
    private static let standard = [propertiesName, "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer"]

    /// Get, GetAll and Set of the `own` interfaces' properties; an empty interface name means any.
    static func properties(_ own: [ExportedInterface]) -> ExportedInterface {
        func find(_ call: BusCall) -> (interface: String, property: ExportedProperty)? {
            for i in own where call.string(0).isEmpty || i.name == call.string(0) {
                if let p = i.properties.first(where: { $0.name == call.string(1) }) { return (i.name, p) }
            }
            return nil
        }
        let unknown = { (call: BusCall) in Answer.failure(.unknownProperty(call.string(0), call.string(1))) }
        let max = ExportedMethod.maxNameBytes
        let changes = own.contains { $0.properties.contains { !$0.constant } }
        return ExportedInterface(name: propertiesName, methods: [
            ExportedMethod("Get", in: ["interface_name": "s", "property_name": "s"], out: ["value": "v"]) { call in
                guard let value = find(call)?.property.get() else { return unknown(call) }
                return .success([.variant(value)])
            },
            ExportedMethod("GetAll", in: ["interface_name": "s"], out: ["properties": "a{sv}"]) { call in
                let name = call.string(0)
                let chosen = own.filter { name.isEmpty || $0.name == name }
                guard !chosen.isEmpty || name.isEmpty || standard.contains(name) else {
                    return .failure(.unknownInterface(name, call.message.path ?? ""))
                }
                return .success([.container(signature: "a{sv}", chosen.flatMap(\.properties).compactMap { p in p.get().map { .entry(p.name, $0) } })])
            },
            // A settable property is of a basic type: the value is one level deep.
            ExportedMethod("Set", in: ["interface_name": "s", "property_name": "s", "value": "v"],
                           bounds: DecodeBounds(depth: 1, values: 4, bytes: 3 * max, stringBytes: max),
                           tooBig: "Set takes two names and a value of a basic type, at most \(max) bytes each") { call in
                guard case let (interface, p)? = find(call) else { return unknown(call) }
                guard let set = p.set else { return .failure(.propertyReadOnly(interface, p.name)) }
                let value = if case .variant(let v) = call.args[2] { v } else { call.args[2] }
                guard value.signature == p.type else {
                    return .failure(.invalidArgs("\(interface).\(p.name) is of type \(p.type), not \(value.signature)"))
                }
                return set(value, call)
            },
        ], signals: changes ? [ExportedSignal("PropertiesChanged", ["interface_name": "s", "changed_properties": "a{sv}", "invalidated_properties": "as"])] : [])
    }

    static func introspectable(_ xml: String) -> ExportedInterface {
        ExportedInterface(name: "org.freedesktop.DBus.Introspectable",
                          methods: [ExportedMethod("Introspect", out: ["xml_data": "s"]) { _ in .success([.string(xml)]) }])
    }

    /// Answered by libdbus before any handler of ours: declared for the XML only.
    static var peer: ExportedInterface {
        ExportedInterface(name: "org.freedesktop.DBus.Peer",
                          methods: [ExportedMethod("Ping") { _ in nil }, ExportedMethod("GetMachineId", out: ["machine_uuid": "s"]) { _ in nil }])
    }
}

/// One object: its path, its own interfaces, then Properties and Introspectable, answered from the own ones.
struct ExportedObject {
    let path: String
    let interfaces: [ExportedInterface]

    /// `style`: how Introspect's XML is written (Introspection.swift); the Peer interface is libdbus's to answer.
    init(_ path: String, _ own: [ExportedInterface], style: Introspection.Style = .freedesktop(comment: nil)) {
        self.path = path
        interfaces = own + [.properties(own), .introspectable(Introspection.xml(path, own, style))]
    }

    /// The method a call names: by interface and member, or the first of that member when it names no interface.
    func method(_ call: Message, _ member: String) -> Result<ExportedMethod, BusError> {
        let candidates = call.interface.map { name in interfaces.filter { $0.name == name } } ?? interfaces
        if let name = call.interface, candidates.isEmpty { return .failure(.unknownInterface(name, path)) }
        guard let found = candidates.lazy.flatMap(\.methods).first(where: { $0.name == member }) else {
            return .failure(.unknownMethod("\(call.interface.map { "\($0)." } ?? "")\(member)(\(call.signature))", path))
        }
        return .success(found)
    }
}

extension BusClient {
    /// Serves `object` while `owner` is here and `served()` says so (else libdbus answers UnknownMethod).
    func export(_ object: ExportedObject, for owner: AnyObject, when served: @escaping () -> Bool = { true }) {
        export(object.path, for: owner) { [weak self, weak owner] message in
            guard let self, let owner, served(), let connection = self.connection, let member = message.member else { return false }
            return withExtendedLifetime(owner) { self.answer(message, member, object, on: connection) }
        }
    }

    private func answer(_ message: Message, _ member: String, _ object: ExportedObject, on connection: BusConnection) -> Bool {
        let method: ExportedMethod
        switch object.method(message, member) {
        case .success(let m): method = m
        case .failure(let e): return send(.failure(e), to: message, on: connection, refused: true)
        }
        guard message.hasSignature(method.signature) else {
            let e = BusError.invalidArgs("\(method.name) takes (\(method.signature)), not (\(message.signature))")
            return send(.failure(e), to: message, on: connection, refused: true)
        }
        guard let args = message.arguments(within: method.bounds) else {
            return send(.failure(.invalidArgs(method.tooBig)), to: message, on: connection, refused: true)
        }
        let call = BusCall(message: message, args: args) { [weak self, weak connection] answer in
            guard let self, let connection, self.connection === connection else { return }
            self.send(answer, to: message, on: connection, refused: false)
        }
        guard let answer = method.handle(call) else { return true }
        return send(answer, to: message, on: connection, refused: false)
    }

    /// Answers `call` unless it expects no reply; `refused` before its arguments were read, so it may have been huge.
    @discardableResult
    private func send(_ answer: Answer, to call: Message, on connection: BusConnection, refused: Bool) -> Bool {
        if refused { connection.returnFreeMemorySoon() }
        guard !call.noReplyExpected else { return true }
        let reply: Message? = switch answer {
        case .success(let values): Message.methodReturn(to: call, values)
        case .failure(let error): Message.errorReply(to: call, error)
        }
        if let reply { try? connection.send(reply) }
        return true
    }
}
