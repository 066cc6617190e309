// `appearancectl palette import`: LFLDarkModeKit color bundles (two flat plists) into palette.toml.

/// An import that cannot be done: `description` names the file and line (`light.plist:7: expected </key>`).
public struct ImportError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String

    public init(description: String) { self.description = description }
}

/// The pairs of `<plist><dict>(<key>K</key><string>V</string>)*</dict></plist>`, with the line of each value.
public func readFlatPlist(_ text: String, file: String) throws(ImportError) -> [(key: String, value: String, line: Int)] {
    let b = Array(text.utf8)
    var i = 0
    var line = 1
    func fail(_ message: String) -> ImportError { ImportError(description: "\(file):\(line): \(message)") }
    func advance(_ n: Int) {
        for k in i..<min(i + n, b.count) where b[k] == 0x0A { line += 1 }
        i = min(i + n, b.count)
    }
    func starts(_ s: String) -> Bool { b[i...].starts(with: s.utf8) }
    func skip(until s: String) throws(ImportError) {
        while i < b.count && !starts(s) { advance(1) }
        guard i < b.count else { throw fail("unterminated markup (no \"\(s)\")") }
        advance(s.utf8.count)
    }
    func skipSpaceAndMeta() throws(ImportError) {
        while i < b.count {
            if b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x09 || b[i] == 0x0D { advance(1) }
            else if starts("<?") { try skip(until: "?>") }
            else if starts("<!--") { try skip(until: "-->") }
            else if starts("<!") { try skip(until: ">") }
            else { return }
        }
    }
    /// The next tag's name (`dict`, `/dict`, `key`, `string/`); nil at the end.
    func tag() throws(ImportError) -> String? {
        try skipSpaceAndMeta()
        guard i < b.count else { return nil }
        guard b[i] == UInt8(ascii: "<") else { throw fail("expected a tag, found text") }
        let start = i + 1
        try skip(until: ">")
        var name = String(decoding: b[start..<(i - 1)], as: UTF8.self)
        if let space = name.firstIndex(where: { $0 == " " || $0 == "\n" || $0 == "\t" }) {
            let selfClosing = name.hasSuffix("/")
            name = String(name[..<space]) + (selfClosing ? "/" : "")
        }
        return name
    }
    func textUntil(_ closing: String) throws(ImportError) -> String {
        let start = i
        while i < b.count && b[i] != UInt8(ascii: "<") { advance(1) }
        let raw = String(decoding: b[start..<i], as: UTF8.self)
        guard try tag() == "/" + closing else { throw fail("expected </\(closing)>") }
        return try unescape(raw)
    }
    func unescape(_ s: String) throws(ImportError) -> String {
        guard s.contains("&") else { return s }
        var out = ""
        var rest = Substring(s)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";") else { throw fail("unterminated entity") }
            let name = rest[rest.index(after: amp)..<semi]
            let code: UInt32? = switch name {
            case "amp": 0x26
            case "lt": 0x3C
            case "gt": 0x3E
            case "quot": 0x22
            case "apos": 0x27
            default: name.hasPrefix("#x") ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst()) : nil
            }
            guard let code, let scalar = Unicode.Scalar(code) else { throw fail("unknown entity &\(name);") }
            out.unicodeScalars.append(scalar)
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }

    guard try tag() == "plist" else { throw fail("expected <plist>") }
    guard try tag() == "dict" else { throw fail("expected <dict> inside <plist> (a flat dictionary of colors)") }
    var pairs: [(key: String, value: String, line: Int)] = []
    var seen: Set<String> = []  // linear in the number of keys
    while true {
        let t = try tag()
        if t == "/dict" { break }
        guard t == "key" else { throw fail("expected <key> or </dict>, found <\(t ?? "end of file")>") }
        let key = try textUntil("key")
        if !seen.insert(key).inserted { throw fail("duplicate key \"\(key)\"") }
        let valueTag = try tag()
        let valueLine = line
        switch valueTag {
        case "string": pairs.append((key, try textUntil("string"), valueLine))
        case "string/": pairs.append((key, "", valueLine))
        default: throw fail("\(key): expected a <string> value, found <\(valueTag ?? "end of file")>")
        }
    }
    guard try tag() == "/plist" else { throw fail("expected </plist>") }
    guard try tag() == nil else { throw fail("unexpected content after </plist>") }
    return pairs
}

/// An LFLDarkModeKit `RRGGBB` or `AARRGGBB` (`#` or `0x` optional) as `#RRGGBB` / `#RRGGBBAA`.
public func lflColor(_ value: String) -> String? {
    var v = Substring(value.trimmingSpaces)
    if v.hasPrefix("#") { v = v.dropFirst() } else if v.hasPrefix("0x") || v.hasPrefix("0X") { v = v.dropFirst(2) }
    guard v.allSatisfy(\.isHexDigit) else { return nil }
    switch v.count {
    case 6: return "#" + v.uppercased()
    case 8: return "#" + v.dropFirst(2).uppercased() + v.prefix(2).uppercased()
    default: return nil
    }
}

extension String {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }.reversed())
    }
}

/// A TOML key as written: bare when it can be, else a basic string.
func tomlWrittenKey(_ k: String) -> String {
    if !k.isEmpty && k.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) { return k }
    var out = "\""
    for ch in k.unicodeScalars {
        switch ch {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where ch.value < 0x20 || ch.value == 0x7F:
            let hex = String(ch.value, radix: 16, uppercase: true)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(ch)
        }
    }
    return out + "\""
}

public struct ImportResult: Equatable, Sendable {
    public var toml: String
    /// Keys only in the light bundle, then only in the dark one, in document order (kept for both modes).
    public var onlyLight: [String]
    public var onlyDark: [String]

    /// How many tokens the palette has (its tables).
    public var tokens: Int { toml.split(separator: "\n").filter { $0.hasPrefix("[") }.count }
}

/// The two plists as palette.toml text; a key in one only becomes the token's default, and is reported.

public func convertLFL(light: String, lightFile: String, dark: String, darkFile: String) throws(ImportError) -> ImportResult {
    let l = try readFlatPlist(light, file: lightFile), d = try readFlatPlist(dark, file: darkFile)
    func color(_ p: (key: String, value: String, line: Int), _ file: String) throws(ImportError) -> String {
        guard let c = lflColor(p.value) else {
            throw ImportError(description: "\(file):\(p.line): \(p.key): \"\(p.value)\" is not a hex color (RRGGBB or AARRGGBB)")
        }
        return c
    }
    var out = """
        # appearanced palette, imported from LFLDarkModeKit color bundles by `appearancectl palette import`:
        #   light: \(commentSafe(lightFile))
        #   dark:  \(commentSafe(darkFile))
        # 8-digit values were AARRGGBB there; palette.toml writes the alpha last (#RRGGBBAA).
        # config/palette.toml in appearanced's sources documents the format.

        """
    var onlyLight: [String] = [], onlyDark: [String] = []
    let darkByKey = Dictionary(d.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
    let lightKeys = Set(l.map(\.key))
    for p in l {
        out += "\n[\(tomlWrittenKey(p.key))]\n"
        if let q = darkByKey[p.key] {
            out += "light = \"\(try color(p, lightFile))\"\ndark = \"\(try color(q, darkFile))\"\n"
        } else {
            onlyLight.append(p.key)
            out += "default = \"\(try color(p, lightFile))\"  # only in the light bundle\n"
        }
    }
    for q in d where !lightKeys.contains(q.key) {
        onlyDark.append(q.key)
        out += "\n[\(tomlWrittenKey(q.key))]\ndefault = \"\(try color(q, darkFile))\"  # only in the dark bundle\n"
    }
    return ImportResult(toml: out, onlyLight: onlyLight, onlyDark: onlyDark)
}
