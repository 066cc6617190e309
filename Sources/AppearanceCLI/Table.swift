// The one table of appearancectl's commands and options, for the parser, the help and the completions.

/// What a shell offers for a value or an operand.
public enum Completion: Equatable, Sendable {
    case nothing
    case files
    /// Files ending in `.plist` (and folders on the way).
    case plists
    case words([String])
    /// The rest of the line is a command of its own (`watch --exec CMD ARGS...`).
    case command
    /// Asked of the running daemon (`appearancectl completions list WHAT`); nothing when none runs.
    case daemon(CompletionList)
}

/// What `appearancectl completions list WHAT` prints, one per line, for the completion scripts only.

public enum CompletionList: String, CaseIterable, Sendable {
    case colors, assets, apps, integrations
    case enabledIntegrations = "enabled-integrations"
}

public struct OptionSpec: Sendable {
    /// The long name first, then a short alias if any: `["--output", "-o"]`.
    public let names: [String]
    /// What its value is called (`PATH`, `N`); nil for a flag.
    public let value: String?
    public let completion: Completion
    /// The commands that take it (`"palette import"` for a subcommand); empty for every command.
    public let scopes: [String]
    /// One line for completion menus: no quotes, brackets or colons.
    public let summary: String

    public var name: String { names[0] }
    public var isGlobal: Bool { scopes.isEmpty }

    init(_ names: [String], _ summary: String, value: String? = nil, _ completion: Completion = .nothing, in scopes: [String] = []) {
        (self.names, self.summary, self.value, self.completion, self.scopes) = (names, summary, value, completion, scopes)
    }
}

public struct CommandSpec: Sendable {
    public let name: String
    public let summary: String
    /// What its first operand is.
    public let operand: Completion
    /// Subcommands, named by the first operand (`palette import`).
    public let subcommands: [(name: String, summary: String)]
    /// What the operands after a given first one are (`integrations enable NAME...`).
    public let then: [(after: String, operands: Completion)]

    init(_ name: String, _ summary: String, operand: Completion = .nothing, subcommands: [(name: String, summary: String)] = [],
         then: [(after: String, operands: Completion)] = []) {
        (self.name, self.summary, self.operand, self.subcommands, self.then) = (name, summary, operand, subcommands, then)
    }
}

public enum Table {
    public static let commands: [CommandSpec] = [
        CommandSpec("get", "print the mode, dark or light"),
        CommandSpec("status", "the mode and why, the system value, traits, palette and override"),
        CommandSpec("set", "force a mode, or follow the system again", operand: .words(["dark", "light", "system"])),
        CommandSpec("toggle", "flip the mode"),
        CommandSpec("reload", "read the config and palette files again"),
        CommandSpec("log", "the recent changes of the mode and their causes"),
        CommandSpec("schedule", "the schedule's next changes, day by day"),
        CommandSpec("postpone", "put the next automatic change off by a duration", operand: .words(["15m", "30m", "1h", "2h"])),
        CommandSpec("skip", "drop the next automatic change; the one after it happens"),
        CommandSpec("apps", "the app overrides"),
        CommandSpec("integrations", "the integrations, or enable or disable some", operand: .words(["list", "enable", "disable"]),
                    then: [("enable", .daemon(.integrations)), ("disable", .daemon(.enabledIntegrations))]),
        CommandSpec("watch", "print the mode, then one line per change"),
        CommandSpec("color", "a palette color for the current or given appearance", operand: .daemon(.colors)),
        CommandSpec("asset", "a palette asset path for the current or given appearance", operand: .daemon(.assets)),
        CommandSpec("palette", "the whole palette, or palette import",
                    subcommands: [("import", "convert LFLDarkModeKit color plists to palette.toml")]),
        CommandSpec("import-darkman", "darkman's config.yaml as appearanced's config.toml", operand: .files),
        CommandSpec("completions", "print the completion script for bash, zsh or fish", operand: .words(Shell.allCases.map(\.rawValue))),
        CommandSpec("help", "print the help, or the help of one command", operand: .words(commandNames.filter { $0 != "help" })),
    ]

    /// The commands' names and their subcommands' scopes, for the parser (the same as `commands` says: tested).
    public static let commandNames = ["get", "status", "set", "toggle", "reload", "log", "schedule", "postpone", "skip", "apps", "integrations", "watch", "color", "asset", "palette",
                                      "import-darkman", "completions", "help"]
    public static let subcommandScopes = ["palette import"]

    /// The commands that take no operand (the same as `commands` says: tested).
    public static let commandsWithoutOperands = ["get", "status", "toggle", "reload", "log", "schedule", "skip", "apps", "watch"]
    static let stateCommands = ["get", "status", "set", "toggle", "log", "schedule", "postpone", "skip", "apps", "integrations", "watch"]
    static let appCommands = ["get", "set", "toggle", "watch"]
    static let variantCommands = ["color", "asset", "palette"]

    public static let options: [OptionSpec] = [
        OptionSpec(["--socket"], "talk to the daemon on this socket", value: "PATH", .files),
        OptionSpec(["--version"], "print the version"),
        OptionSpec(["--help", "-h"], "print the help"),
        OptionSpec(["--json"], "print JSON", in: stateCommands),
        // `log --app ID`: only that app's own changes (and no default from APPEARANCED_APP).
        OptionSpec(["--app"], "for this app id", value: "ID", .daemon(.apps), in: appCommands + ["log"]),
        OptionSpec(["--until-next"], "until the next automatic change", in: ["set", "toggle"]),
        OptionSpec(["--for"], "for a duration", value: "DURATION", .words(["30m", "1h", "2h", "8h", "1d"]), in: ["set", "toggle"]),
        OptionSpec(["--cancel"], "undo it (the next change as planned)", in: ["postpone", "skip"]),
        OptionSpec(["-n"], "the last N changes", value: "N", in: ["log"]),
        OptionSpec(["--days"], "the next N days, 1 to 31 (default 7)", value: "N", .words(["1", "7", "14", "31"]), in: ["schedule"]),
        OptionSpec(["--traits"], "also trait changes, with --json", in: ["watch"]),
        OptionSpec(["--palette"], "also palette changes, with --json", in: ["watch"]),
        OptionSpec(["--exit-on-disconnect"], "exit 69 when the daemon goes away", in: ["watch"]),
        OptionSpec(["--exec"], "run a command on each change", value: "CMD", .command, in: ["watch"]),
        OptionSpec(["--no-initial"], "with --exec, skip the first run", in: ["watch"]),
        OptionSpec(["--mode"], "resolve for this mode", value: "MODE", .words(["dark", "light"]), in: variantCommands),
        OptionSpec(["--contrast"], "resolve for this contrast", value: "CONTRAST", .words(["normal", "high"]), in: variantCommands),
        OptionSpec(["--format"], "color format", value: "FORMAT", .words(ColorFormat.allCases.map(\.rawValue)), in: ["color"]),
        OptionSpec(["--format"], "palette format", value: "FORMAT", .words(PaletteFormat.allCases.map(\.rawValue)), in: ["palette"]),
        OptionSpec(["--preview"], "both modes as color swatches", in: ["palette"]),
        OptionSpec(["--color"], "with --preview, swatch colors", value: "WHEN", .words(["always", "never", "auto"]), in: ["palette"]),
        OptionSpec(["--light"], "the light plist", value: "FILE", .plists, in: ["palette import"]),
        OptionSpec(["--dark"], "the dark plist", value: "FILE", .plists, in: ["palette import"]),
        OptionSpec(["--output", "-o"], "write to this file", value: "FILE", .files, in: ["palette import", "import-darkman"]),
        OptionSpec(["--force"], "with -o, replace a file that exists", in: ["palette import", "import-darkman"]),
        OptionSpec(["--force"], "with enable, also one whose program is not installed (its files are prepared)", in: ["integrations"]),
        OptionSpec(["--merge"], "with -o, add to a config that exists what it lacks (conflicts refused by name)", in: ["import-darkman"]),
    ]

    /// The entries for an option name (`--format` has one per command), or none.
    static func specs(named name: String) -> [OptionSpec] {
        options.filter { $0.names.contains(name) }
    }

    static func command(_ name: String) -> CommandSpec? {
        commands.first { $0.name == name }
    }
}
