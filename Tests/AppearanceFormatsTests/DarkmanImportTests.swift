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
        let result = convertDarkman(yaml, file: "config.yaml")
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
        // darkman's D-Bus server off: so is appearanced's darkman service.
        #expect(try Config.parse(convertDarkman("dbusserver: false\n", file: "c.yaml").toml, path: "config.toml").darkmanDBus == false)
    }

    @Test func anEmptyConfigSaysThereIsNoSchedule() throws {
        let result = convertDarkman("portal: off\n", file: "c.yaml")
        #expect(result.toml.contains("portal-backend = \"off\""))
        #expect(!result.toml.contains("[schedule]"))
        #expect(result.notes.count == 1 && result.notes[0].hasPrefix("no lat/lng:"), "\(result.notes)")
        #expect(try Config.parse(result.toml, path: "config.toml") == Config(portalBackend: .off))
    }

    /// usegeoclue without lat/lng: appearanced asks GeoClue too.
    @Test func useGeoClueAloneAsksGeoClue() throws {
        let result = convertDarkman("usegeoclue: true\n", file: "c.yaml")
        #expect(result.toml.hasSuffix("[schedule]\nlocation = \"geoclue\"\n") && result.notes.isEmpty, "\(result)")
        let config = try Config.parse(result.toml, path: "config.toml")
        #expect(config.scheduleFromGeoClue && config.schedule.latitude == nil)
    }

    /// What cannot be used is left out and named with its line; the rest is converted.
    @Test(arguments: [
        ("lat: 95\nlng: 4\nportal: on\n", "left out config.yaml:1: lat: expected a latitude from -90 to 90, got \"95\""),
        ("lat: 52\nlng: -181\nportal: on\n", "left out config.yaml:2: lng: expected a longitude from -180 to 180, got \"-181\""),
        ("lat: 52\nportal: on\n", "left out lat: config.yaml has no lng (the schedule needs both)"),
        ("latitude: 52\nportal: on\n", "left out config.yaml:1: unknown darkman setting \"latitude\""),
        ("portal: maybe\nportal: on\n", "left out config.yaml:1: portal: expected true or false, got \"maybe\""),
        ("# a comment\njust text\nportal: on\n", "left out config.yaml:2: expected \"key: value\""),
        ("lat: nan\nlng: 4\nportal: on\n", "left out config.yaml:1: lat: expected a latitude from -90 to 90, got \"nan\""),
    ])
    func whatCannotBeUsedIsNamedAndTheRestConverted(text: String, message: String) throws {
        let result = convertDarkman(text, file: "config.yaml")
        #expect(result.notes.contains(message), "\(result.notes)")
        #expect(result.toml.contains("portal-backend = \"auto\"") && !result.toml.contains("[schedule]"), "\(result.toml)")
        #expect(try Config.parse(result.toml, path: "c.toml").portalBackend == .auto)
    }

    /// A file name or value with a newline in it cannot end the comment it is written in.
    @Test func controlCharactersAreShown() throws {
        let result = convertDarkman("", file: "a\nportal-backend = \"on\"")
        #expect(result.toml.hasPrefix(#"# appearanced configuration, imported from darkman's a\u{a}portal-backend = "on" by"#), "\(result.toml)")
        #expect(convertDarkman("k\u{1B}: 1", file: "f").notes.contains(#"left out f:1: unknown darkman setting "k\u{1b}""#))
    }
}
