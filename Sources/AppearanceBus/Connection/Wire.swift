// Signals written in the D-Bus wire format here and handed to libdbus whole (`dbus_message_demarshal`), the
// same bytes its iterators write at a fraction of the cost (docs/decisions.md, "Signals written as bytes").
import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A message's bytes in the wire format (the D-Bus specification's "Message Format"), in this machine's byte order.
struct WireWriter {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(512) }

    /// The byte-order mark libdbus puts on the messages it builds: this machine's.
    static let byteOrder = UInt8(ascii: 1.littleEndian == 1 ? "l" : "B")

    /// Zeros up to the next multiple of `alignment` (1, 2, 4 or 8).
    mutating func pad(_ alignment: Int) {
        for _ in 0..<((alignment - bytes.count) & (alignment - 1)) { bytes.append(0) }
    }

    mutating func fixed<T: FixedWidthInteger>(_ v: T) {
        pad(MemoryLayout<T>.size)
        withUnsafeBytes(of: v) { bytes.append(contentsOf: $0) }
    }

    /// A string or object path: length, bytes, NUL. false for one holding a NUL (libdbus would cut it there).
    mutating func text(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { utf8 in
            guard !Self.holdsNUL(utf8) else { return false }
            fixed(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
            return true
        }
    }

    /// A signature: one byte of length, the codes, NUL. false past 255 bytes or with a NUL.
    mutating func signature(_ s: String) -> Bool {
        var s = s
        return s.withUTF8 { utf8 in
            guard utf8.count <= 255, !Self.holdsNUL(utf8) else { return false }
            bytes.append(UInt8(utf8.count))
            bytes.append(contentsOf: utf8)
            bytes.append(0)
            return true
        }
    }

    private static func holdsNUL(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress, !utf8.isEmpty else { return false }
        return memchr(base, 0, utf8.count) != nil
    }

    /// A header field: its code and its value in a variant of type `type` ("o", "s" or "g").
    mutating func field(_ code: UInt8, _ type: StaticString, _ value: String) -> Bool {
        pad(8)
        bytes.append(code)
        bytes.append(1)
        let typeCode = type.utf8Start.pointee
        bytes.append(typeCode)
        bytes.append(0)
        return typeCode == UInt8(ascii: "g") ? signature(value) : text(value)
    }

    /// Overwrites the uint32 at `offset` (a length written before what it measures).
    mutating func patch(_ offset: Int, _ v: UInt32) {
        withUnsafeBytes(of: v) { raw in
            for i in 0..<4 { bytes[offset + i] = raw[i] }
        }
    }

    /// The alignment of a value whose signature starts with `code`.
    static func alignment(_ code: UInt8?) -> Int {
        switch code {
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "s"), UInt8(ascii: "o"),
             UInt8(ascii: "a"), UInt8(ascii: "h"): 4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: 1
        }
    }

    /// Writes `value`; false for what the iterators would refuse or write otherwise (then left to them).
    mutating func value(_ value: BusValue) -> Bool {
        switch value {
        case .byte(let v): bytes.append(v)
        case .boolean(let v): fixed(UInt32(v ? 1 : 0))
        case .int16(let v): fixed(v)
        case .uint16(let v): fixed(v)
        case .int32(let v): fixed(v)
        case .uint32(let v): fixed(v)
        case .int64(let v): fixed(v)
        case .uint64(let v): fixed(v)
        case .double(let v): fixed(v.bitPattern)
        case .string(let v), .objectPath(let v): return text(v)
        case .signature(let v): return signature(v)
        case .variant(let inner):
            return signature(inner.signature) && self.value(inner)
        case .container(let signature, let children):
            switch signature.utf8.first {
            case UInt8(ascii: "a"):
                fixed(UInt32(0))
                let lengthAt = bytes.count - 4
                // The padding to the first element is not counted, and is there even when the array is empty.
                pad(Self.alignment(signature.utf8.dropFirst().first))
                let start = bytes.count
                for child in children { guard self.value(child) else { return false } }
                patch(lengthAt, UInt32(bytes.count - start))
            case UInt8(ascii: "("), UInt8(ascii: "{"):
                pad(8)
                for child in children { guard self.value(child) else { return false } }
            default: return false
            }
        case .unsupported: return false
        }
        return true
    }
}

extension Message {
    /// A signal written as bytes and read back (so checked) by libdbus; nil when it does not take them.
    static func wireSignal(path: String, interface: String, name: String, _ values: [BusValue]) -> Message? {
        var body = WireWriter()
        var signature = ""
        for value in values {
            guard body.value(value) else { return nil }
            signature += value.signature
        }
        // Past libdbus's limit for a message it reads (128 MiB) only the iterators build it.
        guard body.bytes.count <= 1 << 27 else { return nil }
        // The header: byte order, type, flags (no reply), version, body length, serial (1, as libdbus reads no
        // serial 0; set back to 0 below), then the fields in `dbus_message_new_signal`'s order.
        var w = WireWriter()
        w.bytes.append(contentsOf: [WireWriter.byteOrder, UInt8(DBUS_MESSAGE_TYPE_SIGNAL), 1, 1])
        w.fixed(UInt32(body.bytes.count))
        w.fixed(UInt32(1))
        w.fixed(UInt32(0))
        let fieldsAt = w.bytes.count - 4
        guard w.field(1, "o", path), w.field(2, "s", interface), w.field(3, "s", name),
              signature.isEmpty || w.field(8, "g", signature) else { return nil }
        w.patch(fieldsAt, UInt32(w.bytes.count - fieldsAt - 4))
        w.pad(8)
        w.bytes.append(contentsOf: body.bytes)
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let raw = w.bytes.withUnsafeBytes { dbus_message_demarshal($0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count), &error) }
        guard let raw else { return nil }
        dbus_message_set_serial(raw, 0)
        return Message(adopting: raw)
    }

    /// The whole message as it would go on the wire (for comparing two builds of one message).
    var marshalled: [UInt8]? {
        var data: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &data, &length) != 0, let data else { return nil }
        defer { dbus_free(data) }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(length)))
    }
}
