import AppearanceCLI
import Foundation
import Testing

/// The option table against the help and the completion files: what the parser accepts is what the help
/// documents and what the shells offer.
@Suite struct TableTests {
    /// `--long` and `-x` words that start at a word boundary (not inside `foo-bar`), as the help writes them.
    static func flags(in text: String) -> Set<String> {
        Set(text.matches(of: /(^|[^\w-])(--[a-z][a-z-]*|-[a-z])\b/.anchorsMatchLineEndings()).map { String($0.2) })
    }

    @Test func helpDocumentsExactlyTheTable() {
        let tableFlags = Set(Table.options.flatMap(\.names))
        #expect(Self.flags(in: helpText) == tableFlags)
        let commandsPart = helpText.split(separator: "Commands:")[1].split(separator: "Options:")[0]
        let documented = Set(commandsPart.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
            return line.dropFirst(2).split(separator: " ").first.map { String($0.filter { $0 != "," }) }
        })
        #expect(documented == Set(Table.commands.map(\.name)))
    }

    /// Every option a command takes in the table is one the parser accepts with it, and no other.
    @Test func parserFollowsTheTable() throws {
        for command in Table.commands.map(\.name) + ["palette import"] {
            for option in Table.options where !option.isGlobal {
                var words = command.split(separator: " ").map(String.init)
                words.append(option.names[0])
                if option.value != nil { words.append(sampleValue(option)) }
                let accepted: Bool
                do { _ = try parse(words); accepted = true } catch {
                    accepted = !error.message.contains("not an option of") && !error.message.contains("does not take")
                        && !error.message.hasPrefix("--exec is") && !error.message.hasPrefix("--no-initial is")
                        && !error.message.hasPrefix("--exit-on-disconnect is")
                }
                // `--format` has an entry per command: any of them makes it an option of the command.
                let scopes = Table.options.filter { $0.name == option.name }.flatMap(\.scopes)
                #expect(accepted == scopes.contains(command), "\(words)")
            }
        }
    }

    func sampleValue(_ o: OptionSpec) -> String {
        if case .words(let w) = o.completion { return w[0] }
        return o.names[0] == "-n" ? "3" : o.names[0] == "--app" ? "kitty" : "x"
    }

    /// The parser's lists of names say what the table says.
    @Test func namesAgreeWithTheTable() {
        #expect(Table.commandNames == Table.commands.map(\.name))
        #expect(Table.subcommandScopes == Table.commands.flatMap { c in c.subcommands.map { "\(c.name) \($0.name)" } })
        #expect(Table.commandsWithoutOperands == Table.commands.filter { $0.operand == .nothing && $0.subcommands.isEmpty }.map(\.name))
    }

    /// Summaries go into zsh's `[...]` and fish's quotes unchanged.
    @Test func summariesNeedNoEscaping() {
        for o in Table.options {
            #expect(!o.summary.contains { "[]:'\"\\".contains($0) }, "\(o.names[0])")
        }
    }
}
