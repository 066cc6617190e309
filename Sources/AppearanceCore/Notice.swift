/// A desktop notification before an automatic change (`[automatic] notify-before`): its change and its words.
/// The daemon decides which is wanted (or none); a `Notifier` shows, updates and closes it.
public struct Notice: Equatable, Sendable {
    /// When the change comes (put off already, for a postponed one), and its mode.
    public var time: Int64
    public var mode: Mode
    /// The time for people ("19:00", "Tue 2026-03-31 07:00"), and what makes the change ("sunset", "dark-at").
    public var when: String
    public var cause: String
    /// How far the notice's Postpone puts it off (`postpone-by`), and the mode that stays when it is skipped.
    public var postponeBy: Int64
    /// Why the notice's last action was refused, for the notice to say; nil when it was not.
    public var refusal: String?

    public init(time: Int64, mode: Mode, when: String, cause: String, postponeBy: Int64, refusal: String? = nil) {
        (self.time, self.mode, self.when, self.cause, self.postponeBy, self.refusal) = (time, mode, when, cause, postponeBy, refusal)
    }

    /// What a notice closed by the user or the server is remembered by (it is not shown again).
    public struct Key: Equatable, Sendable {
        public var time: Int64
        public var mode: Mode
        public var refusal: String?
    }

    public var key: Key { Key(time: time, mode: mode, refusal: refusal) }

    /// The application name the notification server shows.
    public static let appName = "appearanced"

    /// "Dark mode at 19:00".
    public var summary: String { "\(mode == .dark ? "Dark" : "Light") mode at \(when)" }

    /// The body: the change, then (for a server that shows no buttons) the commands that do what the buttons do.
    public func body(buttons: Bool) -> String {
        var text = refusal.map { "Not done: \($0).\n" } ?? ""
        text += "The schedule switches to \(mode.rawValue) at \(when) (\(cause))."
        if !buttons {
            text += " To put it off: appearancectl postpone \(Self.duration(postponeBy)); to skip it: appearancectl skip."
        }
        return text
    }

    /// The actions, as the Notifications specification lists them: key, then label, for each.
    public var actions: [(key: NoticeAction, label: String)] {
        [(.postpone, "Postpone \(Self.words(postponeBy))"), (.skip, "Skip")]
    }

    /// "30m", "1h30m": a duration as the config and `appearancectl postpone` take it.
    public static func duration(_ seconds: Int64) -> String { String(Schedule.describeOffset(seconds).dropFirst()) }

    /// "30 minutes", "1 hour 30 minutes", "45 seconds": a duration for a label.
    public static func words(_ seconds: Int64) -> String {
        let parts: [(Int64, String)] = [(seconds / 86_400, "day"), (seconds % 86_400 / 3600, "hour"), (seconds % 3600 / 60, "minute"),
                                        (seconds % 60, "second")]
        let said = parts.filter { $0.0 > 0 }.map { "\($0.0) \($0.1)\($0.0 == 1 ? "" : "s")" }
        return said.isEmpty ? "0 seconds" : said.joined(separator: " ")
    }
}

/// What the notice's buttons do: the keys of its actions (`ActionInvoked`).
public enum NoticeAction: String, Equatable, Sendable, CaseIterable {
    case postpone, skip
}

/// What a notifier tells the daemon.
public enum NoticeReport: Equatable, Sendable {
    /// What it is doing, in words for `status` ("showing dark at 19:00", "no notification server on the session bus").
    case status(String)
    /// A button of the notice `notice` was pressed.
    case action(NoticeAction, Notice)
}

/// Shows the notice before an automatic change (`org.freedesktop.Notifications`), plugged in as an `Outlet` is.
public protocol Notifier: AnyObject {
    /// Starts; `report` is told what it does, and which button was pressed.
    func start(report: @escaping (NoticeReport) -> Void)
    /// The notice wanted now (nil: none). Shown if none shows, updated in place if another one shows, closed
    /// for nil; one the user or the server closed is not shown again.
    func show(_ notice: Notice?)
    /// Closes the notice showing, then calls `done` (at once when there is none or no server answers).
    func stop(done: @escaping @Sendable () -> Void)
}
