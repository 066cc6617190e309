import AppearanceCore
import AppearanceDecide
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// Reloading: the config and palette read again, each part told what changed for it.
extension Daemon {
    /// Reads the config and the palette again (SIGHUP, `reload`): how the config was read, or its mistake (then
    /// the previous configuration stays in force; the palette is reloaded either way).
    @discardableResult
    func reload() -> Result<ReloadReply, ConfigError> {
        log.info("reloading \(paths.configFile)")
        Systemd.notify("RELOADING=1\nMONOTONIC_USEC=\(Posix.monotonicMicroseconds())")
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
            for service in publisher.services { service.setOptions(BusServiceOptions(darkman: c.darkmanDBus)) }
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
        readPalette()
        watchPalette()
        if let configError { return .failure(configError) }
        return .success(ReloadReply(config: settings.configDetail, palette: settings.paletteDetail, paletteUsed: settings.paletteUsed))
    }

    /// Reads the palette file again; subscribers, the portal and the desktop's reading follow a change.
    func readPalette() {
        guard settings.loadPalette() else { return }
        publisher.offer(engine, settings.palette)
        publisher.outlet?.publish(Publisher.served(engine, settings.palette))
        readAgain()
    }

    /// Watches the palette file (inotify; the folder above while its folder is missing): read again at a change.
    func watchPalette() {
        let path = paths.paletteFile(for: settings.config)
        guard path != paletteWatch?.path else { return }
        paletteWatch?.source.cancel()
        paletteWatch = nil
        let folder = FileSystem.directory(of: path)
        let folderMissing = (try? FileSystem.status(folder))?.kind != .directory
        let watched = folderMissing ? folder : path  // the folder's own name in the folder above, or the file's
        do {
            let fd = try FileWatch.changes(of: watched)
            let source = DispatchSource.makeReadSource(fileDescriptor: fd.raw, queue: queue)
            source.setEventHandler { [weak self] in
                guard let self, FileWatch.changed(fd, file: watched) else { return }
                if folderMissing {
                    self.paletteWatch?.source.cancel()
                    self.paletteWatch = nil
                    self.watchPalette()  // the folder is there now: watch the file in it
                } else {
                    self.log.info("\(path) changed: reading the palette again")
                }
                self.readPalette()
            }
            source.setCancelHandler { fd.close() }
            source.resume()
            paletteWatch = (path, source)
        } catch {
            log.info("not watching \(path) (\(error.message)): appearancectl reload reads it after a change")
        }
    }
}
