// The sensors on the system bus: iio-sensor-proxy's ambient light (claimed only while the daemon can decide),
// UPower's OnBattery and the user's session in logind (IdleHint, LockedHint, Lock), each through PropertyWatch;
// nothing polls. A value of the wrong type, NaN or a negative level is refused with a message naming it.
import AppearanceCore
import AppearancePosix
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

public final class SystemSensors: Sensors, BusPeer, @unchecked Sendable {
    // Confined to the system bus client's queue.
    private let bus: BusClient
    private let sessionID: String?
    private var report: ((SensorReading) -> Void)?
    private var light: PropertyWatch?
    private var power: PropertyWatch?
    private var session: PropertyWatch?
    private var followingSession = false
    /// Whether the daemon wants the light claimed, and whether the proxy said yes on this connection.
    private var wantClaim = false
    private var claimed = false
    private var lightPresent = false
    private var lastSession: (idle: Bool, locked: Bool)?
    /// Bumped for every look for the session: an older answer is dropped.
    private var lookup = 0

    static let proxy = "net.hadess.SensorProxy"
    static let proxyPath = "/net/hadess/SensorProxy"
    static let upower = "org.freedesktop.UPower"
    static let login = "org.freedesktop.login1"
    static let loginPath = "/org/freedesktop/login1"
    static let sessionInterface = "org.freedesktop.login1.Session"

    /// - Parameter bus: the system bus's client. The session is `XDG_SESSION_ID`'s (read here), else the Display one.
    public init(bus: BusClient) {
        (self.bus, claimFallback) = (bus, OneShot(bus.queue))
        sessionID = Posix.environment("XDG_SESSION_ID").flatMap { $0.isEmpty ? nil : $0 }
    }

    public func follow(_ wanted: SensorsWanted, report: @escaping (SensorReading) -> Void) {
        dispatchPrecondition(condition: .onQueue(bus.queue))
        self.report = report
        if wanted.light != (light != nil) {
            // While there is no watch, nothing is claimed or present.
            if claimed { bus.call(Self.proxy, Self.proxyPath, Self.proxy, "ReleaseLight") }
            (claimed, lightPresent) = (false, false)
            light?.cancel()
            light = !wanted.light ? nil : PropertyWatch(bus, service: Self.proxy, path: Self.proxyPath,
                                                        interface: Self.proxy) { [weak self] in self?.lightRead($0) }
        }
        if wanted.power != (power != nil) {
            power?.cancel()
            power = !wanted.power ? nil : PropertyWatch(bus, service: Self.upower, path: "/org/freedesktop/UPower",
                                                        interface: Self.upower) { [weak self] in self?.powerRead($0) }
        }
        if wanted.session != followingSession {
            followingSession = wanted.session
            if wanted.session {
                bus.follow(Self.login, for: self) { [weak self] owner in if owner != nil { self?.findSession() } }
                bus.addMatch("type='signal',sender='\(Self.login)',interface='\(Self.sessionInterface)',member='Lock'", for: self)
                bus.onSignal(Self.sessionInterface, "Lock", for: self) { [weak self] message in self?.lockSignal(message) }
                bus.add(self)
            } else {
                lookup += 1
                session?.cancel()
                (session, lastSession) = (nil, nil)
                bus.forget(self)
            }
        }
        if wanted.light || wanted.power || wanted.session { bus.start(retrying: true) }
    }

    public func claimLight(_ claim: Bool) {
        dispatchPrecondition(condition: .onQueue(bus.queue))
        wantClaim = claim
        syncClaim()
    }

    // MARK: - The light sensor

    private func syncClaim() {
        guard light != nil, lightPresent, wantClaim != claimed else { return }
        (claimed, levelSinceClaim) = (wantClaim, false)
        bus.call(Self.proxy, Self.proxyPath, Self.proxy, claimed ? "ClaimLight" : "ReleaseLight") { [weak self] reply in
            guard let self, self.claimed, self.wantClaim else { return }
            if let error = reply.error {
                self.claimed = false
                return self.report?(.absent(.light, "the sensor proxy refused ClaimLight (\(error))", refused: true)) ?? ()
            }
            // The level comes in PropertiesChanged once claimed (LightLevel before is stale); else it is read in 2 s.
            self.claimFallback.schedule(after: 2) { [weak self] in
                guard let self, self.claimed, !self.levelSinceClaim else { return }
                self.bus.call(Self.proxy, Self.proxyPath, PropertyWatch.properties, "Get", [.string(Self.proxy), .string("LightLevel")]) { [weak self] reply in
                    guard let self, self.claimed, !self.levelSinceClaim, reply.error == nil,
                          let value = reply.arguments(limit: 1)?.first?.unwrapped else { return }
                    self.level(value, unit: self.unit)
                }
            }
        }
        if !claimed { report?(.light(level: nil, unit: unit)) }
    }

    private var unit = "lux"
    /// Whether the proxy said a level since the light was last claimed, and the read waiting in case it says none.
    private var levelSinceClaim = false
    private let claimFallback: OneShot

    private func lightRead(_ reading: PropertyReading) {
        switch reading {
        case .absent(let why):
            (claimed, lightPresent) = (false, false)
            report?(.absent(.light, why))
        case .values(let values):
            guard case .boolean(let has)? = values["HasAmbientLight"] else {
                lightPresent = false
                return report?(.absent(.light, "the sensor proxy's HasAmbientLight is \(Self.shown(values["HasAmbientLight"])), not a boolean", refused: true)) ?? ()
            }
            guard has else {
                (claimed, lightPresent) = (false, false)
                return report?(.absent(.light, "no ambient light sensor (the sensor proxy's HasAmbientLight is false)")) ?? ()
            }
            guard case .string(let u)? = values["LightLevelUnit"], u == "lux" || u == "vendor" else {
                return report?(.absent(.light, "the sensor proxy's LightLevelUnit is \(Self.shown(values["LightLevelUnit"])), not \"lux\" or \"vendor\"", refused: true)) ?? ()
            }
            unit = u
            let appeared = !lightPresent
            lightPresent = true
            if appeared {
                syncClaim()
                if !claimed { report?(.light(level: nil, unit: u)) }
            } else if claimed, let value = values["LightLevel"] {
                level(value, unit: u)
            }
        }
    }

    private func level(_ value: BusValue, unit: String) {
        levelSinceClaim = true
        // A level came: the read after the claim is not needed, nor its wake-up.
        claimFallback.cancel()
        guard case .double(let level) = value else {
            return report?(.absent(.light, "the sensor proxy's LightLevel is \(Self.shown(value)), not a double", refused: true)) ?? ()
        }
        guard LightJudge.usable(level) else {
            return report?(.absent(.light, "the sensor proxy's LightLevel is \(level), not a level (finite, 0 or more)", refused: true)) ?? ()
        }
        report?(.light(level: level, unit: unit))
    }

    // MARK: - Power

    private func powerRead(_ reading: PropertyReading) {
        switch reading {
        case .absent(let why): report?(.absent(.power, why))
        case .values(let values):
            guard case .boolean(let onBattery)? = values["OnBattery"] else {
                return report?(.absent(.power, "UPower's OnBattery is \(Self.shown(values["OnBattery"])), not a boolean", refused: true)) ?? ()
            }
            report?(.power(onBattery: onBattery))
        }
    }

    // MARK: - The session

    func connected(_ connection: BusConnection) { findSession() }

    func disconnected(_ detail: String) {
        lookup += 1
        session?.cancel()
        (session, lastSession) = (nil, nil)
        report?(.absent(.session, detail))
    }

    /// The session logind means for a user service: XDG_SESSION_ID's, else the user's Display session.
    private func findSession() {
        lookup += 1
        let asked = lookup
        let found = { [weak self] (path: String?, why: String) in
            guard let self, self.lookup == asked else { return }
            self.session?.cancel()
            self.session = nil
            guard let path, path != "/" else { return self.report?(.absent(.session, why)) ?? () }
            self.session = PropertyWatch(self.bus, service: Self.login, path: path, interface: Self.sessionInterface) { [weak self] in
                self?.sessionRead($0, path: path)
            }
        }
        if let id = sessionID {
            bus.call(Self.login, Self.loginPath, Self.login + ".Manager", "GetSession", [.string(id)]) { reply in
                guard reply.error == nil, case .objectPath(let path)? = reply.arguments(limit: 1)?.first else {
                    return found(nil, "logind knows no session \(id) (XDG_SESSION_ID): \(reply.error.map { "\($0)" } ?? reply.signature)")
                }
                found(path, "")
            }
            return
        }
        bus.call(Self.login, Self.loginPath, Self.login + ".Manager", "GetUser", [.uint32(getuid())]) { [weak self] reply in
            guard let self else { return }
            guard reply.error == nil, case .objectPath(let user)? = reply.arguments(limit: 1)?.first else {
                return found(nil, "logind does not know this user (\(reply.error.map { "\($0)" } ?? reply.signature))")
            }
            self.bus.call(Self.login, user, PropertyWatch.properties, "Get", [.string(Self.login + ".User"), .string("Display")]) { reply in
                guard reply.error == nil, case .container(_, let parts)? = reply.arguments(limit: 1)?.first?.unwrapped, parts.count == 2,
                      case .objectPath(let path) = parts[1] else {
                    return found(nil, "logind did not say the user's Display session (\(reply.error.map { "\($0)" } ?? reply.signature))")
                }
                found(path, "no graphical session for this user in logind (its Display is empty)")
            }
        }
    }

    private func sessionRead(_ reading: PropertyReading, path: String) {
        switch reading {
        case .absent(let why):
            lastSession = nil
            report?(.absent(.session, why))
        case .values(let values):
            guard case .boolean(let idle)? = values["IdleHint"], case .boolean(let locked)? = values["LockedHint"] else {
                return report?(.absent(.session, "logind's IdleHint and LockedHint of \(path) are \(Self.shown(values["IdleHint"])) and "
                                       + "\(Self.shown(values["LockedHint"])), not booleans", refused: true)) ?? ()
            }
            lastSession = (idle, locked)
            report?(.session(idle: idle, locked: locked))
        }
    }

    private func lockSignal(_ message: Message) {
        guard let watched = session?.path, message.path == watched, let last = lastSession else { return }
        report?(.session(idle: last.idle, locked: true))
    }

    /// A value as a message shows it: its type and value, or "missing".
    static func shown(_ value: BusValue?) -> String { value.map { "'\($0.signature)' \($0)" } ?? "missing" }
}
