/// The TOML reader's values: strings, numbers, booleans, arrays and inline tables.
extension TOMLParser {

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

    /// A "line ending backslash" in a multi-line basic string: skips the whitespace and newlines after it.
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
            try Self.insert(value, key, into: &table, prefix: [], at: at)
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
        // Fast path for plain decimal integers, by far the most common number.

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
            guard Self.isDigits(body.dropFirst(2), radix: radix) else { throw fail("invalid number \(token.debugDescription)") }
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
        guard Self.isDigits(integral, radix: 10),
              integral.count < mantissa.count ? Self.isDigits(fraction, radix: 10) : true,
              mantissa.count < body.count ? Self.isDigits(expDigits, radix: 10) : true else {
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
