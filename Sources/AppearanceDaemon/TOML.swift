/// A strict reader for the part of TOML 1.0 (https://toml.io/en/v1.0.0) that a config file and a color
/// palette use: comments, bare/quoted/dotted keys, `[table]` and `[[array.of.tables]]` headers, all four
/// kinds of strings, integers (decimal, 0x, 0o, 0b), floats, booleans, arrays and inline tables.
/// Dates and times are refused with an error, never read as something else. Pure: text in, tree out.
public enum TOML {
    public static func parse(_ text: String) throws(TOMLError) -> TOMLTable {
        var parser = Parser(Array(text.utf8))
        return try parser.document()
    }
}

/// A syntax or structure error. `description` reads `line 3, column 10: expected '=' after key "a"`.
public struct TOMLError: Error, Equatable, Sendable, CustomStringConvertible {
    public var line: Int
    /// In characters, from 1; nil when the message is about the whole value.
    public var column: Int?
    public var message: String

    public var description: String {
        if let column { "line \(line), column \(column): \(message)" } else { "line \(line): \(message)" }
    }
}

/// A value and the line it starts on, so that whoever reads the tree can say where a bad setting is.
public struct TOMLValue: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case string(String), integer(Int64), float(Double), boolean(Bool), array([TOMLValue]), table(TOMLTable)
    }

    public var kind: Kind
    /// For a table: the line of its header, or of the first key that made it.
    public var line: Int
    /// Made by `[[name]]`, so later `[[name]]` headers append to it (a literal `[...]` array is closed).
    var isTableArray = false

    init(_ kind: Kind, line: Int) { (self.kind, self.line) = (kind, line) }

    public static func == (a: TOMLValue, b: TOMLValue) -> Bool { a.kind == b.kind && a.line == b.line }

    public var string: String? { if case .string(let v) = kind { v } else { nil } }
    public var integer: Int64? { if case .integer(let v) = kind { v } else { nil } }
    public var float: Double? { if case .float(let v) = kind { v } else { nil } }
    public var boolean: Bool? { if case .boolean(let v) = kind { v } else { nil } }
    public var array: [TOMLValue]? { if case .array(let v) = kind { v } else { nil } }
    public var table: TOMLTable? { if case .table(let v) = kind { v } else { nil } }

    /// "a string", "an integer", ... for messages such as `expected a string, got an integer`.
    public var typeName: String {
        switch kind {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .boolean: "a boolean"
        case .array: isTableArray ? "an array of tables" : "an array"
        case .table(let t): t.origin == .inline ? "an inline table" : "a table"
        }
    }
}

/// A table that keeps its keys in the order of the document.
public struct TOMLTable: Equatable, Sendable {
    public private(set) var keys: [String] = []
    private var values: [String: TOMLValue] = [:]
    /// How the table came to be, which decides what may still add to it (toml.io, "Table").
    var origin: Origin

    enum Origin: Sendable { case implicit, header, dotted, inline }

    init(origin: Origin) { self.origin = origin }

    public subscript(key: String) -> TOMLValue? { values[key] }
    public var isEmpty: Bool { keys.isEmpty }
    public var entries: [(key: String, value: TOMLValue)] { keys.map { ($0, values[$0]!) } }

    public static func == (a: TOMLTable, b: TOMLTable) -> Bool { a.keys == b.keys && a.values == b.values }

    mutating func set(_ key: String, _ value: TOMLValue) {
        if values.updateValue(value, forKey: key) == nil { keys.append(key) }
    }

    /// Adds `value` at `key` unless the key exists; returns the existing value then (hashing the key once
    /// on the usual path).
    mutating func add(_ key: String, _ value: TOMLValue) -> TOMLValue? {
        guard let old = values.updateValue(value, forKey: key) else {
            keys.append(key)
            return nil
        }
        values[key] = old
        return old
    }

    /// Changes the value at `key` in place (nil: absent; set it to add one). The value is taken out of the
    /// dictionary while `body` runs, so a table inside it is uniquely referenced and is not copied: inserting
    /// 50,000 keys into one table stays linear.
    mutating func modify<E: Error>(_ key: String, _ body: (inout TOMLValue?) throws(E) -> Void) throws(E) {
        // Dictionary's subscript moves the value out for the access (its `_modify`), so it stays unique.
        let existed = values.index(forKey: key) != nil
        defer { if !existed, values.index(forKey: key) != nil { keys.append(key) } }
        try body(&values[key])
    }
}

private typealias Position = (line: Int, column: Int)

private extension TOMLError {
    init(_ at: Position, _ message: String) { self.init(line: at.line, column: at.column, message: message) }
}

/// `"a.b"` for messages.
private func display(_ key: [String]) -> String { key.joined(separator: ".").debugDescription }

private func conflict(_ key: [String], _ old: TOMLValue) -> String {
    "\(display(key)) is already defined as \(old.typeName) on line \(old.line)"
}

/// Nesting of arrays and inline tables, and parts of a dotted key, beyond which a document is refused: no
/// config or palette needs more, and the parser's recursion stays far from the stack's end.
let tomlMaxDepth = 64

private struct Parser {
    let s: [UInt8]
    var i = 0
    var line = 1
    var lineStart = 0
    /// Arrays and inline tables open at `i`.
    var depth = 0
    /// The column at byte `columnAt` of the current line: columns are counted from there on, so that
    /// asking for positions along a long line stays linear.
    var columnAt = 0
    var columnValue = 1
    var root = TOMLTable(origin: .header)
    /// The path of the last `[header]`; key/value lines go into it.
    var current: [String] = []
    /// The table at `current`, taken out of the tree while its key/value lines are read (an empty one
    /// stands in its place): each line then goes straight into it, instead of walking down from the root.
    /// It is put back before the next header and at the end.
    var detached: TOMLTable?

    init(_ bytes: [UInt8]) {
        s = bytes
        if s.starts(with: [0xEF, 0xBB, 0xBF]) { (i, lineStart) = (3, 3) }  // byte order mark
    }

    // MARK: Characters

    /// The byte at `i + k` as a scalar (bytes of multi-byte characters never equal an ASCII literal).
    func at(_ k: Int = 0) -> Unicode.Scalar? { i + k < s.count ? Unicode.Scalar(s[i + k]) : nil }
    var peek: Unicode.Scalar? { at() }
    /// Characters (Unicode scalars) before `i` on its line, plus one.
    var column: Int {
        mutating get {
            if columnAt < lineStart || columnAt > i { (columnAt, columnValue) = (lineStart, 1) }
            let end = min(i, s.count)
            var n = columnValue
            var k = columnAt
            while k < end {
                if s[k] & 0xC0 != 0x80 { n += 1 }  // not a UTF-8 continuation byte
                k += 1
            }
            (columnAt, columnValue) = (k, n)
            return n
        }
    }
    var here: Position { mutating get { (line, column) } }
    var atNewline: Bool { peek == "\n" || (peek == "\r" && at(1) == "\n") }

    /// What is at `i`, for "expected X, found Y".
    var found: String {
        if i >= s.count { return "the end of the file" }
        if atNewline { return "the end of the line" }
        let c = String(decoding: s[i..<min(i + 4, s.count)], as: UTF8.self).first!
        return c.isASCII && s[i] < 0x20 ? "a control character" : "'\(c)'"
    }

    mutating func error(_ message: String) -> TOMLError { TOMLError(here, message) }
    func isControl(_ c: Unicode.Scalar) -> Bool { (c.value < 0x20 && c != "\t") || c.value == 0x7F }
    func isBare(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-"
    }
    func lookingAt(_ word: String) -> Bool { s[i...].starts(with: word.utf8) }

    mutating func eat(_ c: Unicode.Scalar) -> Bool {
        guard peek == c else { return false }
        i += 1
        return true
    }

    mutating func newline() {
        i += peek == "\r" ? 2 : 1
        line += 1
        lineStart = i
    }

    mutating func skipSpace() { while peek == " " || peek == "\t" { i += 1 } }

    mutating func comment() throws(TOMLError) {
        i += 1
        while let c = peek, !atNewline {
            guard !isControl(c) else { throw error("control characters are not allowed in comments") }
            i += 1
        }
    }

    /// Spaces, comments and newlines, as allowed between the elements of an array.
    mutating func skipBlank() throws(TOMLError) {
        while true {
            skipSpace()
            if peek == "#" { try comment() }
            guard atNewline else { return }
            newline()
        }
    }

    mutating func endOfLine() throws(TOMLError) {
        skipSpace()
        if peek == "#" { try comment() }
        if atNewline { newline() } else if peek != nil { throw error("expected the end of the line, found \(found)") }
    }

    // MARK: Document

    mutating func document() throws(TOMLError) -> TOMLTable {
        while true {
            skipSpace()
            switch peek {
            case nil:
                try attach()
                return root
            case "#", "\n", "\r": break
            case "[":
                try attach()
                try header()
                try detach()
            default:
                let at = here
                let (key, value) = try keyValue()
                if detached != nil {
                    try Parser.insert(value, key, into: &detached!, prefix: current, at: at)
                } else {
                    try Parser.insert(value, key, into: &root, prefix: current, at: at)
                }
            }
            try endOfLine()
        }
    }

    mutating func detach() throws(TOMLError) {
        guard !current.isEmpty else { return }
        var taken: TOMLTable?
        try Parser.walk(&root, current, from: 0, dotted: false, at: here) { t throws(TOMLError) in
            taken = t
            t = TOMLTable(origin: t.origin)
        }
        detached = taken
    }

    mutating func attach() throws(TOMLError) {
        guard var table = detached.take() else { return }
        try Parser.walk(&root, current, from: 0, dotted: false, at: here) { t throws(TOMLError) in
            swap(&t, &table)
        }
    }

    mutating func header() throws(TOMLError) {
        let at = here
        i += 1
        let isArray = eat("[")
        let key = try self.key()
        guard eat("]"), !isArray || eat("]") else {
            throw error("expected '\(isArray ? "]]" : "]")' to close the table header, found \(found)")
        }
        try Parser.walk(&root, key.dropLast(), dotted: false, done: [], at: at) { table throws(TOMLError) in
            let name = key.last!
            let fresh = TOMLValue(.table(TOMLTable(origin: .header)), line: at.line)
            guard var old = table[name] else {
                var value = isArray ? TOMLValue(.array([fresh]), line: at.line) : fresh
                value.isTableArray = isArray
                return table.set(name, value)
            }
            switch old.kind {
            case .table(var t) where !isArray && t.origin == .implicit:
                t.origin = .header
                old.kind = .table(t)
                old.line = at.line
            case .array(var a) where isArray && old.isTableArray:
                old.kind = .boolean(false)
                a.append(fresh)
                old.kind = .array(a)
            default:
                throw TOMLError(at, conflict(key, old))
            }
            table.set(name, old)
        }
        current = key
    }

    /// Runs `body` on the table at `path` below `table`, making missing tables on the way. A header path
    /// (`dotted == false`) enters the last table of an array of tables; dotted keys extend only tables that
    /// dotted keys made; nothing extends an inline table.
    static func walk(_ table: inout TOMLTable, _ path: ArraySlice<String>, dotted: Bool, done: [String], at: Position,
                     _ body: (inout TOMLTable) throws(TOMLError) -> Void) throws(TOMLError) {
        try walk(&table, done + path, from: done.count, dotted: dotted, at: at, body)
    }

    /// The same on `full[from...]`, with `full[..<from]` already walked (for messages): nothing is allocated
    /// per level.
    static func walk(_ table: inout TOMLTable, _ full: [String], from: Int, dotted: Bool, at: Position,
                     _ body: (inout TOMLTable) throws(TOMLError) -> Void) throws(TOMLError) {
        guard from < full.count else { return try body(&table) }
        let name = full[from]
        try table.modify(name) { (slot: inout TOMLValue?) throws(TOMLError) in
            var value = slot.take() ?? TOMLValue(.table(TOMLTable(origin: dotted ? .dotted : .implicit)), line: at.line)
            defer { slot = value }
            // The payload is taken out of `value` before it changes, so that nothing else refers to it and
            // it is changed in place, not copied (a `switch` on `value.kind` would hold a reference).
            if let origin = value.table?.origin, origin != .inline && (!dotted || origin == .dotted) {
                var t = Self.takeTable(&value)
                defer { value.kind = .table(t) }
                try walk(&t, full, from: from + 1, dotted: dotted, at: at, body)
            } else if case .array = value.kind, value.isTableArray && !dotted {
                var a = Self.takeArray(&value)
                var last = Self.takeTable(&a[a.count - 1])
                defer {
                    a[a.count - 1].kind = .table(last)
                    value.kind = .array(a)
                }
                try walk(&last, full, from: from + 1, dotted: dotted, at: at, body)
            } else {
                throw TOMLError(at, conflict(Array(full[...from]), value))
            }
        }
    }

    private static func takeTable(_ v: inout TOMLValue) -> TOMLTable {
        guard case .table(let t) = v.kind else { preconditionFailure("not a table") }
        v.kind = .boolean(false)
        return t
    }

    private static func takeArray(_ v: inout TOMLValue) -> [TOMLValue] {
        guard case .array(let a) = v.kind else { preconditionFailure("not an array") }
        v.kind = .boolean(false)
        return a
    }

    static func insert(_ value: TOMLValue, _ key: [String], into table: inout TOMLTable, prefix: [String],
                       at: Position) throws(TOMLError) {
        let set = { (t: inout TOMLTable) throws(TOMLError) in
            if let old = t.add(key.last!, value) { throw TOMLError(at, conflict(prefix + key, old)) }
        }
        // A plain key (the common case) needs no walk.
        if key.count == 1 { return try set(&table) }
        try walk(&table, key.dropLast(), dotted: true, done: prefix, at: at, set)
    }

    // MARK: Keys

    mutating func keyValue() throws(TOMLError) -> ([String], TOMLValue) {
        let key = try self.key()
        guard eat("=") else { throw error("expected '=' after key \(display(key)), found \(found)") }
        skipSpace()
        return (key, try value())
    }

    mutating func key() throws(TOMLError) -> [String] {
        var parts: [String] = []
        repeat {
            skipSpace()
            parts.append(try simpleKey())
            skipSpace()
            guard parts.count <= tomlMaxDepth else { throw error("a dotted key of more than \(tomlMaxDepth) parts") }
        } while eat(".")
        return parts
    }

    mutating func simpleKey() throws(TOMLError) -> String {
        if peek == "\"" || peek == "'" {
            guard !lookingAt("\"\"\""), !lookingAt("'''") else { throw error("a key cannot be a multi-line string") }
            return try string()
        }
        let start = i
        while let c = peek, isBare(c) { i += 1 }
        guard i > start else { throw error("expected a key, found \(found)") }
        return String(decoding: s[start..<i], as: UTF8.self)
    }

    // MARK: Values

    mutating func value() throws(TOMLError) -> TOMLValue {
        let line = self.line
        if peek == "[" || peek == "{" {
            guard depth < tomlMaxDepth else { throw error("arrays and inline tables nested deeper than \(tomlMaxDepth) levels") }
        }
        switch peek {
        case "\"", "'": return TOMLValue(.string(try string()), line: line)
        case "[": return TOMLValue(.array(try array()), line: line)
        case "{": return TOMLValue(.table(try inlineTable()), line: line)
        default: return TOMLValue(try scalar(), line: line)
        }
    }

    /// Any of the four kinds of strings, starting at its opening quote.
    mutating func string() throws(TOMLError) -> String {
        let start = here
        let quote = peek!, literal = quote == "'"
        let multiline = at(1) == quote && at(2) == quote
        i += multiline ? 3 : 1
        if multiline && atNewline { newline() }  // a newline right after the opening quotes is not content
        var out: [UInt8] = []
        while let c = peek {
            if c == quote {
                guard multiline else {
                    i += 1
                    return String(decoding: out, as: UTF8.self)
                }
                var n = 1
                while at(n) == quote { n += 1 }
                i += n
                // Up to two quotes may stand right before the closing three.
                out += repeatElement(s[i - 1], count: n < 3 ? n : n - 3)
                guard n >= 3 else { continue }
                guard n <= 5 else { throw error("too many quotes at the end of a multi-line string") }
                return String(decoding: out, as: UTF8.self)
            } else if c == "\\" && !literal {
                i += 1
                if multiline && trimmedLineEnd() { continue }
                try escape(into: &out)
            } else if atNewline && multiline {
                newline()
                out.append(0x0A)
            } else if (c == "\n" || c == "\r") && !multiline {
                break
            } else if isControl(c) {
                throw error("control characters are not allowed in strings\(literal ? "" : "; use an escape such as \\t")")
            } else {
                out.append(s[i])
                i += 1
            }
        }
        throw TOMLError(start, "unterminated string")
    }

    /// After a backslash in a multi-line basic string: if only whitespace follows on the line, skips it,
    /// the newline and all whitespace after it ("line ending backslash").
    mutating func trimmedLineEnd() -> Bool {
        let backslash = i
        skipSpace()
        guard atNewline else {
            i = backslash
            return false
        }
        while atNewline || peek == " " || peek == "\t" { if atNewline { newline() } else { i += 1 } }
        return true
    }

    mutating func escape(into out: inout [UInt8]) throws(TOMLError) {
        let simple: [Unicode.Scalar: UInt8] = ["b": 8, "t": 9, "n": 10, "f": 12, "r": 13, "\"": 34, "\\": 92]
        guard let c = peek else { throw error("unterminated string") }
        if let byte = simple[c] {
            i += 1
            return out.append(byte)
        }
        guard !atNewline else { throw error("a backslash can end a line only in a multi-line string") }
        guard c == "u" || c == "U" else {
            let char = String(decoding: s[i..<min(i + 4, s.count)], as: UTF8.self).first!
            throw error("invalid escape sequence '\\\(char)'")
        }
        let count = c == "u" ? 4 : 8
        let hex = String(decoding: s[(i + 1)..<min(i + 1 + count, s.count)], as: UTF8.self)
        guard hex.utf8.count == count, hex.allSatisfy(\.isHexDigit),
              let scalar = UInt32(hex, radix: 16).flatMap(Unicode.Scalar.init) else {
            throw error("invalid escape sequence '\\\(c)\(hex)': expected \(count) hex digits of a Unicode scalar value")
        }
        i += 1 + count
        out += String(scalar).utf8
    }

    mutating func array() throws(TOMLError) -> [TOMLValue] {
        let start = here
        depth += 1
        defer { depth -= 1 }
        i += 1
        var items: [TOMLValue] = []
        while true {
            try skipBlank()
            if eat("]") { return items }
            if peek == nil { throw TOMLError(start, "unterminated array") }
            items.append(try value())
            try skipBlank()
            if eat("]") { return items }
            guard eat(",") else {
                throw peek == nil ? TOMLError(start, "unterminated array") : error("expected ',' or ']' in the array, found \(found)")
            }
        }
    }

    mutating func inlineTable() throws(TOMLError) -> TOMLTable {
        depth += 1
        defer { depth -= 1 }
        i += 1
        var table = TOMLTable(origin: .inline)
        skipSpace()
        if eat("}") { return table }
        while true {
            let at = here
            let (key, value) = try keyValue()
            try Parser.insert(value, key, into: &table, prefix: [], at: at)
            skipSpace()
            if eat("}") { return table }
            guard eat(",") else {
                throw error("expected ',' or '}' in the inline table, found \(found)"
                    + (atNewline ? " (an inline table must be on one line)" : ""))
            }
            skipSpace()
        }
    }

    /// Booleans, integers, floats, and the dates and times this reader refuses.
    mutating func scalar() throws(TOMLError) -> TOMLValue.Kind {
        let start = here
        let from = i
        while let c = peek, isBare(c) || c == "+" || c == "." || c == ":" { i += 1 }
        // Fast path for plain decimal integers, by far the most common number (long arrays of them must
        // not cost a String and Character classification each).
        if i - from <= 18, i > from {
            var k = from
            let negative = s[k] == UInt8(ascii: "-")
            if negative || s[k] == UInt8(ascii: "+") { k += 1 }
            if k < i, s[k...].prefix(i - k).allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), !(s[k] == 0x30 && i - k > 1) {
                var v: Int64 = 0
                for d in s[k..<i] { v = v * 10 + Int64(d - 0x30) }
                return .integer(negative ? -v : v)
            }
        }
        let token = String(decoding: s[from..<i], as: UTF8.self)
        func fail(_ message: String) -> TOMLError { TOMLError(start, message) }
        if token == "true" { return .boolean(true) }
        if token == "false" { return .boolean(false) }
        if token.isEmpty { throw fail("expected a value, found \(found)") }
        let digits = token.prefix { $0.isNumber }.count, next = token.dropFirst(digits).first
        if digits == 4 && next == "-" || digits == 2 && next == ":" {
            throw TOMLError(line: start.line, column: nil, message: "\(digits == 4 ? "dates" : "times") are not supported")
        }
        var body = Substring(token)
        let sign = body.first == "+" || body.first == "-" ? String(body.removeFirst()) : ""
        switch body {
        case "inf": return .float(sign == "-" ? -.infinity : .infinity)
        case "nan": return .float(.nan)
        default: break
        }
        guard body.first?.isNumber == true else {
            let hint = token.first!.isLetter ? " (strings must be quoted)" : ""
            throw fail("expected a value, found \(token.debugDescription)\(hint)")
        }
        let radixes: [String: Int] = ["0x": 16, "0o": 8, "0b": 2]
        if let radix = radixes[String(body.prefix(2))] {
            guard sign.isEmpty else { throw fail("a sign is not allowed on \(token.debugDescription)") }
            guard Parser.isDigits(body.dropFirst(2), radix: radix) else { throw fail("invalid number \(token.debugDescription)") }
            guard let v = Int64(body.dropFirst(2).filter { $0 != "_" }, radix: radix) else {
                throw fail("integer \(token) does not fit in 64 bits")
            }
            return .integer(v)
        }
        // Decimal: int [. digits] [e [sign] digits]
        let mantissa = body.prefix { $0 != "e" && $0 != "E" }
        let exponent = body.dropFirst(mantissa.count + 1)
        let integral = mantissa.prefix { $0 != "." }
        let fraction = mantissa.dropFirst(integral.count + 1)
        let isFloat = mantissa.count < body.count || integral.count < mantissa.count
        let expDigits = exponent.first == "+" || exponent.first == "-" ? exponent.dropFirst() : exponent
        guard Parser.isDigits(integral, radix: 10),
              integral.count < mantissa.count ? Parser.isDigits(fraction, radix: 10) : true,
              mantissa.count < body.count ? Parser.isDigits(expDigits, radix: 10) : true else {
            throw fail("invalid number \(token.debugDescription)")
        }
        if integral.count > 1 && integral.first == "0" { throw fail("leading zeros are not allowed in \(token)") }
        let clean = sign + body.filter { $0 != "_" }
        if isFloat {
            guard let v = Double(clean), v.isFinite else { throw fail("float \(token) is out of range") }
            return .float(v)
        }
        guard let v = Int64(clean) else { throw fail("integer \(token) does not fit in 64 bits") }
        return .integer(v)
    }

    /// Digits of `radix`, with single underscores only between digits.
    static func isDigits(_ text: Substring, radix: Int) -> Bool {
        guard text.first != "_", text.last != "_", !text.contains("__") else { return false }
        return !text.isEmpty && text.allSatisfy { $0 == "_" || $0.hexDigitValue.map { $0 < radix } == true }
    }
}
