import AppearanceCore
import AppearanceDecide
import AppearanceFormats
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The desktop follows (docs/decisions.md): on GNOME and KDE Plasma, the mode a user gave appearanced is written to
/// the desktop's own setting, one write at a time; its echo is told from the user's flip by `DesktopWrites`.
final class DesktopFollower: @unchecked Sendable {
    // Confined to the daemon's queue, where the writes' commands run through ChildRunner.
    enum Kind: String { case gnome, kde }

    typealias Settings = DesktopSettings

    static let writeTimeout = 10.0

    private let queue: DispatchQueue
    private let log: Logger
    private(set) var kind: Kind?
    private var settings = Settings()
    /// Writes whose echo is not read yet, oldest first (`Decide.desktopReading` matches readings to them).
    var inFlight = DesktopWrites()
    private(set) var writes = 0
    private var lastResult = "nothing written yet"
    /// `desktop.json` beside state.json: the desktop's own value while it shows appearanced's (nil: not kept).
    private var file: String?
    private var saved = DesktopWrites()
    private let files: SmallFiles

    init(queue: DispatchQueue, log: Logger, files: SmallFiles) { (self.queue, self.log, self.files) = (queue, log, files) }

    /// Reads what a previous instance left in `path`: the desktop's own value, if it still shows appearanced's.
    func remember(in path: String) {
        file = path
        guard let bytes = try? FileSystem.readAll(path, limit: 4096) else { return }
        guard let json = try? JSON.parse(bytes), let o = json["original"]?.stringValue.flatMap(SystemScheme.init(rawValue:)),
              let w = json["written"]?.stringValue.flatMap(SystemScheme.init(rawValue:)) else {
            log.warning("\(path): not the desktop's own value as appearanced writes it; ignored")
            return
        }
        (inFlight.original, inFlight.lastWritten) = (o, w)
        saved = inFlight
    }

    /// Writes desktop.json (removed when nothing is kept) when what it keeps changed: at the first write over the
    /// desktop's own value, when that is given back, or when the user set another.
    func saveIfChanged() {
        guard let file, (inFlight.original, inFlight.lastWritten) != (saved.original, saved.lastWritten) else { return }
        saved = inFlight
        var bytes: [UInt8]?
        if let o = inFlight.original, let w = inFlight.lastWritten {
            bytes = JSON.object([("original", .string(o.rawValue)), ("written", .string(w.rawValue))]).bytes + [0x0A]
        }
        files.write(file, bytes) { [log] error in
            if let error { log.warning("desktop: cannot keep the desktop's own value in \(file): \(error.message)") }
        }
    }

    /// Chooses what to drive: `follow`, or for "auto" `XDG_CURRENT_DESKTOP`'s (none while appearanced serves the portal).
    func configure(_ s: Settings, portalServed: Bool) {
        settings = s
        let before = kind
        // Another desktop (or none): no echo to await; the desktop's own value is kept to give back.
        defer { if kind != before { inFlight = DesktopWrites(original: inFlight.original, lastWritten: inFlight.lastWritten) } }
        let desktops = (Posix.environment("XDG_CURRENT_DESKTOP") ?? "").lowercased().split(separator: ":")
        let auto: Kind? = portalServed ? nil
            : desktops.contains("gnome") ? .gnome : desktops.contains("kde") ? .kde : nil
        kind = s.follow == "off" ? nil : Kind(rawValue: s.follow) ?? auto
    }

    var statusDetail: String {
        guard let kind else { return "off" + (settings.follow == "auto" ? " (no GNOME or KDE session, or appearanced serves the portal)" : "") }
        let what = switch kind {
        case .gnome: "GNOME's color-scheme"
        case .kde: settings.kdeLookAndFeelLight == nil && settings.kdeLookAndFeelDark == nil
            ? "KDE Plasma's color scheme" : "KDE Plasma's look-and-feel"
        }
        let own = inFlight.original.map { "; its own value (\(Self.value(for: $0, kind: kind, settings: settings))) is given back when nothing of appearanced's decides" } ?? ""
        return "drives \(what); \(writes) write\(writes == 1 ? "" : "s"), last: \(lastResult)\(own)"
    }

    /// How the desktop will report `mode` once written.
    func reported(_ mode: Mode) -> SystemScheme {
        switch kind {
        case .gnome?: mode == .dark ? .dark : (settings.gnomeLight == "prefer-light" ? .light : .noPreference)
        default: mode == .dark ? .dark : .light
        }
    }

    /// Writes `mode` unless the desktop shows it already; `own`, its own value, is kept at the first write to give back.
    func write(_ mode: Mode, desktop own: SystemScheme) {
        guard let kind else { return }
        // What the desktop shows, or will once the last write lands: nothing to write when that is `mode`.
        let shown = inFlight.expected ?? inFlight.shown ?? own
        guard Decide.mode(of: shown) != mode else { return }
        if inFlight.original == nil, Decide.mode(of: own) != nil { inFlight.original = own }
        inFlight.lastWritten = reported(mode)
        start(mode, value: mode == .dark ? "prefer-dark" : settings.gnomeLight, kind: kind, reported: reported(mode))
    }

    /// Nothing of appearanced's decides any more: the desktop gets back the value it had before (DESIGN rule 4).
    func giveBack() {
        guard let kind, let original = inFlight.original, let mode = Decide.mode(of: original) else { return }
        inFlight.original = nil
        inFlight.lastWritten = nil
        saveIfChanged()
        guard (inFlight.expected ?? inFlight.shown) != original else { return }
        log.info("desktop: giving back its own value (\(Self.value(for: original, kind: kind, settings: settings)))")
        start(mode, value: Self.value(for: original, kind: kind, settings: settings), kind: kind, reported: original)
    }

    /// GNOME's color-scheme for a reading of it, or KDE's scheme for its mode: what the desktop is told.
    static func value(for scheme: SystemScheme, kind: Kind, settings: Settings) -> String {
        switch kind {
        case .gnome: scheme == .dark ? "prefer-dark" : scheme == .light ? "prefer-light" : "default"
        case .kde: scheme == .dark ? settings.kdeDark : settings.kdeLight
        }
    }

    private func start(_ mode: Mode, value: String, kind: Kind, reported: SystemScheme) {
        let id = inFlight.wrote(reported)
        saveIfChanged()
        let dark = mode == .dark
        let commands: [[String]]
        switch kind {
        case .gnome:
            let keys = [("color-scheme", value), ("gtk-theme", dark ? settings.gtkThemeDark : settings.gtkThemeLight),
                        ("icon-theme", dark ? settings.iconThemeDark : settings.iconThemeLight)]
            commands = keys.compactMap { key, v in v.map { ["gsettings", "set", "org.gnome.desktop.interface", key, $0] } }
        case .kde:
            commands = [(dark ? settings.kdeLookAndFeelDark : settings.kdeLookAndFeelLight).map { ["plasma-apply-lookandfeel", "--apply", $0] }
                ?? ["plasma-apply-colorscheme", dark ? settings.kdeDark : settings.kdeLight]]
        }
        writes += 1
        log.info("desktop: writing \(mode.rawValue) (\(commands.map { $0.joined(separator: " ") }.joined(separator: "; ")))")
        waiting.append((id, mode, commands))
        if !writing { writeNext() }
    }

    /// Writes waiting their turn: one runs at a time, in the order decided (the last one wins on the desktop too).
    private var waiting: [(id: Int, mode: Mode, commands: [[String]])] = []
    private var writing = false

    private func writeNext() {
        guard !waiting.isEmpty else { writing = false; return }
        writing = true
        let write = waiting.removeFirst()
        runAll(write.commands, results: []) { [weak self] results in
            self?.finished(write.id, write.mode, results)
            self?.writeNext()
        }
    }

    /// Runs `commands` one after the other, then hands on each one's failure or nil (`plasma-apply-colorscheme`
    /// exits 0 for a scheme it does not know: it has failed when it says "Could not find").
    private func runAll(_ commands: [[String]], results: [String?], then done: @escaping ([String?]) -> Void) {
        guard let argv = commands.first else { return done(results) }
        let next = { [weak self] (failure: String?) -> Void in
            self?.runAll(Array(commands.dropFirst()), results: results + [failure.map { "\(argv[0]): \($0)" }], then: done)
        }
        let timeout = Self.writeTimeout
        let started = ChildRunner.run(argv, searchPath: true, inheritErrors: true, timeout: timeout, killGrace: 0, queue: queue) { ending in
            let firstLine = String(decoding: ending.output, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            if ending.timedOut { return next("did not finish within \(timeout) s") }
            if !ending.status.succeeded { return next(ending.status.description + (firstLine.isEmpty ? "" : ": " + firstLine)) }
            next(firstLine.hasPrefix("Could not find") ? firstLine : nil)
        }
        if case .failure(let e) = started { next("cannot run: \(e.message)") }
    }

    /// `results`: each command's failure, or nil; when the first (what the sentry reads back) failed, no echo comes.
    private func finished(_ id: Int, _ mode: Mode, _ results: [String?]) {
        inFlight.finished(id, ok: results.first.map { $0 == nil } ?? true)
        let failures = results.compactMap { $0 }
        lastResult = failures.isEmpty ? "\(mode.rawValue), ok" : "\(mode.rawValue), failed: " + failures.joined(separator: "; ")
        if !failures.isEmpty { log.warning("desktop: \(lastResult)") }
        log.info("desktop written: \(lastResult)")  // the journal's, not `log`'s: no mode changed
    }
}
