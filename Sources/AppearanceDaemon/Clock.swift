import AppearanceCore
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// Wall-clock time and the local calendar, for the schedule, temporary overrides and the log.
///
/// The test seam: with `APPEARANCED_TEST_CLOCK_FILE` set, "now" is the real time plus the whole seconds
/// written in that file (read on every use), so a test can put the daemon just before a transition, or
/// hours later "after a suspend", without touching the machine's clock. Nothing else reads the file.
public struct Clock: Sendable {
    let offsetFile: String?

    public init(offsetFile: String? = Posix.environment("APPEARANCED_TEST_CLOCK_FILE")) {
        self.offsetFile = offsetFile
    }

    private var offset: Int64 {
        guard let offsetFile, let bytes = try? FileSystem.readAll(offsetFile, limit: 64) else { return 0 }
        return Int64(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: " \n\t")) ?? 0
    }

    /// Unix time, seconds.
    public func now() -> Int64 {
        Posix.wallClockSeconds() + offset
    }

    /// A Dispatch wall-clock deadline for `time` on this clock. Wall-clock timers follow the real-time clock:
    /// one due while the machine slept fires on resume, and one past a clock change fires at the new time.
    public func deadline(for time: Int64) -> DispatchWallTime {
        let real = time - offset
        return Posix.wallTime(real)
    }

    /// The local days from the day before `time` to three days after it, for the schedule.
    public static func localDays(around time: Int64) -> [Schedule.LocalDay] {
        (-1...3).map { k in
            let day = Posix.localTime(time + Int64(k) * 86_400)
            let (y, m, d) = (day.year, day.month, day.day)
            return Schedule.LocalDay(year: y, month: m, day: d) { minutes in
                // The zone's rule for that day decides (daylight-saving days included).
                Posix.unixTime(year: y, month: m, day: d, minutes: minutes)
            }
        }
    }

    /// "19:42" local time, or "Tue 07:05" when not within the next 24 hours.
    public static func describe(_ time: Int64, from now: Int64) -> String {
        let t = Posix.localTime(time)
        let hm = String(format2: t.hour) + ":" + String(format2: t.minute)
        guard time - now >= 86_400 || time < now else { return hm }
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        return "\(days[t.weekday]) \(t.year)-\(String(format2: t.month))-\(String(format2: t.day)) \(hm)"
    }
}

extension String {
    init(format2 n: Int) { self = n < 10 ? "0\(n)" : "\(n)" }

    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let c = s.first, set.contains(c) { s.removeFirst() }
        while let c = s.last, set.contains(c) { s.removeLast() }
        return String(s)
    }
}
