import AppearanceCore
import AppearanceProtocol

/// log.jsonl's format, next to state.json: the change log `appearancectl log` shows, one `LogEntry` a line as
/// `log` sends it (`{"time":…,"from":…,"to":…,"source":…,"app":…,"cause":…}`), oldest first. Bytes in,
/// entries out and back; appending, rewriting and keeping a bad file aside are the daemon's.
///
/// The daemon appends a line for each change and, once the file holds `rewriteAfter` lines, rewrites it with
/// the newest `kept`: the file never grows past `largestWritten` bytes.
public enum ChangeLogFile {
    /// The entries kept (and shown by `log`): the newest thousand.
    public static let kept = 1_000

    /// The lines a file holds at most before it is rewritten with the newest `kept`.
    public static let rewriteAfter = 2 * kept

    /// The latest time an entry holds: the end of the year 9999, as a state file's `until`.
    public static let latestTime = TemporaryOverride.untilRange.upperBound

    /// The longest line `line(_:)` writes, newline included: `{"time":` 8 + 12 digits (`latestTime`) +
    /// `,"from":"light"` 15 + `,"to":"light"` 13 + `,"source":"temporary"` 21 + `,"app":"` 8 + id 255 + `"` 1 +
    /// `,"cause":` 9 + cause 4,098 (`ReplyBounds.logCause` and its quotes) + `}` 1 + newline 1.
    public static let longestLine = 8 + 12 + 15 + 13 + 21 + 8 + StateFile.maxAppIDBytes + 1 + 9 + ReplyBounds.logCause + 2 + 1 + 1

    /// The largest file the daemon writes (`rewriteAfter` of the longest lines): 8,884,000 bytes. A larger
    /// one is not appearanced's: it is kept aside like a corrupt one.
    public static let largestWritten = rewriteAfter * longestLine

    /// What a file holds.
    public struct Loaded: Equatable, Sendable {
        /// The newest `kept` entries, oldest first.
        public var entries: [LogEntry]
        /// The lines the file holds (whole ones, the torn one excepted).
        public var lines: Int
        /// The file ended in an incomplete line that begins as the daemon's lines do: an append cut short by
        /// a crash or a full disk. It is left out; the file should be written again without it.
        public var torn: Bool
        /// The file should be rewritten before anything is appended: its last line is torn or has no
        /// newline, or it holds more than `rewriteAfter` lines.
        public var needsRewrite: Bool

        public init(entries: [LogEntry], lines: Int, torn: Bool, needsRewrite: Bool) {
            (self.entries, self.lines, self.torn, self.needsRewrite) = (entries, lines, torn, needsRewrite)
        }
    }

    /// Why a file cannot be used, in words that follow its path ("is not a valid change log: line 3: …").
    public struct Invalid: Error, Equatable, Sendable {
        public var problem: String
    }

    /// Reads a whole file. Any line that is not an entry makes the whole file invalid (the daemon keeps it
    /// aside and starts a new one), except an incomplete last line, which is an append cut short.
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
            switch entry(line) {
            case .success((let e, let replaces)):
                if replaces, !entries.isEmpty { entries[entries.count - 1] = e } else { entries.append(e) }
                lines += 1
                if end == nil { needsRewrite = true }  // the next append must not run on into it
            case .failure(let problem):
                // The daemon writes a line in one write(2): a last line that stops short is a cut append.
                if end == nil, line.starts(with: tornPrefix) {
                    torn = true
                    needsRewrite = true
                } else {
                    return .failure(Invalid(problem: "is not a valid change log: line \(number): \(problem.text)"))
                }
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

    /// One line: the entry's JSON and a newline. `replacing`: the entry stands for the line before it too (a
    /// run of automatic changes folded into one entry), which the file keeps until it is rewritten.
    public static func line(_ entry: LogEntry, replacing: Bool = false) -> [UInt8] {
        var e = entry
        e.time = min(max(e.time, 0), latestTime)
        var json = e.json
        if replacing, case .object(let members) = json { json = .object(members + [("replaces", .bool(true))]) }
        var bytes = json.bytes
        bytes.append(0x0A)
        return bytes
    }

    /// A whole file: the newest `kept` of `entries` (oldest first), a line each.
    public static func encode(_ entries: some Collection<LogEntry>) -> [UInt8] {
        var bytes: [UInt8] = []
        for e in entries.suffix(kept) { bytes += line(e) }
        return bytes
    }

    /// One line, without its newline, read strictly: fields the daemon does not write are ignored, but each
    /// it does write must be of its type and in its range.
    static func entry(_ line: ArraySlice<UInt8>) -> Result<(LogEntry, replaces: Bool), Problem> {
        guard line.count < longestLine else { return .failure("\(line.count + 1) bytes, and appearanced writes \(longestLine) at most") }
        let json: JSON
        do { json = try JSON.parse(line) } catch { return .failure("not JSON (\(error))") }
        guard case .object = json else { return .failure("not a JSON object") }
        guard case .number(let t)? = json["time"] else { return .failure("no \"time\" (whole seconds since 1970)") }
        guard let time = Int64(t), (0...latestTime).contains(time) else {
            return .failure("\"time\" \(shown(.number(t))) is out of range, expected whole seconds from 0 to \(latestTime) (1970 to the end of 9999)")
        }
        func mode(_ key: String, optional: Bool) -> Result<Mode?, Problem> {
            switch json[key] {
            case nil, .null?: return optional ? .success(nil) : .failure("no \"\(key)\" (\"light\" or \"dark\")")
            case let v?:
                guard let m = v.stringValue.flatMap(Mode.init(rawValue:)) else {
                    return .failure("invalid \"\(key)\" \(shown(v)), expected \"light\" or \"dark\"\(optional ? " or null" : "")")
                }
                return .success(m)
            }
        }
        let from: Mode?, to: Mode
        switch mode("from", optional: true) {
        case .failure(let p): return .failure(p)
        case .success(let m): from = m
        }
        switch mode("to", optional: false) {
        case .failure(let p): return .failure(p)
        case .success(let m?): to = m
        case .success(nil): return .failure("no \"to\"")
        }
        var source: Source?
        if let v = json["source"], v != .null {
            guard let s = v.stringValue.flatMap(Source.init(rawValue:)) else {
                return .failure("invalid \"source\" \(shown(v)), expected one of \(Source.allCases.map(\.rawValue).joined(separator: ", ")) or null")
            }
            source = s
        }
        var app: String?
        if let v = json["app"], v != .null {
            guard let s = v.stringValue, AppID.isValid(s) else {
                return .failure("invalid \"app\" \(shown(v)), expected 1-255 characters of A-Z a-z 0-9 . _ - not starting with a dot")
            }
            app = s
        }
        guard let cause = json["cause"]?.stringValue else { return .failure("no \"cause\" (a string)") }
        guard JSON.string(cause).bytes.count - 2 <= ReplyBounds.logCause else {
            return .failure("\"cause\" is longer than \(ReplyBounds.logCause) bytes as JSON")
        }
        var changes = 1
        if let v = json["changes"], v != .null {
            guard let n = v.intValue, n >= 1 else { return .failure("invalid \"changes\" \(shown(v)), expected a whole number from 1") }
            changes = n
        }
        let replaces: Bool
        switch json["replaces"] {
        case nil, .null?: replaces = false
        case let v?:
            guard let b = v.boolValue else { return .failure("invalid \"replaces\" \(shown(v)), expected true or false") }
            replaces = b
        }
        return .success((LogEntry(time: time, from: from, to: to, source: source, cause: cause, app: app, changes: changes), replaces))
    }

    /// What is wrong with one line.
    struct Problem: Error, ExpressibleByStringInterpolation {
        var text: String
        init(stringLiteral value: String) { text = value }
    }

    /// A value from the file as JSON, cut at 80 bytes: enough to find it, not a flood in the log.
    private static func shown(_ value: JSON) -> String {
        let text = value.text
        return text.utf8.count <= 80 ? text : String(decoding: text.utf8.prefix(80), as: UTF8.self) + "…"
    }
}
