import AppearanceCore
import AppearancePosix
import AppearanceProtocol

/// `appearancectl schedule` for people: what the schedule says now, then its changes one line each.

func printSchedule(_ info: ScheduleInfo, days: Int) {
    if let w = info.waiting { out("waiting for idle: \(w.mode.rawValue) since \(Posix.localTime(w.since).clock) (\(w.cause))") }
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
        case .power: " (the power rule decides first, on battery)"
        case .lightSensor: " (the light sensor decides first)"
        default: " (the desktop's own setting decides first)"
        }
    } ?? ""
    out("now: \(mode.rawValue)\(hidden)")
    if let place = info.location { out("place: \(place.summary)") }
    var day = ""
    for c in info.changes {
        let l = Posix.localTime(c.time)
        let date = "\(l.weekdayName) \(l.date)"
        let word = c.skipped ? " (skipped)" : c.postponedFrom.map { " (postponed from \(Posix.localTime($0).clock))" } ?? ""
        out("\(date == day ? String(repeating: " ", count: date.count) : date)  \(l.clock)  \(c.mode.rawValue.padding(5))  \(c.cause)\(word)")
        day = date
    }
    if info.changes.isEmpty { out("no change in the next \(days) day\(days == 1 ? "" : "s") (polar day or night)") }
}

/// After `postpone` or `skip`: the next change as it now stands, in one line.
func printNextChange(_ info: ScheduleInfo) {
    guard let next = info.changes.first else { out("no change in the next 2 days"); return }
    let l = Posix.localTime(next.time)
    let when = "\(l.date) \(l.clock)"
    if next.skipped {
        let after = info.changes.dropFirst().first { !$0.skipped }.map { " (then \($0.mode.rawValue) at \(Posix.localTime($0.time).date) \(Posix.localTime($0.time).clock))" } ?? ""
        out("skipped: \(next.mode.rawValue) at \(when), \(next.cause)\(after)")
    } else if let from = next.postponedFrom {
        out("\(next.mode.rawValue) at \(when) (\(next.cause), postponed from \(Posix.localTime(from).clock))")
    } else {
        out("\(next.mode.rawValue) at \(when) (\(next.cause)), as planned")
    }
}
