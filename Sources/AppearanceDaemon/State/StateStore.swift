import AppearanceCore
import AppearanceFormats
import AppearancePosix

/// The persisted override, `state.json` (e.g. `{"override":"dark"}`): the I/O around AppearanceFormats' `StateFile`.
public struct StateStore: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// What is persisted: the override and the temporary one with its expiry (`StateFile.Saved`).
    public typealias Saved = StateFile.Saved

    /// How much `load` reads: twice the largest file the daemon writes (one re-indented by hand fits too).
    public static let readLimit = 2 * StateFile.largestWritten

    public enum LoadResult: Equatable, Sendable {
        case missing
        /// The file was read; `Saved.dropped` says what in it was left out.
        case loaded(Saved)
        /// The file could not be used; it was moved to `keptAt` (nil if even that failed) and the daemon follows the system.
        case discarded(problem: String, keptAt: String?)
    }

    /// Reads the override. Never fails: a bad file is reported, kept aside and treated as "follow the system".
    public func load() -> LoadResult {
        let (bytes, problem) = readOwnFile(path, limit: Self.readLimit, tooBig:
            "is not a valid state file: larger than \(Self.readLimit) bytes, and appearanced writes \(StateFile.largestWritten) at most")
        if let problem { return discard(problem) }
        guard let bytes else { return .missing }
        switch StateFile.parse(bytes) {
        case .success(var saved):
            saved.dropped = saved.dropped.map { "\(path): \($0)" }
            return .loaded(saved)
        case .failure(let invalid):
            return discard(invalid.problem)
        }
    }

    private func discard(_ problem: String) -> LoadResult {
        let kept = try? FileSystem.moveAside(path)
        return .discarded(problem: "\(path) \(problem)", keptAt: kept)
    }

    /// Saves durably before returning (the reply to `set` comes after this).
    public func save(_ saved: Saved) throws(Errno) {
        try FileSystem.makeDirectories(FileSystem.directory(of: path))
        try FileSystem.writeAtomically(path, StateFile.encode(saved))
    }
}

/// Moves one of appearanced's own files that cannot be used aside, and says so; where it was kept, if it was.
@discardableResult
func keepAside(_ path: String, _ problem: String, then: String, log: Logger) -> String? {
    let kept = try? FileSystem.moveAside(path)
    log.error("\(path) \(problem); " + (kept.map { "kept it as \($0); " } ?? "could not move it aside; ") + then)
    return kept
}

/// One of appearanced's own files, at most `limit` bytes: its bytes, neither (none there), or why it is unusable.
func readOwnFile(_ path: String, limit: Int, tooBig: String) -> (bytes: [UInt8]?, problem: String?) {
    do { return (try FileSystem.readAll(path, limit: limit), nil) } catch {
        if error.code == Errno.noSuchFile { return (nil, nil) }
        return (nil, error.code == Errno.tooBig ? tooBig : "cannot be read (\(error.call): \(error.message))")
    }
}
