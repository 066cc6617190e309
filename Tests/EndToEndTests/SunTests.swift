import AppearanceCore
import Foundation
import Testing

/// The schedule's sunrise and sunset against the astral package (installed by `make test` into
/// .build/astral-venv): within a minute for 24 places × 12 dates, polar day and night included.
@Suite struct SunTests {
    static let places: [(String, Double, Double)] = [
        ("Berlin", 52.52, 13.405), ("London", 51.5074, -0.1278), ("New York", 40.7128, -74.006),
        ("Los Angeles", 34.0522, -118.2437), ("Tokyo", 35.6762, 139.6503), ("Sydney", -33.8688, 151.2093),
        ("Auckland", -36.8485, 174.7633), ("Honolulu", 21.3069, -157.8583), ("Quito", -0.1807, -78.4678),
        ("Singapore", 1.3521, 103.8198), ("Reykjavik", 64.1466, -21.9426), ("Tromsø", 69.6492, 18.9553),
        ("Longyearbyen", 78.2232, 15.6267), ("McMurdo", -77.846, 166.676), ("Ushuaia", -54.8019, -68.303),
        ("Cape Town", -33.9249, 18.4241), ("Nairobi", -1.2921, 36.8219), ("Mumbai", 19.076, 72.8777),
        ("Anchorage", 61.2181, -149.9003), ("Murmansk", 68.9585, 33.0827), ("Kiritimati", 1.87, -157.43),
        ("Apia", -13.8333, -171.75), ("Helsinki", 60.1699, 24.9384), ("Buenos Aires", -34.6037, -58.3816),
    ]
    // Solstices, equinoxes, DST change days (EU 2026-03-29 and 2026-10-25, US 2026-03-08) and others.
    static let dates = ["2026-01-15", "2026-02-10", "2026-03-08", "2026-03-20", "2026-03-29", "2026-05-01",
                        "2026-06-21", "2026-08-15", "2026-09-23", "2026-10-25", "2026-11-24", "2026-12-21"]

    static var python: String? {
        let p = ProcessInfo.processInfo.environment["APPEARANCED_ASTRAL_PYTHON"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(".build/astral-venv/bin/python").path
        return FileManager.default.isExecutableFile(atPath: p) ? p : nil
    }

    @Test(.enabled(if: python != nil, "astral is not installed (`make deps-astral` puts it in .build/astral-venv)"))
    func agreesWithAstralWithinAMinute() throws {
        let python = try #require(Self.python)
        var input = ""
        var cases: [(String, Double, Double, String)] = []
        for (name, lat, lon) in Self.places {
            for date in Self.dates {
                input += "\(lat) \(lon) \(date)\n"
                cases.append((name, lat, lon, date))
            }
        }
        let answers = try Self.astral(python, "astral-sun.py", input)
        try #require(answers.count == cases.count)
        var worst = 0.0, polar = 0, compared = 0
        for ((name, lat, lon, date), answer) in zip(cases, answers) {
            let parts = date.split(separator: "-").map { Int($0)! }
            let day = Schedule.LocalDay(year: parts[0], month: parts[1], day: parts[2]) { Int64($0) * 60 }
            let midnight = day.at(0) + Self.utcMidnight(parts[0], parts[1], parts[2])
            // astral gives the events that fall on the UTC date; ours are those of the solar days around it.
            var ours: [Int64: Mode] = [:]
            for offset: Int64 in [-1, 0, 1, 2] {
                let c = Sun.crossings(day: midnight / 86_400 + offset, latitude: lat, longitude: lon)
                if let rise = c.rise { ours[rise] = .light }
                if let set = c.set { ours[set] = .dark }
            }
            let noon = midnight + 43_200 - Int64(240 * lon)
            let crossesToday = ours.keys.contains { $0 >= midnight && $0 < midnight + 86_400 }
            switch answer.first {
            case "rise":
                for (time, mode) in [(Int64(answer[1])!, Mode.light), (Int64(answer[3])!, Mode.dark)] {
                    let nearest = ours.filter { $0.value == mode }.keys.min { abs($0 - time) < abs($1 - time) }
                    let difference = nearest.map { Double(abs($0 - time)) } ?? .infinity
                    #expect(difference <= 60, "\(name) \(date) \(mode): astral \(time), ours \(nearest.map(String.init) ?? "none")")
                    worst = max(worst, difference)
                    compared += 1
                }
            case "up":
                #expect(!crossesToday && Sun.isUp(at: noon, latitude: lat, longitude: lon), "\(name) \(date): astral says polar day")
                polar += 1
            default:
                #expect(!crossesToday && !Sun.isUp(at: noon, latitude: lat, longitude: lon), "\(name) \(date): astral says polar night")
                polar += 1
            }
        }
        #expect(polar >= 4, "the table must include polar days and nights")
        print("figure: sun vs astral: \(compared) events, worst difference \(Int(worst)) s; \(polar) polar days or nights agree")
    }

    /// The answers of a script in Scripts/ run by astral's Python on `input`, a line each, split into words.
    static func astral(_ python: String, _ script: String, _ input: String) throws -> [[String]] {
        let s = try Sandbox()
        try s.write(input, to: s.root + "/input.txt")
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/" + script).path
        let r = try s.run("/bin/sh", ["-c", "\"$0\" \"$1\" < \"$2\"", python, path, s.root + "/input.txt"], timeout: 600)
        #expect(r.status == 0, "\(r.err)")
        return r.out.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
    }

    static func utcMidnight(_ y: Int, _ m: Int, _ d: Int) -> Int64 {
        var c = DateComponents()
        (c.year, c.month, c.day) = (y, m, d)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return Int64(calendar.date(from: c)!.timeIntervalSince1970)
    }
}
