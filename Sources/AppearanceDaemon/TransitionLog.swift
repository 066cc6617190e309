import AppearanceCore
import AppearanceProtocol

/// The recent changes of the mode, for `appearancectl log`: "why did my theme just flip?". In memory only,
/// the last `capacity` entries.
struct TransitionLog {
    typealias Entry = LogEntry

    static let capacity = 256
    private(set) var entries: [Entry] = []
    private var start = 0

    mutating func append(_ entry: Entry) {
        var e = entry
        e.cause = Self.bounded(e.cause)
        if entries.count < Self.capacity {
            entries.append(e)
        } else {
            entries[start] = e
            start = (start + 1) % Self.capacity
        }
    }

    /// `cause`, cut to at most `ReplyBounds.logCause` bytes as JSON (what `log`'s reply is sized for), ending
    /// "…" when cut: a cause that quotes every failing hook has no bound of its own.
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

    /// Oldest first.
    var ordered: [Entry] { Array(entries[start...] + entries[..<start]) }

    /// `{"entries": [{"time", "from", "to", "source", "cause"}, …]}`, the newest `limit`, oldest first.
    func json(limit: Int?) -> JSON {
        let all = ordered
        let shown = limit.map { all.suffix($0) } ?? all[...]
        return .object([("entries", .array(shown.map(\.json)))])
    }
}
