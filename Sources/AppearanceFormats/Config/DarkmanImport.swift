// `appearancectl import-darkman [FILE]`: darkman's config.yaml as appearanced's config.toml.

/// The result of reading darkman's config: the TOML to write, and what has no equivalent.
public struct DarkmanImport: Equatable, Sendable {
    public var toml: String
    public var notes: [String]
    /// The settings `toml` holds, for `--merge` into a config that exists.
    public var entries: [ConfigMerge.Setting] = []

    /// How many settings the config has (its `key = value` lines, not comments or table headers).
    public var settings: Int { toml.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("[") && $0.contains(" = ") }.count }
}

/// Reads darkman's flat YAML (`key: value` lines); what it cannot use is left out and named in `notes`.
public func convertDarkman(_ text: String, file: String) -> DarkmanImport {
    var latitude: Double?, longitude: Double?, portal: Bool?, darkmanDBus: Bool?
    var notes: [String] = [], geoclue = false, lineNumber = 0
    for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
        lineNumber += 1
        var line = Substring(raw)
        if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
        line = line.drop(while: { $0 == " " || $0 == "\t" })
        while let last = line.last, last == " " || last == "\t" || last == "\r" { line = line.dropLast() }
        if line.isEmpty || line == "---" { continue }
        guard let colon = line.firstIndex(of: ":") else {
            notes.append("left out \(commentSafe(file)):\(lineNumber): expected \"key: value\"")
            continue
        }
        let key = String(line[..<colon]).trimmingSpaces
        var value = String(line[line.index(after: colon)...]).trimmingSpaces
        if value.count >= 2, let q = value.first, q == "\"" || q == "'", value.last == q { value = String(value.dropFirst().dropLast()) }
        let at = "\(commentSafe(file)):\(lineNumber)"
        func leftOut(_ what: String) { notes.append("left out \(at): \(key): expected \(what), got \"\(commentSafe(value))\"") }
        func bool() -> Bool? {
            switch value.lowercased() {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default: leftOut("true or false"); return nil
            }
        }
        switch key {
        case "lat", "lng":
            guard let v = Double(value), v.isFinite, abs(v) <= (key == "lat" ? 90 : 180) else {
                leftOut(key == "lat" ? "a latitude from -90 to 90" : "a longitude from -180 to 180")
                continue
            }
            if key == "lat" { latitude = v } else { longitude = v }
        case "usegeoclue":
            geoclue = bool() ?? geoclue
        case "portal":
            portal = bool() ?? portal
        case "dbusserver":
            darkmanDBus = bool() ?? darkmanDBus
        default:
            notes.append("left out \(at): unknown darkman setting \"\(commentSafe(key))\"")
        }
    }
    if (latitude == nil) != (longitude == nil) {
        notes.append("left out \(latitude == nil ? "lng" : "lat"): \(commentSafe(file)) has no \(latitude == nil ? "lat" : "lng") (the schedule needs both)")
        (latitude, longitude) = (nil, nil)
    }
    var entries: [ConfigMerge.Setting] = []
    if let darkmanDBus {
        // appearanced serves darkman's D-Bus interface (nl.whynothugo.darkman) itself, where darkman is not running.
        entries.append(.init("darkman-dbus", "\(darkmanDBus)", comment: "darkman dbusserver: \(darkmanDBus)"))
    }
    if let portal {
        // appearanced's "auto" serves the portal where no other backend does, where darkman's users turn it on.
        entries.append(.init("portal-backend", portal ? "\"auto\"" : "\"off\"", comment: "darkman portal: \(portal)"))
    }
    if let latitude, let longitude {
        // Both at once is a config error: the typed place is kept and the other way is said.

        if geoclue { notes.append("usegeoclue: kept the lat and lng written here, which win over a location service (for GeoClue instead, replace them with location = \"geoclue\" under [schedule])") }
        entries += [.init(table: "schedule", "latitude", "\(latitude)"), .init(table: "schedule", "longitude", "\(longitude)")]
    } else if geoclue {
        entries.append(.init(table: "schedule", "location", "\"geoclue\"", comment: "darkman usegeoclue: true"))
    } else {
        notes.append("no lat/lng: without a [schedule] the mode changes only when the desktop or a user changes it")
    }
    var toml = "# appearanced configuration, imported from darkman's \(commentSafe(file)) by `appearancectl import-darkman`.\n"
    for e in entries where e.table == nil { toml += "\n" + (e.comment.map { "# \($0)\n" } ?? "") + "\(e.key) = \(e.literal)\n" }
    let schedule = entries.filter { $0.table == "schedule" }
    if !schedule.isEmpty {
        toml += "\n" + schedule.compactMap { $0.comment.map { "# \($0)\n" } }.joined() + "[schedule]\n"
        for e in schedule { toml += "\(e.key) = \(e.literal)\n" }
    }
    return DarkmanImport(toml: toml, notes: notes, entries: entries)
}
