import AppearanceKit
import AppearanceProtocol

// `appearancectl status`: the lines for people.

/// `appearancectl status` for people: the mode and why, then one line per part of the daemon.
func printStatus(_ st: StatusInfo, socket: String) {
    let s = st.state
    let why: String = switch s.source {
    case .app: "forced by the app's own override"
    case .temporary: "forced by a temporary override"
    case .override: "forced by the user's override"
    case .system: "following the system"
    case .schedule: "following the schedule"
    case .lightSensor: "following the light sensor"
    case .power: "on battery"
    case .default: s.system == .noPreference ? "the default: the desktop states no preference" : "the default: the desktop gives no answer"
    }
    // An override above the schedule: the schedule line says what it would do, and that it is not doing it.
    let hidden = switch s.source {
    case .override: "; your override hides the schedule"
    case .temporary: "; your temporary override hides the schedule until it ends"
    default: ""
    }
    let t = s.traits
    let traits = "contrast \(t.contrast?.rawValue ?? "unavailable"), reduced motion "
        + "\(t.reducedMotion.map { $0 ? "yes" : "no" } ?? "unavailable"), accent \(t.accentColor?.opaqueHex ?? "unavailable")"
    out("""
        mode:        \(s.mode.rawValue) (\(why))
        system:      \(s.system.rawValue) (\(st.systemDetail))
        traits:      \(traits)
        override:    \(s.override.rawValue)
        default:     \(st.defaultMode.rawValue)
        config:      \(st.configDetail ?? "unknown (the daemon is older than protocol 3)")
        palette:     \(st.paletteDetail ?? "unknown (the daemon is older than protocol 2)")
        schedule:    \(st.scheduleDetail.map { $0 + hidden } ?? "none")
        \(st.automaticDetail.map { "automatic:   \($0)\n" } ?? "")\
        \(st.lightSensorDetail.map { "light sensor: \($0)\n" } ?? "")\
        \(st.powerDetail.map { "power:       \($0)\n" } ?? "")\
        \(st.idleDetail.map { "idle:        \($0)\n" } ?? "")\
        temporary:   \(s.temporary.map { describeTemporary($0, automatic: st.scheduleDetail != nil || s.system != .unavailable) } ?? "none")
        portal:      \(st.portalBackendDetail ?? "unknown (the daemon is older than protocol 3)")
        desktop:     \(st.desktopDetail ?? "unknown (the daemon is older than protocol 4)")
        bus:         \(st.busDetail ?? "unknown (the daemon has no D-Bus service)")
        hooks:       \(st.hooksDetail ?? "unknown (the daemon is older than protocol 3)")
        integrations: \(st.integrationsDetail ?? "unknown (the daemon is older than protocol 6)")
        notices:     \(st.noticesDetail ?? (st.protocolVersion < 7 ? "unknown (the daemon is older than protocol 7)" : "off (no notify-before in [automatic])"))
        apps:        \(st.appOverrides.map { "\($0) app override\($0 == 1 ? "" : "s") (appearancectl apps)" } ?? "unknown (the daemon is older than protocol 4)")
        subscribers: \(st.subscribers)
        daemon:      appearanced \(st.version), pid \(st.pid), instance \(s.instance), seq \(s.seq), protocol \(st.protocolVersion)
        socket:      \(socket)
        """)
    if let dir = st.trial { out("trial:       yes: its state is in \(dir); the session's daemon is another instance") }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
