import AppearanceProtocol

// `[integrations.NAME]` of config.toml, and what an integration says of itself (`NAME describe`).

/// Where one `[integrations.NAME]` table and each of its keys are in the file, for the messages of the check.
public struct IntegrationLines: Equatable, Sendable {
    /// The table's header (or the line that made it).
    public var table: Int
    /// Each key's line.
    public var keys: [String: Int]

    public init(table: Int, keys: [String: Int] = [:]) {
        (self.table, self.keys) = (table, keys)
    }
}

/// What `NAME describe` prints: `what: …`, `touches: …` and `settings: …` (docs/integrations.md).
public struct IntegrationDescription: Equatable, Sendable {
    public var what = "", touches = "", settings = ""
    /// The settings' keys, in the order described; nil when they cannot be read.
    public var keys: [String]?

    /// The keys every integration takes, whatever it describes: the daemon's own.
    public static let daemonKeys = ["app"]

    public init(output: String) {
        for line in output.split(separator: "\n") {
            if line.hasPrefix("what: ") { what = String(line.dropFirst(6)) }
            if line.hasPrefix("touches: ") { touches = String(line.dropFirst(9)) }
            if line.hasPrefix("settings: ") {
                settings = String(line.dropFirst(10))
                keys = Self.keys(of: settings)
            }
        }
    }

    /// `dark (theme for dark, none); light (…)` → ["dark", "light"]; `none` → []; nil if not of that shape.
    static func keys(of settings: String) -> [String]? {
        if settings.trimmingSpaces == "none" { return [] }
        var entries = [""], depth = 0
        for c in settings {
            if c == "(" { depth += 1 } else if c == ")" { depth = max(0, depth - 1) }
            if c == ";", depth == 0 { entries.append("") } else { entries[entries.count - 1].append(c) }
        }
        let keys = entries.map { String($0.trimmingSpaces.prefix { $0 != " " && $0 != "(" }) }
        return keys.allSatisfy(Config.isSettingName) ? keys : nil
    }
}

extension Config {
    /// 1-64 characters of a-z 0-9 -.
    static func isSettingName(_ key: String) -> Bool {
        (1...64).contains(key.utf8.count) && key.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }

    /// What to say to someone who wrote the enabled set into the config.
    static let enablingHint = "integrations are enabled with `appearancectl integrations enable NAME`, not in the config, "
        + "which holds their settings"

    /// `[integrations.NAME]` tables: the settings as text, and where each is in the file.
    static func parseIntegrations(_ table: TOMLTable, path: String) throws(ConfigError)
        -> (settings: [String: [String: String]], lines: [String: IntegrationLines]) {
        var all: [String: [String: String]] = [:]
        var lines: [String: IntegrationLines] = [:]
        for (name, value) in table.entries {
            guard let settings = value.table else {
                throw ConfigError(path: path, line: value.line, message: "integrations.\(name): expected a table of settings "
                    + "([integrations.\(name)]), got \(shown(value)); \(enablingHint)")
            }
            guard IntegrationName.isValid(name) else {
                throw ConfigError(path: path, line: value.line, message: "integrations.\(name): not an integration name (\(IntegrationName.rule))")
            }
            var values: [String: String] = [:]
            var where_ = IntegrationLines(table: value.line)
            for (key, v) in settings.entries {
                let at = "integrations.\(name).\(key)"
                guard isSettingName(key) else {
                    throw ConfigError(path: path, line: v.line, message: "\(at): a setting's name is 1-64 characters of a-z 0-9 -")
                }
                let text: String
                if let s = v.string { text = s } else if let n = v.integer { text = String(n) } else if let b = v.boolean { text = b ? "true" : "false" } else {
                    throw ConfigError(path: path, line: v.line, message: "\(at): expected a string, a whole number or true/false, got \(shown(v))")
                }
                guard !text.utf8.contains(0), text.utf8.count <= 4096 else {
                    throw ConfigError(path: path, line: v.line, message: "\(at): at most 4,096 bytes and no NUL character")
                }
                if key == "app", !AppID.isValid(text) {
                    throw ConfigError(path: path, line: v.line, message: "\(at): not an app id (1-255 characters of A-Z a-z 0-9 . _ - not starting with a dot)")
                }
                values[key] = text
                where_.keys[key] = v.line
            }
            all[name] = values
            lines[name] = where_
        }
        return (all, lines)
    }

    /// The first mistake in `[integrations.NAME]` against the integrations installed (`found`, `described`), in
    /// the file's order; `notFoundHint` ends the message about a NAME not found.

    public func integrationProblem(found: Set<String>, described: [String: IntegrationDescription], path: String,
                                   notFoundHint: String = "") -> ConfigError? {
        let tables = integrations.keys.sorted { (integrationLines[$0]?.table ?? 0, $0) < (integrationLines[$1]?.table ?? 0, $1) }
        for name in tables {
            let place = integrationLines[name]
            guard found.contains(name) else {
                let known = found.sorted().joined(separator: ", ")
                return ConfigError(path: path, line: place?.table, message: "integrations.\(name): no integration named \(name.debugDescription) is installed "
                    + "(found: \(known.isEmpty ? "none" : known))\(notFoundHint)")
            }
            guard let keys = described[name]?.keys else { continue }
            let given = (integrations[name] ?? [:]).keys.sorted { (place?.keys[$0] ?? 0, $0) < (place?.keys[$1] ?? 0, $1) }
            for key in given where !keys.contains(key) && !IntegrationDescription.daemonKeys.contains(key) {
                let listed = keys.isEmpty ? "\(name) has no settings but app" : "\(name)'s settings: \((keys + IntegrationDescription.daemonKeys).joined(separator: ", "))"
                let hint = key == "enabled" || key == "enable" ? "; \(Self.enablingHint)" : ""
                return ConfigError(path: path, line: place?.keys[key] ?? place?.table, message: "integrations.\(name).\(key): unknown setting (\(listed))\(hint)")
            }
        }
        return nil
    }
}
