// The message half of the libdbus wrapper: building method calls and reading arguments.
// Everything here runs on the owning connection's queue; nothing leaves this module as a pointer.
import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An error as D-Bus names it: `org.freedesktop.DBus.Error.ServiceUnknown` plus a human message.
struct BusError: Error, Equatable, CustomStringConvertible {
    var name: String
    var message: String

    var description: String { message.isEmpty ? name : "\(name): \(message)" }

    static let noMemory = BusError(name: "org.freedesktop.DBus.Error.NoMemory", message: "out of memory")

    /// Takes the contents of a filled DBusError and frees it.
    init(taking error: inout DBusError) {
        name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        message = error.message.map { String(cString: $0) } ?? ""
        dbus_error_free(&error)
    }

    init(name: String, message: String) { (self.name, self.message) = (name, message) }
}

/// Bounds on what decoding builds from a message, whose size and nesting a peer chooses (docs/decisions.md, "One
/// huge D-Bus call"); also what a decode may still build.
struct DecodeBounds: Sendable, Equatable {
    /// Containers (arrays, structs, dict entries, variants) nested in one argument, the outermost included.
    var depth: Int
    /// Values built in all, containers included.
    var values: Int
    /// Bytes of text (strings, object paths, signatures) in all.
    var bytes: Int
    /// Bytes of any one text.
    var stringBytes = Int.max

    /// Far above what a reply or signal from the portal (a uint32 or a (ddd), twice wrapped) or a bus carries.
    static let small = DecodeBounds(depth: 8, values: 64, bytes: 16 * 1024)
}

/// A decoded argument. Unix file descriptors are not taken out of the message: they show up as `.unsupported`.
indirect enum BusValue: Equatable, CustomStringConvertible {
    case byte(UInt8), boolean(Bool), int16(Int16), uint16(UInt16), int32(Int32), uint32(UInt32)
    case int64(Int64), uint64(UInt64), double(Double)
    case string(String), objectPath(String), signature(String)
    case variant(BusValue)
    /// Arrays, structs and dict entries, with the D-Bus signature of the whole value.
    case container(signature: String, [BusValue])
    case unsupported(signature: String)

    /// The value without its variant wrappers (1.16's `Read` has two), at most `maxUnwrapping` of them.
    var unwrapped: BusValue {
        var v = self
        for _ in 0..<BusValue.maxUnwrapping {
            guard case .variant(let inner) = v else { break }
            v = inner
        }
        return v
    }

    /// Variant wrappers `unwrapped` removes: twice as many as any portal uses.
    static let maxUnwrapping = 4

    /// The D-Bus type signature, for messages a user reads ("s", "i", "a{sv}").
    var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .variant: "v"
        case .container(let s, _), .unsupported(let s): s
        }
    }

    var description: String {
        switch self {
        case .byte(let v): "\(v)"
        case .boolean(let v): "\(v)"
        case .int16(let v): "\(v)"
        case .uint16(let v): "\(v)"
        case .int32(let v): "\(v)"
        case .uint32(let v): "\(v)"
        case .int64(let v): "\(v)"
        case .uint64(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let v), .objectPath(let v), .signature(let v): "\"\(v)\""
        case .variant(let v): "<\(v)>"
        case .container(_, let vs): "[" + vs.map(\.description).joined(separator: ", ") + "]"
        case .unsupported(let s): "(\(s))"
        }
    }
}

/// One reference to a DBusMessage.
final class Message {
    let raw: OpaquePointer

    /// Takes over a reference the caller owns (from `dbus_message_new_*` or `steal_reply`).
    init(adopting raw: OpaquePointer) { self.raw = raw }

    /// Adds a reference (for messages libdbus lends to a callback).
    init(borrowing raw: OpaquePointer) {
        self.raw = raw
        dbus_message_ref(raw)
    }

    deinit { dbus_message_unref(raw) }

    /// A copy that can be sent again (a message is locked once sent); nil only when out of memory.
    func copy() -> Message? { dbus_message_copy(raw).map { Message(adopting: $0) } }

    /// The reply to `call` carrying `values`. nil only when out of memory.
    static func methodReturn(to call: Message, _ values: [BusValue] = []) -> Message? {
        built(dbus_message_new_method_return(call.raw), values)
    }

    /// An error reply to `call` (`org.freedesktop.portal.Error.NotFound`, a human message).
    static func errorReply(to call: Message, _ error: BusError) -> Message? {
        dbus_message_new_error(call.raw, error.name, error.message).map { Message(adopting: $0) }
    }

    /// A signal from `path`, written as bytes (Wire.swift) where it can be (checked against the iterators' in debug).
    static func signal(path: String, interface: String, name: String, _ values: [BusValue]) -> Message? {
        guard let message = wireSignal(path: path, interface: interface, name: name, values) else {
            return iteratorSignal(path: path, interface: interface, name: name, values)
        }
        #if DEBUG
        let built = iteratorSignal(path: path, interface: interface, name: name, values)
        assert(built?.marshalled == message.marshalled, "\(interface).\(name) written otherwise than libdbus writes it")
        #endif
        return message
    }

    /// A signal built with libdbus's iterators.
    static func iteratorSignal(path: String, interface: String, name: String, _ values: [BusValue]) -> Message? {
        built(dbus_message_new_signal(path, interface, name), values)
    }

    /// A method call with arguments of any type (`RequestName` takes a string and a uint32). nil only when out of memory.
    static func methodCall(destination: String, path: String, interface: String, method: String,
                           values: [BusValue] = []) -> Message? {
        built(dbus_message_new_method_call(destination, path, interface, method), values)
    }

    /// `raw` with `values` appended, each of its own signature (an empty array still has a type); nil without memory.
    private static func built(_ raw: OpaquePointer?, _ values: [BusValue]) -> Message? {
        guard let raw else { return nil }
        let message = Message(adopting: raw)
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iter)
        return values.allSatisfy { append($0, to: &iter) } ? message : nil
    }

    /// Type codes are the signature characters (libdbus's DBUS_TYPE_* macros, which Swift does not import).
    private static func append(_ value: BusValue, to iter: inout DBusMessageIter) -> Bool {
        func basic<T: BitwiseCopyable>(_ type: Unicode.Scalar, _ v: T) -> Bool {
            withUnsafePointer(to: v) { dbus_message_iter_append_basic(&iter, Int32(type.value), $0) != 0 }
        }
        func text(_ type: Unicode.Scalar, _ s: String) -> Bool {
            s.withCString { cString in
                var pointer: UnsafePointer<CChar>? = cString
                return dbus_message_iter_append_basic(&iter, Int32(type.value), &pointer) != 0
            }
        }
        func container(_ code: Unicode.Scalar, _ signature: String?, _ children: [BusValue]) -> Bool {
            var sub = DBusMessageIter()
            let type = Int32(code.value)
            let opened = signature.map { s in s.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) } }
                ?? dbus_message_iter_open_container(&iter, type, nil, &sub)
            guard opened != 0 else { return false }
            guard children.allSatisfy({ append($0, to: &sub) }) else {
                dbus_message_iter_abandon_container(&iter, &sub)
                return false
            }
            return dbus_message_iter_close_container(&iter, &sub) != 0
        }
        switch value {
        case .byte(let v): return basic("y", v)
        case .boolean(let v): return basic("b", UInt32(v ? 1 : 0))
        case .int16(let v): return basic("n", v)
        case .uint16(let v): return basic("q", v)
        case .int32(let v): return basic("i", v)
        case .uint32(let v): return basic("u", v)
        case .int64(let v): return basic("x", v)
        case .uint64(let v): return basic("t", v)
        case .double(let v): return basic("d", v)
        case .string(let v): return text("s", v)
        case .objectPath(let v): return text("o", v)
        case .signature(let v): return text("g", v)
        case .variant(let inner): return container("v", inner.signature, [inner])
        case .container(let signature, let children):
            switch signature.first {
            case "a": return container("a", String(signature.dropFirst()), children)
            case "(": return container("r", nil, children)
            case "{": return container("e", nil, children)
            default: return false
            }
        case .unsupported: return false
        }
    }

    var type: Int32 { dbus_message_get_type(raw) }
    var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    /// The argument signature ("ss" for `Read`). libdbus bounds it (255 bytes), so it is safe to read whole.
    var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }

    /// Whether the arguments are exactly of these types; nothing is decoded.
    func hasSignature(_ signature: String) -> Bool { dbus_message_has_signature(raw, signature) != 0 }
    var noReplyExpected: Bool { dbus_message_get_no_reply(raw) != 0 }
    var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }

    func isSignal(interface: String, member: String) -> Bool { dbus_message_is_signal(raw, interface, member) != 0 }
    /// The same for literals, handed to libdbus as the C strings they are stored as (no copy).
    func isSignal(_ interface: StaticString, _ member: StaticString) -> Bool {
        UnsafeRawPointer(interface.utf8Start).withMemoryRebound(to: CChar.self, capacity: interface.utf8CodeUnitCount + 1) { i in
            UnsafeRawPointer(member.utf8Start).withMemoryRebound(to: CChar.self, capacity: member.utf8CodeUnitCount + 1) { m in
                dbus_message_is_signal(raw, i, m) != 0
            }
        }
    }

    /// For an error reply: its name and its first string argument, the human message.
    var error: BusError? {
        guard type == DBUS_MESSAGE_TYPE_ERROR else { return nil }
        let name = dbus_message_get_error_name(raw).map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        var text = ""
        if case .string(let s)? = arguments(limit: 1, within: DecodeBounds(depth: 1, values: 1, bytes: 4096))?.first { text = s }
        return BusError(name: name, message: text)
    }

    /// The index in `seconds` of the second argument when the first two are strings and the first is `first`,
    /// compared as the C strings libdbus holds: nothing decoded, no string made.
    func stringPair(first: String, secondIn seconds: [String]) -> Int? {
        var iter = DBusMessageIter()
        var v = DBusBasicValue()
        guard dbus_message_iter_init(raw, &iter) != 0, dbus_message_iter_get_arg_type(&iter) == Int32(UInt8(ascii: "s")) else { return nil }
        dbus_message_iter_get_basic(&iter, &v)
        guard let a = v.str, strcmp(a, first) == 0, dbus_message_iter_next(&iter) != 0,
              dbus_message_iter_get_arg_type(&iter) == Int32(UInt8(ascii: "s")) else { return nil }
        dbus_message_iter_get_basic(&iter, &v)
        guard let b = v.str else { return nil }
        return seconds.firstIndex { strcmp(b, $0) == 0 }
    }

    /// The number in the only argument when that is a variant (in at most three more) holding a uint32: the
    /// portal's usual answer to a read, without decoding it. nil for anything else.
    func variantUInt32() -> UInt32? {
        var iter = DBusMessageIter()
        guard dbus_message_has_signature(raw, "v") != 0, dbus_message_iter_init(raw, &iter) != 0 else { return nil }
        for _ in 0...4 {  // four variants, then the number
            switch dbus_message_iter_get_arg_type(&iter) {
            case Int32(UInt8(ascii: "v")):
                var inner = DBusMessageIter()
                dbus_message_iter_recurse(&iter, &inner)
                iter = inner
            case Int32(UInt8(ascii: "u")):
                var v = DBusBasicValue()
                dbus_message_iter_get_basic(&iter, &v)
                return v.u32
            default:
                return nil
            }
        }
        return nil
    }

    /// Decodes the first `limit` arguments within `bounds`; nil past one (nothing past it is read). libdbus has
    /// validated the message, so nothing else can fail.
    func arguments(limit: Int = .max, within bounds: DecodeBounds = .small) -> [BusValue]? {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return [] }
        var budget = bounds
        var values: [BusValue] = []
        while values.count < limit, dbus_message_iter_get_arg_type(&iter) != 0 {
            guard let value = Message.decode(&iter, depth: bounds.depth, &budget) else { return nil }
            values.append(value)
            if dbus_message_iter_next(&iter) == 0 { break }
        }
        return values
    }

    private static func decode(_ iter: inout DBusMessageIter, depth: Int, _ budget: inout DecodeBounds) -> BusValue? {
        guard budget.values > 0 else { return nil }
        budget.values -= 1
        // Type codes are the signature characters; 0 (DBUS_TYPE_INVALID) ends a list.
        let type = dbus_message_iter_get_arg_type(&iter)
        let code = Unicode.Scalar(UInt8(truncatingIfNeeded: type))
        switch code {
        case "v", "a", "r", "e":
            guard depth > 0 else { return nil }
            let signature = currentSignature(&iter)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var children: [BusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != 0 {
                guard let child = decode(&sub, depth: depth - 1, &budget) else { return nil }
                children.append(child)
                if dbus_message_iter_next(&sub) == 0 { break }
            }
            if code == "v", let inner = children.first { return .variant(inner) }
            return .container(signature: signature, children)
        case "h":
            return .unsupported(signature: "h")
        default:
            guard dbus_type_is_basic(type) != 0 else { return .unsupported(signature: currentSignature(&iter)) }
            var v = DBusBasicValue()
            dbus_message_iter_get_basic(&iter, &v)
            func text() -> String? {
                guard let p = v.str else { return "" }
                // strnlen: a 60 MB string costs no more than the bytes still allowed.
                let allowed = min(budget.bytes, budget.stringBytes)
                let length = strnlen(p, allowed + 1)
                guard length <= allowed else { return nil }
                budget.bytes -= length
                return String(decoding: UnsafeRawBufferPointer(start: p, count: length), as: UTF8.self)
            }
            switch code {
            case "y": return .byte(v.byt)
            case "b": return .boolean(v.bool_val != 0)
            case "n": return .int16(v.i16)
            case "q": return .uint16(v.u16)
            case "i": return .int32(v.i32)
            case "u": return .uint32(v.u32)
            case "x": return .int64(Int64(v.i64))
            case "t": return .uint64(UInt64(v.u64))
            case "d": return .double(v.dbl)
            case "s": return text().map { .string($0) }
            case "o": return text().map { .objectPath($0) }
            case "g": return text().map { .signature($0) }
            default: return .unsupported(signature: currentSignature(&iter))
            }
        }
    }

    private static func currentSignature(_ iter: inout DBusMessageIter) -> String {
        guard let s = dbus_message_iter_get_signature(&iter) else { return "?" }
        defer { dbus_free(s) }
        return String(cString: s)
    }
}
