import Foundation
import Testing

/// The time zone changing under a running daemon (the zone file replaced, as timedatectl and package
/// managers do): the schedule is planned again at once in the new zone, not at its next planned change.
@Suite struct TimeZoneTests {
    @Test func aReplacedZoneFileReplansTheSchedule() throws {
        let s = try Sandbox()
        let zone = s.root + "/zone"
        try FileManager.default.copyItem(atPath: "/usr/share/zoneinfo/Etc/UTC", toPath: zone)
        s.env["TZ"] = ":" + zone
        // Today 12:00 UTC, whatever the real time: light between 07:00 and 19:00 in UTC, and in UTC+12
        // (00:00 there) dark. A 12-hour shift flips a 12-hour day, so the mode tells which zone is in force.
        s.env["APPEARANCED_TEST_CLOCK_FILE"] = s.root + "/clock-offset"
        let real = Int64(Date().timeIntervalSince1970)
        try s.write("\(real / 86_400 * 86_400 + 12 * 3600 - real)\n", to: s.root + "/clock-offset")
        try s.write("[schedule]\nlight-at = \"07:00\"\ndark-at = \"19:00\"\n", to: s.configFile)
        let d = try s.startDaemon()
        #expect(try s.ctl("get").out == "light\n")
        // Replaced the way timedatectl replaces /etc/localtime: a new file renamed over the old one.
        try FileManager.default.copyItem(atPath: "/usr/share/zoneinfo/Etc/GMT-12", toPath: zone + ".new")
        #expect(rename(zone + ".new", zone) == 0)
        try waitUntil("the schedule to follow the new zone; stderr: \(d.stderr)") { try s.ctl("get").out == "dark\n" }
        try d.waitForStderr("the time zone changed (\(zone)): planning the schedule again")
        #expect(try s.ctl("log").out.contains("schedule: dark-at"))
    }
}
