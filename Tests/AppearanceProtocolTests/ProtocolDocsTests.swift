import AppearanceProtocol
import Foundation
import Testing

/// docs/protocol.md and appearanced(7) against the code: every method of `Method` is documented in both, no
/// other, and both name `protocolVersion` as the current version and no other.
@Suite struct ProtocolDocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static func read(_ path: String) throws -> String { try String(contentsOfFile: root + "/" + path, encoding: .utf8) }
    static let methods = Set(Method.allCases.map(\.rawValue))

    /// The part of `text` from the line `start` to the next line starting with `end`.
    static func section(_ text: String, _ start: String, _ end: String) throws -> String {
        let rest = try #require(text.components(separatedBy: "\n" + start + "\n").dropFirst().first, "no \(start)")
        return rest.components(separatedBy: "\n" + end).first ?? rest
    }

    @Test func protocolMdDocumentsEveryMethod() throws {
        let table = try Self.section(try Self.read("docs/protocol.md"), "## Methods", "#")
        let documented = Set(table.matches(of: #/(?m)^\| `([a-z]+)` /#).map { String($0.1) })
        #expect(documented == Self.methods, "docs/protocol.md's Methods table: \(documented.sorted()); the code: \(Self.methods.sorted())")
    }

    @Test func theSeventhPageDocumentsEveryMethod() throws {
        let requests = try Self.section(try Self.read("man/appearanced.7.scd"), "# REQUESTS", "# ")
        let documented = Set(requests.matches(of: /(?m)^\*([a-z]+)\*/).map { String($0.1) })
        #expect(documented == Self.methods, "appearanced(7)'s REQUESTS: \(documented.sorted()); the code: \(Self.methods.sorted())")
    }

    /// "This document describes `5`", `"protocol": 5` and the transcript's `"protocol":5` say the current
    /// version; "Protocol N added" is history, but no N above the current one.
    @Test func protocolMdNamesTheCurrentVersionOnly() throws {
        let doc = try Self.read("docs/protocol.md")
        let current = doc.matches(of: /describes `([0-9]+)`|"protocol": ?([0-9]+)/).map { Int($0.1 ?? $0.2!)! }
        #expect(!current.isEmpty, "docs/protocol.md does not say which protocol it describes")
        #expect(current.allSatisfy { $0 == protocolVersion }, "docs/protocol.md names \(current) as current; the code's is \(protocolVersion)")
        let history = doc.matches(of: /[Pp]rotocol ([0-9]+)/).map { Int($0.1)! }
        #expect(history.allSatisfy { $0 <= protocolVersion }, "docs/protocol.md names protocol \(history.max() ?? 0)")
        #expect(doc.contains("Protocol \(protocolVersion) added"), "docs/protocol.md's Versioning does not say what protocol \(protocolVersion) added")
    }

    @Test func theSeventhPageNamesTheCurrentVersionOnly() throws {
        let page = try Self.read("man/appearanced.7.scd")
        let current = page.matches(of: /\*protocol\* \(([0-9]+)\)|"protocol": ?([0-9]+)/).map { Int($0.1 ?? $0.2!)! }
        #expect(!current.isEmpty, "appearanced(7) does not say which protocol status reports")
        #expect(current.allSatisfy { $0 == protocolVersion }, "appearanced(7) names \(current) as current; the code's is \(protocolVersion)")
        let mentioned = page.matches(of: /protocol ([0-9]+)/).map { Int($0.1)! }
        #expect(mentioned.allSatisfy { $0 <= protocolVersion }, "appearanced(7) names protocol \(mentioned.max() ?? 0)")
    }
}
