import AppearanceCore
import AppearanceProtocol

/// location.json's format: the last place GeoClue gave, `{"latitude":52.52,"longitude":13.4,"time":1764000000}`,
/// rounded to two decimals (about 1 km); bytes in, a fix out and back.

public enum LocationFile {
    /// More than any file `encode` writes (about 60 bytes).
    public static let readLimit = 4096

    /// The fix in the file, or why it cannot be used (in words that follow the file's path).
    public static func parse(_ bytes: [UInt8]) -> Result<LocationFix, StateFile.Invalid> {
        let expected = #"expected {"latitude": -90…90, "longitude": -180…180, "time": UNIX}"#
        let json: JSON
        do { json = try JSON.parse(bytes) } catch {
            return .failure(.init(problem: "is not a valid location file: not JSON (\(error)); \(expected)"))
        }
        guard let latitude = json["latitude"]?.doubleValue, let longitude = json["longitude"]?.doubleValue,
              let time = json["time"]?.uint64Value.flatMap({ Int64(exactly: $0) }) else {
            return .failure(.init(problem: "is not a valid location file: \(expected)"))
        }
        let fix = LocationFix(latitude: latitude, longitude: longitude, time: time)
        guard fix.isValid, time <= StateFile.latestUntil else {
            return .failure(.init(problem: "is not a valid location file: a coordinate or the time is out of range; \(expected)"))
        }
        return .success(fix.rounded)
    }

    /// The file's bytes for `fix`, rounded to two decimals, with a final newline.
    public static func encode(_ fix: LocationFix) -> [UInt8] {
        let r = fix.rounded
        return JSON.object([("latitude", .number(LocationInfo.degrees(r.latitude))),
                            ("longitude", .number(LocationInfo.degrees(r.longitude))),
                            ("time", .int(max(0, r.time)))]).bytes + [0x0A]
    }
}
