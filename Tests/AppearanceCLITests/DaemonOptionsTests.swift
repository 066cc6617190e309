import AppearanceCLI
import Testing

/// appearanced's command line, from its table.
@Suite struct DaemonOptionsTests {
    static let acceptedCases: [([String], DaemonInvocation)] = [
        ([], DaemonInvocation()),
        (["--socket", "/tmp/s"], DaemonInvocation(socket: "/tmp/s")),
        (["--socket=/tmp/s", "--config=/c.toml"], DaemonInvocation(socket: "/tmp/s", config: "/c.toml")),
        (["--log-level", "debug"], DaemonInvocation(logLevel: "debug")),
        (["--check", "--config", "/c.toml"], DaemonInvocation(action: .check, config: "/c.toml")),
        (["--version"], DaemonInvocation(action: .version)),
        (["-h"], DaemonInvocation(action: .help)),
        (["--check", "--help"], DaemonInvocation(action: .help)),
        (["--state-dir", "/tmp/t", "--socket", "/tmp/t/s"], DaemonInvocation(socket: "/tmp/t/s", stateDir: "/tmp/t")),
        (["--state-dir=/tmp/t", "--hooks"], DaemonInvocation(stateDir: "/tmp/t", hooks: true)),
    ]

    @Test(arguments: acceptedCases) func accepted(_ args: [String], _ expected: DaemonInvocation) throws {
        #expect(try DaemonOptions.parse(args) == expected)
    }

    static let refusedCases: [([String], String)] = [
        (["--bogus"], #"unknown option "--bogus""#),
        (["run"], #"unexpected argument "run" (appearanced takes options only)"#),
        (["--socket"], "option --socket needs a value (PATH)"),
        (["--socket="], "option --socket needs a value (PATH), not an empty one"),
        (["--check=yes"], "option --check takes no value"),
        (["--hooks"], "option --hooks goes with --state-dir (the session's daemon always runs them)"),
        (["--state-dir="], "option --state-dir needs a value (DIR), not an empty one"),
    ]

    @Test(arguments: refusedCases) func refused(_ args: [String], _ message: String) {
        #expect(throws: UsageError(message)) { try DaemonOptions.parse(args) }
    }

    /// The help documents exactly the table's options, each with its value's name.
    @Test func theHelpListsEveryOption() {
        let help = DaemonOptions.help
        for o in DaemonOptions.table {
            for n in o.names { #expect(help.contains(n), "\(n)") }
            if let v = o.value { #expect(help.contains("\(o.name) \(v)")) }
            #expect(help.contains(o.summary))
        }
        let optionLines = help.split(separator: "\n").filter { $0.hasPrefix("  -") }
        #expect(optionLines.count == DaemonOptions.table.count)
    }
}
