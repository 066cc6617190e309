import AppearanceCore
import AppearanceKit
import AppearancePosix
import AppearanceProtocol

// appearancectl: the command line for appearanced. Argument parsing is done by hand on purpose:
// `appearancectl get` runs in shell prompts, and a parsing library costs more start-up time than the
// whole request (docs/decisions.md).

enum Exit {
    static let ok: Int32 = 0
    static let usage: Int32 = 64        // EX_USAGE
    static let rejected: Int32 = 65     // EX_DATAERR: the daemon refused the request
    static let unavailable: Int32 = 69  // EX_UNAVAILABLE: the daemon is not reachable
    static let proto: Int32 = 76        // EX_PROTOCOL
}

let usage = """
    Usage: appearancectl [--socket PATH] COMMAND [OPTIONS]

    Asks appearanced whether the UI is dark, changes the user's override, and watches for changes.

    Commands:
      get [--json]               print the mode: dark or light (--json: the state object)
      status [--json]            the mode and why, the system value and its source, the override
      set dark|light|system      force a mode, or go back to following the system; prints the mode
      set dark|light --until-next | --for DURATION
                                 force a mode for a while: until the next automatic change (the
                                 schedule's next transition, or the desktop changing its own value),
                                 or for DURATION (90m, 2h, 1h30m, 45s, 1d); survives restarts
      toggle [--until-next | --for DURATION]
                                 flip the mode (for a while); prints the new mode
      get, set, toggle, watch --app ID
                                 the same for one app (a desktop-file or Flatpak id such as kitty or
                                 org.gnome.TextEditor): its own override (set dark|light --app ID; set
                                 system --app ID removes it) comes first for it; $APPEARANCED_APP is the
                                 default --app
      apps [--json]              the app overrides: one "ID<TAB>MODE" line each
      log [-n N] [--json]        the recent changes of the mode and their causes, oldest first
                                 (--json: one JSON object per line)
      watch [--json [--traits] [--palette]] [--exit-on-disconnect]
                                 print the mode, then one line per change, until interrupted
                                 (--traits: also trait changes; --palette: also palette changes;
                                 with --json each line carries what was asked for); follows the
                                 daemon across restarts, or exits 69 with --exit-on-disconnect
      watch [--no-initial] --exec CMD [ARGS...]
                                 run CMD now (not with --no-initial) and after each change, with
                                 APPEARANCE=dark|light and DARKMODE=1|0 in its environment; runs never
                                 overlap (changes during a run give one more run, with the newest mode);
                                 a failing CMD is reported and watching goes on, across daemon restarts
      color TOKEN [--mode dark|light] [--contrast normal|high] [--format hex|rgb|css]
                                 a palette color for the current appearance, or the one given:
                                 hex #262626 (#26262699 translucent), rgb "38 38 38 [0.6]",
                                 css rgb(38 38 38 [/ 0.6])
      asset NAME [--mode …] [--contrast …]
                                 a palette asset's path for the current (or given) appearance
      palette [--format json|css|sh|gtk] [--mode …] [--contrast …]
                                 the whole palette resolved: JSON, CSS custom properties, shell
                                 export lines, or GTK @define-color lines
      palette --preview [--contrast normal|high] [--color=always|never|auto]
                                 both modes side by side as truecolor swatches with names and values
                                 (auto: colors only on a terminal, not with NO_COLOR or TERM=dumb)
      palette import --light LIGHT.plist --dark DARK.plist [-o|--output FILE]
                                 convert LFLDarkModeKit color plists (key -> RRGGBB or AARRGGBB) to
                                 palette.toml (stdout without -o); keys found in one file only are
                                 reported and kept as that value for both modes
      import-darkman [FILE] [-o|--output FILE]
                                 darkman's config.yaml (default: $XDG_CONFIG_HOME/darkman/config.yaml) as
                                 appearanced's config.toml (stdout without -o), saying what has no
                                 equivalent; darkman's dark-mode.d/light-mode.d hooks run as they are
      help                       print this help

    Options:
      --socket PATH              talk to the daemon on PATH (default: $APPEARANCED_SOCKET, else
                                 $XDG_RUNTIME_DIR/appearanced/socket)
      --version                  print the version
      -h, --help                 print this help

    Exit status: 0 ok, 64 usage error, 65 request rejected by the daemon (or a plist import cannot
    use), 66/73 palette import cannot read/write a file, 69 daemon not reachable, 76 protocol error.

    """

func out(_ s: String) {
    // stdout closed (e.g. `| head -1`): nobody reads any more, which is not an error.
    do { try Descriptor.standardOutput.writeAll(s + "\n") } catch { Posix.exit(Exit.ok) }
}

func usageError(_ message: String) -> Never {
    Posix.printError("appearancectl: \(message)\nTry 'appearancectl help'.\n")
    Posix.exit(Exit.usage)
}

func fail(_ error: AppearanceError) -> Never {
    Posix.printError("appearancectl: \(error)\n")
    switch error {
    case .daemonNotRunning, .connectionLost, .notAnswering, .untrustedSocket: Posix.exit(Exit.unavailable)
    case .rejected: Posix.exit(Exit.rejected)
    case .protocolError: Posix.exit(Exit.proto)
    }
}

// MARK: Arguments

var socketPath: String?
var words: [String] = []
var json = false
var execCommand: [String]?
var noInitial = false
var modeOption: Mode?
var contrastOption: Contrast?
var formatOption: String?
var previewOption = false
var traitsOption = false
var paletteOption = false
var lightFile: String?
var darkFile: String?
var outputFile: String?
var untilNext = false
var forDuration: Int64?
var logCount: Int?
var exitOnDisconnect = false
var appOption: String?
var colorOption = "auto"
var usedOptions: [String] = []
var args = CommandLine.arguments.dropFirst()

/// The value of an option given as `--name VALUE` or `--name=VALUE`.
@MainActor func optionValue(_ arg: String, _ name: String) -> String? {
    if arg == name {
        guard let v = args.popFirst() else { usageError("option \(name) needs a value") }
        return v
    }
    if arg.hasPrefix(name + "=") { return String(arg.dropFirst(name.count + 1)) }
    return nil
}

while let arg = args.popFirst() {
    let name = arg.hasPrefix("--") ? String(arg.prefix { $0 != "=" }) : arg
    if ["--mode", "--contrast", "--format", "--preview", "--traits", "--palette", "--light", "--dark", "-o", "--output",
        "--until-next", "--for", "-n", "--app"].contains(name) {
        usedOptions.append(name == "-o" ? "--output" : name)
    }
    switch name {
    case "--mode":
        let v = optionValue(arg, "--mode")!
        guard let m = Mode(rawValue: v) else { usageError("invalid --mode \"\(v)\" (expected dark or light)") }
        modeOption = m
        continue
    case "--contrast":
        let v = optionValue(arg, "--contrast")!
        guard let c = Contrast(rawValue: v) else { usageError("invalid --contrast \"\(v)\" (expected normal or high)") }
        contrastOption = c
        continue
    case "--format": formatOption = optionValue(arg, "--format")!; continue
    case "--light": lightFile = optionValue(arg, "--light")!; continue
    case "--dark": darkFile = optionValue(arg, "--dark")!; continue
    case "-o", "--output": outputFile = optionValue(arg, name)!; continue
    case "--preview": previewOption = true; continue
    case "--until-next": untilNext = true; continue
    case "--app":
        let v = optionValue(arg, "--app")!
        guard AppID.isValid(v) else { usageError("invalid --app \"\(shown(v))\" (1-255 characters of A-Z a-z 0-9 . _ -, not starting with a dot)") }
        appOption = v
        continue
    case "--for":
        let v = optionValue(arg, "--for")!
        guard let seconds = parseDuration(v) else {
            usageError("invalid --for \"\(v)\" (expected a duration such as 90m, 2h, 1h30m, 45s or 1d, up to 366d)")
        }
        forDuration = seconds
        continue
    case "-n":
        let v = optionValue(arg, "-n")!
        guard let n = Int(v), n > 0 else { usageError("invalid -n \"\(v)\" (expected a positive whole number)") }
        logCount = n
        continue
    case "--traits": traitsOption = true; continue
    case "--palette": paletteOption = true; continue
    default: break
    }
    switch arg {
    case "--socket":
        guard let v = args.popFirst() else { usageError("option --socket needs a value") }
        guard !v.isEmpty else { usageError("option --socket needs a path (it is empty)") }
        socketPath = v
    case _ where arg.hasPrefix("--socket="):
        socketPath = String(arg.dropFirst("--socket=".count))
        if socketPath!.isEmpty { usageError("option --socket needs a path (--socket= is empty)") }
    case _ where arg.hasPrefix("--color="):
        colorOption = String(arg.dropFirst("--color=".count))
        guard ["always", "never", "auto"].contains(colorOption) else {
            usageError("invalid --color \"\(colorOption)\" (expected always, never or auto)")
        }
        usedOptions.append("--color")
    case "--json": json = true
    case "--no-initial": noInitial = true
    case "--exit-on-disconnect": exitOnDisconnect = true
    case "--exec":
        guard !args.isEmpty else { usageError("option --exec needs a command") }
        execCommand = Array(args)
        args = []
    case "-h", "--help": words.insert("help", at: 0)
    case "--version": out("appearancectl \(packageVersion)"); Posix.exit(Exit.ok)
    case "--": words.append(contentsOf: args); args = []
    case _ where arg.hasPrefix("-") && arg.count > 1: usageError("unknown option \"\(arg)\"")
    default: words.append(arg)
    }
}

guard let command = words.first else { usageError("missing command (get, status, set, toggle, log, apps, watch, color, asset, palette, import-darkman)") }
let operands = Array(words.dropFirst())

if command != "watch" {
    if execCommand != nil { usageError("--exec is an option of watch") }
    if noInitial { usageError("--no-initial is an option of watch --exec") }
}

/// Which commands take which of the newer options.
let optionsOf: [String: Set<String>] = [
    "color": ["--mode", "--contrast", "--format"],
    "asset": ["--mode", "--contrast"],
    "palette": ["--mode", "--contrast", "--format", "--preview", "--light", "--dark", "--output"],
    "watch": ["--traits", "--palette", "--app"],
    "set": ["--until-next", "--for", "--app"],
    "get": ["--app"],
    "apps": [],
    "import-darkman": ["--output"],
    "toggle": ["--until-next", "--for", "--app"],
    "log": ["-n"],
    "watch-exit": ["--exit-on-disconnect"],
]
// --json where there is a state object (or a log entry) to print; other commands have --format.
if json, !["get", "status", "set", "toggle", "log", "watch", "apps", "help"].contains(command) {
    usageError("\(command) does not take --json\(command == "palette" ? " (use --format json)" : command == "color" || command == "asset" ? " (it prints one value; palette --format json prints them all)" : "")")
}
if exitOnDisconnect, command != "watch" || execCommand != nil {
    usageError("--exit-on-disconnect is an option of watch and watch --json (watch --exec always reconnects)")
}
if untilNext && forDuration != nil { usageError("\(command): give --until-next or --for, not both") }
if appOption != nil && (untilNext || forDuration != nil) {
    usageError("\(command): an app override cannot be temporary (--until-next/--for are for everyone's mode)")
}
let paletteImport = command == "palette" && operands.first == "import"
for o in usedOptions {
    var allowed = optionsOf[command] ?? []
    if command == "palette" {
        allowed = paletteImport ? ["--light", "--dark", "--output"] : ["--mode", "--contrast", "--format", "--preview", "--color"]
    }
    if !allowed.contains(o) {
        usageError("\(o) is not an option of \(paletteImport ? "palette import" : command)")
    }
}

/// `--until-next` / `--for`, as the protocol's lifetime.
var requestedLifetime: Lifetime? {
    if untilNext { return .untilNext }
    return forDuration.map(Lifetime.seconds)
}

/// "90m", "2h", "1h30m", "45s", "1d" → seconds; nil for anything else (a bare number has no unit).
func parseDuration(_ text: String) -> Int64? {
    var total: Int64 = 0
    var number: Int64?
    for c in text {
        if let d = c.wholeNumberValue, c.isASCII {
            number = (number ?? 0) * 10 + Int64(d)
            if number! > Lifetime.maxSeconds { return nil }
        } else {
            guard let n = number, let unit: Int64 = ["s": 1, "m": 60, "h": 3600, "d": 86_400][c] else { return nil }
            total += n * unit
            number = nil
        }
    }
    guard number == nil, total >= 1, total <= Lifetime.maxSeconds else { return nil }
    return total
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

@MainActor func noOperands() {
    if let extra = operands.first { usageError("\(command): unexpected argument \"\(extra)\"") }
}

/// `--app ID`, else `$APPEARANCED_APP` (a terminal's prompt or a hook asking for its own app), for the
/// commands that take it.
let effectiveApp: String? = {
    guard ["get", "set", "toggle", "watch"].contains(command) else { return nil }
    if let appOption { return appOption }
    guard let env = Posix.environment("APPEARANCED_APP") else { return nil }
    guard AppID.isValid(env) else { usageError("invalid APPEARANCED_APP \"\(shown(env))\" in the environment (1-255 characters of A-Z a-z 0-9 . _ -, not starting with a dot)") }
    return env
}()

@MainActor func connect() -> AppearanceConnection {
    do { return try AppearanceConnection(socketPath: socketPath, app: effectiveApp) } catch { fail(error) }
}

func describeTemporary(_ t: TemporaryOverride) -> String {
    switch t.expiry {
    case .nextChange: return "\(t.mode.rawValue) until the next automatic change"
    case .at(let end):
        let l = Posix.localTime(end)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(t.mode.rawValue) until \(l.year)-\(two(l.month))-\(two(l.day)) \(two(l.hour)):\(two(l.minute))"
    }
}

/// Plain `watch` and `watch --json`: the current state, then one line per change, until interrupted. It
/// follows the daemon across restarts (capped back-off, a note on stderr while it is away); after a
/// reconnect the state is printed again only if it differs from the last line printed, so a consumer sees a
/// change, never a repeat. `--exit-on-disconnect` ends with exit 69 instead, as before.
@MainActor func watchLines() -> Never {
    let interest = (traits: traitsOption, palette: paletteOption)
    /// What decides whether a line says something new: the mode, and the traits and palette when asked for.
    func key(_ s: AppearanceState, _ palette: ResolvedPalette?) -> String {
        s.mode.rawValue + (interest.traits ? s.traits.json.text : "") + (interest.palette ? (palette?.json.text ?? "") : "")
    }
    func line(_ s: AppearanceState, previous: Mode?, palette: ResolvedPalette?) -> String {
        guard json else { return s.mode.rawValue }
        var members: [(String, JSON)] = []
        if case .object(let m) = s.json { members = m }
        if let palette { members.append(("palette", palette.json)) }
        return JSON.object(members + [("previous", previous.map { .string($0.rawValue) } ?? .null)]).text
    }
    var lastKey: String?
    var lastMode: Mode?
    var pause: UInt32 = 50_000
    var away = false
    while true {
        do {
            let c = try AppearanceConnection(socketPath: socketPath, app: effectiveApp)
            let start = try c.subscribe(traits: interest.traits, palette: interest.palette)
            if away { note("reconnected to appearanced on \(c.socketPath)") }
            away = false
            pause = 50_000
            if key(start.state, start.palette) != lastKey {
                out(line(start.state, previous: lastMode, palette: start.palette))
                (lastKey, lastMode) = (key(start.state, start.palette), start.state.mode)
            }
            while true {
                let n = try c.nextChange()
                out(json ? n.json.text : n.state.mode.rawValue)
                (lastKey, lastMode) = (key(n.state, n.palette ?? nil), n.state.mode)
            }
        } catch {
            switch error {
            case .daemonNotRunning, .connectionLost, .notAnswering:
                if exitOnDisconnect { fail(error) }
                if !away { note("\(error); waiting for it (Ctrl-C stops)") }
                away = true
                Posix.sleep(seconds: Double(pause) / 1e6)
                pause = min(pause * 2, 2_000_000)
            default:
                fail(error)
            }
        }
    }
}

@MainActor func printState(_ s: AppearanceState) {
    out(json ? s.json.text : s.mode.rawValue)
}

/// The largest plist `palette import` reads: color bundles are a few KiB.
let importLimit = 4 << 20

/// Reads a regular file of at most `importLimit` bytes (for `palette import`); exits 66 (EX_NOINPUT) naming
/// it when it cannot (a FIFO or device such as /dev/zero is refused, not read forever).
func readFile(_ path: String) -> String {
    do {
        return String(decoding: try FileSystem.readAll(path, limit: importLimit, regularOnly: true), as: UTF8.self)
    } catch {
        let why = switch error.code {
        case Errno.invalid, Errno.isDirectory: "not a regular file"
        case Errno.tooBig: "larger than \(importLimit) bytes"
        default: error.message
        }
        Posix.printError("appearancectl: cannot read \(shown(path)): \(why)\n")
        Posix.exit(66)
    }
}

/// A name for a terminal: control characters (an escape sequence in a key or a file name) shown as \u{…}.
func shown(_ text: String) -> String {
    String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value)
        ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())
}

/// Replaces `path` with `text` atomically: a new file beside it (never following a symlink at either name),
/// then rename, so a reader never sees half a palette and a symlink at `path` is replaced, not written
/// through. Exits 73 (EX_CANTCREAT) when it cannot.
func writeFile(_ path: String, _ text: String) {
    let slash = path.lastIndex(of: "/")
    let tmp = (slash.map { String(path[...$0]) } ?? "") + "." + (slash.map { String(path[path.index(after: $0)...]) } ?? path) + ".tmp-\(Posix.processID)"
    try? FileSystem.remove(tmp)
    // The folders on the way are made (`-o ~/.config/appearanced/config.toml` on a fresh account).
    var dir = ""
    for part in path.split(separator: "/", omittingEmptySubsequences: false).dropLast() {
        dir += (dir.isEmpty && !path.hasPrefix("/") ? "" : "/") + part
        if !dir.isEmpty, dir != "/" { try? FileSystem.makeDirectory(dir, permissions: 0o755) }
    }
    do throws(Errno) {
        let file = try Descriptor.open(tmp, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o644)
        defer { file.close() }
        do throws(Errno) {
            try file.writeAll(text)
            try FileSystem.rename(tmp, to: path)
        } catch {
            try? FileSystem.remove(tmp)
            throw error
        }
    } catch {
        Posix.printError("appearancectl: cannot write \(shown(path)): \(error.message)\n")
        Posix.exit(73)
    }
}

@MainActor func oneToken(_ what: String) -> String {
    guard operands.count == 1 else {
        usageError(operands.isEmpty ? "\(command): missing \(what)" : "\(command): too many arguments")
    }
    return operands[0]
}

@MainActor func resolveOne(_ token: String) -> PaletteValue {
    let r: ResolvedPalette
    do { r = try connect().resolve([token], mode: modeOption, contrast: contrastOption) } catch { fail(error) }
    guard let v = r[token] else { fail(.protocolError("the daemon's answer has no value for \"\(token)\"")) }
    return v
}

// MARK: Commands

switch command {
case "help":
    if let extra = operands.first { usageError("help: unexpected argument \"\(extra)\" (help takes none)") }
    print(usage, terminator: "")

case "get":
    noOperands()
    do { printState(try connect().state()) } catch { fail(error) }

case "status":
    noOperands()
    let c = connect()
    let st: StatusInfo
    do { st = try c.status() } catch { fail(error) }
    if json { out(st.json.text); break }
    let s = st.state
    let why: String = switch s.source {
    case .app: "forced by the app's own override"
    case .temporary: "forced by a temporary override"
    case .override: "forced by the user's override"
    case .system: "following the system"
    case .schedule: "following the schedule"
    case .default: s.system == .noPreference ? "the default: the desktop states no preference" : "the default: the desktop gives no answer"
    }
    let t = s.traits
    let traits = "contrast \(t.contrast?.rawValue ?? "unavailable"), reduced motion "
        + "\(t.reducedMotion.map { $0 ? "yes" : "no" } ?? "unavailable"), accent \(t.accentColor?.opaqueHex ?? "unavailable")"
    out("""
        mode:        \(s.mode.rawValue) (\(why))
        system:      \(s.system.rawValue) (\(st.systemDetail))
        traits:      \(traits)
        override:    \(s.override.rawValue)
        default:     \(st.defaultMode.rawValue)
        config:      \(st.configDetail ?? "unknown (the daemon is older than protocol 3)")
        palette:     \(st.paletteDetail ?? "unknown (the daemon is older than protocol 2)")
        schedule:    \(st.scheduleDetail ?? "none")
        temporary:   \(s.temporary.map(describeTemporary) ?? "none")
        portal:      \(st.portalBackendDetail ?? "unknown (the daemon is older than protocol 3)")
        desktop:     \(st.desktopDetail ?? "unknown (the daemon is older than protocol 4)")
        hooks:       \(st.hooksDetail ?? "unknown (the daemon is older than protocol 3)")
        apps:        \(st.appOverrides.map { "\($0) app override\($0 == 1 ? "" : "s") (appearancectl apps)" } ?? "unknown (the daemon is older than protocol 4)")
        subscribers: \(st.subscribers)
        daemon:      appearanced \(st.version), pid \(st.pid), instance \(s.instance), seq \(s.seq), protocol \(st.protocolVersion)
        socket:      \(c.socketPath)
        """)

case "set":
    guard operands.count == 1 else {
        usageError(operands.isEmpty ? "set: missing mode (dark, light or system)" : "set: too many arguments")
    }
    guard let o = Override(rawValue: operands[0]) else {
        usageError("set: invalid mode \"\(operands[0])\" (expected dark, light or system)")
    }
    if let lifetime = requestedLifetime {
        guard let mode = Mode(rawValue: operands[0]) else {
            usageError("set: \"system\" cannot be temporary: it ends every override (drop --until-next/--for)")
        }
        do { printState(try connect().set(mode, for: lifetime)) } catch { fail(error) }
    } else {
        do { printState(try connect().set(o)) } catch { fail(error) }
    }

case "toggle":
    noOperands()
    if let lifetime = requestedLifetime {
        do { printState(try connect().toggle(for: lifetime)) } catch { fail(error) }
    } else {
        do { printState(try connect().toggle()) } catch { fail(error) }
    }

case "log":
    noOperands()
    let entries: [LogEntry]
    do { entries = try connect().log(limit: logCount) } catch { fail(error) }
    for e in entries {
        if json { out(e.json.text); continue }
        let l = Posix.localTime(e.time)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let when = "\(l.year)-\(two(l.month))-\(two(l.day)) \(two(l.hour)):\(two(l.minute)):\(two(l.second))"
        let change = e.from.map { "\($0.rawValue) → \(e.to.rawValue)" } ?? "start: \(e.to.rawValue)"
        out("\(when)  \(change.padding(13))  \(e.cause)")
    }

case "watch":
    noOperands()
    // Interrupting a watch is how it ends: exit 0, not 130.
    Signal.interrupt.exitQuietly()
    Signal.terminate.exitQuietly()
    // A parent may hand us these blocked (a signal mask is inherited across exec).
    Signal.unblock([.interrupt, .terminate])
    if let execCommand {
        if json { usageError("watch: --json and --exec do not go together") }
        if execCommand[0].isEmpty { usageError("watch: --exec needs a command") }
        // The watch runs in a task; this thread only waits for SIGINT/SIGTERM (the task exits when it ends).
        let socket = socketPath, initial = !noInitial, app = effectiveApp
        Task.detached { await watchExec(socket: socket, app: app, command: execCommand, initial: initial) }
        Posix.waitForever()
    }
    if noInitial { usageError("watch: --no-initial goes with --exec") }
    if (traitsOption || paletteOption) && (!json || execCommand != nil) {
        // Plain lines say the mode; trait and palette changes are only visible in JSON.
        usageError("watch: --traits and --palette go with --json")
    }
    watchLines()

case "color":
    let token = oneToken("token (e.g. fill.bg)")
    var f = ColorFormat.hex
    if let name = formatOption {
        guard let v = ColorFormat(rawValue: name) else { usageError("color: invalid --format \"\(name)\" (expected hex, rgb or css)") }
        f = v
    }
    switch resolveOne(token) {
    case .color(let c): out(format(c, f))
    case .asset(let path):
        Posix.printError("appearancectl: \"\(token)\" is an asset (\(path)), not a color: use appearancectl asset\n")
        Posix.exit(Exit.rejected)
    }

case "asset":
    let name = oneToken("asset name (e.g. wallpaper)")
    switch resolveOne(name) {
    case .asset(let path): out(path)
    case .color(let c):
        Posix.printError("appearancectl: \"\(name)\" is a color (\(c.hex)), not an asset: use appearancectl color\n")
        Posix.exit(Exit.rejected)
    }

case "palette" where paletteImport:
    if operands.count > 1 { usageError("palette import: unexpected argument \"\(operands[1])\"") }
    guard let lightFile, let darkFile else { usageError("palette import: needs --light LIGHT.plist and --dark DARK.plist") }
    let result: ImportResult
    do {
        result = try convertLFL(light: readFile(lightFile), lightFile: lightFile, dark: readFile(darkFile), darkFile: darkFile)
    } catch {
        Posix.printError("appearancectl: \(shown("\(error)"))\n")
        Posix.exit(Exit.rejected)
    }
    if let outputFile { writeFile(outputFile, result.toml) } else { print(result.toml, terminator: "") }
    if !result.onlyLight.isEmpty {
        Posix.printError("appearancectl: only in \(shown(lightFile)) (kept for both modes): \(shown(result.onlyLight.joined(separator: ", ")))\n")
    }
    if !result.onlyDark.isEmpty {
        Posix.printError("appearancectl: only in \(shown(darkFile)) (kept for both modes): \(shown(result.onlyDark.joined(separator: ", ")))\n")
    }

case "palette":
    if let extra = operands.first { usageError("palette: unexpected argument \"\(extra)\" (palette import takes --light and --dark)") }
    if usedOptions.contains("--color"), !previewOption { usageError("palette: --color goes with --preview") }
    let c = connect()
    if previewOption {
        if formatOption != nil || modeOption != nil { usageError("palette: --preview shows both modes; it takes only --contrast and --color") }
        do {
            let light = try c.palette(mode: .light, contrast: contrastOption)
            let dark = try c.palette(mode: .dark, contrast: contrastOption)
            // Colors only for a terminal that shows them: NO_COLOR (no-color.org), TERM=dumb and pipes get text.
            let colored: Bool = switch colorOption {
            case "always": true
            case "never": false
            default: Descriptor.standardOutput.isTerminal && Posix.environment("NO_COLOR") == nil && Posix.environment("TERM") != "dumb"
            }
            out(preview(light: light, dark: dark, color: colored))
        } catch { fail(error) }
        break
    }
    var f = PaletteFormat.json
    if let name = formatOption {
        guard let v = PaletteFormat(rawValue: name) else { usageError("palette: invalid --format \"\(name)\" (expected json, css, sh or gtk)") }
        f = v
    }
    do { out(render(try c.palette(mode: modeOption, contrast: contrastOption), as: f)) } catch { fail(error) }

case "apps":
    noOperands()
    let list: [(app: String, override: Mode)]
    do { list = try connect().apps() } catch { fail(error) }
    for (app, mode) in list {
        out(json ? JSON.object([("app", .string(app)), ("override", .string(mode.rawValue))]).text : "\(app)\t\(mode.rawValue)")
    }

case "import-darkman":
    if operands.count > 1 { usageError("import-darkman: unexpected argument \"\(operands[1])\"") }
    let configHome = Posix.environment("XDG_CONFIG_HOME") ?? (Posix.environment("HOME") ?? "") + "/.config"
    let file = operands.first ?? configHome + "/darkman/config.yaml"
    let result: DarkmanImport
    do { result = try convertDarkman(readFile(file), file: file) } catch {
        Posix.printError("appearancectl: \(shown("\(error)"))\n")
        Posix.exit(Exit.rejected)
    }
    if let outputFile { writeFile(outputFile, result.toml) } else { print(result.toml, terminator: "") }
    for note in result.notes { Posix.printError("appearancectl: \(shown(note))\n") }

default:
    usageError("unknown command \"\(command)\" (expected get, status, set, toggle, log, apps, watch, color, asset, palette, import-darkman or help)")
}
Posix.exit(Exit.ok)
