import AppearanceCore
import AppearanceProtocol

/// The settings in `config.toml` (`$XDG_CONFIG_HOME/appearanced/config.toml` or `--config PATH`).
/// The repository's `config/appearanced.toml` documents every key at its default.
public struct Config: Equatable, Sendable {
    /// The mode when the desktop has no preference or there is no portal.
    public var defaultMode: Mode = .light
    /// The log level the config asks for; `--log-level` wins over it.
    public var logLevel: LogLevel? = nil
    /// `palette = "PATH"`: the palette file as written (absolute, `~/…`, or relative to the config file's
    /// directory); nil means `$XDG_CONFIG_HOME/appearanced/palette.toml`. `Paths.palette(for:)` resolves it.
    public var palette: String? = nil
    /// `portal-backend`: whether appearanced serves the XDG desktop portal's Settings (`auto`: only where
    /// no other backend provides `color-scheme` for the current desktop).
    public var portalBackend: BackendPolicy = .auto
    /// `darkman-dbus`: serve darkman's D-Bus interface (`nl.whynothugo.darkman`) where darkman does not hold it.
    public var darkmanDBus = true
    /// `[schedule]`: light by day, dark by night, where the desktop gives no answer (or above it).
    public var schedule = Schedule()
    /// `[schedule] location = "geoclue"`: the schedule's place comes from GeoClue (the last fix kept in the
    /// state directory), instead of `latitude`/`longitude`.
    public var scheduleFromGeoClue = false
    /// `hooks`: run the hook directories on every change of the mode.
    public var hooks = true
    /// `hook-timeout`: seconds a hook may run before its process group is stopped.
    public var hookTimeout: Double = 30
    /// `max-connections`: clients beyond this are refused with an error; nil: the descriptor limit less 64.
    public var maxConnections: Int? = nil
    /// `[integrations.NAME]`: each integration's settings (key → value as text), given to it as
    /// `APPEARANCE_OPT_KEY`; `app` is the app id whose mode it is given (default: its name).
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

    /// Sets one top-level key. A separate function (not a closure in `parse`'s loop): the optimizer of
    /// Swift 6.3.1 crashed on the closure form in release builds.
    private mutating func set(_ key: String, _ value: TOMLValue, path: String) throws(ConfigError) {
        let fail = { (what: String) in ConfigError(path: path, line: value.line, message: "\(key): expected \(what), got \(shown(value))") }
        switch key {
        case "default-mode":
            guard let mode = value.string.flatMap(Mode.init(rawValue:)) else { throw fail(quotedList(Mode.allCases.map(\.rawValue), last: "or")) }
            defaultMode = mode
        case "log-level":
            guard let level = value.string.flatMap(LogLevel.init(name:)) else {
                throw fail("one of " + quotedList(LogLevel.allCases.map(\.name), last: "or"))
            }
            logLevel = level
        case "palette":
            guard let p = value.string, !p.isEmpty else { throw fail("a path") }
            palette = p
        case "portal-backend":
            guard let policy = value.string.flatMap(BackendPolicy.init(rawValue:)) else {
                throw fail(quotedList(BackendPolicy.allCases.map(\.rawValue), last: "or"))
            }
            portalBackend = policy
        case "hooks", "darkman-dbus":
            guard let b = value.boolean else { throw fail("true or false") }
            if key == "hooks" { hooks = b } else { darkmanDBus = b }
        case "hook-timeout":
            guard let v = value.float ?? value.integer.map(Double.init), v.isFinite, v > 0, v <= 3600 else {
                throw fail("a number of seconds more than 0 and at most 3600")
            }
            hookTimeout = v
        case "max-connections":
            guard let n = value.integer, n >= 1, n <= 1_000_000 else { throw fail("a whole number from 1 to 1000000") }
            maxConnections = Int(n)
        case "desktop":
            guard let table = value.table else { throw fail("a table ([desktop])") }
            for (key, v) in table.entries {
                let bad = { (what: String) in ConfigError(path: path, line: v.line, message: "desktop.\(key): expected \(what), got \(shown(v))") }
                if key == "follow" {
                    guard let f = v.string, ["auto", "gnome", "kde", "off"].contains(f) else { throw bad(#""auto", "gnome", "kde" or "off""#) }
                    desktop.follow = f
                } else if key == "gnome-light" {
                    guard let g = v.string, ["default", "prefer-light"].contains(g) else { throw bad(#""default" or "prefer-light""#) }
                    desktop.gnomeLight = g
                } else if let set = DesktopSettings.names.first(where: { $0.key == key })?.set {
                    let what = key.hasPrefix("kde-look-and-feel") ? "a look-and-feel package name" : "a theme or color scheme name"
                    guard let name = v.string, !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-_.+ ".contains($0) }) else {
                        throw bad(what)
                    }
                    // It is passed as an argument to gsettings or plasma-apply-*: never as an option.
                    guard !name.hasPrefix("-") else { throw bad(what + " (not starting with '-')") }
                    set(&desktop, name)
                } else {
                    throw ConfigError(path: path, line: v.line, message: "desktop.\(key): unknown key (known keys: \(Self.desktopKeys.joined(separator: ", ")))")
                }
            }
        case "integrations":
            guard let table = value.table else {
                throw ConfigError(path: path, line: value.line, message: "integrations: expected tables of settings ([integrations.NAME]), "
                    + "got \(shown(value)); \(Self.enablingHint)")
            }
            (integrations, integrationLines) = try Self.parseIntegrations(table, path: path)
        case "automatic":
            guard let table = value.table else { throw fail("a table ([automatic])") }
            automatic = try Self.parseAutomatic(table, path: path)
        case "light-sensor":
            guard let table = value.table else { throw fail("a table ([light-sensor])") }
            lightSensor = try Self.parseLightSensor(table, line: value.line, path: path)
        case "power":
            guard let table = value.table else { throw fail("a table ([power])") }
            powerOnBattery = try Self.parsePower(table, path: path)
        case "schedule":
            guard let table = value.table else { throw fail("a table ([schedule])") }
            (schedule, scheduleFromGeoClue) = try Self.parseSchedule(table, line: value.line, path: path)
        default:
            let what = value.table == nil ? "key" : "table"
            throw ConfigError(path: path, line: value.line, message:
                "unknown \(what) \(key.debugDescription) (known keys: \(Self.knownKeys.joined(separator: ", ")))")
        }
    }
}

/// `[desktop]` of config.toml: whether and how appearanced drives GNOME's or KDE's own light/dark setting
/// (the daemon's DesktopFollower acts on it).
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
    /// Look-and-feel packages (`org.kde.breezedark.desktop`): for a mode that has one, it is applied instead
    /// of the color scheme (a look-and-feel package brings its own color scheme).
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

/// A config that cannot be used. `description` reads `PATH:LINE: KEY: what is wrong`, or `PATH: what is wrong`
/// for a file that cannot be read.
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

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
func quotedList(_ words: [String], last: String) -> String {
    let quoted = words.map(\.debugDescription)
    return quoted.count < 2 ? quoted.joined() : quoted.dropLast().joined(separator: ", ") + " \(last) " + quoted.last!
}

/// How a wrong value is shown in "expected X, got Y": strings, numbers and booleans as written, arrays and
/// tables by their type.
func shown(_ value: TOMLValue) -> String {
    if let s = value.string { return s.debugDescription }
    if let n = value.integer { return "\(n)" }
    if let x = value.float { return "\(x)" }
    if let b = value.boolean { return b ? "true" : "false" }
    return value.typeName
}

/// A file's bytes as text for the config and palette readers: an error naming `path` and the line of the first
/// byte sequence that is not UTF-8. Reading the file is the caller's (the daemon's `readTextFile`).
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
