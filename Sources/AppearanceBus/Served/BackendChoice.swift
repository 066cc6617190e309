// Whether appearanced should be the portal's Settings backend (`portal-backend = "auto"`): only where no other
// backend provides it for the current desktop. Pure: the caller reads the files.
import AppearanceCore

/// One `*.portal` file: which interfaces a backend implements and for which desktops.
struct PortalFile: Equatable {
    var name: String
    var dbusName: String
    var interfaces: [String]
    var useIn: [String]

    /// Parses the `[portal]` group of a `.portal` file; nil without `DBusName` (the frontend skips those too).
    init?(name: String, text: String) {
        let values = keyFileGroup("portal", text)
        guard let dbusName = values["DBusName"], !dbusName.isEmpty else { return nil }
        (self.name, self.dbusName) = (name, dbusName)
        (interfaces, useIn) = (keyFileList(values["Interfaces"]), keyFileList(values["UseIn"]))
    }
}

/// The `[preferred]` choice for Settings in xdg-desktop-portal ≥ 1.18's `portals.conf`.
struct PortalsConf: Equatable {
    var path: String
    /// Backend names listed for `org.freedesktop.impl.portal.Settings`, else for `default`; nil for neither.
    var settings: [String]?

    init(path: String, text: String) {
        self.path = path
        let preferred = keyFileGroup("preferred", text)
        settings = (preferred[PortalBackend.interface] ?? preferred["default"]).map(keyFileList)
    }
}

/// The keys of group `[name]` in a desktop-entry-style key file, their values trimmed (the last of a key wins).
private func keyFileGroup(_ name: String, _ text: String) -> [String: String] {
    var group = ""
    var values: [String: String] = [:]
    for raw in text.split(whereSeparator: \.isNewline) {
        let line = raw.trimmingWhitespace
        if line.isEmpty || line.hasPrefix("#") { continue }
        if line.hasPrefix("["), line.hasSuffix("]") {
            group = String(line.dropFirst().dropLast())
            continue
        }
        guard group == name, let eq = line.firstIndex(of: "=") else { continue }
        values[String(line[..<eq]).trimmingWhitespace] = String(line[line.index(after: eq)...]).trimmingWhitespace
    }
    return values
}

/// A `;`-separated list, its items trimmed, empty ones left out.
private func keyFileList(_ value: String?) -> [String] {
    (value ?? "").split(separator: ";").map { String($0).trimmingWhitespace }.filter { !$0.isEmpty }
}

enum BackendChoice {
    /// Decides whether to serve, with the reason `status` shows; `desktops`: `XDG_CURRENT_DESKTOP` split at `:`.
    static func decide(_ policy: BackendPolicy, desktops: [String], portals: [PortalFile],
                       conf: PortalsConf?) -> (serve: Bool, reason: String) {
        switch policy {
        case .on: return (true, "portal-backend = \"on\"")
        case .off: return (false, "portal-backend = \"off\"")
        case .auto: break
        }
        if let conf, let chosen = conf.settings, !chosen.contains("*") {
            return chosen.contains(PortalBackend.portalName)
                ? (true, "\(conf.path) chooses \(PortalBackend.portalName) for Settings")
                : (false, "\(conf.path) chooses \(chosen.joined(separator: ";")) for Settings")
        }
        guard !desktops.isEmpty else {
            return (false, "XDG_CURRENT_DESKTOP is not set, so no desktop to serve (portal-backend = \"on\" serves anyway)")
        }
        let others = portals.filter { file in
            file.dbusName != PortalBackend.busName && file.interfaces.contains(PortalBackend.interface)
                && file.useIn.contains { use in desktops.contains { $0.lowercased() == use.lowercased() } }
        }
        let desktop = desktops.joined(separator: ":")
        if let other = others.first { return (false, "\(other.name) provides Settings for \(desktop)") }
        return (true, "no other Settings backend for \(desktop)")
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }
}
