import Foundation
import Testing

/// `status --json` carries the schedule as an object too (`scheduleView`, what `schedule --days 2` answers),
/// beside its line for people (`schedule`).
@Suite struct ScheduleStatusTests {
    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test(.timeLimit(.minutes(1)))
    func statusJSONHasTheScheduleAsAnObject() throws {
        let s = try Sandbox()
        try s.write("[schedule]\nlight-at = \"07:00\"\ndark-at = \"19:30\"\n", to: s.configFile)
        try s.startDaemon()
        let status = try Self.object(try s.ctl("status", "--json").out)
        let view = try #require(status["scheduleView"] as? [String: Any], "\(status)")
        let schedule = try Self.object(try s.ctl("schedule", "--days", "2", "--json").out)
        #expect(view["configured"] as? Bool == true && view["mode"] as? String == schedule["mode"] as? String)
        let events = try #require(view["events"] as? [[String: Any]])
        let causes: [String] = events.compactMap { $0["cause"] as? String }
        // Today's changes still ahead (none after 19:30) and tomorrow's two: at least two, whatever the hour.
        #expect(events.count >= 2 && causes.count == events.count && causes.allSatisfy { $0 == "light-at" || $0 == "dark-at" }, "\(events)")
        let times: [Int] = events.compactMap { $0["time"] as? Int }
        let scheduleTimes: [Int] = ((schedule["events"] as? [[String: Any]]) ?? []).compactMap { $0["time"] as? Int }
        #expect(times == scheduleTimes)
        #expect((status["schedule"] as? String)?.contains("until") == true, "the line for people stays: \(status)")
    }

    @Test(.timeLimit(.minutes(1)))
    func noScheduleNoObject() throws {
        let s = try Sandbox.started()
        let status = try Self.object(try s.ctl("status", "--json").out)
        #expect(status["scheduleView"] == nil && status["schedule"] == nil, "\(status)")
    }
}
