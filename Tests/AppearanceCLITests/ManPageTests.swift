import AppearanceCLI
import AppearanceCore
import AppearanceProtocol
import Foundation
import Testing

/// The man pages name what the code's tables offer: every option of appearancectl and appearanced, and
/// every command of appearancectl (a page that lags is found by `make test`, not by a reader).
@Suite struct ManPageTests {
    static func page(_ name: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("man/\(name).scd"), encoding: .utf8)
    }

    /// The words the page sets in bold (`*--output*`, `*watch*`).
    static func bold(_ text: String) -> Set<String> {
        Set(text.matches(of: /\*([^*\n]+)\*/).map { String($0.1) })
    }

    @Test func appearancectlsPageHasEveryOptionAndCommand() throws {
        let words = Self.bold(try Self.page("appearancectl.1"))
        let missingOptions = Table.options.flatMap(\.names).filter { !words.contains($0) }
        #expect(missingOptions.isEmpty, "appearancectl(1) lacks \(missingOptions)")
        let missingCommands = Table.commands.map(\.name).filter { name in !words.contains { $0 == name || $0.hasPrefix(name + " ") } }
        #expect(missingCommands.isEmpty, "appearancectl(1) lacks \(missingCommands)")
    }

    @Test func appearancedsSynopsisHasEveryOption() throws {
        let page = try Self.page("appearanced.1")
        let synopsis = try #require(page.components(separatedBy: "# SYNOPSIS").dropFirst().first?.components(separatedBy: "\n# ").first)
        let words = Self.bold(synopsis)
        let missing = DaemonOptions.table.flatMap(\.names).filter { $0.hasPrefix("--") && !words.contains($0) }
        #expect(missing.isEmpty, "appearanced(1)'s SYNOPSIS lacks \(missing)")
    }

    /// appearanced(7)'s state object names every member a state can carry, and its `source` every source.
    @Test func theProtocolPageHasEveryMemberOfTheStateAndEverySource() throws {
        let page = try Self.page("appearanced.7")
        let section = try #require(page.components(separatedBy: "# THE STATE OBJECT").dropFirst().first?.components(separatedBy: "\n# ").first)
        var state = AppearanceState(mode: .dark, system: .dark, override: .system, source: .app, seq: 1, instance: "i")
        (state.app, state.globalMode, state.globalSource, state.configProblem) = ("kitty", .dark, .system, "x")
        guard case .object(let members) = state.json else { Issue.record("not an object"); return }
        let missing = members.map(\.0).filter { !section.contains("*\($0)*") }
        #expect(missing.isEmpty, "appearanced(7) lacks \(missing)")
        let sources = try #require(section.components(separatedBy: "*source*").dropFirst().first?.components(separatedBy: "\n\n").first)
        let absent = Source.allCases.map(\.rawValue).filter { !sources.contains("\"\($0)\"") }
        #expect(absent.isEmpty, "appearanced(7)'s source lacks \(absent)")
    }
}
