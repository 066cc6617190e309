import AppearanceCore
import AppearanceProtocol
import Dispatch

/// The notices (docs/architecture.md): which notice before the next automatic change is wanted; the
/// `Notifier` shows it. Confined to the daemon's queue.
final class Notices: @unchecked Sendable {
    let notifier: Notifier?
    /// The notice the notifier was last told to show (nil: none).
    private(set) var wanted: Notice?
    /// What the notifier last said it does (`status`).
    var detail = "none showing"
    /// A button's request that was refused, for the notice of that change to say why.
    var refusal: (time: Int64, mode: Mode, text: String)?
    /// The notice whose button was taken: another press on it (a double click) is not a second request.
    var acted: Notice.Key?
    /// Set once the daemon stops: no notice is shown after.
    private(set) var stopping = false
    /// What runs once the notice is closed (or the grace is over), while the daemon stops.
    private var afterClose: (() -> Void)?

    init(notifier: Notifier?) { self.notifier = notifier }

    /// Tells the notifier, when the notice wanted changed.
    func want(_ notice: Notice?) {
        guard !stopping, notice != wanted else { return }
        if notice?.key != wanted?.key { acted = nil }
        wanted = notice
        notifier?.show(notice)
    }

    /// How long a stopping daemon waits for its notice to be closed.
    static let closeGrace: DispatchTimeInterval = .seconds(2)

    /// The daemon stops: `finish` runs at the first `closed()`.
    func stop(then finish: @escaping () -> Void) {
        stopping = true
        afterClose = finish
    }

    /// The notice is closed, or the grace is over: the daemon goes on stopping (once).
    func closed() {
        let finish = afterClose
        afterClose = nil
        finish?()
    }
}

extension Daemon {
    /// The notice wanted now: the next automatic change, once it is `notify-before` away or nearer, if it changes
    /// the mode; otherwise none, and the timer is armed for when it will be.
    func updateNotice() {
        let automatic = settings.config.automatic
        var after = engine, notice: Notice?, dueAt: Int64?
        defer {
            timers.armNotice(at: dueAt)
            notices.want(notice)
        }
        guard notices.notifier != nil, publisher.serving, let before = automatic.notifyBefore, let next = timers.plan?.next,
              after.apply(.schedule(next.mode, aboveDesktop: scheduleAboveDesktop))?.modeChanged == true else { return }
        let now = clock.now()
        guard next.time - now <= before else {
            dueAt = next.time - before
            return
        }
        let cause = next.postponedFrom.map { "\(next.cause), postponed from \(Clock.describe($0, from: now))" } ?? next.cause
        let refusal = notices.refusal.flatMap { $0.time == next.time && $0.mode == next.mode ? $0.text : nil }
        notice = Notice(time: next.time, mode: next.mode, when: Clock.describe(next.time, from: now), cause: cause,
                        postponeBy: automatic.postponeBy, refusal: refusal)
    }

    /// What the notifier says: its state, or a button pressed, decided as `postpone` and `skip` are.
    func noticeReport(_ report: NoticeReport) {
        switch report {
        case .status(let detail):
            notices.detail = detail
        case .action(let action, let notice):
            guard let wanted = notices.wanted, wanted.time == notice.time, wanted.mode == notice.mode else {
                return log.info("the notice's \(action.rawValue) came for \(notice.mode.rawValue) at \(notice.when), which is no longer the change near: ignored")
            }
            guard notices.acted != wanted.key else {
                return log.info("the notice's \(action.rawValue) came again before the first press was done: ignored")
            }
            notices.acted = wanted.key
            log.info("the notice's \(action.rawValue) button was pressed (\(notice.summary))")
            let request: NextChange.Request = action == .postpone ? .postpone(seconds: wanted.postponeBy) : .skip
            adjustNextChange(request, by: "the notice") { [weak self] result in
                guard let self else { return }
                switch result {
                case .success:
                    self.notices.refusal = nil
                case .failure(let error):
                    self.log.warning("the notice's \(action.rawValue) was refused: \(error.message)")
                    self.notices.refusal = (notice.time, notice.mode, error.message)
                    self.updateNotice()
                }
            }
        }
    }

    /// `status`'s `notices`: nil without `notify-before`.
    var noticesDetail: String? {
        let automatic = settings.config.automatic
        guard let before = automatic.notifyBefore else { return nil }
        let what = "\(Notice.duration(before)) before an automatic change, Postpone \(Notice.duration(automatic.postponeBy))"
        guard !paths.trial else { return "off (trial instance: the session's daemon sends them)" }
        guard notices.notifier != nil else { return "\(what): none sent (no notifier)" }
        return "\(what): \(notices.detail)"
    }

    /// The daemon stops: its notice is closed before the bus goes, then `finish` runs, after at most `grace`. The
    /// queue is not held meanwhile: the bus's queue may be waiting on it to report (docs/decisions.md).
    func closeNotice(grace: DispatchTimeInterval = Notices.closeGrace, then finish: @escaping () -> Void) {
        notices.stop(then: finish)
        guard let notifier = notices.notifier else { return notices.closed() }
        notifier.stop { [weak self] in
            guard let self else { return }
            self.queue.async { self.notices.closed() }
        }
        queue.asyncAfter(deadline: .now() + grace) { [weak self] in self?.notices.closed() }
    }
}
