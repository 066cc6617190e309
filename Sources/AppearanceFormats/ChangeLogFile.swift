import AppearanceCore
import AppearanceProtocol

/// log.jsonl's format: one `LogEntry` a line as `log` sends it, oldest first; bytes in, entries out and back.
/// The daemon appends a line a change and rewrites the file with the newest `kept` after `rewriteAfter` lines.
public enum ChangeLogFile {
    /// The entries kept (and shown by `log`): the newest thousand.
    public static let kept = 1_000

    /// The lines a file holds at most before it is rewritten with the newest `kept`.
    public static let rewriteAfter = 2 * kept

    /// The latest time an entry holds: the end of the year 9999, as a state file's `until`.
    public static let latestTime = TemporaryOverride.untilRange.upperBound

    /// The longest line `line(_:)` writes, newline included, member by member.
    public static let longestLine = 8 + 12 + 15 + 13 + 21 + 8 + StateFile.maxAppIDBytes + 1 + 9 + ReplyBounds.logCause + 2 + 1 + 1

    /// The largest file the daemon writes (8,884,000 bytes): a larger one is kept aside like a corrupt one.
    public static let largestWritten = rewriteAfter * longestLine

    /// What a file holds.
    public struct Loaded: Equatable, Sendable {
        /// The newest `kept` entries, oldest first.
        public var entries: [LogEntry]
        /// The lines the file holds (whole ones, the torn one excepted).
        public var lines: Int
        /// The file ended in an append cut short (left out; the file should be written again without it).
        public var torn: Bool
        /// The file should be rewritten before anything is appended (a torn last line, or too many lines).
        public var needsRewrite: Bool

        public init(entries: [LogEntry], lines: Int, torn: Bool, needsRewrite: Bool) {
            (self.entries, self.lines, self.torn, self.needsRewrite) = (entries, lines, torn, needsRewrite)
        }
    }

    /// Why a file cannot be used, in words that follow its path ("is not a valid change log: line 3: …").
    public struct Invalid: Error, Equatable, Sendable {
        public var problem: String
    }

    /// Reads a whole file: any line that is not an entry makes it invalid, but for a torn last line.
    public static func parse(_ bytes: [UInt8]) -> Result<Loaded, Invalid> {
        guard bytes.count <= largestWritten else {
            return .failure(Invalid(problem: "is not a valid change log: \(bytes.count) bytes, and appearanced writes \(largestWritten) at most"))
        }
        var entries: [LogEntry] = []
        var lines = 0, torn = false, needsRewrite = false
        var start = 0, number = 0
        while start < bytes.count {
            number += 1
            let end = bytes[start...].firstIndex(of: 0x0A)
            let line = bytes[start..<(end ?? bytes.count)]
            start = (end ?? bytes.count) + 1
            do {
                let (e, replaces) = try entry(line)
                if replaces, !entries.isEmpty { entries[entries.count - 1] = e } else { entries.append(e) }
                lines += 1
                if end == nil { needsRewrite = true }  // the next append must not run on into it
            } catch {
                // The daemon writes a line in one write(2): a last line that stops short is a cut append.
                guard end == nil, line.starts(with: tornPrefix) else {
                    return .failure(Invalid(problem: "is not a valid change log: line \(number): \(error.text)"))
                }
                (torn, needsRewrite) = (true, true)
            }
            // The newest `kept` only; the slice is copied back once it is twice as long.
            if entries.count >= 2 * kept { entries.removeFirst(entries.count - kept) }
        }
        if entries.count > kept { entries.removeFirst(entries.count - kept) }
        if lines > rewriteAfter { needsRewrite = true }
        return .success(Loaded(entries: entries, lines: lines, torn: torn, needsRewrite: needsRewrite))
    }

    /// How every line the daemon writes begins.
    private static let tornPrefix = Array(#"{"time":"#.utf8)

    /// One line: the entry's JSON and a newline; `replacing`: it stands for the line before it too.
    public static func line(_ entry: LogEntry, replacing: Bool = false) -> [UInt8] {
        var e = entry
        e.time = min(max(e.time, 0), latestTime)
        return e.line(replacing: replacing)
    }

    /// A whole file: the newest `kept` of `entries` (oldest first), a line each.
    public static func encode(_ entries: some Collection<LogEntry>) -> [UInt8] {
        var bytes: [UInt8] = []
        for e in entries.suffix(kept) { bytes += line(e) }
        return bytes
    }

    /// One line, without its newline: unknown fields ignored, each the daemon writes checked.

    static func entry(_ line: ArraySlice<UInt8>) throws(Problem) -> (LogEntry, replaces: Bool) {
        guard line.count < longestLine else { throw "\(line.count + 1) bytes, and appearanced writes \(longestLine) at most" }
        let json: JSON
        do { json = try JSON.parse(line) } catch { throw "not JSON (\(error))" }
        guard case .object = json else { throw "not a JSON object" }
        guard case .number(let t)? = json["time"] else { throw "no \"time\" (whole seconds since 1970)" }
        guard let time = Int64(t), (0...latestTime).contains(time) else {
            throw "\"time\" \(shown(.number(t))) is out of range, expected whole seconds from 0 to \(latestTime) (1970 to the end of 9999)"
        }
        /// The member `key` as `read` takes it; nil when it is absent or null.
        func optional<T>(_ key: String, expected: String, _ read: (JSON) -> T?) throws(Problem) -> T? {
            guard let v = json[key], v != .null else { return nil }
            guard let value = read(v) else { throw "invalid \"\(key)\" \(shown(v)), expected \(expected)" }
            return value
        }
        let mode = { (v: JSON) in v.stringValue.flatMap(Mode.init(rawValue:)) }
        let from = try optional("from", expected: "\"light\" or \"dark\" or null", mode)
        guard let to = try optional("to", expected: "\"light\" or \"dark\"", mode) else { throw "no \"to\" (\"light\" or \"dark\")" }
        let source = try optional("source", expected: "one of \(Source.allCases.map(\.rawValue).joined(separator: ", ")) or null") {
            $0.stringValue.flatMap(Source.init(rawValue:))
        }
        let app = try optional("app", expected: "1-255 characters of A-Z a-z 0-9 . _ - not starting with a dot") {
            $0.stringValue.flatMap { AppID.isValid($0) ? $0 : nil }
        }
        guard let cause = json["cause"]?.stringValue else { throw "no \"cause\" (a string)" }
        guard JSON.string(cause).bytes.count - 2 <= ReplyBounds.logCause else { throw "\"cause\" is longer than \(ReplyBounds.logCause) bytes as JSON" }
        let changes = try optional("changes", expected: "a whole number from 1") { $0.intValue.flatMap { $0 >= 1 ? $0 : nil } } ?? 1
        let replaces = try optional("replaces", expected: "true or false", \.boolValue) ?? false
        return (LogEntry(time: time, from: from, to: to, source: source, cause: cause, app: app, changes: changes), replaces)
    }

    /// What is wrong with one line.
    struct Problem: Error, ExpressibleByStringInterpolation {
        var text: String
        init(stringLiteral value: String) { text = value }
    }
}
