import AppearanceCore
import AppearanceFormats
import Testing

struct ConfigTests {
    static let path = "/home/u/.config/appearanced/config.toml"

    static func parse(_ text: String) throws(ConfigError) -> Config { try Config.parse(text, path: path) }

    @Test("empty and comment-only files give the defaults", arguments: ["", "\n\n", "# nothing here\n  # really\n"])
    func defaults(text: String) throws {
        #expect(try Self.parse(text) == Config())
        #expect(Config().defaultMode == .light && Config().logLevel == nil)
    }

    @Test("default-mode", arguments: Mode.allCases)
    func defaultMode(mode: Mode) throws {
        #expect(try Self.parse("default-mode = \"\(mode.rawValue)\"\n") == Config(defaultMode: mode))
        #expect(try Self.parse("default-mode = '\(mode.rawValue)' # comment") == Config(defaultMode: mode))
    }

    @Test("log-level", arguments: LogLevel.allCases)
    func logLevel(level: LogLevel) throws {
        #expect(try Self.parse("log-level = \"\(level.name)\"") == Config(logLevel: level))
    }

    @Test("both keys, in any order")
    func bothKeys() throws {
        let expected = Config(defaultMode: .dark, logLevel: .debug)
        #expect(try Self.parse("default-mode = \"dark\"\nlog-level = \"debug\"\n") == expected)
        #expect(try Self.parse("# settings\nlog-level = \"debug\"\n\ndefault-mode = \"dark\"") == expected)
    }

    @Test("portal-backend", arguments: BackendPolicy.allCases)
    func portalBackend(policy: BackendPolicy) throws {
        #expect(try Self.parse("portal-backend = \"\(policy.rawValue)\"") == Config(portalBackend: policy))
        #expect(Config().portalBackend == .auto)
    }

    @Test func schedule() throws {
        let c = try Self.parse("[schedule]\nlatitude = 52.52\nlongitude = 13\nlight-at = \"07:05\"\ndark-at = \"23:59\"\nover-desktop = true\n")
        #expect(c.schedule == Schedule(latitude: 52.52, longitude: 13, lightAt: 425, darkAt: 1439, aboveDesktop: true))
        #expect(try Self.parse("[schedule]\nlight-at = \"00:00\"\ndark-at = \"12:00\"").schedule == Schedule(lightAt: 0, darkAt: 720))
        #expect(try Self.parse("schedule = { latitude = -33.9, longitude = 18.4 }").schedule.latitude == -33.9)
    }

    @Test func automatic() throws {
        #expect(Config().automatic == AutomaticSettings(notifyBefore: nil, postponeBy: 1800))
        #expect(try Self.parse("[automatic]\nnotify-before = \"5m\"").automatic == AutomaticSettings(notifyBefore: 300, postponeBy: 1800))
        #expect(try Self.parse("[automatic]\nnotify-before = \"12h\"\npostpone-by = \"1d\"").automatic == AutomaticSettings(notifyBefore: 43_200, postponeBy: 86_400))
        #expect(try Self.parse("automatic = { postpone-by = \"1h30m\" }").automatic == AutomaticSettings(notifyBefore: nil, postponeBy: 5400))
    }

    @Test("light-at and dark-at take H:MM as well as HH:MM")
    func scheduleSingleDigitHour() throws {
        #expect(try Self.parse("[schedule]\nlight-at = \"7:00\"\ndark-at = \"19:05\"").schedule == Schedule(lightAt: 420, darkAt: 1145))
        #expect(try Self.parse("[schedule]\nlight-at = \"0:00\"\ndark-at = \"9:59\"").schedule == Schedule(lightAt: 0, darkAt: 599))
    }

    static let offsets: [(String, Int64)] = [("-30m", -1800), ("+1h", 3600), ("1h15m", 4500), ("-45s", -45), ("0", 0), ("+6h", 21_600), ("-2h30m10s", -9010)]

    @Test(arguments: offsets) func sunOffsets(_ text: String, _ seconds: Int64) throws {
        let c = try Config.parse("[schedule]\nlatitude = 52\nlongitude = 4\nsunrise-offset = \"\(text)\"\nsunset-offset = \"\(text)\"\n", path: "c.toml")
        #expect(c.schedule.sunriseOffset == seconds && c.schedule.sunsetOffset == seconds)
    }

    static let errors: [(String, String)] = [
        ("hooks = \"yes\"", #"/home/u/.config/appearanced/config.toml:1: hooks: expected true or false, got "yes""#),
        ("darkman-dbus = \"no\"", #"/home/u/.config/appearanced/config.toml:1: darkman-dbus: expected true or false, got "no""#),
        ("hook-timeout = 0", "/home/u/.config/appearanced/config.toml:1: hook-timeout: expected a number of seconds more than 0 and at most 3600, got 0"),
        ("hook-timeout = 7200", "/home/u/.config/appearanced/config.toml:1: hook-timeout: expected a number of seconds more than 0 and at most 3600, got 7200"),
        ("max-connections = 0", "/home/u/.config/appearanced/config.toml:1: max-connections: expected a whole number from 1 to 1000000, got 0"),
        ("max-connections = 1.5", "/home/u/.config/appearanced/config.toml:1: max-connections: expected a whole number from 1 to 1000000, got 1.5"),
        ("[desktop]\nfollow = \"always\"", #"/home/u/.config/appearanced/config.toml:2: desktop.follow: expected "auto", "gnome", "kde" or "off", got "always""#),
        ("[desktop]\ngnome-light = \"light\"", #"/home/u/.config/appearanced/config.toml:2: desktop.gnome-light: expected "default" or "prefer-light", got "light""#),
        ("[desktop]\ngtk-theme-dark = \"\"", #"/home/u/.config/appearanced/config.toml:2: desktop.gtk-theme-dark: expected a theme or color scheme name, got """#),
        ("[desktop]\nkde-dark = \"a;rm\"", #"/home/u/.config/appearanced/config.toml:2: desktop.kde-dark: expected a theme or color scheme name, got "a;rm""#),
        // A name that starts with '-' would reach gsettings or plasma-apply-* as an option.
        ("[desktop]\ngtk-theme-dark = \"--help\"", #"/home/u/.config/appearanced/config.toml:2: desktop.gtk-theme-dark: expected a theme or color scheme name (not starting with '-'), got "--help""#),
        ("[desktop]\nkde-look-and-feel-dark = \"-x\"", #"/home/u/.config/appearanced/config.toml:2: desktop.kde-look-and-feel-dark: expected a look-and-feel package name (not starting with '-'), got "-x""#),
        ("[desktop]\nkde-look-and-feel-dark = \"$(x)\"", #"/home/u/.config/appearanced/config.toml:2: desktop.kde-look-and-feel-dark: expected a look-and-feel package name, got "$(x)""#),
        ("[desktop]\nkde-look-and-feel-light = 1", "/home/u/.config/appearanced/config.toml:2: desktop.kde-look-and-feel-light: expected a look-and-feel package name, got 1"),
        ("[desktop]\nwallpaper = \"x\"", "/home/u/.config/appearanced/config.toml:2: desktop.wallpaper: unknown key (known keys: follow, gnome-light, gtk-theme-light, gtk-theme-dark, icon-theme-light, icon-theme-dark, kde-light, kde-dark, kde-look-and-feel-light, kde-look-and-feel-dark)"),
        ("desktop = \"gnome\"", #"/home/u/.config/appearanced/config.toml:1: desktop: expected a table ([desktop]), got "gnome""#),
        ("[schedule]\nlatitude = 91\nlongitude = 0", "/home/u/.config/appearanced/config.toml:2: schedule.latitude: 91.0 is outside -90…90"),
        ("[schedule]\nlatitude = 10\nlongitude = -180.5", "/home/u/.config/appearanced/config.toml:3: schedule.longitude: -180.5 is outside -180…180"),
        ("[schedule]\nlatitude = \"north\"", #"/home/u/.config/appearanced/config.toml:2: schedule.latitude: expected a number of degrees, got "north""#),
        ("[schedule]\nlatitude = 10", "/home/u/.config/appearanced/config.toml:2: schedule: longitude is missing (the sun needs both latitude and longitude)"),
        ("[schedule]\nlight-at = \"7:0\"\ndark-at = \"19:00\"", #"/home/u/.config/appearanced/config.toml:2: schedule.light-at: invalid time "7:0", expected "HH:MM" from 00:00 to 23:59"#),
        ("[schedule]\nlight-at = \"007:00\"\ndark-at = \"19:00\"", #"/home/u/.config/appearanced/config.toml:2: schedule.light-at: invalid time "007:00", expected "HH:MM" from 00:00 to 23:59"#),
        ("[schedule]\nlight-at = 07:00\ndark-at = \"19:00\"", #"/home/u/.config/appearanced/config.toml:2: schedule.light-at: write the time in quotes: "07:00""#),
        ("[schedule]\nlight-at = \"07:00\"\n\ndark-at = 19:30 # evening", #"/home/u/.config/appearanced/config.toml:4: schedule.dark-at: write the time in quotes: "19:30""#),
        ("schedule = { light-at = 07:00, dark-at = \"19:00\" }", #"/home/u/.config/appearanced/config.toml:1: schedule.light-at: write the time in quotes: "07:00""#),
        ("[schedule]\nlight-at = \"07:00\"\ndark-at = \"24:00\"", #"/home/u/.config/appearanced/config.toml:3: schedule.dark-at: invalid time "24:00", expected "HH:MM" from 00:00 to 23:59"#),
        ("[schedule]\ndark-at = \"19:00\"", "/home/u/.config/appearanced/config.toml:2: schedule: light-at is missing (without latitude and longitude both times are needed)"),
        ("[schedule]\nlight-at = \"07:00\"\ndark-at = \"07:00\"", "/home/u/.config/appearanced/config.toml:3: schedule: light-at and dark-at are the same time"),
        ("[schedule]\nsunset = \"19:00\"", "/home/u/.config/appearanced/config.toml:2: schedule.sunset: unknown key (known keys: latitude, longitude, location, light-at, dark-at, sunrise-offset, sunset-offset, over-desktop)"),
        ("[schedule]\nlatitude = 52\nlongitude = 4\nsunrise-offset = \"+7h\"", #"/home/u/.config/appearanced/config.toml:4: schedule.sunrise-offset: invalid offset "+7h", expected a signed duration such as "-30m", "+1h" or "+1h15m", at most 6 hours either way"#),
        ("[schedule]\nlatitude = 52\nlongitude = 4\nsunset-offset = \"30m1h\"", #"/home/u/.config/appearanced/config.toml:4: schedule.sunset-offset: invalid offset "30m1h", expected a signed duration such as "-30m", "+1h" or "+1h15m", at most 6 hours either way"#),
        ("[schedule]\nlatitude = 52\nlongitude = 4\nsunset-offset = -30", #"/home/u/.config/appearanced/config.toml:4: schedule.sunset-offset: expected a signed duration such as "-30m", "+1h" or "+1h15m", at most 6 hours either way, got -30"#),
        ("[schedule]\nlight-at = \"07:00\"\ndark-at = \"19:00\"\nsunset-offset = \"-30m\"", "/home/u/.config/appearanced/config.toml:4: schedule: sunset-offset moves the sun's event: it needs latitude and longitude"),
        ("[schedule]\nover-desktop = true", "/home/u/.config/appearanced/config.toml:2: schedule: over-desktop needs latitude/longitude or light-at/dark-at"),
        ("schedule = \"sunset\"", #"/home/u/.config/appearanced/config.toml:1: schedule: expected a table ([schedule]), got "sunset""#),
        ("[automatic]\nnotify-before = \"5\"", #"/home/u/.config/appearanced/config.toml:2: automatic.notify-before: invalid duration "5", expected a duration such as "5m", "30m" or "1h30m" (units d, h, m, s), from 1s to 12h"#),
        ("[automatic]\nnotify-before = \"5 minutes\"", #"/home/u/.config/appearanced/config.toml:2: automatic.notify-before: invalid duration "5 minutes", expected a duration such as "5m", "30m" or "1h30m" (units d, h, m, s), from 1s to 12h"#),
        ("[automatic]\nnotify-before = \"0m\"", #"/home/u/.config/appearanced/config.toml:2: automatic.notify-before: invalid duration "0m", expected a duration such as "5m", "30m" or "1h30m" (units d, h, m, s), from 1s to 12h"#),
        ("[automatic]\nnotify-before = \"12h1s\"", #"/home/u/.config/appearanced/config.toml:2: automatic.notify-before: invalid duration "12h1s", expected a duration such as "5m", "30m" or "1h30m" (units d, h, m, s), from 1s to 12h"#),
        ("[automatic]\nnotify-before = 300", #"/home/u/.config/appearanced/config.toml:2: automatic.notify-before: expected a duration such as "5m", "30m" or "1h30m" (units d, h, m, s), from 1s to 12h, got 300"#),
        ("[automatic]\npostpone-by = \"-30m\"", #"/home/u/.config/appearanced/config.toml:2: automatic.postpone-by: invalid duration "-30m", expected a duration such as "5m", "30m" or "1h30m" (units d, h, m, s), from 1s to 24h"#),
        ("[automatic]\npostpone-by = \"1d1s\"", #"/home/u/.config/appearanced/config.toml:2: automatic.postpone-by: invalid duration "1d1s", expected a duration such as "5m", "30m" or "1h30m" (units d, h, m, s), from 1s to 24h"#),
        ("[automatic]\nnotify = \"5m\"", "/home/u/.config/appearanced/config.toml:2: automatic.notify: unknown key (known keys: notify-before, postpone-by, wait-for-idle)"),
        ("automatic = \"5m\"", #"/home/u/.config/appearanced/config.toml:1: automatic: expected a table ([automatic]), got "5m""#),
        ("portal-backend = \"yes\"",
         #"/home/u/.config/appearanced/config.toml:1: portal-backend: expected "auto", "on" or "off", got "yes""#),
        ("portal-backend = false", #"/home/u/.config/appearanced/config.toml:1: portal-backend: expected "auto", "on" or "off", got false"#),
        ("# line 1\n\ndefault-mode = \"blue\"",
         #"/home/u/.config/appearanced/config.toml:3: default-mode: expected "light" or "dark", got "blue""#),
        ("default-mode = \"Dark\"", #"/home/u/.config/appearanced/config.toml:1: default-mode: expected "light" or "dark", got "Dark""#),
        ("default-mode = true", #"/home/u/.config/appearanced/config.toml:1: default-mode: expected "light" or "dark", got true"#),
        ("default-mode = [\"dark\"]", #"/home/u/.config/appearanced/config.toml:1: default-mode: expected "light" or "dark", got an array"#),
        ("\n[default-mode]\n", #"/home/u/.config/appearanced/config.toml:2: default-mode: expected "light" or "dark", got a table"#),
        ("log-level = \"verbose\"",
         #"/home/u/.config/appearanced/config.toml:1: log-level: expected one of "error", "warning", "notice", "info" or "debug", got "verbose""#),
        ("log-level = 7", #"/home/u/.config/appearanced/config.toml:1: log-level: expected one of "error", "warning", "notice", "info" or "debug", got 7"#),
        ("default-mode = \"dark\"\n\n\n\ndefualt-mode = \"dark\"",
         #"/home/u/.config/appearanced/config.toml:5: unknown key "defualt-mode" (known keys: default-mode, log-level, palette, portal-backend, darkman-dbus, hooks, hook-timeout, max-connections, schedule, desktop, integrations, automatic, light-sensor, power)"#),
        ("[colors]\nbackground = \"#000\"", #"/home/u/.config/appearanced/config.toml:1: unknown table "colors" (known keys: default-mode, log-level, palette, portal-backend, darkman-dbus, hooks, hook-timeout, max-connections, schedule, desktop, integrations, automatic, light-sensor, power)"#),
        ("default-mode = \"dark\"\ndefault-mode = \"light\"",
         #"/home/u/.config/appearanced/config.toml:2:1: "default-mode" is already defined as a string on line 1"#),
        ("default-mode \"dark\"", #"/home/u/.config/appearanced/config.toml:1:14: expected '=' after key "default-mode", found '"'"#),
        ("default-mode = dark", #"/home/u/.config/appearanced/config.toml:1:16: expected a value, found "dark" (strings must be quoted)"#),
        ("\ndefault-mode = 2024-01-01", "/home/u/.config/appearanced/config.toml:2: dates are not supported"),
    ]

    @Test("errors name the file, the line and the key", arguments: errors)
    func error(text: String, expected: String) {
        do {
            let config = try Self.parse(text)
            Issue.record("parsed as \(config)")
        } catch {
            #expect(error.description == expected)
            #expect(error.path == Self.path && error.line != nil)
        }
    }

    // MARK: The shipped config

    static let shipped = repository + "/config/appearanced.toml"

    @Test("config/appearanced.toml parses to the defaults")
    func shippedIsDefault() throws {
        let text = try configText(try #require(fileBytes(Self.shipped)), path: Self.shipped)
        #expect(try Config.parse(text, path: Self.shipped) == Config())
    }

    @Test("config/appearanced.toml documents every key, and its commented-out settings are valid")
    func shippedDocumentsEveryKey() throws {
        let text = try configText(try #require(fileBytes(Self.shipped)), path: Self.shipped)
        var uncommented: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let setting = line.drop { $0 == "#" || $0 == " " }
            let isSetting = (Config.knownKeys + Config.scheduleKeys + Config.desktopKeys + Config.automaticKeys + Config.lightSensorKeys + Config.powerKeys).contains { setting.hasPrefix("\($0) = ") || setting == "[\($0)]" }
            uncommented.append(isSetting ? String(setting) : String(line))
        }
        for key in Config.knownKeys + Config.scheduleKeys + Config.desktopKeys + Config.automaticKeys + Config.lightSensorKeys + Config.powerKeys {
            #expect(uncommented.contains { $0.hasPrefix("\(key) = ") || $0 == "[\(key)]" }, "no setting for \(key)")
        }
        // location replaces latitude/longitude (both at once is an error): each is valid without the other.
        _ = try Config.parse(uncommented.filter { !$0.hasPrefix("location = ") }.joined(separator: "\n"), path: Self.shipped)
        _ = try Config.parse(uncommented.filter { !$0.hasPrefix("latitude = ") && !$0.hasPrefix("longitude = ") }.joined(separator: "\n"), path: Self.shipped)
    }

    @Test("darkman-dbus: on by default, off with false")
    func darkmanDBus() throws {
        #expect(Config().darkmanDBus)
        #expect(try Self.parse("darkman-dbus = false\n").darkmanDBus == false)
        #expect(try Self.parse("darkman-dbus = true\n") == Config())
    }
}
