// `appearancectl import-darkman [FILE]`: darkman's config.yaml as appearanced's config.toml. darkman's
// hook directories (dark-mode.d/, light-mode.d/) need no migration: appearanced runs them as they are.

/// The result of reading darkman's config: the TOML to write, and what has no equivalent.
public struct DarkmanImport: Equatable, Sendable {
    public var toml: String
    public var notes: [String]

    /// How many settings the config has (its `key = value` lines, not comments or table headers).
    public var settings: Int { toml.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("[") && $0.contains(" = ") }.count }
}

/// Reads darkman's flat YAML (`key: value` lines, `#` comments): `lat`, `lng`, `usegeoclue`, `portal`,
/// `dbusserver` (as `darkman-dbus`). An unknown key or a bad value is an error naming the file and line.
public func convertDarkman(_ text: String, file: String) throws(ImportError) -> DarkmanImport {
    var latitude: Double?, longitude: Double?
    var notes: [String] = []
    var portal: Bool?
    var darkmanDBus: Bool?
    var geoclue = false
    var lineNumber = 0
    for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
        lineNumber += 1
        var line = Substring(raw)
        if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
        line = line.drop(while: { $0 == " " || $0 == "\t" })
        while let last = line.last, last == " " || last == "\t" || last == "\r" { line = line.dropLast() }
        if line.isEmpty || line == "---" { continue }
        guard let colon = line.firstIndex(of: ":") else {
            throw ImportError(description: "\(commentSafe(file)):\(lineNumber): expected \"key: value\"")
        }
        let key = String(line[..<colon]).trimmingSpaces
        var value = String(line[line.index(after: colon)...]).trimmingSpaces
        if value.count >= 2, let q = value.first, q == "\"" || q == "'", value.last == q { value = String(value.dropFirst().dropLast()) }
        func fail(_ what: String) -> ImportError {
            ImportError(description: "\(commentSafe(file)):\(lineNumber): \(key): expected \(what), got \"\(commentSafe(value))\"")
        }
        func bool() throws(ImportError) -> Bool {
            switch value.lowercased() {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default: throw fail("true or false")
            }
        }
        switch key {
        case "lat", "lng":
            guard let v = Double(value), v.isFinite, abs(v) <= (key == "lat" ? 90 : 180) else {
                throw fail(key == "lat" ? "a latitude from -90 to 90" : "a longitude from -180 to 180")
            }
            if key == "lat" { latitude = v } else { longitude = v }
        case "usegeoclue":
            geoclue = try bool()
        case "portal":
            portal = try bool()
        case "dbusserver":
            darkmanDBus = try bool()
        default:
            throw ImportError(description: "\(commentSafe(file)):\(lineNumber): unknown darkman setting \"\(commentSafe(key))\"")
        }
    }
    if (latitude == nil) != (longitude == nil) {
        throw ImportError(description: "\(commentSafe(file)): \(latitude == nil ? "lat" : "lng") is missing (the schedule needs both)")
    }
    var toml = "# appearanced configuration, imported from darkman's \(commentSafe(file)) by `appearancectl import-darkman`.\n"
    if let darkmanDBus {
        // appearanced serves darkman's D-Bus interface (nl.whynothugo.darkman) itself, where darkman is not running.
        toml += "\n# darkman dbusserver: \(darkmanDBus)\ndarkman-dbus = \(darkmanDBus)\n"
    }
    if let portal {
        // darkman's portal: true serves the portal's Settings; appearanced's "auto" does so where no other
        // backend does, which is where darkman's users turn it on.
        toml += "\n# darkman portal: \(portal)\nportal-backend = \"\(portal ? "auto" : "off")\"\n"
    }
    if let latitude, let longitude {
        // darkman asks GeoClue when told to and falls back on lat/lng; appearanced takes a typed place over
        // GeoClue (both at once is a config error), so the typed one is kept and the other way is said.
        if geoclue { notes.append("usegeoclue: kept the lat and lng written here, which win over a location service (for GeoClue instead, replace them with location = \"geoclue\" under [schedule])") }
        toml += "\n[schedule]\nlatitude = \(latitude)\nlongitude = \(longitude)\n"
    } else if geoclue {
        toml += "\n# darkman usegeoclue: true\n[schedule]\nlocation = \"geoclue\"\n"
    } else {
        notes.append("no lat/lng: without a [schedule] the mode changes only when the desktop or a user changes it")
    }
    return DarkmanImport(toml: toml, notes: notes)
}
