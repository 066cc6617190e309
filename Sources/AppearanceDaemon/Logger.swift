import AppearanceCore
import AppearancePosix

/// Log lines on stderr, one write(2) each: `<N>` syslog levels under systemd (JOURNAL_STREAM), else
/// `appearanced: warning: …`.
public final class Logger: @unchecked Sendable {
    // Mutated only on the daemon's queue (config reload); read from the same queue.
    public var level: LogLevel
    private let journal: Bool

    public init(level: LogLevel = .info, journal: Bool = Posix.environment("JOURNAL_STREAM") != nil) {
        (self.level, self.journal) = (level, journal)
    }

    public func log(_ severity: LogLevel, _ message: String) {
        guard severity <= level else { return }
        let line = journal ? "<\(severity.rawValue)>\(message)\n"
            : severity == .info || severity == .notice ? "appearanced: \(message)\n"
            : "appearanced: \(severity.name): \(message)\n"
        if held != nil { held?.append(line); return }
        // Never waits: a stderr that is full (a stuck journal) loses the line rather than stop the daemon.
        try? Descriptor.standardError.writeAll(line, until: Deadline(seconds: 0))
    }

    /// Lines logged while held (on the daemon's queue, like every log call), written in order by `release`.
    private var held: [String]?

    /// Holds the lines logged from now on until `release`: a change's own lines wait for its subscribers.
    public func hold() { if held == nil { held = [] } }

    /// Writes what was held, in order; nothing when nothing is held.
    public func release() {
        guard let lines = held else { return }
        held = nil
        for line in lines { try? Descriptor.standardError.writeAll(line, until: Deadline(seconds: 0)) }
    }

    public func error(_ m: String) { log(.error, m) }
    public func warning(_ m: String) { log(.warning, m) }
    public func notice(_ m: String) { log(.notice, m) }
    public func info(_ m: String) { log(.info, m) }
    public func debug(_ m: String) { log(.debug, m) }
}
