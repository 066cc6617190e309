import Foundation
import Testing

/// The completions for bash, zsh and fish against `appearancectl --help`, the one place that lists every
/// command and option: each is offered, nothing else is, and each file is valid for its shell.
@Suite struct CompletionTests {
    static let files = ["bash": "completions/appearancectl.bash", "zsh": "completions/_appearancectl",
                        "fish": "completions/appearancectl.fish"]

    /// Commands and options the help documents.
    static func documented() throws -> (commands: Set<String>, options: Set<String>) {
        let s = try Sandbox()
        let help = try s.ctl("--help").out
        let commandsPart = try #require(help.components(separatedBy: "Commands:").last?.components(separatedBy: "Options:").first)
        let commands = Set(commandsPart.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
            return line.dropFirst(2).split(separator: " ").first.map { String($0.filter { $0 != "," }) }
        })
        let options = Self.flags(in: help)
        return (commands, options)
    }

    /// `--long` and `-x` words that start at a word boundary (not inside `foo-bar`).
    static func flags(in text: String) -> Set<String> {
        Set(text.matches(of: /(^|[^\w-])(--[a-z][a-z-]*|-[a-z])\b/.anchorsMatchLineEndings()).map { String($0.2) })
    }

    /// The options a completion file offers, in its own notation.
    static func offered(_ shell: String, _ text: String) -> Set<String> {
        switch shell {
        case "fish":
            let lines = text.split(separator: "\n").filter { $0.hasPrefix("complete ") }.joined(separator: "\n")
            let long = lines.matches(of: /\s-l ([a-z][a-z-]*)/).map { "--" + $0.1 }
            let short = lines.matches(of: /\s-s ([a-z])/).map { "-" + $0.1 }
            return Set(long + short)
        default:
            return Self.flags(in: text)
        }
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func offersExactlyWhatTheHelpDocuments(shell: String) throws {
        let (commands, options) = try Self.documented()
        #expect(commands == ["get", "status", "set", "toggle", "log", "apps", "watch", "color", "asset", "palette", "import-darkman", "help"])
        let text = try String(contentsOfFile: Repo.root + "/" + Self.files[shell]!, encoding: .utf8)
        for c in commands { #expect(text.contains(c), "\(shell) does not offer the command \(c)") }
        let offered = Self.offered(shell, text)
        // Flags of the shells' own completion commands (compgen -W, complete -F, _arguments -S, …).
        let shellWords: Set<String> = ["-f", "-d", "-W", "-X", "-F", "-S", "-c", "-g", "-z", "-t", "-s", "-l", "-r", "-x", "-a"]
        let undocumented = offered.subtracting(options).subtracting(shellWords)
        #expect(undocumented.isEmpty, "\(shell) offers options the help does not document: \(undocumented.sorted())")
        let missing = options.subtracting(offered).subtracting(shell == "fish" ? [] : [])
        #expect(missing.isEmpty, "\(shell) does not offer \(missing.sorted())")
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func isValidForItsShell(shell: String) throws {
        let exe = "/usr/bin/" + shell
        guard FileManager.default.isExecutableFile(atPath: exe) else {
            Issue.record("\(exe) is missing: `make test` installs bash, zsh and fish")
            return
        }
        let s = try Sandbox()
        let r = try s.run(exe, ["-n", Repo.root + "/" + Self.files[shell]!])
        #expect(r.status == 0, "\(shell) -n: \(r.err)")
    }
}
