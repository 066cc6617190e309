import AppearanceCore
import AppearanceFormats
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The changes of the mode for `appearancectl log` ("why did my theme flip?"), everyone's and an app's by its
/// override: the newest `capacity` in memory, each also written to log.jsonl (`ChangeLogStore`).
struct TransitionLog {
    typealias Entry = LogEntry

    static let capacity = ChangeLogFile.kept
    /// Oldest first.
    private(set) var ordered: [Entry] = []
    /// The mode of the newest entry for everyone (nil: none yet).
    private(set) var lastMode: Mode?

    /// A run of automatic changes faster than this folds into one entry: with two automatic entries already
    /// within `foldWindow` seconds, the next one replaces the newest (`changes` counts them).
    static let foldWindow: Int64 = 60

    /// Appends `entry`, its cause bounded, or folds it into the newest: returns it as kept, and whether it replaced.
    @discardableResult
    mutating func append(_ entry: Entry, folding: Bool = true) -> (entry: Entry, replaced: Bool) {
        var e = entry
        if folding, Self.automatic(e), ordered.count >= 2, case let (before, last) = (ordered[ordered.count - 2], ordered[ordered.count - 1]),
           Self.automatic(last), Self.automatic(before), e.time >= before.time, e.time - before.time <= Self.foldWindow {
            let changes = last.changes + 1
            e = Entry(time: e.time, from: last.from, to: e.to, source: e.source,
                      cause: Self.bounded("\(changes) automatic changes within a minute; the last: \(entry.cause)"), changes: changes)
            ordered[ordered.count - 1] = e
            lastMode = e.to
            return (e, true)
        }
        e.cause = Self.bounded(e.cause)
        ordered.append(e)
        if ordered.count > Self.capacity { ordered.removeFirst() }
        if e.app == nil { lastMode = e.to }
        return (e, false)
    }

    /// A change of everyone's mode that nobody asked for (the desktop, the schedule, the default).
    static func automatic(_ e: Entry) -> Bool { e.app == nil && [.system, .schedule, .default].contains(e.source) }

    /// `cause`, cut to at most `ReplyBounds.logCause` bytes as JSON, ending "…" when cut.
    static func bounded(_ cause: String) -> String {
        func length(_ s: Substring) -> Int { JSON.string(String(s)).bytes.count - 2 }
        // A byte takes at most 6 as JSON (\u0001): short causes need no encoding to know they fit.
        guard cause.utf8.count * 6 > ReplyBounds.logCause, length(cause[...]) > ReplyBounds.logCause else { return cause }
        // The longest prefix (in characters) whose encoding leaves room for the ellipsis (3 bytes).
        var low = 0, high = cause.count
        while low < high {
            let mid = (low + high + 1) / 2
            if length(cause.prefix(mid)) <= ReplyBounds.logCause - 3 { low = mid } else { high = mid - 1 }
        }
        return String(cause.prefix(low)) + "…"
    }

    /// `{"entries": […]}`: the newest `limit` (of `app`'s own entries when given), oldest first.
    func json(limit: Int?, app: String? = nil) -> JSON {
        var all = ordered
        if let app { all = all.filter { $0.app == app } }
        let shown = limit.map { all.suffix($0) } ?? all[...]
        return .object([("entries", .array(shown.map(\.json)))])
    }
}

/// log.jsonl, the change log on disk (docs/decisions.md, "The change log on disk"): read at start, then each entry
/// appended on the small files' writer (SmallFiles), the whole rewritten atomically past `ChangeLogFile.rewriteAfter` lines.
final class ChangeLogStore: @unchecked Sendable {
    let path: String
    private let log: Logger
    private let daemonQueue: DispatchQueue
    private let files: SmallFiles
    // On the daemon's queue: the lines the file holds once every queued write is done; whether the next write
    // must be a whole rewrite (a torn or missing line, a failed write); the failure the journal was last told of.
    private var lines = 0
    private var rewriteNext = false
    private var failure: String?
    // On the writer's queue: whether the last write failed.
    private var failed = false

    init(path: String, queue: DispatchQueue, files: SmallFiles, log: Logger) {
        (self.path, self.daemonQueue, self.files, self.log) = (path, queue, files, log)
    }

    /// The file's entries, oldest first. Never fails: an unusable file is kept aside (said) and the log starts empty.
    func load() -> [LogEntry] {
        let leftovers = FileSystem.removeLeftovers(of: path)
        if leftovers > 0 { log.info("removed \(leftovers) temporary file\(leftovers == 1 ? "" : "s") a stopped instance left next to \(path)") }
        let (bytes, problem) = readOwnFile(path, limit: ChangeLogFile.largestWritten,
                                           tooBig: "is not a valid change log: larger than \(ChangeLogFile.largestWritten) bytes, and appearanced writes that at most")
        if let problem { return discard(problem) }
        guard let bytes else { return [] }
        switch ChangeLogFile.parse(bytes) {
        case .success(let loaded):
            lines = loaded.lines
            if loaded.torn { log.warning("\(path): left out an incomplete last line (a write cut short)") }
            if loaded.needsRewrite { rewrite(loaded.entries) }
            return loaded.entries
        case .failure(let invalid):
            return discard(invalid.problem)
        }
    }

    private func discard(_ problem: String) -> [LogEntry] {
        // Never append to a file that could not be read.
        rewriteNext = keepAside(path, problem, then: "starting a new change log", log: log) == nil
        return []
    }

    /// Writes `entry`, the newest of `all`, after what is queued; `replacing`: it stands for the newest line too.
    func append(_ entry: LogEntry, replacing: Bool = false, all: TransitionLog) {
        if rewriteNext || lines + 1 > ChangeLogFile.rewriteAfter { return rewrite(all.ordered) }
        lines += 1
        let line = ChangeLogFile.line(entry, replacing: replacing)
        write { path throws(Errno) in
            let d = try Descriptor.open(path, [.writeOnly, .create, .append, .noFollow, .nonBlocking, .noControllingTerminal], mode: 0o600)
            defer { d.close() }
            guard try d.status().kind == .regular else { throw Errno(Errno.invalid, "open (not a regular file)", path: path) }
            try d.writeAll(line)
        }
    }

    /// Replaces the file with `entries` (the newest `kept`).
    private func rewrite(_ entries: [LogEntry]) {
        rewriteNext = false
        lines = min(entries.count, ChangeLogFile.kept)
        let bytes = ChangeLogFile.encode(entries)
        write { path throws(Errno) in try FileSystem.writeAtomically(path, bytes) }
    }

    /// Runs `body` on the writer's queue, the folder made first; the daemon's queue hears when writing fails or works again.
    private func write(_ body: @escaping @Sendable (String) throws(Errno) -> Void) {
        files.perform { [self] in
            do throws(Errno) {
                try FileSystem.makeDirectories(FileSystem.directory(of: path))
                try body(path)
                guard failed else { return }
                failed = false
                daemonQueue.async { [self] in
                    if failure != nil { log.info("\(path) is written again") }
                    failure = nil
                }
            } catch {
                failed = true
                let problem = "\(error.call): \(error.message)"
                daemonQueue.async { [self] in
                    rewriteNext = true  // what failed is not in the file: the next write puts all of it back
                    if problem != failure { log.warning("could not write the change log \(path) (\(problem)); `log` shows this run's changes from memory") }
                    failure = problem
                }
            }
        }
    }
}
