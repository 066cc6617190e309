import AppearancePosix

/// Every file the daemon uses, resolved once at start-up from options and the XDG environment.
public struct Paths: Sendable {
    public var socket: SocketLocation
    /// `$XDG_STATE_HOME/appearanced/state.json` (default `~/.local/state/appearanced/state.json`).
    public var stateFile: String
    /// The change log `appearancectl log` shows, kept across restarts: `log.jsonl` next to the state file.
    public var changeLogFile: String { FileSystem.directory(of: stateFile) + "/log.jsonl" }
    /// `--config PATH`, else `$XDG_CONFIG_HOME/appearanced/config.toml` (default `~/.config/...`).
    public var configFile: String
    /// A config named with `--config` must exist; the default one may be missing.
    public var configExplicit: Bool
    /// `$XDG_CONFIG_HOME/appearanced/palette.toml`, used unless the config names another (`palette = "PATH"`).
    public var defaultPaletteFile: String
    /// Expands `~/` in palette paths.
    public var home: String
    /// The XDG base directories the hooks and integrations are looked up in (a relative path is ignored).
    public var configHome: String
    public var dataHome: String
    public var dataDirs: [String]
    /// `$APPEARANCED_INTEGRATIONS_DIR`: integrations of a build run from its source tree (absolute only).
    public var integrationsDir: String?
    /// `--state-dir DIR`: a trial instance (DIR/state.json; nothing that would touch the session).
    public var trial = false
    public var trialHooks = false
    /// The session daemon's state folder (`$XDG_STATE_HOME/appearanced`), which a trial instance never uses.
    public var sessionStateDirectory = ""

    /// The palette file `config` asks for (absolute, `~/…`, or relative to the config file's directory).
    public func paletteFile(for config: Config) -> String {
        guard let p = config.palette else { return defaultPaletteFile }
        if p.hasPrefix("/") { return p }
        if p.hasPrefix("~/") { return home + p.dropFirst() }
        return FileSystem.directory(of: configFile) + "/" + p
    }

    public static func resolve(socket: String?, config: String?, stateDir: String? = nil, trialHooks: Bool = false,
                               environment: (String) -> String? = Posix.environment) -> Paths {
        let home = environment("HOME") ?? Posix.passwordHome ?? "/"
        func xdg(_ name: String, _ fallback: String) -> String {
            if let v = environment(name), v.hasPrefix("/") { return v }
            return home + "/" + fallback
        }
        let configHome = xdg("XDG_CONFIG_HOME", ".config")
        let sessionState = xdg("XDG_STATE_HOME", ".local/state") + "/appearanced"
        let trialDir = stateDir.map { $0.hasSuffix("/") && $0.count > 1 ? String($0.dropLast()) : $0 }
        return Paths(
            // A trial instance listens in its own folder unless told otherwise: never on the session's socket.
            socket: SocketLocation.resolve(explicit: socket ?? trialDir.map { $0 + "/socket" }, environment: environment),
            stateFile: (trialDir ?? sessionState) + "/state.json",
            configFile: config ?? configHome + "/appearanced/config.toml", configExplicit: config != nil,
            defaultPaletteFile: configHome + "/appearanced/palette.toml", home: home,
            configHome: configHome, dataHome: xdg("XDG_DATA_HOME", ".local/share"),
            dataDirs: (environment("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share").split(separator: ":")
                .filter { $0.hasPrefix("/") }.map(String.init),
            integrationsDir: environment("APPEARANCED_INTEGRATIONS_DIR").flatMap { $0.hasPrefix("/") ? $0 : nil },
            trial: stateDir != nil, trialHooks: trialHooks, sessionStateDirectory: sessionState)
    }
}
