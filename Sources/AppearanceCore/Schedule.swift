/// The schedule: light by day and dark by night, from the sun at a place (`latitude`/`longitude`), from fixed
/// local times (`light-at`/`dark-at`), or both (a fixed time replaces the sun's event of the same kind).
/// Pure: the caller supplies "now" and the local calendar (how a local date and time map to Unix time),
/// so daylight-saving days, time zones and an injected clock are all the caller's.
public struct Schedule: Equatable, Sendable {
    public var latitude: Double?
    public var longitude: Double?
    /// Minutes after local midnight.
    public var lightAt: Int?
    public var darkAt: Int?
    /// `schedule-over-desktop`: the schedule decides before the desktop's own choice.
    public var aboveDesktop: Bool

    public init(latitude: Double? = nil, longitude: Double? = nil, lightAt: Int? = nil, darkAt: Int? = nil,
                aboveDesktop: Bool = false) {
        self.latitude = latitude
        self.longitude = longitude
        self.lightAt = lightAt
        self.darkAt = darkAt
        self.aboveDesktop = aboveDesktop
    }

    /// No schedule configured.
    public var isEmpty: Bool { latitude == nil && lightAt == nil && darkAt == nil }

    /// One local calendar day, and the Unix time of a local time on it.
    public struct LocalDay: Sendable {
        public var year: Int, month: Int, day: Int
        /// Unix time of `minutes` after local midnight on this day (the caller's mktime).
        public var at: @Sendable (_ minutes: Int) -> Int64

        public init(year: Int, month: Int, day: Int, at: @escaping @Sendable (Int) -> Int64) {
            (self.year, self.month, self.day, self.at) = (year, month, day, at)
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
    }

    /// What the schedule says now, and its next change.
    public struct Plan: Equatable, Sendable {
        public var mode: Mode
        /// The next change of mode; nil when none falls in the days given (a long polar day or night).
        public var next: Event?
        /// When to plan again at the latest (the next change, else the start of the last day given).
        public var replanAt: Int64
    }

    /// Every event on `days` (consecutive local days, in order), sorted by time. A polar day or night is an
    /// event at its local midnight.
    public func events(on days: [LocalDay]) -> [Event] {
        var events: [Event] = []
        for d in days {
            var rise: Event?, set: Event?
            if let latitude, let longitude {
                switch Sun.day(utcMidnight: d.utcMidnight, latitude: latitude, longitude: longitude) {
                case .riseAndSet(let r, let s):
                    rise = Event(time: r, mode: .light, cause: "sunrise")
                    set = Event(time: s, mode: .dark, cause: "sunset")
                case .alwaysUp:
                    if lightAt == nil && darkAt == nil { events.append(Event(time: d.at(0), mode: .light, cause: "polar day")) }
                case .alwaysDown:
                    if lightAt == nil && darkAt == nil { events.append(Event(time: d.at(0), mode: .dark, cause: "polar night")) }
                }
            }
            if let lightAt { rise = Event(time: d.at(lightAt), mode: .light, cause: "light-at") }
            if let darkAt { set = Event(time: d.at(darkAt), mode: .dark, cause: "dark-at") }
            events += [rise, set].compactMap { $0 }
        }
        return events.sorted { $0.time < $1.time }
    }

    /// The mode at `now` and the next change, from the events of `days` (give the day before today up to a
    /// few days after). nil when the schedule is empty.
    public func plan(now: Int64, days: [LocalDay]) -> Plan? {
        guard !isEmpty, let last = days.last else { return nil }
        let all = events(on: days)
        guard let first = all.first else { return nil }
        let current = all.last(where: { $0.time <= now }) ?? Event(time: first.time, mode: first.mode.opposite, cause: "")
        let next = all.first { $0.time > now && $0.mode != current.mode }
        return Plan(mode: current.mode, next: next, replanAt: next?.time ?? last.at(0))
    }
}
