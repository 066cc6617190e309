/// The schedule: light by day and dark by night, from the sun at a place, from fixed local times, or both (a fixed
/// time replaces the sun's event of its kind). Pure: the caller supplies "now" and the local calendar.
public struct Schedule: Equatable, Sendable {
    public var latitude: Double?
    public var longitude: Double?
    /// Minutes after local midnight.
    public var lightAt: Int?
    public var darkAt: Int?
    /// `schedule-over-desktop`: the schedule decides before the desktop's own choice.
    public var aboveDesktop: Bool
    /// `sunrise-offset` / `sunset-offset`: seconds the sun's events move (negative: earlier); not fixed times or polar days.
    public var sunriseOffset: Int64
    public var sunsetOffset: Int64

    public init(latitude: Double? = nil, longitude: Double? = nil, lightAt: Int? = nil, darkAt: Int? = nil,
                aboveDesktop: Bool = false, sunriseOffset: Int64 = 0, sunsetOffset: Int64 = 0) {
        (self.latitude, self.longitude, self.lightAt, self.darkAt) = (latitude, longitude, lightAt, darkAt)
        (self.aboveDesktop, self.sunriseOffset, self.sunsetOffset) = (aboveDesktop, sunriseOffset, sunsetOffset)
    }

    /// An offset as the config writes it and `log` shows it: "+30m", "-1h", "+1h30s"; "" for none.
    public static func describeOffset(_ seconds: Int64) -> String {
        guard seconds != 0 else { return "" }
        let m = seconds.magnitude
        let (h, rest) = m.quotientAndRemainder(dividingBy: 3600)
        let (min, sec) = rest.quotientAndRemainder(dividingBy: 60)
        var text = seconds < 0 ? "-" : "+"
        if h > 0 { text += "\(h)h" }
        if min > 0 { text += "\(min)m" }
        if sec > 0 { text += "\(sec)s" }
        return text
    }

    public var isEmpty: Bool { latitude == nil && lightAt == nil && darkAt == nil }

    /// One local calendar day, and the Unix time of a local time on it.
    public struct LocalDay: Sendable {
        public var year: Int, month: Int, day: Int
        /// Unix time of `minutes` after local midnight on this day (the caller's mktime).
        public var at: @Sendable (_ minutes: Int) -> Int64

        public init(year: Int, month: Int, day: Int, at: @escaping @Sendable (Int) -> Int64) {
            (self.year, self.month, self.day, self.at) = (year, month, day, at)
        }

        /// A day of a zone given by its offset from UTC at each instant (seconds east, as `tm_gmtoff`).
        public static func inZone(year: Int, month: Int, day: Int, utcOffset: @escaping @Sendable (Int64) -> Int64) -> LocalDay {
            var d = LocalDay(year: year, month: month, day: day) { _ in 0 }
            let midnight = d.utcMidnight
            d.at = { minutes in LocalDay.instant(wall: midnight + Int64(minutes) * 60, utcOffset: utcOffset) }
            return d
        }

        /// The local days from the day before `time` to `after` days after it, in a zone as `inZone` takes it.
        public static func days(around time: Int64, after: Int = 3, utcOffset: @escaping @Sendable (Int64) -> Int64) -> [LocalDay] {
            (-1...after).map { k in
                let t = time + Int64(k) * 86_400
                let (year, month, day) = civilDate(days: (t + utcOffset(t)).floorDays)
                return .inZone(year: year, month: month, day: day, utcOffset: utcOffset)
            }
        }

        /// The calendar date of a day numbered from 1970-01-01 (Howard Hinnant's algorithm).
        static func civilDate(days: Int64) -> (year: Int, month: Int, day: Int) {
            let z = days + 719_468
            let era = (z >= 0 ? z : z - 146_096) / 146_097
            let doe = z - era * 146_097
            let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
            let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
            let mp = (5 * doy + 2) / 153
            let day = Int(doy - (153 * mp + 2) / 5 + 1)
            let month = Int(mp < 10 ? mp + 3 : mp - 9)
            return (Int(yoe + era * 400) + (month <= 2 ? 1 : 0), month, day)
        }

        /// The Unix time of a local wall-clock time, given as the Unix time it would be in UTC (`wall`): a time the
        /// clocks skip happens when the gap ends, a time they show twice the first time.
        public static func instant(wall: Int64, utcOffset: (Int64) -> Int64) -> Int64 {
            // The offsets a day before and a day after are those on either side of a change, if there is one.
            let before = utcOffset(wall - 86_400), after = utcOffset(wall + 86_400)
            let exact = [before, utcOffset(wall), after].map { wall - $0 }.filter { wall - utcOffset($0) == $0 }
            if let first = exact.min() { return first }
            // In a gap: the clocks jumped from `before` to a larger `after` somewhere between the two readings.
            guard after > before else { return wall - before }
            var lo = wall - after, hi = wall - before  // utcOffset(lo) is still `before`, utcOffset(hi) already `after`
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2
                if utcOffset(mid) == before { lo = mid } else { hi = mid }
            }
            return hi
        }

        /// A local date and time as the Unix time it would be in UTC (what `instant(wall:utcOffset:)` takes).
        public static func wallClock(year: Int, month: Int, day: Int, seconds: Int) -> Int64 {
            LocalDay(year: year, month: month, day: day) { _ in 0 }.utcMidnight + Int64(seconds)
        }

        /// Unix time of 00:00 UTC on the same calendar date (the day the sun is computed for).
        var utcMidnight: Int64 {
            // Days from the civil date (Howard Hinnant's algorithm).
            let y = month <= 2 ? year - 1 : year
            let era = (y >= 0 ? y : y - 399) / 400
            let yoe = y - era * 400
            let mp = (month + 9) % 12
            let doy = (153 * mp + 2) / 5 + day - 1
            let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
            return Int64(era * 146_097 + doe - 719_468) * 86_400
        }
    }

    public struct Event: Equatable, Sendable {
        public var time: Int64
        public var mode: Mode
        public var cause: String
        /// Put off by the user (`postpone`): the time it had.
        public var postponedFrom: Int64? = nil
        /// Dropped by the user (`skip`): listed, but it changes nothing.
        public var skipped = false

        public init(time: Int64, mode: Mode, cause: String, postponedFrom: Int64? = nil, skipped: Bool = false) {
            (self.time, self.mode, self.cause, self.postponedFrom, self.skipped) = (time, mode, cause, postponedFrom, skipped)
        }
    }

    /// What the schedule says now, and its next change.
    public struct Plan: Equatable, Sendable {
        public var mode: Mode
        /// The event that made it ("sunset", "dark-at", "polar night").
        public var cause: String
        /// The next change of mode; nil when none falls in the days given (a long polar day or night).
        public var next: Event?
        /// When to plan again at the latest (the next change, else the start of the last day given).
        public var replanAt: Int64
    }

    /// Every event on `days` (consecutive local days, in order), sorted by time: fixed times on each local day, the
    /// sun's events where they fall within them (a polar day or night has none: `plan`).
    public func events(on days: [LocalDay]) -> [Event] {
        guard let first = days.first, let last = days.last else { return [] }
        var events: [Event] = []
        for d in days {
            let rise = lightAt.map { Event(time: d.at($0), mode: .light, cause: "light-at") }
            let set = darkAt.map { Event(time: d.at($0), mode: .dark, cause: "dark-at") }
            // Both fixed times on one instant (a daylight-saving gap): the one configured later in the day happens.
            if let r = rise, let s = set, r.time == s.time {
                events.append((lightAt ?? -1) > (darkAt ?? -1) ? r : s)
            } else {
                events += [rise, set].compactMap { $0 }
            }
        }
        if let latitude, let longitude, lightAt == nil || darkAt == nil {
            let start = first.at(0), end = last.at(24 * 60)
            let fixed = Set(events.map(\.time))  // a fixed time wins over the sun's event on the same instant
            for e in sunEvents(from: start, to: end, latitude: latitude, longitude: longitude)
            where (e.mode == .light ? lightAt : darkAt) == nil && !fixed.contains(e.time) && (start..<end).contains(e.time) {
                events.append(e)
            }
        }
        return events.sorted { $0.time < $1.time }
    }

    /// The sun's events, moved by the offsets, over the solar days from a day before `start` to a day after `end`;
    /// offsets that leave a day no daylight leave it dark (a night no darkness, light).
    func sunEvents(from start: Int64, to end: Int64, latitude: Double, longitude: Double) -> [Event] {
        let days = (start.floorDays - 1)...(end.floorDays + 1)
        let crossings = days.map { Sun.crossings(day: $0, latitude: latitude, longitude: longitude) }
        let rise = "sunrise" + Self.describeOffset(sunriseOffset), set = "sunset" + Self.describeOffset(sunsetOffset)
        var events: [Event] = []
        for (i, c) in crossings.enumerated() {
            let r = c.rise.map { $0 + sunriseOffset }, s = c.set.map { $0 + sunsetOffset }
            let nextRise = i + 1 < crossings.count ? crossings[i + 1].rise.map { $0 + sunriseOffset } : nil
            if let r, s.map({ r < $0 }) ?? true { events.append(Event(time: r, mode: .light, cause: rise)) }
            if let s, nextRise.map({ s < $0 }) ?? true { events.append(Event(time: s, mode: .dark, cause: set)) }
        }
        return events
    }

    /// The mode at `now` and the next change, from the events of `days` (with none before `now`, the sun as it is
    /// now: a polar day or night); nil when the schedule is empty.
    public func plan(now: Int64, days: [LocalDay], adjusting next: NextChange? = nil) -> Plan? {
        guard !isEmpty, let last = days.last else { return nil }
        let all = events(on: days, adjusting: next).filter { !$0.skipped }
        let current: Event
        if let e = all.last(where: { $0.time <= now }) {
            current = e
        } else if let latitude, let longitude {
            let up = Sun.isUp(at: now, latitude: latitude, longitude: longitude)
            current = Event(time: now, mode: up ? .light : .dark, cause: up ? "polar day" : "polar night")
        } else if let first = all.first {
            current = Event(time: first.time, mode: first.mode.opposite, cause: "planned")
        } else {
            return nil
        }
        let next = all.first { $0.time > now && $0.mode != current.mode }
        // Planned again at the next event even where it changes nothing: the user's word on a change is over then.
        let replan = all.first { $0.time > now }?.time ?? last.at(0)
        let cause = current.postponedFrom.map { current.cause + " (postponed by \(Self.describeOffset(current.time - $0).dropFirst()))" } ?? current.cause
        return Plan(mode: current.mode, cause: cause, next: next, replanAt: min(replan, next?.time ?? replan))
    }
}

extension Int64 {
    /// Days since 1970-01-01 of a Unix time (rounded down, before 1970 too).
    var floorDays: Int64 { self >= 0 ? self / 86_400 : -((-self - 1) / 86_400) - 1 }
}
