import AppearanceFormats
import AppearancePosix
import AppearanceProtocol

/// Where the integrations are: a file NAME in `directories()`, first match winning (docs/integrations.md).
struct IntegrationFinder: Sendable {
    let paths: Paths

    /// The most files listed from the directories.
    static let maxListed = 256

    /// The directories searched, in order.
    func directories() -> [String] {
        [paths.configHome + "/appearanced/integrations"] + (paths.integrationsDir.map { [$0] } ?? [])
            + ([paths.dataHome] + paths.dataDirs).map { $0 + "/appearanced/integrations" }
    }

    /// The file that wins for one name (the first directory that holds it as a regular file), or nil.
    func path(of name: String) -> String? {
        guard IntegrationName.isValid(name) else { return nil }
        return directories().map { $0 + "/" + name }.first { (try? FileSystem.status($0))?.kind == .regular }
    }

    /// Every integration found: name → path of the file that wins.
    func found() -> [String: String] {
        var all: [String: String] = [:]
        for dir in directories() {
            for name in (FileSystem.names(in: dir) ?? []).sorted() where all[name] == nil && IntegrationName.isValid(name) {
                guard all.count < Self.maxListed else { break }
                let path = dir + "/" + name
                if (try? FileSystem.status(path))?.kind == .regular { all[name] = path }  // not lib/ and the like
            }
        }
        return all
    }
}

/// The check of `[integrations.NAME]` against the integrations installed (docs/decisions.md): their `describe`,
/// side by side under one deadline, once per version of their file. The daemon's and `appearanced --check`'s.
public final class IntegrationCheck: @unchecked Sendable {
    private let finder: IntegrationFinder
    private var described: [String: (version: FileVersion, outcome: Result<IntegrationDescription, Note>)] = [:]
    static let deadline = 2.0

    struct Note: Error { var text: String }

    public init(paths: Paths) { finder = IntegrationFinder(paths: paths) }

    /// The first mistake in `config`'s integrations, and why some were not checked.
    public func problem(_ config: Config, path: String) -> (error: ConfigError?, notes: [String]) {
        guard !config.integrations.isEmpty else { return (nil, []) }
        let named = config.integrations.keys.sorted().map { (name: $0, path: finder.path(of: $0)) }
        var notes: [String] = [], descriptions: [String: IntegrationDescription] = [:]
        var ask: [(name: String, path: String, version: FileVersion)] = []
        func take(_ name: String, _ outcome: Result<IntegrationDescription, Note>) {
            switch outcome {
            case .success(let d): descriptions[name] = d
            case .failure(let note): notes.append("integrations.\(name): its settings are not checked: \(note.text)")
            }
        }
        for case let (name, file?) in named {
            let version = (try? FileSystem.status(file))?.version
            if let version, let known = described[file], known.version == version {
                take(name, known.outcome)
            } else if let problem = Trust.integrationProblem(file) {
                take(name, .failure(Note(text: problem + "; not run")))
            } else if let version {
                ask.append((name, file, version))
            }
        }
        let outcomes = ask.isEmpty ? [] : SideBySide.run(ask.map { [$0.path, "describe"] }, deadline: Deadline(seconds: Self.deadline))
        for (job, outcome) in zip(ask, outcomes) {
            let result: Result<IntegrationDescription, Note>
            if let outcome, outcome.ok, case let d = IntegrationDescription(output: outcome.output), d.keys != nil {
                result = .success(d)
            } else if let outcome, outcome.ok {
                result = .failure(Note(text: "\(job.path) describe gives no settings: line of the form key (meaning, default); …"))
            } else if let outcome {
                let said = outcome.output.split(separator: "\n").last.map { ": " + $0 } ?? ""
                result = .failure(Note(text: "\(job.path) describe failed\(said)"))
            } else {
                result = .failure(Note(text: "\(job.path) describe did not answer within \(Int(Self.deadline)) s"))
            }
            described[job.path] = (job.version, result)
            take(job.name, result)
        }
        // Every name found, for the message about one that is not (listing the folders only then).
        let found = named.contains { $0.path == nil } ? Set(finder.found().keys) : Set(named.map(\.name))
        let hint = found.isEmpty ? "; searched \(finder.directories().joined(separator: ", ")); \(IntegrationName.howToGet)" : ""
        return (config.integrationProblem(found: found, described: descriptions, path: path, notFoundHint: hint), notes)
    }
}
