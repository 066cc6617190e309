import AppearanceCore
import AppearanceProtocol

/// `[automatic]` of config.toml: a notice `notify-before` each automatic change, and a wait for idle.

public struct AutomaticSettings: Equatable, Sendable {
    /// Seconds before an automatic change its notice shows; nil: no notices (the default).
    public var notifyBefore: Int64?
    /// Seconds the notice's Postpone puts the change off.
    public var postponeBy: Int64 = 30 * 60
    /// `wait-for-idle`: an automatic change waits until the session is idle or locked (logind's hints).
    public var waitForIdle = false

    public init(notifyBefore: Int64? = nil, postponeBy: Int64 = 30 * 60) {
        self.notifyBefore = notifyBefore
        self.postponeBy = postponeBy
    }

    /// The longest `notify-before`: half a day (light and dark take turns about that often).
    public static let maxNotifyBefore: Int64 = 12 * 3600
}

extension Config {
    public static let automaticKeys = ["notify-before", "postpone-by", "wait-for-idle"]

    /// `[automatic]`: durations as `appearancectl postpone` takes them ("5m", "1h30m"), each within its bounds.
    static func parseAutomatic(_ table: TOMLTable, path: String) throws(ConfigError) -> AutomaticSettings {
        var a = AutomaticSettings()
        for (key, v) in table.entries {
            let limit: Int64
            switch key {
            case "wait-for-idle":
                guard let b = v.boolean else { throw .expected("true or false", "automatic.wait-for-idle", v, path) }
                a.waitForIdle = b
                continue
            case "notify-before": limit = AutomaticSettings.maxNotifyBefore
            case "postpone-by": limit = NextChange.maxPostpone
            default: throw .unknown("automatic.\(key)", v, known: automaticKeys, path)
            }
            let expected = "a duration such as \"5m\", \"30m\" or \"1h30m\" (units d, h, m, s), from 1s to \(Notice.duration(limit))"
            let seconds = try duration("automatic.\(key)", v, expected: expected, limit: limit, path: path)
            if key == "notify-before" { a.notifyBefore = seconds } else { a.postponeBy = seconds }
        }
        return a
    }
}
