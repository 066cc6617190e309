import AppearanceCore
import AppearanceDecide
import AppearanceFormats
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The desktop follows: on GNOME and KDE Plasma, appearanced writes its merged mode to the desktop's own
/// light/dark setting, so the shell, the settings app and every portal reader change with it.
///
/// It writes only when the mode changes for a reason the user gave appearanced (an override, a temporary
/// override, the schedule), never at start-up, and only when the desktop does not show that mode already.
/// Writes run on a queue of their own with a timeout: they never delay a reply or a notification. The
/// desktop's echo of a write is recognised by the queue of writes in flight (`DesktopWrites`); any other change
/// of the desktop's value is the user's own flip there, however soon it comes.
final class DesktopFollower: @unchecked Sendable {
    // Confined to the daemon's queue; the writes themselves run on `workers`.
    enum Kind: String { case gnome, kde }

    /// `[desktop]` of the config (AppearanceFormats).
    typealias Settings = DesktopSettings

    static let writeTimeout = 10.0

    private let queue: DispatchQueue
    // Serial: writes land in the order they were decided (the last one wins on the desktop too).
    private let workers = DispatchQueue(label: "appearanced.desktop")
    private let log: Logger
    private(set) var kind: Kind?
    private var settings = Settings()
    /// The writes whose echo has not been read yet, as the sentry will read them back, oldest first
    /// (`Decide.desktopReading` matches readings against it).
    var inFlight = DesktopWrites()
    private(set) var writes = 0
    private var lastResult = "nothing written yet"
    /// Told of every write's outcome, for `appearancectl log`.
    var onWritten: ((Mode, String) -> Void)?

    init(queue: DispatchQueue, log: Logger) {
        self.queue = queue
        self.log = log
    }

    /// Chooses what to drive: `follow = "gnome"|"kde"`, or for "auto" the desktop in `XDG_CURRENT_DESKTOP`;
    /// nothing where appearanced serves the portal itself (then apps follow it already).
    func configure(_ s: Settings, portalServed: Bool) {
        settings = s
        let desktops = (Posix.environment("XDG_CURRENT_DESKTOP") ?? "").lowercased().split(separator: ":")
        switch s.follow {
        case "gnome": kind = .gnome
        case "kde": kind = .kde
        case "off": kind = nil
        default:
            kind = portalServed ? nil : desktops.contains("gnome") ? .gnome : desktops.contains("kde") ? .kde : nil
        }
    }

    var statusDetail: String {
        guard let kind else { return "off" + (settings.follow == "auto" ? " (no GNOME or KDE session, or appearanced serves the portal)" : "") }
        let what = switch kind {
        case .gnome: "GNOME's color-scheme"
        case .kde: settings.kdeLookAndFeelLight == nil && settings.kdeLookAndFeelDark == nil
            ? "KDE Plasma's color scheme" : "KDE Plasma's look-and-feel"
        }
        return "drives \(what); \(writes) write\(writes == 1 ? "" : "s"), last: \(lastResult)"
    }

    /// How the desktop will report `mode` once written.
    func reported(_ mode: Mode) -> SystemScheme {
        switch kind {
        case .gnome?: mode == .dark ? .dark : (settings.gnomeLight == "prefer-light" ? .light : .noPreference)
        default: mode == .dark ? .dark : .light
        }
    }

    /// Writes `mode` to the desktop unless it shows it already (`desktop`, the last reading).
    func write(_ mode: Mode, desktop: SystemScheme) {
        guard let kind else { return }
        // What the desktop shows, or will once the last write lands: nothing to write when that is `mode`.
        let shown = inFlight.expected ?? desktop
        guard Decide.mode(of: shown) != mode else { return }
        let id = inFlight.wrote(reported(mode))
        var commands: [[String]]
        switch kind {
        case .gnome:
            let value = mode == .dark ? "prefer-dark" : settings.gnomeLight
            commands = [["gsettings", "set", "org.gnome.desktop.interface", "color-scheme", value]]
            if let theme = mode == .dark ? settings.gtkThemeDark : settings.gtkThemeLight {
                commands.append(["gsettings", "set", "org.gnome.desktop.interface", "gtk-theme", theme])
            }
            if let icons = mode == .dark ? settings.iconThemeDark : settings.iconThemeLight {
                commands.append(["gsettings", "set", "org.gnome.desktop.interface", "icon-theme", icons])
            }
        case .kde:
            if let lookAndFeel = mode == .dark ? settings.kdeLookAndFeelDark : settings.kdeLookAndFeelLight {
                commands = [["plasma-apply-lookandfeel", "--apply", lookAndFeel]]
            } else {
                commands = [["plasma-apply-colorscheme", mode == .dark ? settings.kdeDark : settings.kdeLight]]
            }
        }
        writes += 1
        log.info("desktop: writing \(mode.rawValue) (\(commands.map { $0.joined(separator: " ") }.joined(separator: "; ")))")
        let timeout = Self.writeTimeout
        let toRun = commands
        let queue = self.queue
        workers.async {
            let results = toRun.map { argv in Self.run(argv, timeout: timeout).map { "\(argv[0]): \($0)" } }
            queue.async { [weak self] in self?.finished(id, mode, results) }
        }
    }

    /// `results`: each command's failure, or nil. The first one writes what the sentry reads back: when it
    /// failed, no echo will come.
    private func finished(_ id: Int, _ mode: Mode, _ results: [String?]) {
        inFlight.finished(id, ok: results.first.map { $0 == nil } ?? true)
        let failures = results.compactMap { $0 }
        lastResult = failures.isEmpty ? "\(mode.rawValue), ok" : "\(mode.rawValue), failed: " + failures.joined(separator: "; ")
        if !failures.isEmpty { log.warning("desktop: \(lastResult)") }
        onWritten?(mode, lastResult)
    }

    /// Runs `argv` (looked up in PATH) with stdin on /dev/null, and waits at most `timeout` seconds (then
    /// SIGKILL). Returns what went wrong, or nil. Its standard output is read (the first 4 KiB): its first
    /// line completes a failure's message, and `plasma-apply-colorscheme`, which exits 0 when it does not
    /// know the scheme, is a failure when it says "Could not find".
    static func run(_ argv: [String], timeout: Double) -> String? {
        let output: (read: Descriptor, write: Descriptor)
        do { output = try Descriptor.pipe() } catch { return "cannot run: \(error.message)" }
        let child: Spawned
        switch Spawned.spawn(argv, searchPath: true, stdin: .null, stdout: .descriptor(output.write), stderr: .inherit) {
        case .success(let c): child = c
        case .failure(let e):
            output.write.close()
            output.read.close()
            return "cannot run: \(e.message)"
        }
        output.write.close()
        output.read.setNonBlocking()
        defer { output.read.close() }
        var said: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        func drain() {
            while said.count < 4096, let n = try? output.read.read(into: buffer), n > 0 {
                said += buffer[..<min(n, 4096 - said.count)]
            }
        }
        let deadline = Deadline(seconds: timeout)
        while true {
            drain()
            if let status = child.reap() {
                drain()
                let firstLine = String(decoding: said, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
                if !status.succeeded { return status.description + (firstLine.isEmpty ? "" : ": " + firstLine) }
                return firstLine.hasPrefix("Could not find") ? firstLine : nil
            }
            if deadline.passed {
                child.signal(.kill)
                _ = child.wait()
                return "did not finish within \(timeout) s"
            }
            Posix.sleep(seconds: 0.005)
        }
    }
}
