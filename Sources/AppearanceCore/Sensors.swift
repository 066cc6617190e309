/// The sensors of the automatic layer: the light sensor, the power source and whether the session is idle or
/// locked (AppearanceBus/Followed/SystemSensors.swift).
public protocol Sensors: AnyObject {
    /// Follows what `wanted` names (and stops following the rest); `report` gets every reading. Idempotent.
    func follow(_ wanted: SensorsWanted, report: @escaping (SensorReading) -> Void)
    /// Claims the light sensor (the proxy then reads it) or releases it (it costs power while claimed).
    func claimLight(_ claim: Bool)
}

public struct SensorsWanted: Equatable, Sendable {
    public var light = false
    public var power = false
    public var session = false
    public init(light: Bool = false, power: Bool = false, session: Bool = false) {
        (self.light, self.power, self.session) = (light, power, session)
    }
}

/// What one of the sensor inputs says now.
public enum SensorReading: Equatable, Sendable {
    /// The sensor's level and its unit ("lux", or "vendor": raw values); nil level: none yet (not claimed).
    case light(level: Double?, unit: String)
    /// The power source: on battery or not.
    case power(onBattery: Bool)
    /// The session: idle (logind's IdleHint) and locked (LockedHint, or a Lock just asked for).
    case session(idle: Bool, locked: Bool)
    /// An input that has nothing to say now, and why; `refused` when a value was there but unusable.
    case absent(SensorInput, String, refused: Bool = false)
}

public enum SensorInput: String, Sendable {
    case light = "light sensor"
    case power
    case session
}

/// The light sensor's say: below `darkBelow` dark, above `lightAbove` light, between them nothing; the first level
/// decides at once, a later one must stay on its new side for `delay` seconds.
public struct LightJudge: Equatable, Sendable {
    public var darkBelow: Double
    public var lightAbove: Double
    public var delay: Double
    /// What the sensor says now: nil between the thresholds or before a first level.
    public private(set) var mode: Mode?
    /// Whether a level has decided since the start or the sensor's return.
    public private(set) var started = false
    /// The side the level moved to and since when (monotonic seconds), while it waits out the delay.
    public private(set) var pending: (side: Mode?, since: Double)?
    /// The last level and when it came.
    public private(set) var level: Double?

    public init(darkBelow: Double, lightAbove: Double, delay: Double) {
        (self.darkBelow, self.lightAbove, self.delay) = (darkBelow, lightAbove, delay)
    }

    public static func == (a: LightJudge, b: LightJudge) -> Bool {
        a.darkBelow == b.darkBelow && a.lightAbove == b.lightAbove && a.delay == b.delay && a.mode == b.mode
            && a.started == b.started && a.level == b.level && a.pending?.side == b.pending?.side && a.pending?.since == b.pending?.since
    }

    public func side(of level: Double) -> Mode? { level < darkBelow ? .dark : level > lightAbove ? .light : nil }

    /// A new level at `now`: true when `mode` changed. When a change waits, `due` says when to call `tick`.
    public mutating func reading(_ level: Double, at now: Double) -> Bool {
        self.level = level
        let side = side(of: level)
        guard started else {
            (started, pending) = (true, nil)
            let changed = mode != side
            mode = side
            return changed
        }
        if side == mode {
            pending = nil
        } else if pending == nil || pending!.side != side {
            pending = (side, now)
        }
        return tick(now)
    }

    /// When the change waiting out its delay is due (monotonic seconds), if one waits.
    public var due: Double? { pending.map { $0.since + delay } }

    /// Applies a change whose delay has passed: true when `mode` changed.
    public mutating func tick(_ now: Double) -> Bool {
        guard let p = pending, now >= p.since + delay else { return false }
        pending = nil
        let changed = mode != p.side
        mode = p.side
        return changed
    }

    /// The sensor is gone: nothing decided, and its next level decides at once.
    public mutating func lost() { (mode, started, pending, level) = (nil, false, nil, nil) }

    /// A level a sensor may report: finite and not negative.
    public static func usable(_ level: Double) -> Bool { level.isFinite && level >= 0 }
}
