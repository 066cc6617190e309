import Foundation
import Testing

/// The completion files `make install` writes (`appearancectl completions SHELL`, InstallTests) in their shells:
/// bash and fish are asked for completions as a user's Tab would ask them; zsh (whose completion needs an
/// interactive line editor) is checked for syntax.
@Suite struct CompletionTests {
    /// Each shell's script as the built appearancectl prints it, written once a run into .build (ignored).
    static let files: [String: String] = {
        let dir = Repo.root + "/.build/test-completions"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var paths: [String: String] = [:]
        for shell in ["bash", "zsh", "fish"] {
            let path = dir + "/" + shell
            if let r = try? Sandbox().run(Bin.ctl, ["completions", shell]), r.status == 0 {
                _ = FileManager.default.createFile(atPath: path, contents: Data(r.out.utf8))
            }
            paths[shell] = path
        }
        return paths
    }()
    static let commands = ["get", "status", "set", "toggle", "reload", "log", "schedule", "postpone", "skip", "apps", "integrations", "watch", "color", "asset", "palette",
                           "import-darkman", "completions", "help"]

    static func shell(_ name: String) throws -> String {
        let exe = "/usr/bin/" + name
        try #require(FileManager.default.isExecutableFile(atPath: exe), "\(exe) is missing: `make test` installs bash, zsh and fish")
        return exe
    }

    /// What bash's `_appearancectl` offers for `words`, the last one being completed.
    static func bash(_ words: [String]) throws -> Set<String> {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let script = """
            source '\(files["bash"]!)'
            COMP_WORDS=(appearancectl \(quoted)); COMP_CWORD=\(words.count)
            _appearancectl
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = try Sandbox().run(try shell("bash"), ["--norc", "-c", script])
        #expect(r.status == 0, "\(r.err)")
        return Set(r.out.split(separator: "\n").map(String.init))
    }

    /// What fish offers for the command line `line` (`complete -C`), without descriptions.
    static func fish(_ line: String) throws -> Set<String> {
        let script = "source '\(files["fish"]!)'; complete -C '\(line)'"
        let r = try Sandbox().run(try shell("fish"), ["--no-config", "-c", script])
        #expect(r.status == 0, "\(r.err)")
        return Set(r.out.split(separator: "\n").map { String($0.split(separator: "\t")[0]) })
    }

    @Test func bashOffersCommandsOptionsAndValues() throws {
        #expect(try Self.bash([""]) == Set(Self.commands))
        #expect(try Self.bash(["set", ""]) == ["dark", "light", "system"])
        #expect(try Self.bash(["palette", ""]) == ["import"])
        #expect(try Self.bash(["completions", ""]) == ["bash", "zsh", "fish"])
        #expect(try Self.bash(["integrations", ""]) == ["list", "enable", "disable"])
        #expect(try Self.bash(["integrations", "enable", "--f"]) == ["--force"])
        #expect(try Self.bash(["color", "fill.bg", "--format", ""]) == ["hex", "rgb", "css"])
        #expect(try Self.bash(["palette", "--format", ""]) == ["json", "css", "sh", "gtk"])
        // --name=VALUE: bash splits the word at "=".
        #expect(try Self.bash(["palette", "--preview", "--color", "=", ""]) == ["always", "never", "auto"])
        #expect(try Self.bash(["set", "dark", "--for", ""]) == ["30m", "1h", "2h", "8h", "1d"])
        #expect(try Self.bash(["watch", "--j"]) == ["--json"])
        #expect(try Self.bash(["palette", "import", "--"]) == ["--socket", "--version", "--help", "--light", "--dark", "--output", "--force"])
        #expect(try Self.bash(["log", "-"]) == ["--socket", "--version", "--help", "-h", "--json", "--app", "-n"])
        // After --exec comes a command of its own: bash offers programs.
        #expect(try Self.bash(["watch", "--exec", "tru"]).contains("true"))
    }

    @Test func fishOffersCommandsOptionsAndValues() throws {
        #expect(try Self.fish("appearancectl ") == Set(Self.commands))
        #expect(try Self.fish("appearancectl set ") == ["dark", "light", "system"])
        #expect(try Self.fish("appearancectl integrations ") == ["list", "enable", "disable"])
        #expect(try Self.fish("appearancectl color x --format ") == ["hex", "rgb", "css"])
        #expect(try Self.fish("appearancectl palette --format ") == ["json", "css", "sh", "gtk"])
        #expect(try Self.fish("appearancectl palette import --") == ["--socket", "--version", "--help", "--light", "--dark", "--output", "--force"])
        #expect(try Self.fish("appearancectl set dark --") == ["--socket", "--version", "--help", "--json", "--app", "--until-next", "--for"])
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func isValidForItsShell(shell: String) throws {
        let s = try Sandbox()
        let r = try s.run(try Self.shell(shell), ["-n", Self.files[shell]!])
        #expect(r.status == 0, "\(shell) -n: \(r.err)")
    }
}
