import AppearanceCore

/// `[schedule]` of config.toml: the place, the fixed times, the offsets, and how they go together.
extension Config {
    /// `[schedule]`: the schedule, and whether its place comes from GeoClue.
    public static func parseSchedule(_ table: TOMLTable, line: Int, path: String) throws(ConfigError) -> (Schedule, geoclue: Bool) {
        var s = Schedule()
        var seen: [String: Int] = [:]
        var geoclue = false
        for (key, v) in table.entries {
            seen[key] = v.line
            if key == "location" {
                let expected = "expected " + quotedList(locationSources, last: "or") + " (or latitude and longitude instead of location)"
                guard let text = v.string else { throw ConfigError(path: path, line: v.line, message: "schedule.location: \(expected), got \(shown(v))") }
                guard locationSources.contains(text) else {
                    throw ConfigError(path: path, line: v.line, message: "schedule.location: unknown location \(text.debugDescription), \(expected)")
                }
                geoclue = true
            } else if let message = Self.apply(key, v, to: &s) {
                throw ConfigError(path: path, line: v.line, message: "schedule.\(key): \(message)")
            }
        }
        if geoclue, let typed = seen["latitude"] ?? seen["longitude"] {
            throw ConfigError(path: path, line: max(typed, seen["location"] ?? typed), message:
                "schedule: location = \"geoclue\" and latitude/longitude both give the place: keep one (a typed latitude and longitude, or location)")
        }
        if !geoclue, (s.latitude == nil) != (s.longitude == nil) {
            let missing = s.latitude == nil ? "latitude" : "longitude"
            throw ConfigError(path: path, line: seen["latitude"] ?? seen["longitude"] ?? line,
                              message: "schedule: \(missing) is missing (the sun needs both latitude and longitude)")
        }
        if !geoclue, s.latitude == nil, (s.lightAt == nil) != (s.darkAt == nil) {
            throw ConfigError(path: path, line: seen["light-at"] ?? seen["dark-at"] ?? line,
                              message: "schedule: \(s.lightAt == nil ? "light-at" : "dark-at") is missing (without latitude and longitude both times are needed)")
        }
        if let l = s.lightAt, l == s.darkAt {
            throw ConfigError(path: path, line: seen["dark-at"] ?? line, message: "schedule: light-at and dark-at are the same time")
        }
        // With GeoClue the place comes later: the checks below are for no place at all.
        if geoclue { return (s, true) }
        if s.latitude == nil, s.sunriseOffset != 0 || s.sunsetOffset != 0 {
            let key = s.sunriseOffset != 0 ? "sunrise-offset" : "sunset-offset"
            throw ConfigError(path: path, line: seen[key] ?? line, message: "schedule: \(key) moves the sun's event: it needs latitude and longitude")
        }
        if s.isEmpty, s.aboveDesktop {
            throw ConfigError(path: path, line: seen["over-desktop"] ?? line, message: "schedule: over-desktop needs latitude/longitude or light-at/dark-at")
        }
        return (s, false)
    }

    /// Sets one `[schedule]` key; the problem with its value, or nil.
    private static func apply(_ key: String, _ value: TOMLValue, to s: inout Schedule) -> String? {
        switch key {
        case "latitude", "longitude":
            let limit = key == "latitude" ? 90.0 : 180.0
            guard let v = value.float ?? value.integer.map(Double.init) else { return "expected a number of degrees, got \(shown(value))" }
            guard v.isFinite, abs(v) <= limit else { return "\(v) is outside -\(Int(limit))…\(Int(limit))" }
            if key == "latitude" { s.latitude = v } else { s.longitude = v }
        case "light-at", "dark-at":
            guard let text = value.string else { return "expected a time \"HH:MM\", got \(shown(value))" }
            guard let minutes = Self.minutes(text) else { return "invalid time \(text.debugDescription), expected \"HH:MM\" from 00:00 to 23:59" }
            if key == "light-at" { s.lightAt = minutes } else { s.darkAt = minutes }
        case "sunrise-offset", "sunset-offset":
            let expected = "a signed duration such as \"-30m\", \"+1h\" or \"+1h15m\", at most 6 hours either way"
            guard let text = value.string else { return "expected \(expected), got \(shown(value))" }
            guard let seconds = Self.offset(text) else { return "invalid offset \(text.debugDescription), expected \(expected)" }
            if key == "sunrise-offset" { s.sunriseOffset = seconds } else { s.sunsetOffset = seconds }
        case "over-desktop":
            guard let b = value.boolean else { return "expected true or false, got \(shown(value))" }
            s.aboveDesktop = b
        default:
            return "unknown key (known keys: \(scheduleKeys.joined(separator: ", ")))"
        }
        return nil
    }

    /// "-30m", "+1h", "1h15m", "-45s", "0": seconds, at most 6 hours either way, or nil.
    static func offset(_ text: String) -> Int64? {
        var rest = Substring(text)
        var sign: Int64 = 1
        if let first = rest.first, first == "+" || first == "-" {
            sign = first == "-" ? -1 : 1
            rest = rest.dropFirst()
        }
        if rest == "0" { return 0 }
        guard !rest.isEmpty else { return nil }
        var total: Int64 = 0
        var units = ["h": Int64(3600), "m": 60, "s": 1]
        var order = ["h", "m", "s"]
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 6, let n = Int64(digits) else { return nil }
            rest = rest.dropFirst(digits.count)
            guard let unit = rest.first.map(String.init), let i = order.firstIndex(of: unit), let factor = units[unit] else { return nil }
            order.removeFirst(i + 1)  // each unit once, in order
            units[unit] = nil
            total += n * factor
            rest = rest.dropFirst()
        }
        guard total <= 6 * 3600 else { return nil }
        return sign * total
    }

    /// A TOML local time where a string was meant: "schedule.light-at: write the time in quotes: "07:00"".

    static func unquotedTime(_ text: String, line: Int) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return nil }
        let here = lines[line - 1]
        guard let m = here.firstMatch(of: /([A-Za-z0-9_-]+)\s*=\s*([0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?)/) else { return nil }
        var table: Substring?
        if let inline = here[..<m.range.lowerBound].firstMatch(of: /([A-Za-z0-9_-]+)\s*=\s*\{/) {
            table = inline.1
        } else {
            for above in lines[..<(line - 1)].reversed() {
                if let header = above.wholeMatch(of: /\s*\[\s*([A-Za-z0-9_.-]+)\s*\]\s*(?:#.*)?/) { table = header.1; break }
            }
        }
        let key = table.map { "\($0).\(m.1)" } ?? String(m.1)
        return "\(key): write the time in quotes: \"\(m.2)\""
    }

    /// "HH:MM" or "H:MM" → minutes after midnight.
    public static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let h = Int(parts[0]), let m = Int(parts[1]), (0..<24).contains(h), (0..<60).contains(m) else { return nil }
        return h * 60 + m
    }
}
