// appearanced's command line as a value: the parser and the help are made from `DaemonOptions.table`.

/// What `appearanced` was asked to do.
public struct DaemonInvocation: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        /// Run the daemon (in the foreground).
        case run
        /// Read the config and the palette, report the first problem or "ok", and exit.
        case check
        case help
        case version
    }

    public var action: Action = .run
    public var socket: String?
    public var config: String?
    /// As given: the daemon checks it against its log levels (`error` … `debug`).
    public var logLevel: String?
    /// `--state-dir DIR`: a trial instance, its state in DIR, touching nothing of the session's daemon.
    public var stateDir: String?
    /// `--hooks`: a trial instance runs the user's hooks after all.
    public var hooks = false

    public init(action: Action = .run, socket: String? = nil, config: String? = nil, logLevel: String? = nil,
                stateDir: String? = nil, hooks: Bool = false) {
        (self.action, self.socket, self.config, self.logLevel) = (action, socket, config, logLevel)
        (self.stateDir, self.hooks) = (stateDir, hooks)
    }
}

public enum DaemonOptions {
    /// Every option appearanced takes (`scopes` is unused: it has no commands).
    public static let table: [OptionSpec] = [
        OptionSpec(["--config"], "config file (default: $XDG_CONFIG_HOME/appearanced/config.toml)", value: "PATH", .files),
        OptionSpec(["--socket"], "socket to listen on (default: $APPEARANCED_SOCKET, else $XDG_RUNTIME_DIR/appearanced/socket)",
                   value: "PATH", .files),
        OptionSpec(["--log-level"], "error, warning, notice, info or debug (default: info, or the config's log-level)",
                   value: "LEVEL", .words(["error", "warning", "notice", "info", "debug"])),
        OptionSpec(["--state-dir"], "a trial instance: its state and socket in DIR; no hooks, desktop setting, portal or bus names",
                   value: "DIR", .files),
        OptionSpec(["--hooks"], "with --state-dir, run the hooks all the same"),
        OptionSpec(["--check"], "check the config and the palette, print the first problem or \"ok\", exit 0 or 78"),
        OptionSpec(["--version"], "print the version and exit"),
        OptionSpec(["--help", "-h"], "print this help and exit"),
    ]

    /// Reads the arguments (without the program name); of `--help`, `--version` and `--check`, the first wins.

    public static func parse(_ arguments: [String]) throws(UsageError) -> DaemonInvocation {
        var invocation = DaemonInvocation()
        var flags: Set<String> = []
        for token in try Scan.tokens(arguments, spec: { name in table.first { $0.names.contains(name) } }) {
            switch token {
            case .operand(let arg):
                throw UsageError("unexpected argument \"\(shown(arg))\" (appearanced takes options only)")
            case .rest:
                continue  // no option of appearanced's takes the rest of the line
            case .option(let spec, nil, _):
                flags.insert(spec.name)
            case .option(let spec, let value?, _):
                guard !value.isEmpty else { throw UsageError("option \(spec.name) needs a value (\(spec.value!)), not an empty one") }
                switch spec.name {
                case "--config": invocation.config = value
                case "--socket": invocation.socket = value
                case "--state-dir": invocation.stateDir = value
                default: invocation.logLevel = value
                }
            }
        }
        if flags.contains("--hooks") {
            guard invocation.stateDir != nil else { throw UsageError("option --hooks goes with --state-dir (the session's daemon always runs them)") }
            invocation.hooks = true
        }
        invocation.action = flags.contains("--help") ? .help : flags.contains("--version") ? .version : flags.contains("--check") ? .check : .run
        return invocation
    }

    /// `appearanced --help`.
    public static var help: String {
        var lines = [
            "Usage: appearanced [OPTIONS]",
            "",
            "Watches the desktop's color scheme (XDG desktop portal, over D-Bus), merges it with the user's",
            "override and tells subscribers on a Unix socket when the appearance changes. Runs in the",
            "foreground; systemd or a terminal supervises it.",
            "",
            "Options:",
        ]
        for o in table {
            let left = o.names.reversed().joined(separator: ", ") + (o.value.map { " \($0)" } ?? "")
            lines.append("  " + left + String(repeating: " ", count: max(1, 19 - left.count)) + o.summary)
        }
        lines += ["", "Signals: SIGTERM/SIGINT stop it cleanly, SIGHUP reloads the config.", ""]
        return lines.joined(separator: "\n")
    }
}
