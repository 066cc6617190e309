import AppearanceCore
import AppearanceFormats
import AppearancePosix
import Dispatch

/// The light sensor, the power rule and the wait for idle (docs/architecture.md). Confined to the daemon's queue.
final class SensorsInput {
    let sensors: Sensors?
    private let queue: DispatchQueue
    var judge: LightJudge?
    var unit = "lux"
    var onBattery: Bool?
    /// The session's hints; nil: no session known (nothing is held then).
    var session: (idle: Bool, locked: Bool)?
    var lightDetail = "not read yet"
    var powerDetail = "not read yet"
    var sessionDetail = "not read yet"
    /// Whether the light is claimed (the daemon's word to the proxy).
    var claimed = false
    /// Automatic changes held for idle, one per kind, oldest first, with their causes and when each was held.
    var held: [(kind: String, event: Event, cause: String, since: Int64)] = []
    /// The timer for a light change that waits out its delay (cancelled when replaced).
    var delayTimer: DispatchSourceTimer? { didSet { oldValue?.cancel() } }

    init(sensors: Sensors?, queue: DispatchQueue) { (self.sensors, self.queue) = (sensors, queue) }

    /// Seconds on a clock that never jumps (the delay is a duration, not a time of day).
    static var monotonic: Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}

extension Daemon {
    /// Starts or stops following each sensor as the config (at start, or reloaded) says; idempotent.
    func followSensors() {
        let c = settings.config
        if let l = c.lightSensor {
            let levels = (l.darkBelow, l.lightAbove, Double(l.delay))
            if let j = sensors.judge, (j.darkBelow, j.lightAbove, j.delay) == levels {} else {
                var judge = LightJudge(darkBelow: l.darkBelow, lightAbove: l.lightAbove, delay: Double(l.delay))
                // New thresholds judge the last level at once: the sensor says nothing more until the level moves.
                let level = sensors.judge?.level
                sensors.delayTimer?.cancel()
                if let level { _ = judge.reading(level, at: SensorsInput.monotonic) }
                sensors.judge = judge
                if level != nil { sensors.lightDetail = describeLight() }
                applyAutomatic(.light(judge.mode), cause: level.map { "light sensor: \(Config.shownLevel($0)) \(sensors.unit), "
                    + "new thresholds (config)" } ?? "light sensor configured", atOnce: true)
            }
        } else if sensors.judge != nil {
            sensors.judge = nil
            sensors.delayTimer?.cancel()
            applyAutomatic(.light(nil), cause: "light sensor off (config)", atOnce: true)
        }
        // The rule as the config says it now, for the power source as last heard (nothing heard: no say).
        let power = sensors.onBattery == true ? c.powerOnBattery : nil
        if power != engine.inputs.power {
            applyAutomatic(.power(power), cause: "power rule " + (c.powerOnBattery.map { "on battery: \($0.rawValue)" } ?? "off") + " (config)", atOnce: true)
        }
        if !c.automatic.waitForIdle { releaseHeld("wait-for-idle off (config)") }
        let wanted = SensorsWanted(light: c.lightSensor != nil, power: c.powerOnBattery != nil, session: c.automatic.waitForIdle)
        if !wanted.light { sensors.lightDetail = "off" }
        if !wanted.power { sensors.powerDetail = "off" }
        if !wanted.session { sensors.sessionDetail = "off" }
        guard let s = sensors.sensors else {
            if wanted.light { sensors.lightDetail = "no system bus in this build" }
            return
        }
        s.follow(wanted) { [weak self] reading in self?.sensorReading(reading) }
        syncLightClaim()
    }

    func sensorReading(_ reading: SensorReading) {
        let c = settings.config
        if case .absent(let input, let why, true) = reading { log.warning("\(input.rawValue): \(why); ignored") }
        switch reading {
        case .light(let level, let unit):
            sensors.unit = unit
            guard var judge = sensors.judge else { return }
            guard let level else {
                sensors.lightDetail = sensors.claimed ? "waiting for a first level" : "released: " + lightHiddenBecause
                return
            }
            // A first level (at start, or the sensor back) decides at once, and is not held for idle either.
            let first = !judge.started
            let changed = judge.reading(level, at: SensorsInput.monotonic)
            sensors.judge = judge
            armLightDelay()
            sensors.lightDetail = describeLight()
            if changed { applyAutomatic(.light(judge.mode), cause: lightCause(level, first: first), atOnce: first) }
        case .power(let onBattery):
            // The first word from UPower (at start, or UPower back) is how things are, not a change: not held.
            let first = sensors.onBattery == nil
            sensors.onBattery = onBattery
            let mode = onBattery ? c.powerOnBattery : nil
            sensors.powerDetail = onBattery ? "on battery" + (mode.map { ": \($0.rawValue)" } ?? "") : "on AC"
            if mode != engine.inputs.power { applyAutomatic(.power(mode), cause: "power: " + (onBattery ? "on battery" : "on AC"), atOnce: first) }
        case .session(let idle, let locked):
            (sensors.session, sensors.sessionDetail) = ((idle, locked), locked ? "locked" : idle ? "idle" : "active")
            if idle || locked { releaseHeld(locked ? "the session is locked" : "the session is idle") }
        case .absent(.light, let why, let refused):
            if sensors.judge != nil, !refused {
                sensors.judge!.lost()
                sensors.delayTimer?.cancel()
                if engine.inputs.light != nil { applyAutomatic(.light(nil), cause: "light sensor: \(why)") }
            }
            sensors.lightDetail = refused ? "refused: \(why)" : why
        case .absent(.power, let why, let refused):
            (sensors.onBattery, sensors.powerDetail) = (nil, refused ? "refused: \(why)" : why)
            if engine.inputs.power != nil { applyAutomatic(.power(nil), cause: "power: \(why)") }
        case .absent(.session, let why, _):
            (sensors.session, sensors.sessionDetail) = (nil, "no session: \(why); nothing waits for idle")
            releaseHeld("no session to wait for")
        }
        syncLightClaim()
    }

    /// An automatic change: applied now, or held while the session is active (`wait-for-idle`, once serving).
    func applyAutomatic(_ event: Event, cause: String, atOnce: Bool = false) {
        let kind: String = switch event {
        case .light: "light"
        case .power: "power"
        default: "schedule"
        }
        sensors.held.removeAll { $0.kind == kind }
        var probe = engine
        let changesMode = probe.apply(event)?.modeChanged == true
        if !atOnce, changesMode, publisher.serving, settings.config.automatic.waitForIdle, let s = sensors.session, !s.idle, !s.locked {
            let mode = probe.state.mode
            sensors.held.append((kind, event, cause, clock.now()))
            log.info("\(cause): \(mode.rawValue) waits for the session to be idle or locked")
            return
        }
        if let t = engine.apply(event) { publish([.init(t, cause: cause)]) }
        syncLightClaim()
    }

    /// Applies every held automatic change (idle, locked, resume, the wait turned off).
    func releaseHeld(_ why: String) {
        let held = sensors.held
        sensors.held = []
        for h in held {
            if let t = engine.apply(h.event) { publish([.init(t, cause: "\(h.cause) (held until \(why))")]) }
        }
        syncLightClaim()
    }

    /// Claims the light while it can decide: no override above the automatic layer, no power rule deciding.
    func syncLightClaim() {
        guard sensors.judge != nil, let s = sensors.sensors else { return }
        var probe = engine.inputs
        probe.light = .dark
        let dark = resolve(probe).source
        probe.light = .light
        let can = dark == .lightSensor || resolve(probe).source == .lightSensor
        guard can != sensors.claimed else { return }
        sensors.claimed = can
        s.claimLight(can)
        if !can { sensors.delayTimer?.cancel() }
    }

    /// Why the light is not claimed now.
    var lightHiddenBecause: String {
        let i = engine.inputs
        if i.temporary != nil { return "a temporary override hides the automatic layer" }
        if i.override != .system { return "your override hides the automatic layer" }
        if i.power != nil { return "the power rule decides (on battery)" }
        return "the desktop decides (its value ranks above the automatic layer)"
    }

    private func armLightDelay() {
        sensors.delayTimer = nil
        guard let due = sensors.judge?.due else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + max(0, due - SensorsInput.monotonic))
        timer.setEventHandler { [weak self] in
            guard let self, var judge = self.sensors.judge, let level = judge.level else { return }
            let changed = judge.tick(SensorsInput.monotonic)
            self.sensors.judge = judge
            self.armLightDelay()
            self.sensors.lightDetail = self.describeLight()
            if changed { self.applyAutomatic(.light(judge.mode), cause: self.lightCause(level, first: false)) }
        }
        sensors.delayTimer = timer
        timer.resume()
    }

    private func lightCause(_ level: Double, first: Bool) -> String {
        let delay = sensors.judge?.delay ?? 0
        return "light sensor: \(Config.shownLevel(level)) \(sensors.unit)" + (delay > 0 && !first ? " for \(Int(delay)) s" : "")
    }

    func describeLight() -> String {
        guard let j = sensors.judge, let level = j.level else { return "waiting for a first level" }
        let shown = "\(Config.shownLevel(level)) \(sensors.unit)"
        var text = switch j.mode {
        case .dark?: "\(shown): dark (below \(Config.shownLevel(j.darkBelow)))"
        case .light?: "\(shown): light (above \(Config.shownLevel(j.lightAbove)))"
        case nil: "\(shown): between \(Config.shownLevel(j.darkBelow)) and \(Config.shownLevel(j.lightAbove)), so it does not decide"
        }
        if let p = j.pending, let due = j.due {
            text += "; \(p.side?.rawValue ?? "no say") in \(Int((due - SensorsInput.monotonic).rounded(.up))) s if it stays"
        }
        return text
    }

    /// Which input of the automatic layer decides, and why the others do not; nil when no sensor is configured.
    var automaticDetail: String? {
        let c = settings.config
        guard c.lightSensor != nil || c.powerOnBattery != nil || c.automatic.waitForIdle else { return nil }
        let i = engine.inputs
        var parts: [String] = []
        switch i.automatic?.source {
        case .power?: parts.append("the power rule decides (on battery: \(i.power!.rawValue))")
        case .lightSensor?: parts.append("the light sensor decides (\(i.light!.rawValue))")
        case .schedule?: parts.append("the schedule decides")
        default: parts.append("nothing automatic decides (the default applies)")
        }
        if c.powerOnBattery != nil, i.power == nil { parts.append("power: \(sensors.powerDetail)") }
        if c.lightSensor != nil, i.light == nil || i.power != nil { parts.append("light sensor: \(sensors.lightDetail)") }
        if let w = waitingForIdle { parts.append("\(w.mode.rawValue) since \(Posix.localTime(w.since).clock), waiting for idle") }
        return parts.joined(separator: "; ")
    }

    /// The automatic changes held for idle, taken together: the mode they bring, since when, and their causes.
    var waitingForIdle: (mode: Mode, since: Int64, cause: String)? {
        guard let first = sensors.held.first else { return nil }
        var probe = engine
        for h in sensors.held { _ = probe.apply(h.event) }
        return (probe.state.mode, first.since, sensors.held.map(\.cause).joined(separator: "; "))
    }
}
