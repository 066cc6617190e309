/// The user's word on the next automatic change (`postpone`, `skip`), naming it as planned (time and mode),
/// until that change is over (`isOver`).
public struct NextChange: Equatable, Sendable {
    /// The change it acts on, as planned without it.
    public var time: Int64
    public var mode: Mode
    /// Seconds it is put off (postpones add up); 0 for none.
    public var postponedBy: Int64
    public var skipped: Bool

    public init(time: Int64, mode: Mode, postponedBy: Int64 = 0, skipped: Bool = false) {
        (self.time, self.mode, self.postponedBy, self.skipped) = (time, mode, postponedBy, skipped)
    }

    /// The longest a change can be put off: a day (a change put off further is better skipped).
    public static let maxPostpone: Int64 = 86_400
    /// How far a re-planned event may have moved and still be the one meant (a new place, new offsets).
    static let sameEvent: Int64 = 3_600

    /// What a request for the next automatic change does: the new word, or why there is none to give.
    public enum Request: Equatable, Sendable {
        case postpone(seconds: Int64), cancelPostpone, skip, cancelSkip
    }
}

extension Schedule {
    /// Events of `days` with `next` applied: its event moved (`postponedFrom` set) or marked `skipped`.
    public func events(on days: [LocalDay], adjusting next: NextChange?) -> [Event] {
        var all = events(on: days)
        guard let next, let i = index(of: next, in: all) else { return all }
        if next.skipped { all[i].skipped = true }
        if next.postponedBy > 0 {
            all[i].postponedFrom = all[i].time
            all[i].time += next.postponedBy
            all.sort { $0.time < $1.time }
        }
        return all
    }

    /// The event `next` names: the nearest of its mode within an hour of its time.
    func index(of next: NextChange, in events: [Event]) -> Int? {
        let near = events.indices.filter { events[$0].mode == next.mode && abs(events[$0].time - next.time) <= NextChange.sameEvent }
        return near.min { abs(events[$0].time - next.time) < abs(events[$1].time - next.time) }
    }

    /// Whether `next` has done its work by `now` (the change has happened, a skipped one's follower has come).
    public func isOver(_ next: NextChange, now: Int64, days: [LocalDay]) -> Bool {
        let all = events(on: days)
        guard let i = index(of: next, in: all) else { return now > next.time + next.postponedBy }
        if next.skipped { return all[(i + 1)...].first.map { $0.time <= now } ?? false }
        return now >= all[i].time + next.postponedBy
    }

    /// The new word on the next change for `request` at `now` (nil: none left), or why not (`show`: a time for people).
    public func deciding(_ request: NextChange.Request, current: NextChange?, now: Int64, days: [LocalDay],
                         show: (Int64) -> String) -> Result<NextChange?, Refusal> {
        let unadjusted = events(on: days)
        // The change the request acts on: the one the current word names, else the plan's next.
        let target: Event
        if let current, let i = index(of: current, in: unadjusted) {
            target = unadjusted[i]
        } else {
            guard let next = plan(now: now, days: days)?.next else {
                return .failure(Refusal("no automatic change is coming in the next days (no schedule, or a polar day or night)"))
            }
            target = next
        }
        var word = current ?? NextChange(time: target.time, mode: target.mode)
        switch request {
        case .postpone(let seconds):
            guard seconds > 0 else { return .failure(Refusal("a postponement must be longer than 0 seconds")) }
            guard !word.skipped else {
                return .failure(Refusal("the next change, \(target.mode.rawValue) at \(show(target.time)), is skipped; cancel that first (skip --cancel)"))
            }
            let (by, overflow) = word.postponedBy.addingReportingOverflow(seconds)
            guard !overflow, by <= NextChange.maxPostpone else {
                return .failure(Refusal("a change can be put off by a day at most; skip it instead"))
            }
            if let after = unadjusted.first(where: { $0.time > target.time }), target.time + by >= after.time {
                return .failure(Refusal("that would put \(target.mode.rawValue) past the change after it (\(after.mode.rawValue) at \(show(after.time))); skip it instead"))
            }
            word.postponedBy = by
        case .skip:
            word.skipped = true
        case .cancelPostpone:
            guard word.postponedBy > 0 else { return .failure(Refusal("nothing is postponed")) }
            word.postponedBy = 0
        case .cancelSkip:
            guard word.skipped else { return .failure(Refusal("nothing is skipped")) }
            word.skipped = false
        }
        return .success(word.postponedBy == 0 && !word.skipped ? nil : word)
    }

    /// Why a request on the next change is refused, in words for people.
    public struct Refusal: Error, Equatable, Sendable {
        public var text: String
        init(_ text: String) { self.text = text }
    }
}
