import AppearanceCLI
import Testing

/// `appearancectl help CMD` and `CMD --help`: one command's help, from the same table and help text.
@Suite struct CommandHelpTests {
    static let names = Table.commands.map(\.name)

    @Test(arguments: names)
    func everyCommandHasItsHelp(name: String) throws {
        #expect(try parse(["help", name]) == Invocation(.commandHelp(name)))
        #expect(try parse([name, "--help"]) == Invocation(.commandHelp(name)))
        #expect(try parse(["-h", name]) == Invocation(.commandHelp(name)))
        let text = try #require(commandHelp(name))
        let spec = try #require(Table.commands.first { $0.name == name })
        #expect(text.hasPrefix("Usage: appearancectl \(name)"), "\(text)")
        #expect(text.lowercased().contains(spec.summary.lowercased()), "\(text)")
        // Every option the command (or its subcommand) takes, with its value's name and summary.
        for option in Table.options where option.isGlobal || option.scopes.contains(where: { $0 == name || $0.hasPrefix(name + " ") }) {
            let written = option.names.reversed().joined(separator: ", ") + (option.value.map { " " + $0 } ?? "")
            #expect(text.contains(written), "\(name): \(written) missing\n\(text)")
            #expect(text.contains(option.summary), "\(name): \(option.summary) missing\n\(text)")
        }
        // And no option of another command.
        let taken = Set(Table.options.filter { $0.isGlobal || $0.scopes.contains { $0 == name || $0.hasPrefix(name + " ") } }.flatMap(\.names))
        let shown = TableTests.flags(in: text)
        #expect(shown.isSubset(of: taken), "\(name) shows \(shown.subtracting(taken))")
    }

    /// The lines of the full help that document the command appear in its own help.
    @Test func theFullHelpsLinesForACommandAreInItsHelp() throws {
        let set = try #require(commandHelp("set"))
        #expect(set.contains("set dark|light|system      force a mode, or go back to following the system; prints the mode"))
        #expect(set.contains("set dark|light --until-next | --for DURATION"))
        #expect(set.contains("get, set, toggle, watch --app ID"))
        let palette = try #require(commandHelp("palette"))
        #expect(palette.contains("palette import --light LIGHT.plist --dark DARK.plist"))
        #expect(!palette.contains("import-darkman"))
        #expect(commandHelp("frobnicate") == nil)
    }
}
