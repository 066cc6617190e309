import AppearanceCore
import AppearanceProtocol

/// palette.toml (`config/palette.toml` documents the format): a token is a string (its default) or a table of
/// `default`/`light`/`dark`/`light-high`/`dark-high`; tables of tables group tokens (`fill.bg`). A value
/// starting with `#` is a color, with `/` or `~/` an asset path. Every entry must resolve in every appearance.
public enum PaletteFile {
    static let valueKeys = ["default"] + Variant.all.map(\.key)

    /// Parses palette text. `path` is only used in error messages; `home` expands `~/` in asset paths.
    public static func parse(_ text: String, path: String, home: String) throws(ConfigError) -> Palette {
        let document: TOMLTable
        do { document = try TOML.parse(text) } catch { throw ConfigError(path: path, line: error.line, column: error.column, message: error.message) }
        var palette = Palette()
        try group(document, prefix: "", into: &palette, path: path, home: home)
        return palette
    }

    private static func group(_ table: TOMLTable, prefix: String, into palette: inout Palette,
                              path: String, home: String) throws(ConfigError) {
        for (key, value) in table.entries {
            let name = prefix + key
            if value.string != nil {
                // `name = "#fff"`: a default only.
                let v = try parseValue(value, key: name, path: path, home: home)
                try add(name, PaletteEntry(kind: v.kind, fallback: v.value), line: value.line, into: &palette, path: path)
            } else if let sub = value.table {
                // A table with any of the value keys is a token; any other table is a group.
                if !sub.entries.contains(where: { valueKeys.contains($0.key) }) {
                    guard !sub.isEmpty else {
                        throw ConfigError(path: path, line: value.line, message: "\(name): empty table (expected a token or a group of tokens)")
                    }
                    try group(sub, prefix: name + ".", into: &palette, path: path, home: home)
                } else {
                    try entry(sub, name: name, line: value.line, into: &palette, path: path, home: home)
                }
            } else {
                throw ConfigError(path: path, line: value.line, message:
                    "\(name): expected a color, an asset path or a table of variants, got \(value.typeName)")
            }
        }
    }

    private static func entry(_ table: TOMLTable, name: String, line: Int, into palette: inout Palette,
                              path: String, home: String) throws(ConfigError) {
        var entry: PaletteEntry?
        for (key, value) in table.entries {
            let full = "\(name).\(key)"
            guard valueKeys.contains(key) else {
                if value.table != nil {
                    throw ConfigError(path: path, line: value.line, message:
                        "\(full): a token cannot also be a group (\(name) has values of its own)")
                }
                throw ConfigError(path: path, line: value.line, message:
                    "\(full): unknown variant \(key.debugDescription) (expected \(valueKeys.joined(separator: ", ")))")
            }
            let v = try parseValue(value, key: full, path: path, home: home)
            if let e = entry, e.kind != v.kind {
                throw ConfigError(path: path, line: value.line, message:
                    "\(full): is \(v.kind == .color ? "a color" : "an asset path") but \(name) has \(e.kind == .color ? "colors" : "asset paths"); an entry holds one kind")
            }
            var e = entry ?? PaletteEntry(kind: v.kind)
            if key == "default" { e.fallback = v.value } else { e.variants[Variant(key: key)!] = v.value }
            entry = e
        }
        guard let entry else { return }  // cannot happen: the caller saw a string in it
        try add(name, entry, line: line, into: &palette, path: path)
    }

    private static func add(_ name: String, _ entry: PaletteEntry, line: Int, into palette: inout Palette,
                            path: String) throws(ConfigError) {
        if let problem = problem(name, entry, count: palette.names.count) {
            throw ConfigError(path: path, line: line, message: "\(name): \(problem)")
        }
        palette.set(name, entry)
    }

    /// Why `entry` cannot join a palette of `count` tokens, or nil.
    private static func problem(_ name: String, _ entry: PaletteEntry, count: Int) -> String? {
        if let missing = Variant.all.first(where: { entry.resolve($0) == nil }) {
            return "no value for \(missing.mode.rawValue) (give a default, or both light and dark)"
        }
        if name == Palette.accentToken, entry.kind != .color {
            return "must be a color (the system accent color replaces it)"
        }
        // The bounds every reply that carries the palette is sized for (maxReplyLength).
        if encodedLength(name) > ReplyBounds.tokenName {
            return "a token name is at most \(ReplyBounds.tokenName) bytes (as JSON)"
        }
        for v in Variant.all {
            if case .asset(let p)? = entry.resolve(v)?.value, encodedLength(p) > ReplyBounds.tokenValue {
                return "an asset path is at most \(ReplyBounds.tokenValue) bytes (as JSON)"
            }
        }
        return count >= ReplyBounds.paletteTokens ? "a palette holds at most \(ReplyBounds.paletteTokens) tokens" : nil
    }


    private static func parseValue(_ value: TOMLValue, key: String, path: String,
                                   home: String) throws(ConfigError) -> (kind: PaletteKind, value: PaletteValue) {
        guard let s = value.string else {
            throw ConfigError(path: path, line: value.line, message: "\(key): expected a string, got \(value.typeName)")
        }
        if s.hasPrefix("#") {
            guard let c = Color(parsing: s) else {
                throw ConfigError(path: path, line: value.line, message: "\(key): invalid color \(s.debugDescription) (expected \(Color.syntax))")
            }
            return (.color, .color(c))
        }
        if s.hasPrefix("/") { return (.asset, .asset(s)) }
        if s.hasPrefix("~/") { return (.asset, .asset((home.hasSuffix("/") ? String(home.dropLast()) : home) + s.dropFirst())) }
        throw ConfigError(path: path, line: value.line, message:
            "\(key): expected a color (\(Color.syntax)) or an asset path starting with / or ~/, got \(s.debugDescription)")
    }

    /// Bytes of `s` as a JSON string, without its quotes.
    private static func encodedLength(_ s: String) -> Int { JSON.string(s).bytes.count - 2 }
}
