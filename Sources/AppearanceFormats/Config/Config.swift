import AppearanceCore
import AppearanceProtocol

/// The settings in `config.toml`; the repository's `config/appearanced.toml` documents every key.
public struct Config: Equatable, Sendable {
    /// The mode when the desktop has no preference or there is no portal.
    public var defaultMode: Mode = .light
    /// The log level the config asks for; `--log-level` wins over it.
    public var logLevel: LogLevel? = nil
    /// `palette = "PATH"`: the palette file as written (`Paths.palette(for:)` resolves it); nil: the default.
    public var palette: String? = nil
    /// `portal-backend`: whether appearanced serves the XDG desktop portal's Settings.
    public var portalBackend: BackendPolicy = .auto
    /// `darkman-dbus`: serve darkman's D-Bus interface (`nl.whynothugo.darkman`) where darkman does not hold it.
    public var darkmanDBus = true
    /// `[schedule]`: light by day, dark by night, where the desktop gives no answer (or above it).
    public var schedule = Schedule()
    /// `[schedule] location = "geoclue"`: the schedule's place comes from GeoClue.
    public var scheduleFromGeoClue = false
    /// `hooks`: run the hook directories on every change of the mode.
    public var hooks = true
    /// `hook-timeout`: seconds a hook may run before its process group is stopped.
    public var hookTimeout: Double = 30
    /// `max-connections`: clients beyond this are refused with an error; nil: the descriptor limit less 64.
    public var maxConnections: Int? = nil
    /// `[integrations.NAME]`: each integration's settings (key → value as text).
    public var integrations: [String: [String: String]] = [:]
    /// Where each `[integrations.NAME]` and its keys are in the file (`integrationProblem`'s messages).
    public var integrationLines: [String: IntegrationLines] = [:]
    /// `[desktop]`: whether appearanced drives GNOME's or KDE's own light/dark setting.
    public var desktop = DesktopSettings()
    /// `[automatic]`: the user's say over the automatic changes (a notice before each, a wait for idle).
    public var automatic = AutomaticSettings()
    /// `[light-sensor]`: the mode by the room's light; nil: the sensor is not used.
    public var lightSensor: LightSensorSettings? = nil
    /// `[power] on-battery`: the mode while on battery; nil: the power source is not followed.
    public var powerOnBattery: Mode? = nil

    public init(defaultMode: Mode = .light, logLevel: LogLevel? = nil, palette: String? = nil,
                portalBackend: BackendPolicy = .auto) {
        (self.defaultMode, self.logLevel, self.palette, self.portalBackend) = (defaultMode, logLevel, palette, portalBackend)
    }

    public static let knownKeys = ["default-mode", "log-level", "palette", "portal-backend", "darkman-dbus", "hooks", "hook-timeout", "max-connections", "schedule", "desktop", "integrations", "automatic", "light-sensor", "power"]
    public static let desktopKeys = ["follow", "gnome-light"] + DesktopSettings.names.map(\.key)
    /// The keys whose value is a table of settings (`[desktop]`).
    static let tableKeys = ["desktop", "automatic", "light-sensor", "power", "schedule"]
    public static let scheduleKeys = ["latitude", "longitude", "location", "light-at", "dark-at", "sunrise-offset", "sunset-offset", "over-desktop"]
    /// The values `[schedule] location` takes.
    public static let locationSources = ["geoclue"]

    /// Reads a config from its text. `path` is only used in error messages.
    public static func parse(_ text: String, path: String) throws(ConfigError) -> Config {
        let document: TOMLTable
        do {
            document = try TOML.parse(text)
        } catch {
            if error.message == "times are not supported", let hint = unquotedTime(text, line: error.line) {
                throw ConfigError(path: path, line: error.line, message: hint)
            }
            throw ConfigError(path: path, line: error.line, column: error.column, message: error.message)
        }
        var config = Config()
        for (key, value) in document.entries { try config.set(key, value, path: path) }
        return config
    }

    /// Sets one top-level key (not a closure in `parse`'s loop: Swift 6.3.1's optimizer crashed on that).
    private mutating func set(_ key: String, _ value: TOMLValue, path: String) throws(ConfigError) {
        if Self.tableKeys.contains(key), value.table == nil { throw .expected("a table ([\(key)])", key, value, path) }
        let table = value.table ?? TOMLTable(origin: .inline)
        switch key {
        case "default-mode":
            guard let mode = value.string.flatMap(Mode.init(rawValue:)) else {
                throw .expected(quotedList(Mode.allCases.map(\.rawValue), last: "or"), key, value, path)
            }
            defaultMode = mode
        case "log-level":
            guard let level = value.string.flatMap(LogLevel.init(name:)) else {
                throw .expected("one of " + quotedList(LogLevel.allCases.map(\.name), last: "or"), key, value, path)
            }
            logLevel = level
        case "palette":
            guard let p = value.string, !p.isEmpty else { throw .expected("a path", key, value, path) }
            palette = p
        case "portal-backend":
            guard let policy = value.string.flatMap(BackendPolicy.init(rawValue:)) else {
                throw .expected(quotedList(BackendPolicy.allCases.map(\.rawValue), last: "or"), key, value, path)
            }
            portalBackend = policy
        case "hooks", "darkman-dbus":
            guard let b = value.boolean else { throw .expected("true or false", key, value, path) }
            if key == "hooks" { hooks = b } else { darkmanDBus = b }
        case "hook-timeout":
            guard let v = value.float ?? value.integer.map(Double.init), v.isFinite, v > 0, v <= 3600 else {
                throw .expected("a number of seconds more than 0 and at most 3600", key, value, path)
            }
            hookTimeout = v
        case "max-connections":
            guard let n = value.integer, n >= 1, n <= 1_000_000 else {
                throw .expected("a whole number from 1 to 1000000", key, value, path)
            }
            maxConnections = Int(n)
        case "desktop":
            for (key, v) in table.entries {
                let at = "desktop.\(key)"
                if key == "follow" {
                    guard let f = v.string, ["auto", "gnome", "kde", "off"].contains(f) else {
                        throw .expected(#""auto", "gnome", "kde" or "off""#, at, v, path)
                    }
                    desktop.follow = f
                } else if key == "gnome-light" {
                    guard let g = v.string, ["default", "prefer-light"].contains(g) else {
                        throw .expected(#""default" or "prefer-light""#, at, v, path)
                    }
                    desktop.gnomeLight = g
                } else if let set = DesktopSettings.names.first(where: { $0.key == key })?.set {
                    let what = key.hasPrefix("kde-look-and-feel") ? "a look-and-feel package name" : "a theme or color scheme name"
                    guard let name = v.string, !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.+ ".contains($0) }) else {
                        throw .expected(what, at, v, path)
                    }
                    // It is passed as an argument to gsettings or plasma-apply-*: never as an option.
                    guard !name.hasPrefix("-") else { throw .expected(what + " (not starting with '-')", at, v, path) }
                    set(&desktop, name)
                } else {
                    throw .unknown(at, v, known: Self.desktopKeys, path)
                }
            }
        case "integrations":
            guard let table = value.table else {
                throw ConfigError(path: path, line: value.line, message: "integrations: expected tables of settings ([integrations.NAME]), "
                    + "got \(shown(value)); \(Self.enablingHint)")
            }
            (integrations, integrationLines) = try Self.parseIntegrations(table, path: path)
        case "automatic": automatic = try Self.parseAutomatic(table, path: path)
        case "light-sensor": lightSensor = try Self.parseLightSensor(table, line: value.line, path: path)
        case "power": powerOnBattery = try Self.parsePower(table, path: path)
        case "schedule": (schedule, scheduleFromGeoClue) = try Self.parseSchedule(table, line: value.line, path: path)
        default:
            let what = value.table == nil ? "key" : "table"
            throw ConfigError(path: path, line: value.line, message:
                "unknown \(what) \(key.debugDescription) (known keys: \(Self.knownKeys.joined(separator: ", ")))")
        }
    }
}

/// `[desktop]` of config.toml: whether and how appearanced drives GNOME's or KDE's own light/dark setting.
public struct DesktopSettings: Equatable, Sendable {
    public var follow = "auto"
    /// What GNOME's light is written as: "default" (GNOME Settings' Light) or "prefer-light".
    public var gnomeLight = "default"
    public var gtkThemeLight: String?
    public var gtkThemeDark: String?
    public var iconThemeLight: String?
    public var iconThemeDark: String?
    public var kdeLight = "BreezeLight"
    public var kdeDark = "BreezeDark"
    /// Look-and-feel packages (`org.kde.breezedark.desktop`), applied instead of the color scheme.
    public var kdeLookAndFeelLight: String?
    public var kdeLookAndFeelDark: String?

    public init() {}

    /// The theme, color scheme and look-and-feel names, by key.
    static let names: [(key: String, set: @Sendable (inout DesktopSettings, String) -> Void)] = [
        ("gtk-theme-light", { $0.gtkThemeLight = $1 }), ("gtk-theme-dark", { $0.gtkThemeDark = $1 }),
        ("icon-theme-light", { $0.iconThemeLight = $1 }), ("icon-theme-dark", { $0.iconThemeDark = $1 }),
        ("kde-light", { $0.kdeLight = $1 }), ("kde-dark", { $0.kdeDark = $1 }),
        ("kde-look-and-feel-light", { $0.kdeLookAndFeelLight = $1 }), ("kde-look-and-feel-dark", { $0.kdeLookAndFeelDark = $1 }),
    ]
}

/// A config that cannot be used: `PATH:LINE: KEY: what is wrong`, or `PATH: what is wrong`.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var line: Int?
    public var column: Int?
    public var message: String

    public init(path: String, line: Int? = nil, column: Int? = nil, message: String) {
        (self.path, self.line, self.column, self.message) = (path, line, column, message)
    }

    public var description: String {
        var place = path
        if let line { place += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        return "\(place): \(message)"
    }
}

extension ConfigError {
    /// `KEY: expected WHAT, got VALUE`, at the value's line.
    static func expected(_ what: String, _ key: String, _ value: TOMLValue, _ path: String) -> ConfigError {
        ConfigError(path: path, line: value.line, message: "\(key): expected \(what), got \(shown(value))")
    }

    /// `KEY: unknown key (known keys: …)`, at the value's line.
    static func unknown(_ key: String, _ value: TOMLValue, known: [String], _ path: String) -> ConfigError {
        ConfigError(path: path, line: value.line,
                    message: "\(key): unknown key (known keys: \(known.joined(separator: ", ")))")
    }
}

extension Config {
    /// A duration key: a string `parseDuration` reads (or "0"/"0s" with `zero`), at most `limit` seconds.
    static func duration(_ key: String, _ v: TOMLValue, expected: String, limit: Int64, zero: Bool = false,
                         path: String) throws(ConfigError) -> Int64 {
        guard let text = v.string else { throw .expected(expected, key, v, path) }
        guard let seconds = zero && (text == "0s" || text == "0") ? 0 : parseDuration(text), seconds <= limit else {
            throw ConfigError(path: path, line: v.line,
                              message: "\(key): invalid duration \(text.debugDescription), expected \(expected)")
        }
        return seconds
    }
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
func quotedList(_ words: [String], last: String) -> String {
    let quoted = words.map(\.debugDescription)
    return quoted.count < 2 ? quoted.joined() : quoted.dropLast().joined(separator: ", ") + " \(last) " + quoted.last!
}

/// A wrong value in "expected X, got Y": a string, number or boolean as written, else its type.
func shown(_ value: TOMLValue) -> String {
    if let s = value.string { return s.debugDescription }
    if let n = value.integer { return "\(n)" }
    if let x = value.float { return "\(x)" }
    if let b = value.boolean { return b ? "true" : "false" }
    return value.typeName
}

/// A file's bytes as text, or an error naming `path` and the line of the first byte sequence that is not UTF-8.

public func configText(_ bytes: [UInt8], path: String) throws(ConfigError) -> String {
    guard let text = String(validating: bytes, as: UTF8.self) else {
        throw ConfigError(path: path, line: invalidUTF8Line(bytes), message: "not valid UTF-8 text")
    }
    return text
}

/// The line of the first byte sequence that is not UTF-8.
private func invalidUTF8Line(_ bytes: [UInt8]) -> Int {
    var line = 1
    var parser = Unicode.UTF8.ForwardParser()
    var iterator = bytes.makeIterator()
    while case .valid(let scalar) = parser.parseScalar(from: &iterator) {
        if scalar.elementsEqual([0x0A]) { line += 1 }
    }
    return line
}
