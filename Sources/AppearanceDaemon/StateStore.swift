import AppearanceCore
import AppearancePosix
import AppearanceProtocol

/// The persisted override: `$XDG_STATE_HOME/appearanced/state.json`, e.g. `{"override":"dark"}`.
public struct StateStore: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// What is persisted: the override and the temporary one with its expiry.
    public struct Saved: Equatable, Sendable {
        public var override: Override
        public var temporary: TemporaryOverride?
        /// App overrides (app id → mode).
        public var apps: [String: Mode]

        public init(override: Override, temporary: TemporaryOverride? = nil, apps: [String: Mode] = [:]) {
            self.override = override
            self.temporary = temporary
            self.apps = apps
        }
    }

    public enum LoadResult: Equatable, Sendable {
        case missing
        case loaded(Saved)
        /// The file could not be used; it was moved to `keptAt` (nil if even that failed) and the daemon follows the system.
        case discarded(problem: String, keptAt: String?)
    }

    /// Reads the override. Never fails: a bad file is reported, kept aside and treated as "follow the system".
    public func load() -> LoadResult {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readAll(path, limit: 64 * 1024)
        } catch {
            if error.code == Errno.noSuchFile { return .missing }
            return discard("cannot be read (\(error.call): \(error.message))")
        }
        return Self.parse(bytes).map { .loaded($0) } ?? discard("is not a valid state file (expected {\"override\": \"system\"|\"light\"|\"dark\"})")
    }

    /// `{"override": "dark", "temporary": {"mode": "light", "until": "next"|UNIX}}`; `temporary` is optional,
    /// and one that cannot be read is dropped (the override still counts).
    public static func parse(_ bytes: [UInt8]) -> Saved? {
        guard let json = try? JSON.parse(bytes), let s = json["override"]?.stringValue, let o = Override(rawValue: s) else { return nil }
        var apps: [String: Mode] = [:]
        if case .object(let members)? = json["apps"] {
            for (id, value) in members where AppID.isValid(id) {
                if let m = value.stringValue.flatMap(Mode.init(rawValue:)) { apps[id] = m }
            }
        }
        return Saved(override: o, temporary: json["temporary"].flatMap(TemporaryOverride.init(json:)), apps: apps)
    }

    private func discard(_ problem: String) -> LoadResult {
        let kept = try? FileSystem.moveAside(path)
        return .discarded(problem: "\(path) \(problem)", keptAt: kept)
    }

    /// Saves durably before returning (the reply to `set` comes after this).
    public func save(_ saved: Saved) throws(Errno) {
        try FileSystem.makeDirectories(FileSystem.directory(of: path))
        var members: [(String, JSON)] = [("override", .string(saved.override.rawValue))]
        if let t = saved.temporary { members.append(("temporary", t.json)) }
        if !saved.apps.isEmpty {
            members.append(("apps", .object(saved.apps.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value.rawValue)) })))
        }
        var bytes = JSON.object(members).bytes
        bytes.append(0x0A)
        try FileSystem.writeAtomically(path, bytes)
    }
}

