import AppearanceCore
import AppearanceProtocol

/// The recent changes of the mode, for `appearancectl log`: "why did my theme just flip?". In memory only,
/// the last `capacity` entries.
struct TransitionLog {
    typealias Entry = LogEntry

    static let capacity = 256
    private(set) var entries: [Entry] = []
    private var start = 0

    mutating func append(_ e: Entry) {
        if entries.count < Self.capacity {
            entries.append(e)
        } else {
            entries[start] = e
            start = (start + 1) % Self.capacity
        }
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
