#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AppearanceCore
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
        guard let offsetFile, let bytes = try? Files.readAll(offsetFile, limit: 64) else { return 0 }
        return Int64(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: " \n\t")) ?? 0
    }

    /// Unix time, seconds.
    public func now() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return Int64(t.tv_sec) + offset
    }

    /// A Dispatch wall-clock deadline for `time` on this clock. Wall-clock timers follow the real-time clock:
    /// one due while the machine slept fires on resume, and one past a clock change fires at the new time.
    public func deadline(for time: Int64) -> DispatchWallTime {
        let real = time - offset
        return DispatchWallTime(timespec: timespec(tv_sec: Int(real), tv_nsec: 0))
    }

    /// The local days from the day before `time` to three days after it, for the schedule.
    public static func localDays(around time: Int64) -> [Schedule.LocalDay] {
        (-1...3).map { k in
            var t = time_t(time + Int64(k) * 86_400)
            var parts = tm()
            localtime_r(&t, &parts)
            let (y, m, d) = (Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday))
            return Schedule.LocalDay(year: y, month: m, day: d) { minutes in
                var local = tm()
                local.tm_year = Int32(y - 1900)
                local.tm_mon = Int32(m - 1)
                local.tm_mday = Int32(d)
                local.tm_hour = Int32(minutes / 60)
                local.tm_min = Int32(minutes % 60)
                local.tm_isdst = -1  // the zone's rule for that day decides (daylight-saving days included)
                return Int64(mktime(&local))
            }
        }
    }

    /// "19:42" local time, or "Tue 07:05" when not within the next 24 hours.
    public static func describe(_ time: Int64, from now: Int64) -> String {
        var t = time_t(time)
        var parts = tm()
        localtime_r(&t, &parts)
        let hm = String(format2: Int(parts.tm_hour)) + ":" + String(format2: Int(parts.tm_min))
        guard time - now >= 86_400 || time < now else { return hm }
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        return "\(days[Int(parts.tm_wday)]) \(Int(parts.tm_year) + 1900)-\(String(format2: Int(parts.tm_mon) + 1))-\(String(format2: Int(parts.tm_mday))) \(hm)"
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
