import AppearanceCore
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// Wall-clock time and the local calendar. The test seam: with `APPEARANCED_TEST_CLOCK_FILE` set, "now" is the
/// real time plus the whole seconds written in that file (read on every use).
public struct Clock: Sendable {
    let offsetFile: String?

    public init(offsetFile: String? = Posix.environment("APPEARANCED_TEST_CLOCK_FILE")) { self.offsetFile = offsetFile }

    private var offset: Int64 {
        guard let offsetFile, let bytes = try? FileSystem.readAll(offsetFile, limit: 64) else { return 0 }
        // Bounded to ±10,000 years, so that no offset written there makes `now` overflow.
        let seconds = Int64(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: " \n\t")) ?? 0
        return min(max(seconds, -Self.tenThousandYears), Self.tenThousandYears)
    }

    private static let tenThousandYears: Int64 = 10_000 * 366 * 86_400

    /// Unix time, seconds.
    public func now() -> Int64 { Posix.wallClockSeconds() + offset }

    /// A Dispatch wall-clock deadline for `time` on this clock (it fires on resume, and follows a clock change).
    public func deadline(for time: Int64) -> DispatchWallTime {
        let (real, overflow) = time.subtractingReportingOverflow(offset)
        return Posix.wallTime(overflow ? (offset > 0 ? Int64.min : Int64.max) : real)
    }

    /// The local days from the day before `time` to three days after it, for the schedule.
    public static func localDays(around time: Int64, after: Int = 3) -> [Schedule.LocalDay] {
        Schedule.LocalDay.days(around: time, after: after, utcOffset: utcOffset(at:))
    }

    /// The local time zone's offset from UTC at `time`, in seconds east (localtime_r(3)).
    static func utcOffset(at time: Int64) -> Int64 {
        let t = Posix.localTime(time)
        return Schedule.LocalDay.wallClock(year: t.year, month: t.month, day: t.day,
                                           seconds: t.hour * 3600 + t.minute * 60 + t.second) - time
    }

    /// The times `describe` shows as a date: from the year 1 to the end of the year 9999, UTC.
    public static let earliestShown: Int64 = -62_135_596_800
    public static let latestShown: Int64 = 253_402_300_799

    /// "19:42" local time later today, or "Tue 2026-03-31 07:05" on any other local day; "never" outside
    /// `earliestShown...latestShown` (or a year the local calendar cannot show).
    public static func describe(_ time: Int64, from now: Int64) -> String {
        guard (earliestShown...latestShown).contains(time) else { return "never" }
        let t = Posix.localTime(time)
        guard (1...9999).contains(t.year), (0...6).contains(t.weekday) else { return "never" }
        let hm = t.clock
        let (ahead, overflow) = time.subtractingReportingOverflow(now)
        if !overflow, ahead >= 0, ahead < 86_400 {
            let today = Posix.localTime(now)
            if (today.year, today.month, today.day) == (t.year, t.month, t.day) { return hm }
        }
        return "\(t.weekdayName) \(t.date) \(hm)"
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let c = s.first, set.contains(c) { s.removeFirst() }
        while let c = s.last, set.contains(c) { s.removeLast() }
        return String(s)
    }
}
