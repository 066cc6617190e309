/// A strict reader for TOML 1.0 (https://toml.io/en/v1.0.0) without dates and times, which are refused with
/// an error. Pure: text in, tree out.
public enum TOML {
    public static func parse(_ text: String) throws(TOMLError) -> TOMLTable {
        var parser = TOMLParser(Array(text.utf8))
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

    /// Adds `value` at `key` unless the key exists; returns the existing value then.
    mutating func add(_ key: String, _ value: TOMLValue) -> TOMLValue? {
        guard let old = values.updateValue(value, forKey: key) else {
            keys.append(key)
            return nil
        }
        values[key] = old
        return old
    }

    /// Changes the value at `key` in place (nil: absent), without copying a table inside it.

    mutating func modify<E: Error>(_ key: String, _ body: (inout TOMLValue?) throws(E) -> Void) throws(E) {
        // Dictionary's subscript moves the value out for the access (its `_modify`), so it stays unique.
        let existed = values.index(forKey: key) != nil
        defer { if !existed, values.index(forKey: key) != nil { keys.append(key) } }
        try body(&values[key])
    }
}
