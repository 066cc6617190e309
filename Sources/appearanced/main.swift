import AppearanceBus
import AppearanceCLI
import AppearanceCore
import AppearanceDaemon
import AppearancePosix
import Dispatch

func fail(_ message: String) -> Never {
    Posix.printError("appearanced: \(message)\nTry 'appearanced --help'.\n")
    Posix.exit(64)
}

// The options come from AppearanceCLI's table for appearanced (DaemonOptions), as appearancectl's do.
let invocation: DaemonInvocation
do {
    invocation = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail(error.message)
}
let socketPath = invocation.socket
let configPath = invocation.config
var logLevel: LogLevel?
if let v = invocation.logLevel {
    guard let l = LogLevel(name: v) else { fail("invalid log level \"\(v)\" (expected error, warning, notice, info or debug)") }
    logLevel = l
}
switch invocation.action {
case .help: print(DaemonOptions.help, terminator: ""); Posix.exit(0)
case .version: print("appearanced \(Daemon.version)"); Posix.exit(0)
case .run: break
case .check:
    let paths = Paths.resolve(socket: socketPath, config: configPath)
    do {
        let loaded = try Config.load(path: paths.configFile)
        if loaded == nil, paths.configExplicit { throw ConfigError(path: paths.configFile, message: "does not exist") }
        let config = loaded ?? Config()
        // [integrations.NAME]: the integrations installed, and the settings each describes.
        let (problem, notes) = IntegrationCheck(paths: paths).problem(config, path: paths.configFile)
        for note in notes { Posix.printError("appearanced: \(paths.configFile): \(note)\n") }
        if let problem { throw problem }
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

// A parent may hand these over blocked: unblocked before any thread starts, so that every thread inherits it.
Signal.unblock([.terminate, .interrupt, .hangUp])

// Every subscriber is a descriptor: the soft limit lifted to the hard one, as systemd recommends.
Posix.raiseFileLimit()

// One heap, and large blocks mapped on their own (docs/decisions.md, "The heap after a flood of writes").
Posix.boundHeap(arenas: 1, mmapThreshold: 128 * 1024)

let queue = DispatchQueue(label: "appearanced")
let logger = Logger(level: logLevel ?? .info)
// The session bus has a queue of its own (AppearanceDaemon/Clients/BusQueue.swift); it logs on the daemon's.
let busQueue = DispatchQueue(label: "appearanced.bus")
let busLog: (LogLevel, String) -> Void = { level, message in queue.async { logger.log(level, message) } }
// One client, one connection per bus (AppearanceBus/Connection/BusClient.swift).
let sessionBus = BusClient.session(queue: busQueue, log: busLog)
let systemBus = BusClient.system(queue: queue, log: { logger.log($0, $1) })
let portalSentry = PortalSentry(bus: sessionBus, log: busLog)
// A trial instance (--state-dir) takes no name on the session bus: no portal backend, no D-Bus service.

let trial = invocation.stateDir != nil
let backend = trial ? nil : PortalBackend(bus: sessionBus, log: busLog)
let services = trial ? [] : [BusServiceProxy(AppearanceService(bus: sessionBus, log: busLog), busQueue: busQueue, daemonQueue: queue)]
// The notice before an automatic change (`[automatic] notify-before`), on the same connection; a trial sends none.
let notifier = trial ? nil : NotifierProxy(BusNotifier(bus: sessionBus, log: busLog), busQueue: busQueue, daemonQueue: queue)
let sentry = SentryProxy(portalSentry, busQueue: busQueue, daemonQueue: queue)
// The schedule's place, when the config asks GeoClue for it (started by the daemon only then).
let locator = GeoClueLocator(bus: systemBus, log: { logger.log($0, $1) })
let daemon = Daemon(paths: Paths.resolve(socket: socketPath, config: configPath, stateDir: invocation.stateDir, trialHooks: invocation.hooks),
                    logLevelOption: logLevel, sentry: sentry,
                    outlet: backend.map { OutletProxy($0, busQueue: busQueue, daemonQueue: queue) }, services: services, locator: locator,
                    sensors: SystemSensors(bus: systemBus),
                    notifier: notifier, queue: queue, logger: logger)
let sleepWatcher = SleepWatcher(bus: systemBus, log: { logger.log($0, $1) })
queue.async {
    do {
        try daemon.start()
        sleepWatcher.start { daemon.clockChanged(Daemon.resumed) }
    } catch let error as StartupError {
        logger.error(error.description)
        Posix.exit(error.exitCode)
    } catch {
        logger.error("\(error)")
        Posix.exit(1)
    }
}
dispatchMain()
