import AppearanceCLI
import Foundation
import Testing

/// Every command of appearancectl's table is an entry of appearancectl(1)'s COMMANDS, and the page has no
/// entry for a command the table does not know. (`appearancectl help` against the table: TableTests.)
@Suite struct ManPageCommandsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test func theManPageHasAnEntryForEveryCommand() throws {
        let page = try String(contentsOfFile: Self.root + "/man/appearancectl.1.scd", encoding: .utf8)
        let rest = try #require(page.components(separatedBy: "\n# COMMANDS\n").dropFirst().first)
        let section = rest.components(separatedBy: "\n# ").first ?? rest
        // An entry's first line starts with the command in bold; `*get*, *set*, …` names several.
        var documented: Set<String> = []
        for line in section.split(separator: "\n") where line.hasPrefix("*") {
            for m in line.prefix(while: { $0 != "[" && $0 != "_" }).matches(of: /\*([a-z-]+)\*(,)?/) {
                documented.insert(String(m.1))
                if m.2 == nil { break }
            }
        }
        let table = Set(Table.commands.map(\.name))
        #expect(table.subtracting(documented).isEmpty, "appearancectl(1) has no entry for \(table.subtracting(documented).sorted())")
        #expect(documented.subtracting(table).isEmpty, "appearancectl(1) documents \(documented.subtracting(table).sorted()), not commands of appearancectl")
        // The help names every command too (its Commands section; TableTests checks it both ways).
        for name in table { #expect(helpText.contains("\n  \(name)") || helpText.contains(" \(name),"), "help: \(name)") }
    }
}
