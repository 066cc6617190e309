import AppearanceCore
import AppearancePosix
import AppearanceProtocol

/// `appearancectl schedule` for people: what the schedule says now and what hides it, then its changes one
/// line each, the local date written once a day.
func printSchedule(_ info: ScheduleInfo, days: Int) {
    guard info.configured, let mode = info.mode else {
        if info.configured, let place = info.location {
            // location = "geoclue" with no place yet (and no fixed time to go by).
            out("no place yet: \(place.detail ?? "waiting for the location service")")
        } else {
            out("no schedule: add [schedule] to the config (latitude and longitude, location = \"geoclue\", or light-at and dark-at)")
        }
        return
    }
    let hidden = info.hiddenBy.map { by in
        switch by {
        case .temporary: " (a temporary override hides it until it ends)"
        case .override: " (your override hides it: appearancectl set system follows it again)"
        default: " (the desktop's own setting decides first)"
        }
    } ?? ""
    out("now: \(mode.rawValue)\(hidden)")
    if let place = info.location { out("place: \(place.summary)") }
    let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    var day = ""
    for c in info.changes {
        let l = Posix.localTime(c.time)
        let date = "\(weekdays[l.weekday]) \(l.date)"
        out("\(date == day ? String(repeating: " ", count: date.count) : date)  \(l.clock)  \(c.mode.rawValue.padding(5))  \(c.cause)")
        day = date
    }
    if info.changes.isEmpty { out("no change in the next \(days) day\(days == 1 ? "" : "s") (polar day or night)") }
}

/// A local time as `status`, `log`, `schedule` and `integrations` print it.
extension Posix.LocalTime {
    static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    /// `2026-11-27`
    var date: String { "\(year)-\(Self.two(month))-\(Self.two(day))" }
    /// `14:05`
    var clock: String { "\(Self.two(hour)):\(Self.two(minute))" }
}
