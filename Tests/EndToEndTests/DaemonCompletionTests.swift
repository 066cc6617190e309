import Foundation
import Testing

/// The completions' words that come from the running daemon: palette tokens for `color` and `asset`, app ids
/// for `--app`. The installed scripts are run in their shells (bash as its Tab runs `_appearancectl`, fish's
/// `complete -C`, zsh's script with its completion system's builtins stood in for) with the built
/// appearancectl on PATH: with a daemon they offer its words; with none, or one that never answers, nothing,
/// no error text, and the shell returns (each run has a deadline: a hung completion fails the test).
@Suite(.serialized) struct DaemonCompletionTests {
    static let palette = """
        [fill.bg]
        light = "#ffffff"
        dark = "#262626"

        [fill.fg]
        default = "#000000"

        [text]
        desc = "#808080"

        [wallpaper]
        light = "/usr/share/backgrounds/light.png"
        dark = "/usr/share/backgrounds/dark.png"

        ["needs quotes $(touch $HOME/pwned)"]
        default = "#112233"
        """
    static let colors: Set<String> = ["fill.bg", "fill.fg", "text.desc"]

    /// A sandbox whose PATH starts with the built binaries, so the scripts' `appearancectl` is this build's.
    static func sandbox() throws -> Sandbox {
        let s = try Sandbox()
        s.env["PATH"] = Bin.dir + ":" + (s.env["PATH"] ?? "/usr/bin:/bin")
        return s
    }

    /// A daemon with the palette above and two app overrides.
    @discardableResult
    static func daemon(_ s: Sandbox) throws -> Child {
        try s.write(palette, to: s.root + "/config/appearanced/palette.toml")
        let d = try s.startDaemon()
        #expect(try s.ctl("set", "dark", "--app", "org.gnome.TextEditor").status == 0)
        #expect(try s.ctl("set", "light", "--app", "kitty").status == 0)
        return d
    }

    /// Runs a shell script; its output and error, checked to end within the deadline with status 0.
    static func run(_ s: Sandbox, _ shell: String, _ args: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> (out: [String], err: String) {
        let exe = try CompletionTests.shell(shell)
        let c = try Child(exe, args, env: s.env)
        let status = try c.waitForEnd(timeout: 20)
        #expect(status == 0, "\(shell): \(c.stderr)", sourceLocation: sourceLocation)
        return (c.lines, c.stderr)
    }

    static func bash(_ s: Sandbox, _ words: [String]) throws -> (words: Set<String>, err: String) {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let script = """
            source '\(CompletionTests.files["bash"]!)'
            COMP_WORDS=(appearancectl \(quoted)); COMP_CWORD=\(words.count)
            _appearancectl
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = try run(s, "bash", ["--norc", "-c", script])
        return (Set(r.out.filter { !$0.isEmpty }), r.err)
    }

    static func fish(_ s: Sandbox, _ line: String) throws -> (words: Set<String>, err: String) {
        let script = "source '\(CompletionTests.files["fish"]!)'; complete -C '\(line)'"
        let r = try run(s, "fish", ["--no-config", "-c", script])
        return (Set(r.out.map { String($0.split(separator: "\t", omittingEmptySubsequences: false)[0]) }), r.err)
    }

    /// zsh's completion needs its line editor; the script runs as the function it is, with `_arguments`
    /// standing aside (it leaves the state given: the command in `line`) and `compadd` printing what it is handed.
    static func zsh(_ s: Sandbox, command: String, socket: String? = nil, state: String = "argument") throws -> (words: Set<String>, err: String) {
        let script = """
            _arguments() { return 1 }
            compadd() { [[ $1 == -a ]] && print -l -- ${(P)2} }
            typeset -A opt_args
            \(socket.map { "opt_args[--socket]='\($0)'" } ?? "")
            _complete() {
              state=\(state); line=(\(command))
              source '\(CompletionTests.files["zsh"]!)'
            }
            _complete
            """
        let r = try run(s, "zsh", ["-f", "-c", script])
        return (Set(r.out.filter { !$0.isEmpty }), r.err)
    }

    @Test func bashOffersTheDaemonsTokensAndApps() throws {
        let s = try Self.sandbox()
        try Self.daemon(s)
        #expect(try Self.bash(s, ["color", ""]).words == Self.colors)
        #expect(try Self.bash(s, ["color", "fill."]).words == ["fill.bg", "fill.fg"])
        #expect(try Self.bash(s, ["asset", ""]).words == ["wallpaper"])
        #expect(try Self.bash(s, ["color", "--mode", "dark", ""]).words == Self.colors)
        #expect(try Self.bash(s, ["get", "--app", ""]).words == ["kitty", "org.gnome.TextEditor"])
        #expect(try Self.bash(s, ["set", "dark", "--app", "o"]).words == ["org.gnome.TextEditor"])
        #expect(try Self.bash(s, ["watch", "--app", "=", ""]).words == ["kitty", "org.gnome.TextEditor"])
        // Once the token is given, nothing more is offered for it.
        #expect(try Self.bash(s, ["color", "fill.bg", ""]).words.isEmpty)
        // The line's own --socket is the daemon asked: none answers there.
        #expect(try Self.bash(s, ["--socket", s.root + "/elsewhere", "color", ""]).words.isEmpty)
        #expect(try Self.bash(s, ["--socket=" + s.socket, "color", ""]).words == Self.colors)
        // The token whose name a shell would expand is not offered, and nothing ran.
        #expect(!FileManager.default.fileExists(atPath: s.root + "/home/pwned"))
    }

    @Test func fishOffersTheDaemonsTokensAndApps() throws {
        let s = try Self.sandbox()
        try Self.daemon(s)
        #expect(try Self.fish(s, "appearancectl color ").words == Self.colors)
        #expect(try Self.fish(s, "appearancectl asset ").words == ["wallpaper"])
        #expect(try Self.fish(s, "appearancectl toggle --app ").words == ["kitty", "org.gnome.TextEditor"])
        #expect(try Self.fish(s, "appearancectl --socket \(s.root)/elsewhere color ").words.isEmpty)
        #expect(try Self.fish(s, "appearancectl --socket=\(s.socket) get --app ").words == ["kitty", "org.gnome.TextEditor"])
    }

    @Test func zshOffersTheDaemonsTokens() throws {
        let s = try Self.sandbox()
        try Self.daemon(s)
        #expect(try Self.zsh(s, command: "color").words == Self.colors)
        #expect(try Self.zsh(s, command: "asset").words == ["wallpaper"])
        #expect(try Self.zsh(s, command: "color", socket: s.root + "/elsewhere").words.isEmpty)
        // --app's values come from the same function.
        let script = try String(contentsOfFile: CompletionTests.files["zsh"]!, encoding: .utf8)
        #expect(script.contains(":id:_appearancectl_list apps'"), "\(script)")
    }

    /// After `integrations enable` the integrations found and off, after `disable` the ones enabled, as many as
    /// are typed, in each shell; `completions list` gives them.
    @Test func theIntegrationsAreOfferedByName() throws {
        let s = try Self.sandbox()
        for name in ["alpha", "beta", "gamma"] {
            try HookTests.script(s, s.root + "/config/appearanced/integrations/" + name, "[ \"$1\" = available ] && echo found; exit 0")
        }
        try s.startDaemon()
        #expect(try s.ctl("integrations", "enable", "beta").status == 0)
        #expect(try s.ctl("completions", "list", "integrations").out == "alpha\ngamma\n")
        #expect(try s.ctl("completions", "list", "enabled-integrations").out == "beta\n")
        #expect(try Self.bash(s, ["integrations", "enable", ""]).words == ["alpha", "gamma"])
        #expect(try Self.bash(s, ["integrations", "enable", "alpha", "g"]).words == ["gamma"])
        #expect(try Self.bash(s, ["integrations", "disable", ""]).words == ["beta"])
        #expect(try Self.fish(s, "appearancectl integrations enable ").words == ["alpha", "gamma"])
        #expect(try Self.fish(s, "appearancectl integrations disable ").words == ["beta"])
        let script = try String(contentsOfFile: CompletionTests.files["zsh"]!, encoding: .utf8)
        #expect(script.contains("'integrations enable') _appearancectl_list integrations ;;"), "\(script)")
        let z = try Self.zsh(s, command: "integrations disable", state: "rest")
        #expect(z.words == ["beta"], "\(z)")
    }

    /// No daemon: nothing offered, nothing printed into the prompt.
    @Test func noDaemonOffersNothingSilently() throws {
        let s = try Self.sandbox()
        for words in [["color", ""], ["asset", ""], ["get", "--app", ""]] {
            let r = try Self.bash(s, words)
            #expect(r.words.isEmpty && r.err.isEmpty, "\(words): \(r)")
        }
        let f = try Self.fish(s, "appearancectl set dark --app ")
        #expect(f.words.isEmpty && f.err.isEmpty, "\(f)")
        let z = try Self.zsh(s, command: "color")
        #expect(z.words.isEmpty && z.err.isEmpty, "\(z)")
        #expect(try s.ctl("completions", "list", "colors") == (0, "", ""))
    }

    /// A daemon that takes the connection and never answers: the completion gives up at appearancectl's
    /// deadline, silently, and the shell returns (the run's own deadline would fail the test otherwise).
    @Test func aSilentDaemonOffersNothingAndReturns() throws {
        let s = try Self.sandbox()
        let dir = s.root + "/scripted"
        mkdir(dir, 0o700)
        let server = try ScriptedDaemon(in: dir, answer: .silence)
        defer { server.stop() }
        s.env["APPEARANCED_SOCKET"] = server.path
        let r = try Self.bash(s, ["get", "--app", ""])
        #expect(r.words.isEmpty && r.err.isEmpty, "\(r)")
        let f = try Self.fish(s, "appearancectl color ")
        #expect(f.words.isEmpty && f.err.isEmpty, "\(f)")
        #expect(server.connections == 2)
    }

    /// The hidden list command is what the scripts call; it is in neither the help nor the completions.
    @Test func theListIsHidden() throws {
        let s = try Self.sandbox()
        try Self.daemon(s)
        #expect(try s.ctl("completions", "list", "colors").out.split(separator: "\n").map(String.init) == ["fill.bg", "fill.fg", "text.desc"])
        #expect(try s.ctl("completions", "list", "apps").out == "kitty\norg.gnome.TextEditor\n")
        #expect(try s.ctl("completions", "list", "tokens").status == 64)
        let help = try s.ctl("help").out, commandHelp = try s.ctl("help", "completions").out
        #expect(!help.contains("completions list") && !commandHelp.contains("completions list"))
        #expect(try Self.bash(s, ["completions", ""]).words == ["bash", "zsh", "fish"])
    }
}
