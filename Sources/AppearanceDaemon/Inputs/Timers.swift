import AppearanceCore
import AppearanceDecide
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The timers: wall-clock timers for the schedule's next change, a temporary override's end and the notice
/// before the next change; a jump of the clock is met by planning again. Confined to the daemon's queue.
final class Timers: @unchecked Sendable {
    private let queue: DispatchQueue
    private let clock: Clock
    /// The schedule's current plan (for `status`).
    private(set) var plan: Schedule.Plan?
    // Each timer is cancelled when it is replaced.
    private var scheduleTimer: DispatchSourceTimer? { didSet { oldValue?.cancel() } }
    private var temporaryTimer: DispatchSourceTimer? { didSet { oldValue?.cancel() } }
    private var noticeTimer: (deadline: DispatchWallTime, timer: DispatchSourceTimer)? {
        didSet { oldValue?.timer.cancel() }
    }
    /// The schedule's timer fired: plan again.
    var onScheduleDue: () -> Void = {}
    /// The temporary override ending at this time is due.
    var onTemporaryDue: (Int64) -> Void = { _ in }
    /// The time for the notice before the next change has come.
    var onNoticeDue: () -> Void = {}

    init(queue: DispatchQueue, clock: Clock) { (self.queue, self.clock) = (queue, clock) }

    /// The realtime clock set, or the time-zone file replaced: local time moved without a timer firing.
    private var clockSource: DispatchSourceRead?
    private var zoneSource: DispatchSourceRead?

    /// Starts watching; `changed` is told why (after a new time zone is read), `failed` where a watch cannot be made.
    func watchClock(tz: String?, changed: @escaping (String) -> Void, failed: (String) -> Void) {
        do {
            let fd = try ClockWatch.clockSet()
            clockSource = readable(fd) { if ClockWatch.clockWasSet(fd) { changed("the clock was set") } }
        } catch {
            failed("cannot watch for the clock being set (\(error)), ignoring")
        }
        let file = ClockWatch.zoneFile(tz: tz)
        do {
            let fd = try ClockWatch.zoneChanges(of: file)
            zoneSource = readable(fd) {
                guard ClockWatch.zoneFileChanged(fd, file: file) else { return }
                ClockWatch.reloadTimeZone()
                changed("the time zone changed (\(file))")
            }
        } catch {
            failed("cannot watch \(file) for time-zone changes (\(error)), ignoring")
        }
    }

    private func readable(_ fd: Descriptor, _ handler: @escaping () -> Void) -> DispatchSourceRead {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd.raw, queue: queue)
        source.setEventHandler(handler: handler)
        source.setCancelHandler { fd.close() }
        source.resume()
        return source
    }

    /// Plans `schedule` from now and sets one timer for its next change: the mode now, and the event that made it.
    func plan(_ schedule: Schedule, adjusting next: NextChange?) -> (mode: Mode?, cause: String) {
        scheduleTimer = nil
        let now = clock.now()
        plan = schedule.plan(now: now, days: Clock.localDays(around: now), adjusting: next)
        guard let plan else { return (nil, "planned") }
        scheduleTimer = oneShot(at: plan.replanAt) { [weak self] in self?.onScheduleDue() }
        return (plan.mode, plan.cause)
    }

    /// What `status` says of the schedule, with the user's word on the next change.
    func scheduleDetail(_ word: NextChange?) -> String? {
        guard let plan else { return nil }
        let now = clock.now()
        let skipped = word.flatMap { w in w.skipped ? "; the next change, \(w.mode.rawValue) at \(Clock.describe(w.time, from: now)), is skipped" : nil } ?? ""
        guard let next = plan.next else { return "\(plan.mode.rawValue) (no change in the next days: polar day or night)" + skipped }
        let postponed = next.postponedFrom.map { " postponed from \(Clock.describe($0, from: now))" } ?? ""
        return "\(plan.mode.rawValue) until \(Clock.describe(next.time, from: now)) (\(next.cause): \(next.mode.rawValue)\(postponed))" + skipped
    }

    /// The schedule's changes from now over the next `days` local days (`schedule`), and what hides it now.
    func upcoming(_ schedule: Schedule, days: Int, state: (source: Source, nextChange: NextChange?)) -> ScheduleInfo {
        guard !schedule.isEmpty else { return ScheduleInfo(configured: false, mode: nil, hiddenBy: nil, changes: []) }
        let now = clock.now()
        // Today and the days after it, `days` local calendar days in all: up to the start of the day after.
        let local = Clock.localDays(around: now, after: days + 1)
        let end = local[days + 1].at(0)
        let events = schedule.events(on: local, adjusting: state.nextChange)
        let current = events.last { $0.time <= now && !$0.skipped }?.mode ?? plan?.mode
        var mode = current
        var changes: [ScheduleInfo.Change] = []
        for e in events where e.time > now && e.time < end && (e.mode != mode || e.skipped) {
            changes.append(e)
            if !e.skipped { mode = e.mode }
        }
        let decides = state.source
        let hiddenBy: Source? = [.temporary, .override, .system, .power, .lightSensor].contains(decides) ? decides : nil
        return ScheduleInfo(configured: true, mode: current, hiddenBy: hiddenBy, changes: changes)
    }

    /// A one-shot timer for a temporary override's end, if it has a time; any earlier one is cancelled.
    func armTemporary(_ expiry: TemporaryOverride.Expiry?) {
        temporaryTimer = nil
        guard case .at(let end)? = expiry else { return }
        temporaryTimer = oneShot(at: end) { [weak self] in self?.onTemporaryDue(end) }
    }

    /// A one-shot timer for the notice before the next change (nil: none); one for the same moment is kept.
    func armNotice(at time: Int64?) {
        let deadline = time.map(clock.deadline(for:))
        guard deadline != noticeTimer?.deadline else { return }
        noticeTimer = time.map { t in (clock.deadline(for: t), oneShot(at: t) { [weak self] in
            self?.noticeTimer = nil
            self?.onNoticeDue()
        }) }
    }

    private func oneShot(at time: Int64, _ handler: @escaping () -> Void) -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(wallDeadline: clock.deadline(for: time))
        timer.setEventHandler(handler: handler)
        timer.resume()
        return timer
    }
}

/// What the timers' events do to the state.
extension Daemon {
    /// Plans the schedule from now: applies what it says and sets one timer for its next change.
    func planSchedule(atOnce: Bool = false) {
        location.follow(settings.config)  // GeoClue started or stopped as the config (reloaded or not) says
        followSensors()
        let schedule = scheduleInForce
        let hadPlan = timers.plan != nil
        let (mode, event) = timers.plan(schedule, adjusting: engine.inputs.nextChange)
        // The user's word on the next change, once that change is over: dropped (planned with it first).
        if let word = engine.inputs.nextChange, schedule.isOver(word, now: clock.now(), days: Clock.localDays(around: clock.now())) {
            _ = engine.apply(.nextChange(nil))
            persistence.engineChanged()
            persistence.persistIfNeeded()
            log.info("the word on the next change (\(word.mode.rawValue) at \(Clock.describe(word.time, from: clock.now()))) is over")
            _ = timers.plan(schedule, adjusting: nil)
        }
        // A schedule just set up (a reload, a first place): its mode comes from the configuration, not an event.
        var cause = "schedule: \(event)"
        if !hadPlan, let mode, let plan = timers.plan {
            cause = "schedule set up: \(mode.rawValue)" + (plan.next.map { " until \($0.cause) \(Clock.describe($0.time, from: clock.now()))" } ?? "")
        }
        applyAutomatic(.schedule(mode, aboveDesktop: scheduleAboveDesktop), cause: cause, atOnce: atOnce)
        updateNotice()
    }

    /// While appearanced drives the desktop's setting, the schedule decides before the desktop's value.
    var scheduleAboveDesktop: Bool { scheduleInForce.aboveDesktop || publisher.follower.kind != nil }

    /// `postpone` and `skip` (and their `cancel`), from the socket or the bus: decided, saved durably, then planned again; the
    /// answer is what `schedule` says of the next two days.
    func adjustNextChange(_ request: NextChange.Request, by who: String, answer: @escaping (Result<ScheduleInfo, RPCError>) -> Void) {
        let now = clock.now()
        let name = Call.nextChange(request).method.rawValue
        let current = persistence.deciding().inputs.nextChange
        switch scheduleInForce.deciding(request, current: current, now: now, days: Clock.localDays(around: now),
                                        show: { Clock.describe($0, from: now) }) {
        case .failure(let refusal):
            answer(.failure(RPCError(.requestFailed, "\(name): \(refusal.text)")))
        case .success(let word):
            persistence.enqueue(.init(event: .nextChange(word), app: nil, cause: "\(name) by \(who)") { [weak self] result in
                guard let self else { return }
                answer(result.map { _ in self.scheduleReply(days: 2) })
            })
        }
    }

    func temporaryTimeCame(_ end: Int64) {
        guard case .at(let t)? = engine.inputs.temporary?.expiry, t == end else { return }  // replaced meanwhile
        guard let ended = Decide.temporaryTimeCame(end, on: engine, now: clock.now()) else {
            timers.armTemporary(engine.inputs.temporary?.expiry)  // fired early: the clock was set back
            return
        }
        if let t = engine.apply(ended) { publish([.init(t, cause: "temporary override ended (its time came)")]) }
        timers.armTemporary(nil)
    }

    /// `clockChanged`'s word for a resume from suspend: automatic changes held for idle are applied then.
    public static let resumed = "resumed from suspend"

    /// The clock may have jumped (resume from suspend, a clock or time-zone change): plan again now.
    public func clockChanged(_ why: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        log.info("\(why): planning the schedule again")
        let resumed = why == Self.resumed
        if resumed { releaseHeld("resume from suspend") }
        planSchedule(atOnce: resumed)
        if case .at(let end)? = engine.inputs.temporary?.expiry, clock.now() >= end {
            temporaryTimeCame(end)
        } else {
            timers.armTemporary(engine.inputs.temporary?.expiry)
        }
    }
}
