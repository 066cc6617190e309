/// A small, strict JSON (RFC 8259) reader and writer over UTF-8 bytes: no Foundation (docs/decisions.md).
public enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's own text, validated: ids are echoed back exactly as the client wrote them.
    case number(String)
    case string(String)
    case array([JSON])
    /// Keys in document order; duplicate keys are rejected by the reader.
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.number(x), .number(y)), let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public static func int<I: BinaryInteger>(_ value: I) -> JSON { .number(String(value)) }

    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var uint64Value: UInt64? { if case .number(let n) = self { UInt64(n) } else { nil } }
    public var intValue: Int? { if case .number(let n) = self { Int(n) } else { nil } }
    /// A member read as a string enum's raw value (nil when absent or not one).
    func raw<T: RawRepresentable<String>>(_ key: String) -> T? { self[key]?.stringValue.flatMap(T.init(rawValue:)) }
    /// A member read as whole seconds that fit an Int64 (nil otherwise: never a trapping conversion).
    func seconds(_ key: String) -> Int64? { self[key]?.uint64Value.flatMap { Int64(exactly: $0) } }
    /// A number that is finite as a Double (never an overflow to infinity).
    public var doubleValue: Double? { if case .number(let n) = self, let d = Double(n), d.isFinite { d } else { nil } }
}

public struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var message: String
    /// The text was refused for an object over `parse(_:maxMembers:)`'s limit, not for bad JSON (read so far).
    public var overMemberLimit = false
    public var description: String { "at byte \(offset): \(message)" }
}

// MARK: - Reading

extension JSON {
    /// Nesting deeper than this is refused: the protocol never needs it and it bounds the reader's stack.
    public static let maxDepth = 32

    // Concrete byte types, not a generic Collection: a generic across modules is not specialised (docs/decisions.md).
    /// `maxMembers`: an object of more members is refused as soon as it reaches one more (docs/decisions.md).
    public static func parse(_ bytes: ArraySlice<UInt8>, maxMembers: Int = .max) throws(JSONError) -> JSON {
        try parse(Array(bytes), maxMembers: maxMembers)
    }

    public static func parse(_ bytes: [UInt8], maxMembers: Int = .max) throws(JSONError) -> JSON {
        var r = Reader(b: bytes, maxMembers: maxMembers)
        r.skipSpace()
        let v = try r.value(depth: 0)
        r.skipSpace()
        guard r.i == r.b.count else { throw r.fail("unexpected data after the JSON value") }
        return v
    }

    public static func parse(_ text: String) throws(JSONError) -> JSON { try parse(Array(text.utf8)) }
}

private struct Reader {
    let b: [UInt8]
    let maxMembers: Int
    var i = 0

    func fail(_ message: String) -> JSONError { JSONError(offset: i, message: message) }

    mutating func skipSpace() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    mutating func literal(_ word: String, _ v: JSON) throws(JSONError) -> JSON {
        for c in word.utf8 {
            guard i < b.count, b[i] == c else { throw fail("invalid literal") }
            i += 1
        }
        return v
    }

    mutating func value(depth: Int) throws(JSONError) -> JSON {
        guard depth < JSON.maxDepth else { throw fail("nesting deeper than \(JSON.maxDepth) levels") }
        guard i < b.count else { throw fail("unexpected end of input") }
        switch b[i] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected character")
        }
    }

    mutating func object(depth: Int) throws(JSONError) -> JSON {
        i += 1
        var members: [(String, JSON)] = []
        // Duplicate keys: a look back over the first 15 keys, then a hash set (thousands stay linear).
        var seen: Set<String>?
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
        while true {
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            guard members.count < maxMembers else {
                var e = fail("an object of more than \(maxMembers) members")
                e.overMemberLimit = true
                throw e
            }
            let key = try string()
            let duplicate: Bool
            if seen != nil {
                duplicate = !seen!.insert(key).inserted
            } else {
                duplicate = members.contains { $0.0 == key }
                if members.count == 15 { seen = Set(members.map(\.0) + [key]) }
            }
            if duplicate { throw fail("duplicate key \"\(key)\"") }
            skipSpace()
            guard i < b.count, b[i] == UInt8(ascii: ":") else { throw fail("expected ':' after key") }
            i += 1
            skipSpace()
            members.append((key, try value(depth: depth + 1)))
            skipSpace()
            guard i < b.count else { throw fail("unexpected end of input") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    mutating func array(depth: Int) throws(JSONError) -> JSON {
        i += 1
        var items: [JSON] = []
        skipSpace()
        if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipSpace()
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard i < b.count else { throw fail("unexpected end of input") }
            if b[i] == UInt8(ascii: ",") { i += 1; continue }
            if b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            throw fail("expected ',' or ']'")
        }
    }

    mutating func number() throws(JSONError) -> JSON {
        let start = i
        func digits(_ r: inout Reader) -> Int {
            let s = r.i
            while r.i < r.b.count, r.b[r.i] >= 0x30, r.b[r.i] <= 0x39 { r.i += 1 }
            return r.i - s
        }
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count else { throw fail("invalid number") }
        if b[i] == UInt8(ascii: "0") { i += 1 } else if digits(&self) == 0 { throw fail("invalid number") }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard digits(&self) > 0 else { throw fail("invalid number") }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard digits(&self) > 0 else { throw fail("invalid number") }
        }
        return .number(String(decoding: b[start..<i], as: UTF8.self))
    }

    mutating func hex4() throws(JSONError) -> UInt32 {
        guard i + 4 <= b.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let d = Character(Unicode.Scalar(b[i])).hexDigitValue else { throw fail("invalid \\u escape") }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }

    mutating func string() throws(JSONError) -> String {
        i += 1
        var out: [UInt8] = []
        var runStart = i
        while true {
            guard i < b.count else { throw fail("unterminated string") }
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                out.append(contentsOf: b[runStart..<i])
                i += 1
                break
            }
            if c < 0x20 { throw fail("control character in string") }
            if c != UInt8(ascii: "\\") { i += 1; continue }
            out.append(contentsOf: b[runStart..<i])
            i += 1
            guard i < b.count else { throw fail("unterminated string") }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 2 <= b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                        throw fail("unpaired surrogate in \\u escape")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw fail("unpaired surrogate in \\u escape")
                }
                out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
            default: throw fail("invalid escape")
            }
            runStart = i
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
        return s
    }
}

// MARK: - Writing

extension JSON {
    /// Compact UTF-8 text, keys in order, no trailing newline.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(to: &out)
        return out
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let v): out.append(contentsOf: (v ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: n.utf8)
        case .string(let s): JSON.writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (k, v) in items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                v.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (k, (key, v)) in members.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                v.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        // Most strings need no escape (names, modes, colors): checked in place and copied whole.
        let plain = s.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
        } ?? !s.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
        if plain {
            out.append(contentsOf: s.utf8)
            out.append(0x22)
            return
        }
        let hex = JSON.hex
        for c in s.utf8 {
            switch c {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20: out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 15)]])
            default: out.append(c)
            }
        }
        out.append(0x22)
    }
}

/// JSON written straight to bytes for the lines on a change's path: the bytes of the `JSON` tree
/// (DirectWriterTests), without its allocations. Keys are written as given (fixed names, no escape).
struct JSONOut {
    var bytes: [UInt8]
    /// No comma before the next member: an object was just opened.
    private var first = true

    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        first = true
    }

    mutating func close() {
        bytes.append(UInt8(ascii: "}"))
        first = false
    }

    mutating func key(_ name: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(0x22)
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(0x22)
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func string(_ s: String) { JSON.writeString(s, to: &bytes) }

    mutating func bool(_ b: Bool) { bytes.append(contentsOf: (b ? "true" : "false").utf8) }

    mutating func null() { bytes.append(contentsOf: "null".utf8) }

    /// Decimal digits, as `JSON.int` writes them (a small string: no allocation).
    mutating func uint(_ n: UInt64) { bytes.append(contentsOf: String(n).utf8) }

    mutating func json(_ value: JSON) { value.write(to: &bytes) }

    mutating func newline() { bytes.append(0x0A) }
}
