import Foundation
import Testing
import AppearanceFormats

/// The TOML reader against the toml-test corpus (github.com/toml-lang/toml-test, as shipped by Debian's
/// golang-github-burntsushi-toml-dev 1.2.0): every valid document parses to exactly the expected value, or is
/// one the reader refuses by design (dates and times) and is then refused with an error; every invalid
/// document is refused. docs/decisions.md ("Own TOML reader") quotes the counts.
struct TOMLCorpusTests {
    /// APPEARANCED_TOML_TEST_DIR, else where the Debian package puts the corpus.
    static let corpus = ProcessInfo.processInfo.environment["APPEARANCED_TOML_TEST_DIR"]
        ?? "/usr/share/gocode/src/github.com/BurntSushi/toml/internal/toml-test/tests"
    static let present = FileManager.default.fileExists(atPath: corpus + "/valid")
    static let absent: Comment = "no toml-test corpus: apt-get install golang-github-burntsushi-toml-dev"

    /// Valid documents the reader refuses on purpose, each with what its error must say and the line it must
    /// name: TOML's four date and time types, which no config key or palette token takes (docs/decisions.md),
    /// and `\e`, which is TOML 1.1 (the reader is TOML 1.0). A listed file must be refused with that error and
    /// must still be in the corpus (a listed file that parses, or is gone, fails the test: the list cannot go
    /// stale).
    static let refusedByDesign: [String: (message: String, line: Int)] = [
        // Dates and times.
        "array/array.toml": (date, 5),  // an array of datetimes after arrays of other types
        "comment/everywhere.toml": (date, 27),
        "datetime/datetime.toml": (date, 1), "datetime/local-date.toml": (date, 1),
        "datetime/local-time.toml": (time, 1), "datetime/local.toml": (date, 1),
        "datetime/milliseconds.toml": (date, 1), "datetime/timezone.toml": (date, 1),
        "example.toml": (date, 1), "spec-example-1.toml": (date, 7), "spec-example-1-compact.toml": (date, 5),
        // TOML 1.1.
        "string/escape-esc.toml": ("invalid escape sequence '\\e'", 1),
    ]
    static let date = "dates are not supported", time = "times are not supported"

    /// Every .toml below `dir`, relative to it, sorted.
    static func documents(_ dir: String) throws -> [String] {
        let root = corpus + "/" + dir
        guard let walk = FileManager.default.enumerator(atPath: root) else { return [] }
        return walk.compactMap { $0 as? String }.filter { $0.hasSuffix(".toml") }.sorted()
    }

    @Test(.enabled(if: present, absent)) func everyInvalidDocumentIsRefused() throws {
        let names = try Self.documents("invalid")
        #expect(names.count > 200, "the corpus at \(Self.corpus) looks incomplete: \(names.count) invalid documents")
        var accepted: [String] = []
        for name in names {
            // Read as a config or palette file is: a document that is not UTF-8 is refused before the reader.
            guard let bytes = fileBytes(Self.corpus + "/invalid/" + name) else {
                Issue.record("\(name): not found")
                continue
            }
            let read = Result<String, ConfigError> { () throws(ConfigError) in try configText(bytes, path: name) }
            switch read {
            case .failure(let e): #expect(e.message == "not valid UTF-8 text", "\(name): \(e)")
            case .success(let text): if (try? TOML.parse(text)) != nil { accepted.append(name) }
            }
        }
        #expect(accepted.isEmpty, "invalid TOML accepted: \(accepted.joined(separator: ", "))")
    }

    @Test(.enabled(if: present, absent)) func everyValidDocumentParsesToItsValueOrIsRefusedByDesign() throws {
        let names = try Self.documents("valid")
        #expect(names.count > 90, "the corpus at \(Self.corpus) looks incomplete: \(names.count) valid documents")
        var equal = 0
        for name in names {
            let base = Self.corpus + "/valid/" + name
            let text = try configText(try #require(fileBytes(base), "\(name) is not found"), path: base)
            let parsed = Result<TOMLTable, TOMLError> { () throws(TOMLError) in try TOML.parse(text) }
            if let refusal = Self.refusedByDesign[name] {
                switch parsed {
                case .success: Issue.record("\(name) is listed as refused by design, but it parses: take it off the list")
                case .failure(let e):
                    #expect(e.message.contains(refusal.message) && e.line == refusal.line,
                            "\(name): refused, but not with \"\(refusal.message)\" on line \(refusal.line): \(e)")
                }
                continue
            }
            let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath:
                String(base.dropLast(5)) + ".json")))
            switch parsed {
            case .failure(let e):
                Issue.record("\(name): refused: \(e)")
            case .success(let table):
                if let difference = Self.difference(table, expected, at: "") {
                    Issue.record("\(name): \(difference)")
                } else {
                    equal += 1
                }
            }
        }
        let stale = Set(Self.refusedByDesign.keys).subtracting(names)
        #expect(stale.isEmpty, "listed as refused by design, but not in the corpus: \(stale.sorted())")
        #expect(equal + Self.refusedByDesign.count == names.count)
    }

    /// Where `value` differs from toml-test's tagged JSON (`{"type": "integer", "value": "42"}` for a scalar, a
    /// plain array or object otherwise), or nil when it does not.
    static func difference(_ table: TOMLTable, _ expected: Any, at path: String) -> String? {
        let here = path.isEmpty ? "the document" : path
        guard let object = expected as? [String: Any], !isTagged(object) else { return "\(here): a table, expected \(expected)" }
        let keys = table.entries.map(\.key)
        // Scalar for scalar: String's == would take a key in another Unicode normalization form as equal.
        guard keys.count == object.count, Set(keys.map(scalars)) == Set(object.keys.map(scalars)) else {
            return "\(here): keys \(keys.sorted()), expected \(object.keys.sorted())"
        }
        for (key, v) in table.entries {
            if let d = difference(v, object[key]!, at: path + "." + key) { return d }
        }
        return nil
    }

    static func difference(_ value: TOMLValue, _ expected: Any, at path: String) -> String? {
        let here = path.isEmpty ? "the document" : path
        switch value.kind {
        case .table(let table):
            return difference(table, expected, at: path)
        case .array(let items):
            guard let array = expected as? [Any], array.count == items.count else {
                return "\(here): an array of \(items.count), expected \(expected)"
            }
            for (i, item) in items.enumerated() {
                if let d = difference(item, array[i], at: "\(path)[\(i)]") { return d }
            }
            return nil
        default:
            guard let tagged = expected as? [String: Any], isTagged(tagged),
                  let type = tagged["type"] as? String, let text = tagged["value"] as? String
            else { return "\(here): \(value.typeName), expected \(expected)" }
            let same: Bool = switch (value.kind, type) {
            case (.string(let s), "string"): scalars(s) == scalars(text)
            case (.integer(let i), "integer"): Int64(text) == i
            case (.boolean(let b), "bool"): String(b) == text
            case (.float(let f), "float"): f.isNaN ? text == "nan" : Double(text.replacingOccurrences(of: "+", with: "")) == f
            default: false
            }
            return same ? nil : "\(here): \(value.kind), expected \(type) \(text.debugDescription)"
        }
    }

    static func scalars(_ s: String) -> [Unicode.Scalar] { Array(s.unicodeScalars) }

    static func isTagged(_ object: [String: Any]) -> Bool {
        object.count == 2 && object["type"] is String && object["value"] is String
    }
}
