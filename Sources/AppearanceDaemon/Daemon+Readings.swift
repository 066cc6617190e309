import AppearanceCore
import AppearanceDecide

/// The desktop's readings: what the sentry reads (its echo or the user's flip: `Decide.desktopReading`) and what the
/// portal backend serves (not read back).
extension Daemon {
    func systemReading(_ reading: SystemReading) {
        sentryReading = reading
        desktopReading(withoutOwnKeys(reading))
    }

    /// While the outlet serves, the portal's color-scheme (and the palette's accent) is the daemon's own value.
    private func withoutOwnKeys(_ reading: SystemReading) -> SystemReading {
        guard let outletStatus, outletStatus.serving else { return reading }
        var own = reading
        (own.scheme, own.detail) = (.unavailable, "appearanced is the portal's Settings backend")
        if Publisher.served(engine, settings.palette).accent != nil { own.traits.accentColor = nil }
        return own
    }

    func outletChanged(_ status: OutletStatus) {
        let wasServing = outletStatus?.serving ?? false
        outletStatus = status
        guard wasServing != status.serving else { return }
        // Serving the portal ourselves, there is no desktop switch to drive (and the other way round).
        publisher.follower.configure(settings.config.desktop, portalServed: status.serving)
        planSchedule()  // whether the schedule ranks above the desktop depends on following it
        readAgain()
    }

    /// The last reading again, after what it is read against changed (the outlet, the palette's accent).
    func readAgain() {
        if let sentryReading { desktopReading(withoutOwnKeys(sentryReading)) }
    }

    private func desktopReading(_ reading: SystemReading) {
        // The reading's lines wait until the subscribers have been told (Publisher.publish releases them).
        log.hold()
        defer { log.release() }
        let before = (engine.inputs.system, engine.systemDetail)
        let traitsBefore = engine.inputs.traits
        let outcome = Decide.desktopReading(reading, engine: &engine, writes: &publisher.follower.inFlight,
                                            following: publisher.follower.kind != nil)
        if outcome.echo { log.info("desktop: \(reading.scheme.rawValue) is the echo of appearanced's write") }
        publisher.follower.saveIfChanged()
        if before != (reading.scheme, reading.detail) { log.info("system: \(reading.scheme.rawValue) (\(reading.detail))") }
        if traitsBefore != reading.traits {
            let r = reading.traits
            log.info("traits: contrast \(r.contrast?.rawValue ?? "unavailable"), reduced motion "
                     + "\(r.reducedMotion.map { $0 ? "yes" : "no" } ?? "unavailable"), accent \(r.accentColor?.opaqueHex ?? "unavailable")")
        }
        if !outcome.steps.isEmpty { publish(outcome.steps) }  // each logged with its cause, the effects once
        if outcome.manualFlip != nil {
            timers.armTemporary(engine.inputs.temporary?.expiry)  // an until-next flip replaced any timed one
            persistence.persistIfNeeded()  // the flip is kept like a temporary override set with appearancectl
        }
        serve()
        if outcome.steps.isEmpty { publisher.updateStatus(describe()) }  // `publish` has said the new state
    }
}
