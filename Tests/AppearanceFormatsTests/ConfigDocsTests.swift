import AppearanceFormats
import Foundation
import Testing

/// The config keys the parser knows (Config's key tables) against the docs: every key is described in
/// appearanced(1)'s CONFIGURATION and shown, commented, in config/appearanced.toml; neither names a key the
/// parser does not know. And the tables are the parser's: each key in them is taken, one outside them refused.
@Suite struct ConfigDocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// The tables of config.toml and the keys each takes.
    static let tables = ["schedule": Config.scheduleKeys, "desktop": Config.desktopKeys, "automatic": Config.automaticKeys,
                         "light-sensor": Config.lightSensorKeys, "power": Config.powerKeys]
    static var topKeys: [String] { Config.knownKeys.filter { tables[$0] == nil } }
    /// Every key, written as the docs and errors write it: `default-mode`, `schedule.latitude`.
    static var allKeys: [String] {
        topKeys + tables.sorted { $0.key < $1.key }.flatMap { t in t.value.map { "\(t.key).\($0)" } }
    }

    static func read(_ path: String) throws -> String { try String(contentsOfFile: root + "/" + path, encoding: .utf8) }

    /// A key the parser does not know is refused as unknown; any other error is about the value.
    static func known(_ toml: String) -> Bool {
        do { _ = try Config.parse(toml, path: "c.toml"); return true } catch { return !error.message.contains("unknown") }
    }

    @Test func theTablesAreWhatTheParserTakes() {
        #expect(Set(Self.tables.keys).isSubset(of: Config.knownKeys))
        for key in Self.topKeys { #expect(Self.known("\(key) = 0"), "\(key)") }
        for (table, keys) in Self.tables {
            #expect(Self.known("\(table) = 0"), "\(table)")
            for key in keys { #expect(Self.known("[\(table)]\n\(key) = 0"), "\(table).\(key)") }
            #expect(!Self.known("[\(table)]\nno-such-key = 0"))
        }
        #expect(!Self.known("no-such-key = 0"))
    }

    /// appearanced(1)'s CONFIGURATION section: `*key*` for every key (a table as `*[table]*`), and every
    /// lower-case bold word in it, and every `*[table]*`, is a key the parser knows.
    @Test func theManPageDescribesEveryKeyAndNoOther() throws {
        let page = try Self.read("man/appearanced.1.scd")
        let section = try #require(page.components(separatedBy: "\n# CONFIGURATION\n").dropFirst().first?.components(separatedBy: "\n# ").first)
        for key in Self.topKeys { #expect(section.contains("*\(key)*"), "appearanced(1) does not describe the config key \(key)") }
        for (table, keys) in Self.tables {
            let part = try #require(section.components(separatedBy: "*[\(table)]*").dropFirst().first,
                                    "appearanced(1) does not describe the config table [\(table)]")
            // The table's own entry: up to the next entry at the start of a line.
            let entry = part.components(separatedBy: "\n*").first ?? ""
            for key in keys { #expect(entry.contains("*\(key)*"), "appearanced(1)'s [\(table)] does not describe \(table).\(key)") }
        }
        let every = Set(Config.knownKeys + Self.tables.values.flatMap { $0 })
        for m in section.matches(of: /\*([a-z][a-z-]*[a-z])\*/) {
            #expect(every.contains(String(m.1)), "appearanced(1) names the config key \(m.1), which the parser does not know")
        }
        for m in section.matches(of: /\*\[([a-z-]+)\]\*/) {
            #expect(Self.tables[String(m.1)] != nil, "appearanced(1) names the config table [\(m.1)], which the parser does not know")
        }
    }

    /// config/appearanced.toml shows every key, commented or not (`# key = value`), each under its table, and
    /// no other.
    @Test func theExampleConfigShowsEveryKeyAndNoOther() throws {
        let lines = try Self.read("config/appearanced.toml").split(separator: "\n").map(String.init)
        var table: String?  // the `[table]` the lines are under
        var shown: Set<String> = []
        for line in lines {
            if let h = line.wholeMatch(of: /#? ?\[([a-z-]+)\].*/) {
                table = String(h.1)
                shown.insert(table!)
                #expect(Self.tables[table!] != nil, "config/appearanced.toml shows the table [\(table!)], which the parser does not know")
            } else if let k = line.wholeMatch(of: /#? ?([a-z][a-z-]*) = .*/) {
                let key = table.map { "\($0).\(k.1)" } ?? String(k.1)
                shown.insert(key)
                #expect(Self.allKeys.contains(key), "config/appearanced.toml shows the key \(key), which the parser does not know")
            }
        }
        for key in Self.allKeys + Self.tables.keys { #expect(shown.contains(key), "config/appearanced.toml does not show \(key)") }
    }
}
