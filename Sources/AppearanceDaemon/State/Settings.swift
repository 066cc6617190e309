import AppearanceCore
import AppearancePosix

/// The settings: the config and palette in force, and how each file was read. Confined to the daemon's queue.
final class Settings: @unchecked Sendable {
    private let paths: Paths
    private let log: Logger
    private(set) var config = Config()
    private(set) var palette = Palette.empty
    private(set) var paletteDetail = "not read yet"
    /// Whether the last read of the palette file was taken (false: a mistake in it; the previous one stays).
    private(set) var paletteUsed = true
    /// The config file and how it was read.
    private(set) var configDetail = "not read yet"
    /// Why the config file on disk is not the one in force, or nil: `get` carries it.
    private(set) var configProblem: String?

    /// `[integrations.NAME]` against the integrations installed (their `describe`, once per file version).
    let integrationCheck: IntegrationCheck

    init(paths: Paths, log: Logger) {
        (self.paths, self.log) = (paths, log)
        integrationCheck = IntegrationCheck(paths: paths)
        // Before any file is read: the defaults, as a trial instance takes them.
        config = forTrial(config)
    }

    /// Reads the config file (none: the defaults) and puts it in force; one that cannot be used throws.
    func loadConfig(fallback: String) throws(ConfigError) {
        do throws(ConfigError) {
            if let c = try Config.load(path: paths.configFile) {
                let (problem, notes) = integrationCheck.problem(c, path: paths.configFile)
                for note in notes { log.warning("\(paths.configFile): \(note)") }
                if let problem { throw problem }
                configDetail = paths.configFile
                configProblem = nil
                config = forTrial(c)
                return
            }
        } catch {
            configDetail = "\(paths.configFile): not used, \(error.message)\(error.line.map { " (line \($0))" } ?? ""); \(fallback)"
            configProblem = "\(error); \(fallback)"
            throw error
        }
        if paths.configExplicit {
            configDetail = "\(paths.configFile): does not exist; \(fallback)"
            configProblem = "\(paths.configFile): does not exist; \(fallback)"
            throw ConfigError(path: paths.configFile, message: "does not exist")
        }
        configProblem = nil
        configDetail = "\(paths.configFile): no such file (the defaults)"
        if let hint = misnamedConfigHint() {
            configDetail += "; " + hint
            log.warning("\(paths.configFile): no such file, using the defaults; \(hint)")
        }
        config = forTrial(Config())
    }

    /// A trial instance (`--state-dir`) touches no hooks (but with `--hooks`), desktop setting, portal backend or darkman name.
    private func forTrial(_ c: Config) -> Config {
        guard paths.trial else { return c }
        var c = c
        c.hooks = c.hooks && paths.trialHooks
        c.desktop.follow = "off"
        c.portalBackend = .off
        c.darkmanDBus = false
        return c
    }

    /// When the default config is missing and another `*.toml` (not the palette) sits beside it: say so.
    func misnamedConfigHint() -> String? {
        let dir = FileSystem.directory(of: paths.configFile)
        let expected = String(paths.configFile.split(separator: "/").last ?? "config.toml")
        let palette = String(paths.defaultPaletteFile.split(separator: "/").last ?? "palette.toml")
        guard let found = FileSystem.names(in: dir)?
            .filter({ $0.hasSuffix(".toml") && $0 != palette && $0 != expected }).sorted().first else { return nil }
        return "found \(found); appearanced reads \(expected)"
    }

    /// Reads the palette the config names. Returns true when the palette in force changed.
    @discardableResult
    func loadPalette() -> Bool {
        paletteUsed = false
        let path = paths.paletteFile(for: config)
        let next: Palette
        do {
            if let p = try PaletteFile.load(path: path, home: paths.home) {
                next = p
                paletteDetail = "\(path): \(p.names.count) token\(p.names.count == 1 ? "" : "s")"
            } else {
                next = .empty
                paletteDetail = "\(path): no such file (empty palette)"
            }
        } catch {
            let kept = palette.isEmpty ? "the palette stays empty" : "keeping the previous palette"
            log.error("\(error); \(kept)")
            paletteDetail = "\(path): not used, \(error.message)\(error.line.map { " (line \($0))" } ?? ""); \(kept)"
            return false
        }
        log.info(paletteDetail)
        paletteUsed = true
        guard next != palette else { return false }
        palette = next
        return true
    }
}
