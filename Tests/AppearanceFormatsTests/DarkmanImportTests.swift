import AppearanceFormats
import Testing

/// `appearancectl import-darkman`: darkman's config.yaml as appearanced's config.toml, with string fixtures.
struct DarkmanImportTests {
    @Test func aDarkmanConfigBecomesAScheduleAppearancedReads() throws {
        let yaml = """
            # darkman
            ---
            lat: 52.3
            lng: "4.8"   # quoted values too
            usegeoclue: true
            dbusserver: yes
            portal: true

            """
        let result = try convertDarkman(yaml, file: "config.yaml")
        #expect(result.toml == """
            # appearanced configuration, imported from darkman's config.yaml by `appearancectl import-darkman`.

            # darkman dbusserver: true
            darkman-dbus = true

            # darkman portal: true
            portal-backend = "auto"

            [schedule]
            latitude = 52.3
            longitude = 4.8

            """)
        #expect(result.notes == [
            #"usegeoclue: kept the lat and lng written here, which win over a location service (for GeoClue instead, replace them with location = "geoclue" under [schedule])"#,
        ])
        let config = try Config.parse(result.toml, path: "config.toml")
        #expect(config.schedule.latitude == 52.3 && config.schedule.longitude == 4.8 && config.portalBackend == .auto)
        #expect(config.darkmanDBus)
        // darkman's D-Bus server off: so is appearanced's darkman face.
        #expect(try Config.parse(try convertDarkman("dbusserver: false\n", file: "c.yaml").toml, path: "config.toml").darkmanDBus == false)
    }

    @Test func anEmptyConfigSaysThereIsNoSchedule() throws {
        let result = try convertDarkman("portal: off\n", file: "c.yaml")
        #expect(result.toml.contains("portal-backend = \"off\""))
        #expect(!result.toml.contains("[schedule]"))
        #expect(result.notes.count == 1 && result.notes[0].hasPrefix("no lat/lng:"), "\(result.notes)")
        #expect(try Config.parse(result.toml, path: "config.toml") == Config(portalBackend: .off))
    }

    /// usegeoclue without lat/lng: appearanced asks GeoClue too.
    @Test func useGeoClueAloneAsksGeoClue() throws {
        let result = try convertDarkman("usegeoclue: true\n", file: "c.yaml")
        #expect(result.toml.hasSuffix("[schedule]\nlocation = \"geoclue\"\n") && result.notes.isEmpty, "\(result)")
        let config = try Config.parse(result.toml, path: "config.toml")
        #expect(config.scheduleFromGeoClue && config.schedule.latitude == nil)
    }

    @Test(arguments: [
        ("lat: 95\nlng: 4\n", "config.yaml:1: lat: expected a latitude from -90 to 90, got \"95\""),
        ("lat: 52\nlng: -181\n", "config.yaml:2: lng: expected a longitude from -180 to 180, got \"-181\""),
        ("lat: 52\n", "config.yaml: lng is missing (the schedule needs both)"),
        ("latitude: 52\n", "config.yaml:1: unknown darkman setting \"latitude\""),
        ("portal: maybe\n", "config.yaml:1: portal: expected true or false, got \"maybe\""),
        ("# a comment\njust text\n", "config.yaml:2: expected \"key: value\""),
        ("lat: nan\nlng: 4\n", "config.yaml:1: lat: expected a latitude from -90 to 90, got \"nan\""),
    ])
    func badDarkmanConfigsNameTheLine(text: String, message: String) {
        #expect(throws: ImportError(description: message)) { try convertDarkman(text, file: "config.yaml") }
    }

    /// A file name or value with a newline in it cannot end the comment it is written in.
    @Test func controlCharactersAreShown() throws {
        let result = try convertDarkman("", file: "a\nportal-backend = \"on\"")
        #expect(result.toml.hasPrefix(#"# appearanced configuration, imported from darkman's a\u{a}portal-backend = "on" by"#), "\(result.toml)")
        #expect(throws: ImportError(description: #"f:1: unknown darkman setting "k\u{1b}""#)) { try convertDarkman("k\u{1B}: 1", file: "f") }
    }
}
