/// Severity of a log line (syslog numbering, so the journal can read `<N>` prefixes).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7

    public var name: String { ["error", "warning", "notice", "info", "debug"][rawValue - 3] }

    public init?(name: String) {
        guard let l = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
        self = l
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}
