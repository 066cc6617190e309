import AppearanceBus
import AppearanceCore
import AppearanceDaemon
import AppearancePosix
import Dispatch

let usage = """
    Usage: appearanced [OPTIONS]

    Watches the desktop's color scheme (XDG desktop portal, over D-Bus), merges it with the user's
    override and tells subscribers on a Unix socket when the appearance changes. Runs in the
    foreground; systemd or a terminal supervises it.

    Options:
      --config PATH      config file (default: $XDG_CONFIG_HOME/appearanced/config.toml)
      --socket PATH      socket to listen on (default: $APPEARANCED_SOCKET, else
                         $XDG_RUNTIME_DIR/appearanced/socket)
      --log-level LEVEL  error, warning, notice, info or debug (default: info, or the config's log-level)
      --check            read the config and the palette, report the first problem or "ok", and exit
                         (0 ok, 78 a problem): nothing is started
      --version          print the version and exit
      -h, --help         print this help and exit

    Signals: SIGTERM/SIGINT stop it cleanly, SIGHUP reloads the config.

    """

func fail(_ message: String) -> Never {
    Posix.printError("appearanced: \(message)\nTry 'appearanced --help'.\n")
    Posix.exit(64)
}

var socketPath: String?
var configPath: String?
var logLevel: LogLevel?
var checkOnly = false
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    var name = arg
    var inline: String?
    if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
        name = String(arg[..<eq])
        inline = String(arg[arg.index(after: eq)...])
    }
    func value() -> String {
        if let inline { return inline }
        guard let v = args.popFirst() else { fail("option \(name) needs a value") }
        return v
    }
    switch name {
    case "-h", "--help": print(usage, terminator: ""); Posix.exit(0)
    case "--version": print("appearanced \(Daemon.version)"); Posix.exit(0)
    case "--check": checkOnly = true
    case "--socket": socketPath = value()
    case "--config": configPath = value()
    case "--log-level":
        let v = value()
        guard let l = LogLevel(name: v) else { fail("invalid log level \"\(v)\" (expected error, warning, notice, info or debug)") }
        logLevel = l
    default: fail("unknown argument \"\(arg)\"")
    }
}

if checkOnly {
    let paths = Paths.resolve(socket: socketPath, config: configPath)
    do {
        let loaded = try Config.load(path: paths.configFile)
        if loaded == nil, paths.configExplicit { throw ConfigError(path: paths.configFile, message: "does not exist") }
        let config = loaded ?? Config()
        let palettePath = paths.paletteFile(for: config)
        let palette = try PaletteFile.load(path: palettePath, home: paths.home)
        print("ok: config \(loaded == nil ? "\(paths.configFile) (none: the defaults)" : paths.configFile), palette "
              + (palette.map { "\(palettePath) (\($0.names.count) tokens)" } ?? "\(palettePath) (none: empty)"))
        Posix.exit(0)
    } catch {
        Posix.printError("appearanced: \(error)\n")
        Posix.exit(78)
    }
}

// A parent may hand these over blocked (the mask is inherited across exec): unblock them before any
// thread starts, so every thread inherits the mask and the daemon's signal sources hear them.
Signal.unblock([.terminate, .interrupt, .hangUp])

// Every subscriber is a descriptor: lift the soft limit to the hard one (systemd's default soft limit is
// 1024, the hard one 512K), as systemd itself recommends for programs that need many.
Posix.raiseFileLimit()

let queue = DispatchQueue(label: "appearanced")
let logger = Logger(level: logLevel ?? .info)
let sentry = PortalSentry(queue: queue, log: { logger.log($0, $1) })
let backend = PortalBackend(queue: queue, sentry: sentry, log: { logger.log($0, $1) })
let daemon = Daemon(paths: Paths.resolve(socket: socketPath, config: configPath), logLevelOption: logLevel,
                    sentry: sentry, outlet: backend, queue: queue, logger: logger)
let sleepWatcher = SleepWatcher(queue: queue, log: { logger.log($0, $1) })
queue.async {
    do {
        try daemon.start()
        sleepWatcher.start { daemon.clockChanged("resumed from suspend") }
    } catch let error as StartupError {
        logger.error(error.description)
        Posix.exit(error.exitCode)
    } catch {
        logger.error("\(error)")
        Posix.exit(1)
    }
}
dispatchMain()
