import AppearanceCore
import AppearanceProtocol

/// Turns appearancectl's arguments (without the program name) into what to run, or the usage error to
/// report; `environment` gives `APPEARANCED_APP`, the default `--app`.

public func parse(_ arguments: [String], environment: (String) -> String? = { _ in nil }) throws(UsageError) -> Invocation {
    var p = Parser()
    try p.read(arguments)
    return try p.invocation(environment: environment)
}

/// The options seen, by their long name, and the operands, in order.
private struct Parser {
    var socket: String?
    var values: [String: String] = [:]
    var flags: Set<String> = []
    /// Options given, by long name, in the order given (for the first one a command does not take).
    var given: [String] = []
    var operands: [String] = []
    /// `--exec CMD ARGS...` (not an optional array: its metadata would be built at run time on every start).
    var exec: [String] = []
    var execGiven = false
    var help = false
    var version = false

    mutating func read(_ arguments: [String]) throws(UsageError) {
        let tokens = try Scan.tokens(arguments, spec: { Table.specs(named: $0).first }, takesRest: { $0.completion == .command })
        for token in tokens {
            switch token {
            case .operand(let text):
                operands.append(text)
            case .rest(let spec, let command):
                exec = command
                execGiven = true
                given.append(spec.name)
            case .option(let spec, nil, _):
                switch spec.name {
                case "--help": help = true
                case "--version": version = true
                default: flags.insert(spec.name)
                }
                given.append(spec.name)
            case .option(let spec, let value?, let written):
                try check(spec, value, written: written)
                if spec.name == "--socket" { socket = value } else { values[spec.name] = value }
                given.append(spec.name)
            }
        }
    }

    /// The checks a value needs whatever the command.
    func check(_ spec: OptionSpec, _ value: String, written: String) throws(UsageError) {
        switch spec.name {
        case "--socket":
            if value.isEmpty {
                throw UsageError("option --socket needs a path (\(written == "--socket=" ? "--socket= is" : "it is") empty)")
            }
        case "--mode", "--contrast", "--color":
            // The table's words for these are every value they take.
            guard case .words(let w) = spec.completion, !w.contains(value) else { break }
            let expected = w.dropLast().joined(separator: ", ") + " or " + w.last!
            throw UsageError("invalid \(spec.name) \"\(value)\" (expected \(expected))")
        case "--app":
            if !AppID.isValid(value) { throw UsageError("invalid --app \"\(shown(value))\" (\(appIDRule))") }
        case "--for":
            if parseDuration(value) == nil {
                throw UsageError("invalid --for \"\(value)\" (expected a duration such as 90m, 2h, 1h30m, 45s or 1d, up to 366d)")
            }
        case "-n":
            guard let n = Int(value), n > 0 else { throw UsageError("invalid -n \"\(value)\" (expected a positive whole number)") }
        case "--days":
            guard let n = Int(value), (1...31).contains(n) else { throw UsageError("invalid --days \"\(shown(value))\" (expected a whole number from 1 to 31)") }
        default: break
        }
    }

    func invocation(environment: (String) -> String?) throws(UsageError) -> Invocation {
        if version { return Invocation(socket: socket, .version) }
        if help {
            // `CMD --help`: that command's help (`palette import --help`: palette's).
            if let command = operands.first, Table.commandNames.contains(command) { return Invocation(socket: socket, .commandHelp(command)) }
            return Invocation(socket: socket, .help)
        }
        guard let command = operands.first else {
            throw UsageError("missing command (\(Table.commandNames.dropLast().joined(separator: ", ")))")
        }
        // By name, not through `Table.commands`: building that table costs more than a whole `get` (measured).
        guard Table.commandNames.contains(command) else { throw UsageError(unknownCommand(command)) }
        let rest = Array(operands.dropFirst())
        let scope = rest.first.flatMap { Table.subcommandScopes.contains("\(command) \($0)") ? "\(command) \($0)" : nil } ?? command
        try checkScopes(command: command, scope: scope)
        return Invocation(socket: socket, try build(command, scope: scope, operands: rest, environment: environment))
    }

    /// Every option given must be one of the command's (the first one that is not is named).
    func checkScopes(command: String, scope: String) throws(UsageError) {
        if execGiven, command != "watch" { throw UsageError("--exec is an option of watch") }
        if flags.contains("--no-initial"), command != "watch" { throw UsageError("--no-initial is an option of watch --exec") }
        if flags.contains("--json"), !Table.stateCommands.contains(command) {
            let hint = switch command {
            case "palette": " (use --format json)"
            case "color", "asset": " (it prints one value; palette --format json prints them all)"
            default: ""
            }
            throw UsageError("\(command) does not take --json\(hint)")
        }
        if flags.contains("--exit-on-disconnect"), command != "watch" || execGiven {
            throw UsageError("--exit-on-disconnect is an option of watch and watch --json (watch --exec always reconnects)")
        }
        for name in given {
            let specs = Table.specs(named: name)
            if specs.contains(where: { $0.isGlobal || $0.scopes.contains(scope) }) { continue }
            throw UsageError("\(name) is not an option of \(scope)")
        }
    }

    /// `--force`: only with `-o FILE` (standard output is never "replaced").
    func force(command: String) throws(UsageError) -> Bool {
        guard flags.contains("--force") else { return false }
        if values["--output"] == nil { throw UsageError("\(command): --force goes with -o FILE (it lets the import replace FILE)") }
        return true
    }

    /// `--until-next` / `--for`, as the protocol's lifetime.
    func lifetime(_ command: String, app: String?) throws(UsageError) -> Lifetime? {
        let seconds = values["--for"].flatMap(parseDuration)
        let untilNext = flags.contains("--until-next")
        if untilNext && seconds != nil { throw UsageError("\(command): give --until-next or --for, not both") }
        guard untilNext || seconds != nil else { return nil }
        if app != nil { throw UsageError("\(command): an app override cannot be temporary (--until-next/--for are for everyone's mode)") }
        return untilNext ? .untilNext : seconds.map(Lifetime.seconds)
    }

    /// `--app ID`, else `$APPEARANCED_APP` (a terminal's prompt or a hook asking for its own app).
    func app(environment: (String) -> String?) throws(UsageError) -> String? {
        if let app = values["--app"] { return app }
        guard let env = environment("APPEARANCED_APP") else { return nil }
        guard AppID.isValid(env) else {
            throw UsageError("invalid APPEARANCED_APP \"\(shown(env))\" in the environment (\(appIDRule))")
        }
        return env
    }

    var variant: ResolveFor {
        ResolveFor(mode: values["--mode"].flatMap(Mode.init(rawValue:)), contrast: values["--contrast"].flatMap(Contrast.init(rawValue:)))
    }

    func build(_ command: String, scope: String, operands: [String], environment: (String) -> String?) throws(UsageError) -> Command {
        let json = flags.contains("--json")
        func none() throws(UsageError) {
            if let extra = operands.first { throw UsageError("\(command): unexpected argument \"\(extra)\"") }
        }
        if Table.commandsWithoutOperands.contains(command) { try none() }
        func one(_ what: String) throws(UsageError) -> String {
            guard operands.count == 1 else {
                throw UsageError(operands.isEmpty ? "\(command): missing \(what)" : "\(command): too many arguments")
            }
            return operands[0]
        }
        /// `--format`, `fallback` when not given.
        func format<F: RawRepresentable<String>>(_ fallback: F, expected: String) throws(UsageError) -> F {
            guard let name = values["--format"] else { return fallback }
            guard let f = F(rawValue: name) else { throw UsageError("\(command): invalid --format \"\(name)\" (expected \(expected))") }
            return f
        }
        switch command {
        case "help":
            guard let name = operands.first else { return .help }
            if operands.count > 1 { throw UsageError("help: unexpected argument \"\(operands[1])\" (help takes one command)") }
            guard Table.commandNames.contains(name) else { throw UsageError("help: " + unknownCommand(name)) }
            return .commandHelp(name)
        case "get": return .get(app: try app(environment: environment), json: json)
        case "status": return .status(json: json)
        case "set":
            let word = try one("mode (dark, light or system)")
            guard let o = Override(rawValue: word) else { throw UsageError("set: invalid mode \"\(word)\" (expected dark, light or system)") }
            let app = try app(environment: environment)
            let lifetime = try lifetime(command, app: app)
            if lifetime != nil, o == .system {
                throw UsageError("set: \"system\" cannot be temporary: it ends every override (drop --until-next/--for)")
            }
            return .set(o, lifetime: lifetime, app: app, json: json)
        case "toggle":
            let app = try app(environment: environment)
            return .toggle(lifetime: try lifetime(command, app: app), app: app, json: json)
        case "log": return .log(count: values["-n"].flatMap { Int($0) }, app: values["--app"], json: json)
        case "reload": return .reload
        case "schedule": return .schedule(days: values["--days"].flatMap { Int($0) } ?? Call.defaultScheduleDays, json: json)
        case "postpone":
            if flags.contains("--cancel") {
                try none()
                return .nextChange(.cancelPostpone, json: json)
            }
            let text = try one("duration (such as 30m, 1h or 1h30m), or --cancel")
            guard let seconds = parseDuration(text), seconds <= NextChange.maxPostpone else {
                throw UsageError("postpone: invalid duration \"\(shown(text))\" (expected such as 30m, 1h or 1h30m, up to 1d)")
            }
            return .nextChange(.postpone(seconds: seconds), json: json)
        case "skip": return .nextChange(flags.contains("--cancel") ? .cancelSkip : .skip, json: json)
        case "apps": return .apps(json: json)
        case "integrations":
            let force = flags.contains("--force")
            if force, operands.first != "enable" {
                throw UsageError("integrations: --force goes with enable (it enables one whose program is not installed)")
            }
            guard let verb = operands.first, verb != "list" else {
                if operands.count > 1 { throw UsageError("integrations list: unexpected argument \"\(shown(operands[1]))\" (it lists them all)") }
                return .integrations(enable: [], disable: [], json: json)
            }
            guard verb == "enable" || verb == "disable" else {
                throw UsageError("integrations: unexpected argument \"\(shown(verb))\" (expected list, enable NAME... or disable NAME...)")
            }
            let names = Array(operands.dropFirst())
            guard !names.isEmpty else { throw UsageError("integrations \(verb): missing integration name (appearancectl integrations lists them)") }
            if let bad = names.first(where: { !IntegrationName.isValid($0) }) {
                throw UsageError("integrations \(verb): invalid name \"\(shown(bad))\" (\(IntegrationName.rule))")
            }
            guard names.count <= IntegrationName.maxPerRequest else {
                throw UsageError("integrations \(verb): at most \(IntegrationName.maxPerRequest) names at once")
            }
            return verb == "enable" ? .integrations(enable: names, disable: [], force: force, json: json) : .integrations(enable: [], disable: names, json: json)
        case "watch":
            let app = try app(environment: environment)
            if execGiven {
                if json { throw UsageError("watch: --json and --exec do not go together") }
                if exec[0].isEmpty { throw UsageError("watch: --exec needs a command") }
                if flags.contains("--traits") || flags.contains("--palette") { throw UsageError("watch: --traits and --palette go with --json") }
                return .watchExec(command: exec, initial: !flags.contains("--no-initial"), app: app)
            }
            if flags.contains("--no-initial") { throw UsageError("watch: --no-initial goes with --exec") }
            let w = Watch(app: app, json: json, traits: flags.contains("--traits"), palette: flags.contains("--palette"),
                          exitOnDisconnect: flags.contains("--exit-on-disconnect"))
            // Plain lines say the mode; trait and palette changes are only visible in JSON.
            if (w.traits || w.palette) && !json { throw UsageError("watch: --traits and --palette go with --json") }
            return .watch(w)
        case "color":
            let token = try one("token (e.g. fill.bg)")
            return .color(token: token, variant: variant, format: try format(ColorFormat.hex, expected: "hex, rgb or css"))
        case "asset":
            return .asset(name: try one("asset name (e.g. wallpaper)"), variant: variant)
        case "palette" where scope == "palette import":
            if operands.count > 1 { throw UsageError("palette import: unexpected argument \"\(operands[1])\"") }
            guard let light = values["--light"], let dark = values["--dark"] else {
                throw UsageError("palette import: needs --light LIGHT.plist and --dark DARK.plist")
            }
            return .paletteImport(light: light, dark: dark, output: values["--output"], force: try force(command: "palette import"))
        case "palette":
            if let extra = operands.first { throw UsageError("palette: unexpected argument \"\(extra)\" (palette import takes --light and --dark)") }
            let color = values["--color"].flatMap(ColorChoice.init(rawValue:))
            if flags.contains("--preview") {
                if values["--format"] != nil || values["--mode"] != nil {
                    throw UsageError("palette: --preview shows both modes; it takes only --contrast and --color")
                }
                return .palettePreview(contrast: variant.contrast, color: color ?? .auto)
            }
            if color != nil { throw UsageError("palette: --color goes with --preview") }
            return .palette(variant: variant, format: try format(PaletteFormat.json, expected: "json, css, sh or gtk"))
        case "import-darkman":
            if operands.count > 1 { throw UsageError("import-darkman: unexpected argument \"\(operands[1])\"") }
            let merge = flags.contains("--merge")
            if merge, values["--output"] == nil { throw UsageError("import-darkman: --merge goes with -o FILE (it adds to FILE what it lacks)") }
            let force = try force(command: command)
            if merge, force { throw UsageError("import-darkman: --merge or --force, not both (--force replaces FILE, --merge adds to it)") }
            return .importDarkman(file: operands.first, output: values["--output"], force: force, merge: merge)
        case "completions":
            // `completions list WHAT`, for the scripts themselves: not in the help or the completions.
            if operands.first == "list", operands.count == 2, let what = CompletionList(rawValue: operands[1]) {
                return .completionList(what)
            }
            let name = try one("shell (bash, zsh or fish)")
            guard let shell = Shell(rawValue: name) else { throw UsageError("completions: unknown shell \"\(name)\" (expected bash, zsh or fish)") }
            return .completions(shell)
        default:
            // Every command of the table is handled above.
            throw UsageError("unknown command \"\(command)\"")
        }
    }
}

/// `unknown command "X" (expected get, status, … or help)`.
private func unknownCommand(_ name: String) -> String {
    let names = Table.commandNames
    return "unknown command \"\(name)\" (expected \(names.dropLast().joined(separator: ", ")) or \(names.last!))"
}

private let appIDRule = "1-255 characters of A-Z a-z 0-9 . _ -, not starting with a dot"

/// A name for a terminal: control characters (an escape sequence in a key or a file name) shown as \u{…}.
public func shown(_ text: String) -> String {
    String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value)
        ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())
}
