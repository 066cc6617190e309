import AppearanceCore
import AppearanceFormats
import AppearanceProtocol
import Testing

/// `[schedule] location = "geoclue"` and location.json's format.
struct LocationConfigTests {
    static let path = "/home/u/.config/appearanced/config.toml"

    static func parse(_ text: String) throws(ConfigError) -> Config { try Config.parse(text, path: path) }

    @Test func geoclueInsteadOfTypedCoordinates() throws {
        let c = try Self.parse("[schedule]\nlocation = \"geoclue\"\nsunset-offset = \"-30m\"\nover-desktop = true\n")
        #expect(c.scheduleFromGeoClue && c.schedule.latitude == nil && c.schedule.sunsetOffset == -1800 && c.schedule.aboveDesktop)
        // One fixed time is enough: the sun gives the other once GeoClue gives the place.
        #expect(try Self.parse("[schedule]\nlocation = \"geoclue\"\ndark-at = \"21:00\"\n").schedule.darkAt == 21 * 60)
        #expect(try !Self.parse("[schedule]\nlatitude = 1\nlongitude = 2\n").scheduleFromGeoClue)
    }

    static let errors: [(String, String)] = [
        ("[schedule]\nlatitude = 52.5\nlongitude = 13.4\nlocation = \"geoclue\"",
         #"/home/u/.config/appearanced/config.toml:4: schedule: location = "geoclue" and latitude/longitude both give the place: keep one (a typed latitude and longitude, or location)"#),
        ("[schedule]\nlocation = \"geoclue\"\n\nlongitude = 13.4",
         #"/home/u/.config/appearanced/config.toml:4: schedule: location = "geoclue" and latitude/longitude both give the place: keep one (a typed latitude and longitude, or location)"#),
        ("[schedule]\nlocation = \"gps\"",
         #"/home/u/.config/appearanced/config.toml:2: schedule.location: unknown location "gps", expected "geoclue" (or latitude and longitude instead of location)"#),
        ("[schedule]\nlocation = true",
         #"/home/u/.config/appearanced/config.toml:2: schedule.location: expected "geoclue" (or latitude and longitude instead of location), got true"#),
        ("[schedule]\nlocation = \"geoclue\"\nlight-at = \"07:00\"\ndark-at = \"07:00\"",
         "/home/u/.config/appearanced/config.toml:4: schedule: light-at and dark-at are the same time"),
        ("[schedule]\nplace = \"geoclue\"",
         "/home/u/.config/appearanced/config.toml:2: schedule.place: unknown key (known keys: latitude, longitude, location, light-at, dark-at, sunrise-offset, sunset-offset, over-desktop)"),
    ]

    @Test("location's errors name the file, the line and both keys", arguments: errors)
    func error(text: String, expected: String) {
        do {
            let config = try Self.parse(text)
            Issue.record("parsed as \(config)")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test func theFileKeepsTwoDecimals() throws {
        let bytes = LocationFile.encode(LocationFix(latitude: 52.52437, longitude: -0.004, time: 1_764_000_000))
        #expect(String(decoding: bytes, as: UTF8.self) == "{\"latitude\":52.52,\"longitude\":0.00,\"time\":1764000000}\n")
        #expect(try LocationFile.parse(bytes).get() == LocationFix(latitude: 52.52, longitude: 0, time: 1_764_000_000))
        let south = LocationFix(latitude: -33.8688, longitude: 151.2093, time: 5)
        #expect(try LocationFile.parse(LocationFile.encode(south)).get() == LocationFix(latitude: -33.87, longitude: 151.21, time: 5))
    }

    @Test("a location file that cannot be used says why", arguments: [
        ("", "is not a valid location file: not JSON"),
        ("{\"latitude\": 1}", #"is not a valid location file: expected {"latitude": -90…90, "longitude": -180…180, "time": UNIX}"#),
        ("{\"latitude\": 91, \"longitude\": 0, \"time\": 1}", "is not a valid location file: a coordinate or the time is out of range"),
        ("{\"latitude\": 1, \"longitude\": 0, \"time\": -1}", "is not a valid location file: expected"),
        ("{\"latitude\": \"1\", \"longitude\": 0, \"time\": 1}", "is not a valid location file: expected"),
    ])
    func badFile(text: String, says: String) {
        switch LocationFile.parse(Array(text.utf8)) {
        case .success(let fix): Issue.record("parsed as \(fix)")
        case .failure(let invalid): #expect(invalid.problem.hasPrefix(says), "\(invalid.problem)")
        }
    }

    @Test func infoForPeopleAndScripts() throws {
        let info = LocationInfo(latitude: 52.52, longitude: 13.4, source: .geoclue, time: 100, age: 7200, detail: "GeoClue: following")
        #expect(info.summary == "52.52, 13.40 (geoclue, fix 2 h old); GeoClue: following")
        #expect(info.json.text == #"{"latitude":52.52,"longitude":13.4,"source":"geoclue","time":100,"age":7200,"detail":"GeoClue: following"}"#)
        #expect(LocationInfo(json: info.json) == info)
        let none = LocationInfo(detail: "GeoClue: waiting")
        #expect(none.summary == "none yet: GeoClue: waiting")
        #expect(none.json.text == #"{"latitude":null,"longitude":null,"source":null,"time":null,"age":null,"detail":"GeoClue: waiting"}"#)
    }
}
