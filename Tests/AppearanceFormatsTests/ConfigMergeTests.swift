@testable import AppearanceFormats
import Testing

/// `import-darkman --merge`: settings added to a config that exists, every byte of it kept; a conflict is
/// named and nothing is merged.
@Suite struct ConfigMergeTests {
    static let existing = """
        # my config
        default-mode = "dark"

        [schedule]
        light-at = "07:00"   # mornings
        dark-at = "19:30"

        [desktop]
        follow = "off"

        """

    static let imported: [ConfigMerge.Setting] = [
        .init("darkman-dbus", "false", comment: "darkman dbusserver: false"),
        .init(table: "schedule", "latitude", "52.3"), .init(table: "schedule", "longitude", "4.8"),
    ]

    /// The merged text less the lines added (the first of each): what is left must be the file as it was.
    static func without(_ added: [Substring], _ merged: String) -> String {
        var lines = merged.split(separator: "\n", omittingEmptySubsequences: false)
        for a in added { if let i = lines.firstIndex(of: a) { lines.remove(at: i) } }
        return lines.joined(separator: "\n")
    }

    @Test func whatTheFileLacksIsAddedInItsTablesAndNothingElseChanges() throws {
        let r = try ConfigMerge.merge(Self.existing, file: "c.toml", adding: Self.imported)
        #expect(r.added == ["darkman-dbus", "schedule.latitude", "schedule.longitude"])
        #expect(r.text == """
            # my config
            default-mode = "dark"

            # darkman dbusserver: false
            darkman-dbus = false

            [schedule]
            light-at = "07:00"   # mornings
            dark-at = "19:30"
            latitude = 52.3
            longitude = 4.8

            [desktop]
            follow = "off"

            """, "\(r.text)")
        #expect(Self.without(["# darkman dbusserver: false", "darkman-dbus = false", "", "latitude = 52.3", "longitude = 4.8"], r.text) == Self.existing)
        let config = try Config.parse(r.text, path: "c.toml")
        #expect(config.schedule.latitude == 52.3 && config.schedule.lightAt == 7 * 60 && !config.darkmanDBus)
    }

    @Test func aTableTheFileLacksComesAtTheEnd() throws {
        let r = try ConfigMerge.merge("default-mode = \"dark\"", file: "c.toml", adding: Self.imported)
        #expect(r.text == "default-mode = \"dark\"\n# darkman dbusserver: false\ndarkman-dbus = false\n\n\n[schedule]\nlatitude = 52.3\nlongitude = 4.8\n", "\(r.text)")
        #expect(try Config.parse(r.text, path: "c.toml").schedule.longitude == 4.8)
    }

    @Test func whatTheFileHasAlreadyIsLeftAsItIs() throws {
        let text = "darkman-dbus = false\n[schedule]\nlatitude = 52.3\nlongitude = 4.8\n"
        let r = try ConfigMerge.merge(text, file: "c.toml", adding: Self.imported)
        #expect(r.added.isEmpty && r.text == text)
    }

    @Test(arguments: [
        ("darkman-dbus = true\n", "darkman-dbus is true there, false in the import"),
        ("[schedule]\nlatitude = 48.1\n", "schedule.latitude is 48.1 there, 52.3 in the import"),
        ("[schedule]\nlocation = \"geoclue\"\n", "schedule.latitude cannot be added next to schedule.location"),
    ])
    func aConflictIsNamedAndNothingIsMerged(text: String, conflict: String) {
        #expect {
            try ConfigMerge.merge(text, file: "c.toml", adding: Self.imported)
        } throws: { ($0 as? ImportError)?.description.contains(conflict) == true && "\($0)".contains("nothing written") }
    }

    @Test func aFileThatIsNotTOMLOrATableWrittenInlineIsRefused() {
        #expect { try ConfigMerge.merge("x = = 1\n", file: "c.toml", adding: Self.imported) } throws: {
            "\($0)".hasPrefix("c.toml: cannot merge into a file that is not valid TOML (line 1")
        }
        #expect { try ConfigMerge.merge("schedule = { light-at = \"07:00\" }\n", file: "c.toml", adding: Self.imported) } throws: {
            "\($0)".contains("cannot merge into [schedule] written as an inline table (line 1)")
        }
    }
}
