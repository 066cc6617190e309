/// The TOML reader itself: one pass over the text, with the position of every value kept for error messages.
typealias TOMLPosition = (line: Int, column: Int)

extension TOMLError {
    init(_ at: TOMLPosition, _ message: String) { self.init(line: at.line, column: at.column, message: message) }
}

/// `"a.b"` for messages.
func tomlKey(_ key: [String]) -> String { key.joined(separator: ".").debugDescription }

func tomlConflict(_ key: [String], _ old: TOMLValue) -> String {
    "\(tomlKey(key)) is already defined as \(old.typeName) on line \(old.line)"
}

/// Nesting of arrays and inline tables, and parts of a dotted key, beyond which a document is refused.
let tomlMaxDepth = 64

struct TOMLParser {
    let s: [UInt8]
    var i = 0
    var line = 1
    var lineStart = 0
    /// Arrays and inline tables open at `i`.
    var depth = 0
    /// The column at byte `columnAt` of the current line: columns are counted on from there.
    var columnAt = 0
    var columnValue = 1
    var root = TOMLTable(origin: .header)
    /// The path of the last `[header]`; key/value lines go into it.
    var current: [String] = []
    /// The table at `current`, taken out of the tree while its key/value lines are read.
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
    var here: TOMLPosition { mutating get { (line, column) } }
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
                    try Self.insert(value, key, into: &detached!, prefix: current, at: at)
                } else {
                    try Self.insert(value, key, into: &root, prefix: current, at: at)
                }
            }
            try endOfLine()
        }
    }

    mutating func detach() throws(TOMLError) {
        guard !current.isEmpty else { return }
        var taken: TOMLTable?
        try Self.walk(&root, current, from: 0, dotted: false, at: here) { t throws(TOMLError) in
            taken = t
            t = TOMLTable(origin: t.origin)
        }
        detached = taken
    }

    mutating func attach() throws(TOMLError) {
        guard var table = detached.take() else { return }
        try Self.walk(&root, current, from: 0, dotted: false, at: here) { t throws(TOMLError) in
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
        try Self.walk(&root, Array(key.dropLast()), from: 0, dotted: false, at: at) { table throws(TOMLError) in
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
                throw TOMLError(at, tomlConflict(key, old))
            }
            table.set(name, old)
        }
        current = key
    }

    /// Runs `body` on the table at `full[from...]` below `table`, making missing tables on the way (a header
    /// enters an array of tables' last; dotted keys extend only their own tables; nothing extends inline ones).
    static func walk(_ table: inout TOMLTable, _ full: [String], from: Int, dotted: Bool, at: TOMLPosition,
                     _ body: (inout TOMLTable) throws(TOMLError) -> Void) throws(TOMLError) {
        guard from < full.count else { return try body(&table) }
        let name = full[from]
        try table.modify(name) { (slot: inout TOMLValue?) throws(TOMLError) in
            var value = slot.take() ?? TOMLValue(.table(TOMLTable(origin: dotted ? .dotted : .implicit)), line: at.line)
            defer { slot = value }
            // The payload is taken out of `value` first, so that it is changed in place, not copied.

            if let origin = value.table?.origin, origin != .inline && (!dotted || origin == .dotted) {
                var t = Self.take(&value) { $0.table }
                defer { value.kind = .table(t) }
                try walk(&t, full, from: from + 1, dotted: dotted, at: at, body)
            } else if case .array = value.kind, value.isTableArray && !dotted {
                var a = Self.take(&value) { $0.array }
                var last = Self.take(&a[a.count - 1]) { $0.table }
                defer {
                    a[a.count - 1].kind = .table(last)
                    value.kind = .array(a)
                }
                try walk(&last, full, from: from + 1, dotted: dotted, at: at, body)
            } else {
                throw TOMLError(at, tomlConflict(Array(full[...from]), value))
            }
        }
    }

    /// The payload `get` reads from `v`, taken out of it.
    private static func take<T>(_ v: inout TOMLValue, _ get: (TOMLValue) -> T?) -> T {
        let payload = get(v)!
        v.kind = .boolean(false)
        return payload
    }

    static func insert(_ value: TOMLValue, _ key: [String], into table: inout TOMLTable, prefix: [String],
                       at: TOMLPosition) throws(TOMLError) {
        let set = { (t: inout TOMLTable) throws(TOMLError) in
            if let old = t.add(key.last!, value) { throw TOMLError(at, tomlConflict(prefix + key, old)) }
        }
        // A plain key (the common case) needs no walk.
        if key.count == 1 { return try set(&table) }
        try walk(&table, prefix + key.dropLast(), from: prefix.count, dotted: true, at: at, set)
    }

    // MARK: Keys

    mutating func keyValue() throws(TOMLError) -> ([String], TOMLValue) {
        let key = try self.key()
        guard eat("=") else { throw error("expected '=' after key \(tomlKey(key)), found \(found)") }
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
}
