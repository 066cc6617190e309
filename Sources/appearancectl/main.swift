import AppearanceCLI
import AppearanceCore
import AppearanceFormats
import AppearanceKit
import AppearancePosix
import AppearanceProtocol

// appearancectl: runs the Invocation `parse` (AppearanceCLI) makes of the arguments; `get`, `set MODE` and
// `toggle` take a path of their own first (QuickCommand.swift).
if let request = QuickCommand.request, QuickCommand.run(request) { Posix.exit(Exit.ok) }

enum Exit {
    static let ok: Int32 = 0
    static let usage: Int32 = 64        // EX_USAGE
    static let rejected: Int32 = 65     // EX_DATAERR: the daemon refused the request
    static let unavailable: Int32 = 69  // EX_UNAVAILABLE: the daemon is not reachable
    static let proto: Int32 = 76        // EX_PROTOCOL
}

func out(_ s: String) {
    // stdout closed (e.g. `| head -1`): nobody reads any more, which is not an error.
    do { try Descriptor.standardOutput.writeAll(s + "\n") } catch { Posix.exit(Exit.ok) }
}

/// `appearancectl: MESSAGE` on stderr.
func note(_ message: String) { Posix.printError("appearancectl: \(message)\n") }

/// `appearancectl: MESSAGE` on stderr, and the end of the run with `code`.
func stop(_ code: Int32, _ message: String) -> Never {
    note(message)
    Posix.exit(code)
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

/// `automatic`: whether anything automatic can end an `until-next` one (a schedule, or a desktop that answers).
func describeTemporary(_ t: TemporaryOverride, automatic: Bool = true) -> String {
    switch t.expiry {
    case .nextChange where !automatic: return "\(t.mode.rawValue) until appearancectl set system (nothing automatic is set up)"
    case .nextChange: return "\(t.mode.rawValue) until the next automatic change"
    case .at(let end):
        let l = Posix.localTime(end)
        return "\(t.mode.rawValue) until \(l.date) \(l.clock)"
    }
}

/// Plain `watch` and `watch --json`: the state, then one line per change, across daemon restarts (after one,
/// the state only if it differs from the last line); `--exit-on-disconnect` ends with exit 69 instead.
func watchLines(_ w: Watch, socket: String?) -> Never {
    let interest = (traits: w.traits, palette: w.palette)
    /// What decides whether a line says something new: the mode, and the traits and palette when asked for.
    func key(_ s: AppearanceState, _ palette: ResolvedPalette?) -> String {
        s.mode.rawValue + (interest.traits ? s.traits.json.text : "") + (interest.palette ? (palette?.json.text ?? "") : "")
    }
    func line(_ s: AppearanceState, previous: Mode?, palette: ResolvedPalette?) -> String {
        guard w.json else { return s.mode.rawValue }
        var members: [(String, JSON)] = []
        if case .object(let m) = s.json { members = m }
        if let palette { members.append(("palette", palette.json)) }
        return JSON.object(members + [("previous", previous.map { .string($0.rawValue) } ?? .null)]).text
    }
    var lastKey: String?
    var lastMode: Mode?
    var backoff = Backoff.client
    var away = false
    while true {
        do {
            let c = try AppearanceConnection(socketPath: socket, app: w.app)
            let start = try c.subscribe(traits: interest.traits, palette: interest.palette)
            if away { note("reconnected to appearanced on \(c.socketPath)") }
            away = false
            backoff.reset()
            if key(start.state, start.palette) != lastKey {
                out(line(start.state, previous: lastMode, palette: start.palette))
                (lastKey, lastMode) = (key(start.state, start.palette), start.state.mode)
            }
            while true {
                let n = try c.nextChange()
                out(w.json ? n.json.text : n.state.mode.rawValue)
                (lastKey, lastMode) = (key(n.state, n.palette ?? nil), n.state.mode)
            }
        } catch {
            switch error {
            case .daemonNotRunning, .connectionLost, .notAnswering:
                if w.exitOnDisconnect { fail(error) }
                if !away { note("\(error); waiting for it (Ctrl-C stops)") }
                away = true
                Posix.sleep(seconds: backoff.next())
            default:
                fail(error)
            }
        }
    }
}

/// After `get`'s mode: the config the user wrote is not in force, said on stderr.
func warnOfConfigProblem(_ s: AppearanceState) {
    if let problem = s.configProblem { note("appearanced is not using its config: \(problem)") }
}

func printState(_ s: AppearanceState, json: Bool) {
    out(json ? s.json.text : s.mode.rawValue)
}

/// `set MODE --until-next` / `toggle --until-next`: what will end it, on stderr (from `status`).

func sayWhatEndsIt(_ s: AppearanceState, _ c: AppearanceConnection) {
    guard let t = s.temporary, t.expiry == .nextChange else { return }
    let status = try? c.status()
    let detail = status?.scheduleDetail ?? ""
    var next = detail.firstRange(of: " until ").map { String(detail[$0.upperBound...].prefix { $0 != "(" }) } ?? ""
    while next.last == " " { next.removeLast() }
    if !next.isEmpty {
        note("\(t.mode.rawValue) until the schedule's next change at \(next), or until the desktop's own setting changes if that comes first")
    } else if s.system == .unavailable {
        note("\(t.mode.rawValue): nothing automatic is set up (no schedule, and the desktop gives no answer): this lasts until appearancectl set system")
    } else {
        note("\(t.mode.rawValue) until the desktop's own setting changes (appearancectl set system ends it now)")
    }
}

func resolveOne(_ token: String, _ variant: ResolveFor, socket: String?) -> PaletteValue {
    let r = ask(try connect(socket).resolve([token], mode: variant.mode, contrast: variant.contrast))
    guard let v = r[token] else { fail(.protocolError("the daemon's answer has no value for \"\(token)\"")) }
    return v
}

/// Interrupting a watch is how it ends: exit 0, not 130.
func interruptEndsWatch() {
    Signal.interrupt.exitQuietly()
    Signal.terminate.exitQuietly()
    // A parent may hand us these blocked (a signal mask is inherited across exec).
    Signal.unblock([.interrupt, .terminate])
}

func connect(_ socket: String?, app: String? = nil) -> AppearanceConnection {
    ask(try AppearanceConnection(socketPath: socket, app: app))
}

/// What `body` asks of the daemon, or the end of the run with its error.
func ask<T>(_ body: @autoclosure () throws(AppearanceError) -> T) -> T {
    do { return try body() } catch { fail(error) }
}

/// `set` and `toggle`: the state after the change, and for a temporary one what will end it.
func printChange(_ c: AppearanceConnection, json: Bool, temporary: Bool, _ body: () throws(AppearanceError) -> AppearanceState) {
    let state = ask(try body())
    printState(state, json: json)
    if temporary { sayWhatEndsIt(state, c) }
}

// MARK: Commands

let invocation: Invocation
do {
    invocation = try parse(Array(CommandLine.arguments.dropFirst()), environment: Posix.environment)
} catch {
    usageError(error.message)
}
let socket = invocation.socket

switch invocation.command {
case .help:
    print(helpText, terminator: "")

case .commandHelp(let name):
    print(commandHelp(name) ?? helpText, terminator: "")

case .version:
    out("appearancectl \(packageVersion)")

case .completions(let shell):
    print(completionScript(for: shell), terminator: "")

case .completionList(let what):
    printCompletionList(what, socket: socket)

case .get(let app, let json):
    let state = ask(try connect(socket, app: app).state())
    printState(state, json: json)
    if !json { warnOfConfigProblem(state) }

case .status(let json):
    let c = connect(socket)
    let st = ask(try c.status())
    if json { out(st.json.text); break }
    printStatus(st, socket: c.socketPath)

case .set(let o, let lifetime, let app, let json):
    let c = connect(socket, app: app)
    printChange(c, json: json, temporary: lifetime != nil) { () throws(AppearanceError) in
        if let lifetime, let mode = Mode(rawValue: o.rawValue) { return try c.set(mode, for: lifetime) }
        return try c.set(o)
    }

case .toggle(let lifetime, let app, let json):
    let c = connect(socket, app: app)
    printChange(c, json: json, temporary: lifetime != nil) { () throws(AppearanceError) in
        if let lifetime { return try c.toggle(for: lifetime) }
        return try c.toggle()
    }

case .log(let count, let app, let json):
    for e in ask(try connect(socket).log(limit: count, app: app)) {
        if json { out(e.json.text); continue }
        let l = Posix.localTime(e.time)
        let when = "\(l.date) \(l.clockWithSeconds)"
        let change = e.from.map { "\($0.rawValue) → \(e.to.rawValue)" } ?? "start: \(e.to.rawValue)"
        // An app's own change names the app first: "[kitty] app override kitty: dark, set by …".
        out("\(when)  \(change.padding(13))  \(e.app.map { "[\($0)] " } ?? "")\(e.cause)")
    }

case .schedule(let days, let json):
    let info = ask(try connect(socket).schedule(days: days))
    if json { out(info.json.text) } else { printSchedule(info, days: days) }

case .nextChange(let request, let json):
    let info = ask(try connect(socket).nextChange(request))
    if json { out(info.json.text) } else { printNextChange(info) }

case .watch(let w):
    interruptEndsWatch()
    watchLines(w, socket: socket)

case .watchExec(let command, let initial, let app):
    interruptEndsWatch()
    // The watch runs in a task; this thread only waits for SIGINT/SIGTERM (the task exits when it ends).
    startWatchExec(socket: socket, app: app, command: command, initial: initial)
    Posix.waitForever()

case .color(let token, let variant, let colorFormat):
    switch resolveOne(token, variant, socket: socket) {
    case .color(let c): out(format(c, colorFormat))
    case .asset(let path):
        stop(Exit.rejected, "\"\(token)\" is an asset (\(path)), not a color: use appearancectl asset")
    }

case .asset(let name, let variant):
    switch resolveOne(name, variant, socket: socket) {
    case .asset(let path): out(path)
    case .color(let c):
        stop(Exit.rejected, "\"\(name)\" is a color (\(c.hex)), not an asset: use appearancectl color")
    }

case .paletteImport(let lightFile, let darkFile, let outputFile, let force):
    refuseToReplace(outputFile, force: force)
    let result: ImportResult
    do {
        result = try convertLFL(light: readFile(lightFile), lightFile: lightFile, dark: readFile(darkFile), darkFile: darkFile)
    } catch {
        stop(Exit.rejected, shown("\(error)"))
    }
    if let outputFile { writeFile(outputFile, result.toml) } else { print(result.toml, terminator: "") }
    for (file, keys) in [(lightFile, result.onlyLight), (darkFile, result.onlyDark)] where !keys.isEmpty {
        note("only in \(shown(file)) (kept for both modes): \(shown(keys.joined(separator: ", ")))")
    }
    if let outputFile { note("wrote \(shown(outputFile)) (\(result.tokens) token\(result.tokens == 1 ? "" : "s"))") }

case .palettePreview(let contrast, let choice):
    let c = connect(socket)
    let light = ask(try c.palette(mode: .light, contrast: contrast)), dark = ask(try c.palette(mode: .dark, contrast: contrast))
    // Colors only for a terminal that shows them: NO_COLOR (no-color.org), TERM=dumb and pipes get text.
    let colored: Bool = switch choice {
    case .always: true
    case .never: false
    case .auto: Descriptor.standardOutput.isTerminal && Posix.environment("NO_COLOR") == nil && Posix.environment("TERM") != "dumb"
    }
    out(PaletteOutput.preview(light: light, dark: dark, color: colored))

case .palette(let variant, let format):
    out(render(ask(try connect(socket).palette(mode: variant.mode, contrast: variant.contrast)), as: format))

case .apps(let json):
    for (app, mode) in ask(try connect(socket).apps()) {
        out(json ? JSON.object([("app", .string(app)), ("override", .string(mode.rawValue))]).text : "\(app)\t\(mode.rawValue)")
    }

case .integrations(let enable, let disable, let force, let json):
    if !enable.isEmpty || !disable.isEmpty { changeIntegrations(socket: socket, enable: enable, disable: disable, force: force, json: json) }
    printIntegrations(ask(try connect(socket).integrations()), json: json)

case .reload:
    let reply = ask(try connect(socket).reload())
    out("reloaded \(shown(reply.config))")
    // A palette with a mistake is not taken: say what stays in force, and that the reload did not all work.
    if !reply.paletteUsed { stop(Exit.rejected, "palette \(shown(reply.palette))") }

case .importDarkman(let given, let outputFile, let force, let merge):
    let merging = merge && outputFile.map(FileSystem.exists) == true
    if !merging { refuseToReplace(outputFile, force: force, mergeable: true) }
    let configHome = Posix.environment("XDG_CONFIG_HOME") ?? (Posix.environment("HOME") ?? "") + "/.config"
    let file = given ?? configHome + "/darkman/config.yaml"
    let result = convertDarkman(readFile(file), file: file)
    if merging, let outputFile {
        mergeInto(outputFile, result)
    } else {
        if let outputFile { writeFile(outputFile, result.toml) } else { print(result.toml, terminator: "") }
        for n in result.notes { note(shown(n)) }
        if let outputFile { note("wrote \(shown(outputFile)) (\(result.settings) setting\(result.settings == 1 ? "" : "s"))") }
    }
}
Posix.exit(Exit.ok)
