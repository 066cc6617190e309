import AppearanceCore
import Foundation
import Testing

/// The schedule's plan for places on every side of the date line and both poles, in machine time zones on
/// both sides of it, at every hour of days in each season: the mode and the next change against the astral
/// package's sun at that instant (the elevation, and its sunrise and sunset), an independent reference.
@Suite struct ScheduleEverywhereTests {
    static let places: [(String, Double, Double)] = [
        ("Tokyo", 35.68, 139.69), ("Sydney", -33.87, 151.21), ("Auckland", -36.85, 174.76),
        ("Singapore", 1.35, 103.82), ("Perth", -31.95, 115.86), ("Kiritimati", 1.87, -157.43),
        ("Pago Pago", -14.28, -170.70), ("Apia", -13.83, -171.75), ("Taveuni", -16.85, 179.97),
        ("Chatham Islands", -43.95, -176.56), ("Honolulu", 21.31, -157.86), ("Los Angeles", 34.05, -118.24),
        ("Berlin", 52.52, 13.405), ("Mumbai", 19.08, 72.88), ("Quito", -0.18, -78.47), ("Reykjavik", 64.15, -21.94),
        ("Longyearbyen", 78.22, 15.63), ("McMurdo", -77.85, 166.68), ("Alert", 82.50, -62.35),
    ]
    static let zones = ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Tokyo", "America/Los_Angeles",
                        "Australia/Lord_Howe", "Asia/Kolkata"]
    /// Two days in each season, every hour, 17 minutes past (the hour itself lines up with fixed times).
    static let dates = ["2026-01-04", "2026-01-05", "2026-03-19", "2026-03-20", "2026-06-20", "2026-06-21",
                        "2026-08-30", "2026-08-31", "2026-10-24", "2026-10-25", "2026-12-21", "2026-12-22"]

    static var instants: [Int64] {
        dates.flatMap { date -> [Int64] in
            let p = date.split(separator: "-").map { Int($0)! }
            let midnight = Schedule.LocalDay.wallClock(year: p[0], month: p[1], day: p[2], seconds: 0)
            return (0..<24).map { midnight + Int64($0) * 3600 + 17 * 60 }
        }
    }

    /// The local days around `time` in a zone from the system's time-zone database, as the daemon makes them
    /// from the C library's.
    static func days(around time: Int64, zone name: String) -> [Schedule.LocalDay] {
        let zone = TimeZone(identifier: name)!
        return Schedule.LocalDay.days(around: time) { Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval($0)))) }
    }

    @Test(.enabled(if: SunTests.python != nil, "astral is not installed (`make deps-astral` puts it in .build/astral-venv)"))
    func modeAndNextChangeAgreeWithTheSunEverywhere() throws {
        let python = try #require(SunTests.python)
        var input = "", cases: [(String, Double, Double, Int64)] = []
        for (name, lat, lon) in Self.places {
            for t in Self.instants {
                input += "\(lat) \(lon) \(t)\n"
                cases.append((name, lat, lon, t))
            }
        }
        let answers = try SunTests.astral(python, "astral-at.py", input)
        try #require(answers.count == cases.count)
        var checked = 0, polar = 0, failures = 0
        for ((name, lat, lon, t), answer) in zip(cases, answers) {
            let up = answer[0] == "up"
            let next: (mode: Mode, time: Int64)? = answer[1] == "none" ? nil : (answer[1] == "rise" ? .light : .dark, Int64(answer[2])!)
            let previous = Int64(answer[3])
            if next == nil { polar += 1 }
            for zone in Self.zones {
                let days = Self.days(around: t, zone: zone)
                let plan = try #require(Schedule(latitude: lat, longitude: lon).plan(now: t, days: days))
                let at = "\(name) at \(t) (\(Date(timeIntervalSince1970: TimeInterval(t)))) in \(zone)"
                // Within two minutes of a crossing the two computations may stand on either side of it.
                if let next, next.time - t < 120 { continue }
                if let previous, t - previous < 120 { continue }
                var ok = plan.mode == (up ? .light : .dark)
                if let next, next.time < plan.replanAt {
                    ok = ok && plan.next?.mode == next.mode && abs((plan.next?.time ?? .max / 2) - next.time) <= 60
                } else {
                    // No crossing before the plan's horizon: none planned (a polar day or night goes on).
                    ok = ok && (plan.next == nil || plan.next!.time >= (next?.time ?? .max) - 60)
                }
                if !ok {
                    failures += 1
                    if failures <= 20 {
                        Issue.record("\(at): astral \(answer.joined(separator: " ")), ours \(plan.mode) next \(String(describing: plan.next))")
                    }
                }
                checked += 1
            }
        }
        #expect(failures == 0, "\(failures) of \(checked) disagree")
        #expect(polar > 100, "the table must include polar days and nights (\(polar))")
        print("figure: schedule vs astral: \(checked) plans (\(Self.places.count) places × \(Self.zones.count) zones × \(Self.instants.count) instants) agree; \(polar) instants in polar day or night")
    }

    /// The report: at 05:47 UTC (14:47 in Tokyo) the daemon said dark, and `schedule` "no change in the next
    /// 2 days (polar day or night)", in UTC and in Tokyo's own zone alike; Sydney and Auckland too.
    @Test(arguments: [("UTC", 35.68, 139.69), ("Asia/Tokyo", 35.68, 139.69), ("UTC", -33.87, 151.21), ("Pacific/Auckland", -36.85, 174.76)])
    func anAfternoonEastOfHundredDegreesIsLight(_ zone: String, _ latitude: Double, _ longitude: Double) throws {
        let s = try Sandbox()
        s.env["TZ"] = zone
        s.env["APPEARANCED_TEST_CLOCK_FILE"] = s.root + "/clock-offset"
        let then = Schedule.LocalDay.wallClock(year: 2026, month: 11, day: 27, seconds: 5 * 3600 + 47 * 60)
        try s.write("\(then - Int64(Date().timeIntervalSince1970))\n", to: s.root + "/clock-offset")
        try s.write("[schedule]\nlatitude = \(latitude)\nlongitude = \(longitude)\n", to: s.configFile)
        try s.startDaemon()
        #expect(try s.ctl("get").out == "light\n")
        let r = try s.ctl("schedule", "--days", "2")
        #expect(r.status == 0 && r.out.hasPrefix("now: light\n") && !r.out.contains("polar"), "\(r)")
        let changes = r.out.split(separator: "\n").dropFirst(2)  // "now:" and "place:"
        #expect(changes.count >= 3 && changes.first?.hasSuffix("dark   sunset") == true, "\(r.out)")
    }
}
