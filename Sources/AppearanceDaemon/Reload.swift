import AppearanceCore
import AppearanceDecide
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The reload room: the config and palette read again (SIGHUP, the `reload` request), each room told what
/// changed for it; and the desk the D-Bus faces are served from.
extension Daemon {
    /// Reads the config and the palette again (SIGHUP, the `reload` request). Returns how the config was read,
    /// or its mistake: then the previous configuration stays in force (the palette is reloaded either way).
    @discardableResult
    func reload() -> Result<ReloadReply, ConfigError> {
        log.info("reloading \(paths.configFile)")
        Systemd.notify("RELOADING=1\nMONOTONIC_USEC=\(Systemd.monotonicMicroseconds())")
        defer { Systemd.notify("READY=1") }
        var configError: ConfigError?
        do {
            try settings.loadConfig(fallback: "keeping the previous configuration")
            let c = settings.config
            log.level = logLevelOption ?? c.logLevel ?? .info
            clients.maxConnections = c.maxConnections
            if let t = engine.apply(.defaultMode(c.defaultMode)) {
                publish([.init(t, cause: "config reloaded: default-mode \(c.defaultMode.rawValue)")])
            }
            publisher.outlet?.setPolicy(c.portalBackend)
            for face in publisher.faces { face.setOptions(FaceOptions(darkman: c.darkmanDBus)) }
            publisher.follower.configure(c.desktop, portalServed: outletStatus?.serving ?? false)
            planSchedule()
            configureHooks()
            // Their settings (or the user's copies of them) may have changed: each is given the mode again.
            if publisher.serving { integrations.refresh(mode: modeOf, cause: "config reloaded", all: true) }
        } catch {
            log.error("\(error); keeping the previous configuration")
            configError = error
        }
        // The palette is reloaded even when the config is bad: it is its own file.
        if settings.loadPalette() {
            publisher.offer(engine, settings.palette)
            publisher.outlet?.publish(Publisher.served(engine, settings.palette))
            readAgain()
        }
        if let configError { return .failure(configError) }
        return .success(ReloadReply(config: settings.configDetail, palette: settings.paletteDetail, paletteUsed: settings.paletteUsed))
    }
}

/// The daemon as the D-Bus faces see it: the published state, and the one entry for writes.
final class FaceDesk: FaceRequests {
    private weak var daemon: Daemon?

    init(_ daemon: Daemon) { self.daemon = daemon }

    func state(for app: String, answer: @escaping (AppearanceState) -> Void) {
        if let daemon { answer(daemon.engine.state(for: app)) }
    }

    func write(_ call: Call, app: String?, by who: String, answer: @escaping (Result<AppearanceState, RPCError>) -> Void) {
        daemon?.write(call, app: app, by: who, answer: answer)
    }
}
