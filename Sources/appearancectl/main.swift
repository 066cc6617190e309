#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AppearanceCore
import AppearanceKit
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
      toggle                     flip the mode; prints the new mode
      watch [--json]             print the mode, then one line per change, until interrupted
      watch [--no-initial] --exec CMD [ARGS...]
                                 run CMD now (not with --no-initial) and after each change, with
                                 APPEARANCE=dark|light and DARKMODE=1|0 in its environment; runs never
                                 overlap (changes during a run give one more run, with the newest mode);
                                 a failing CMD is reported and watching goes on, across daemon restarts
      help                       print this help

    Options:
      --socket PATH              talk to the daemon on PATH (default: $APPEARANCED_SOCKET, else
                                 $XDG_RUNTIME_DIR/appearanced/socket)
      --version                  print the version

    Exit status: 0 ok, 64 usage error, 65 request rejected by the daemon, 69 daemon not reachable,
    76 protocol error.

    """

func out(_ s: String) {
    var line = s + "\n"
    line.withUTF8 { b in
        var off = 0
        while off < b.count {
            let n = write(1, b.baseAddress! + off, b.count - off)
            if n < 0 { if errno == EINTR { continue }; exit(Exit.ok) }  // stdout closed (e.g. `| head -1`)
            off += n
        }
    }
}

func usageError(_ message: String) -> Never {
    fputs("appearancectl: \(message)\nTry 'appearancectl help'.\n", stderr)
    exit(Exit.usage)
}

func fail(_ error: AppearanceError) -> Never {
    fputs("appearancectl: \(error)\n", stderr)
    switch error {
    case .daemonNotRunning, .connectionLost: exit(Exit.unavailable)
    case .rejected: exit(Exit.rejected)
    case .protocolError: exit(Exit.proto)
    }
}

// MARK: Arguments

var socketPath: String?
var words: [String] = []
var json = false
var execCommand: [String]?
var noInitial = false
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    switch arg {
    case "--socket":
        guard let v = args.popFirst() else { usageError("option --socket needs a value") }
        socketPath = v
    case _ where arg.hasPrefix("--socket="): socketPath = String(arg.dropFirst("--socket=".count))
    case "--json": json = true
    case "--no-initial": noInitial = true
    case "--exec":
        guard !args.isEmpty else { usageError("option --exec needs a command") }
        execCommand = Array(args)
        args = []
    case "-h", "--help": words.insert("help", at: 0)
    case "--version": out("appearancectl \(packageVersion)"); exit(Exit.ok)
    case "--": words.append(contentsOf: args); args = []
    case _ where arg.hasPrefix("-") && arg.count > 1: usageError("unknown option \"\(arg)\"")
    default: words.append(arg)
    }
}

guard let command = words.first else { usageError("missing command (get, status, set, toggle, watch)") }
let operands = Array(words.dropFirst())

if command != "watch" {
    if execCommand != nil { usageError("--exec is an option of watch") }
    if noInitial { usageError("--no-initial is an option of watch --exec") }
}

@MainActor func noOperands() {
    if let extra = operands.first { usageError("\(command): unexpected argument \"\(extra)\"") }
}

@MainActor func connect() -> AppearanceConnection {
    do { return try AppearanceConnection(socketPath: socketPath) } catch { fail(error) }
}

@MainActor func printState(_ s: AppearanceState) {
    out(json ? s.json.text : s.mode.rawValue)
}

// MARK: Commands

switch command {
case "help":
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
    case .override: "forced by the user's override"
    case .system: "following the system"
    case .default: "the default: the system states no preference"
    }
    out("""
        mode:        \(s.mode.rawValue) (\(why))
        system:      \(s.system.rawValue) (\(st.systemDetail))
        override:    \(s.override.rawValue)
        default:     \(st.defaultMode.rawValue)
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
    do { printState(try connect().set(o)) } catch { fail(error) }

case "toggle":
    noOperands()
    do { printState(try connect().toggle()) } catch { fail(error) }

case "watch":
    noOperands()
    // Interrupting a watch is how it ends: exit 0, not 130.
    signal(SIGINT) { _ in _exit(0) }
    signal(SIGTERM) { _ in _exit(0) }
    // A parent may hand us these blocked (a signal mask is inherited across exec).
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    sigprocmask(SIG_UNBLOCK, &set, nil)
    if let execCommand {
        if json { usageError("watch: --json and --exec do not go together") }
        if execCommand[0].isEmpty { usageError("watch: --exec needs a command") }
        // The watch runs in a task; this thread only waits for SIGINT/SIGTERM (the task exits when it ends).
        let socket = socketPath, initial = !noInitial
        Task.detached { await watchExec(socket: socket, command: execCommand, initial: initial) }
        while true { pause() }
    }
    if noInitial { usageError("watch: --no-initial goes with --exec") }
    let c = connect()
    do {
        let initial = try c.subscribe()
        if json {
            var members: [(String, JSON)] = []
            if case .object(let m) = initial.json { members = m }
            out(JSON.object(members + [("previous", .null)]).text)
        } else {
            out(initial.mode.rawValue)
        }
        while true {
            let n = try c.nextChange()
            out(json ? n.json.text : n.state.mode.rawValue)
        }
    } catch {
        fail(error)
    }

default:
    usageError("unknown command \"\(command)\" (expected get, status, set, toggle, watch or help)")
}
exit(Exit.ok)
