/// Adds settings to a config file's text without changing a byte of what is there (`import-darkman --merge`);
/// a key the file has with another value is a conflict, named, and then nothing is merged.
public enum ConfigMerge {
    /// One setting: `key = literal` (a TOML value as written) in `table` (nil: top level).
    public struct Setting: Equatable, Sendable {
        public var table: String?
        public var key: String
        public var literal: String
        /// A comment line written above it (without the `# `), or nil.
        public var comment: String?

        public init(table: String? = nil, _ key: String, _ literal: String, comment: String? = nil) {
            (self.table, self.key, self.literal, self.comment) = (table, key, literal, comment)
        }

        var name: String { table.map { "\($0).\(key)" } ?? key }
    }

    /// What a merge did: the new text, and the settings added (those the file had already are left out).
    public struct Result: Equatable, Sendable {
        public var text: String
        public var added: [String]
    }

    /// Keys that give the same thing two ways: one may not be added next to the other.
    static let exclusive: [String: [String]] = [
        "schedule.latitude": ["schedule.location"], "schedule.longitude": ["schedule.location"],
        "schedule.location": ["schedule.latitude", "schedule.longitude"],
    ]

    public static func merge(_ text: String, file: String, adding settings: [Setting]) throws(ImportError) -> Result {
        let root: TOMLTable
        do { root = try TOML.parse(text) } catch {
            throw ImportError(description: "\(file): cannot merge into a file that is not valid TOML (\(error)); nothing written")
        }
        func existing(_ table: String?, _ key: String) -> TOMLValue? {
            guard let table else { return root[key] }
            return root[table]?.table?[key]
        }
        var conflicts: [String] = []
        var wanted: [Setting] = []
        for s in settings {
            let mine: TOMLValue.Kind? = (try? TOML.parse("k = \(s.literal)"))?["k"]?.kind
            if let there = existing(s.table, s.key) {
                if there.kind != mine { conflicts.append("\(s.name) is \(shown(there)) there, \(s.literal) in the import") }
                continue
            }
            for other in exclusive[s.name] ?? [] {
                let parts = other.split(separator: ".").map(String.init)
                if existing(parts[0], parts[1]) != nil { conflicts.append("\(s.name) cannot be added next to \(other)") }
            }
            wanted.append(s)
        }
        guard conflicts.isEmpty else {
            throw ImportError(description: "\(file): cannot merge, the file says otherwise: " + conflicts.joined(separator: "; ")
                + "; nothing written (edit it by hand, or replace it with --force)")
        }
        for table in Set(wanted.compactMap(\.table)) {
            if let t = root[table], t.table?.origin != .header {
                throw ImportError(description: "\(file): cannot merge into [\(table)] written as \(t.typeName) (line \(t.line)); nothing written (add the settings by hand)")
            }
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }  // the final newline: put back at the end
        let headers = headerLines(root).sorted()
        func block(_ settings: [Setting]) -> [String] {
            settings.flatMap { s in (s.comment.map { ["# \($0)"] } ?? []) + ["\(s.key) = \(s.literal)"] }
        }
        // From the last line up, so the line numbers of what comes before stay right.

        var insertions: [(at: Int, order: Int, lines: [String])] = []
        let top = wanted.filter { $0.table == nil }
        if !top.isEmpty { insertions.append((at: (headers.first ?? lines.count + 1) - 1, order: 0, lines: block(top) + [""])) }
        for table in Set(wanted.compactMap(\.table)).sorted() {
            let settings = wanted.filter { $0.table == table }
            if let header = root[table]?.line {
                // The end of the table: the next header, less the blank lines before it.
                var end = (headers.first { $0 > header } ?? lines.count + 1) - 1
                while end > header, lines[end - 1].allSatisfy({ $0 == " " || $0 == "\t" }) { end -= 1 }
                insertions.append((at: end, order: 1, lines: block(settings)))
            } else {
                insertions.append((at: lines.count, order: 1, lines: [""] + ["[\(table)]"] + block(settings)))
            }
        }
        for i in insertions.sorted(by: { ($0.at, $0.order) > ($1.at, $1.order) }) { lines.insert(contentsOf: i.lines, at: i.at) }
        let merged = lines.joined(separator: "\n") + "\n"
        return Result(text: merged, added: wanted.map(\.name))
    }

    /// The lines of every `[table]` and `[[table]]` header, at any depth.
    static func headerLines(_ table: TOMLTable) -> [Int] {
        table.entries.flatMap { _, v -> [Int] in
            if let t = v.table { return (t.origin == .header ? [v.line] : []) + headerLines(t) }
            if v.isTableArray, let items = v.array { return items.flatMap { [$0.line] + ($0.table.map(headerLines) ?? []) } }
            return []
        }
    }
}
