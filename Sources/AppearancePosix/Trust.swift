import Glibc

/// Who could have changed what is about to run (docs/decisions.md, "Trust covers everything that runs"): one
/// check for hooks, integrations and `appearancectl integrations`.
public enum Trust {
    /// The most files and folders looked at for one program; a folder holding more is not trusted.
    public static let maxEntries = 2048

    /// Why a file or folder could have been written by another user (writable by all, or not root's or ours).
    public static func writableByOthers(_ path: String, _ st: FileStatus) -> String? {
        if st.permissions & 0o002 != 0 { return "\(path) is writable by every user" }
        if st.owner != 0, st.owner != Posix.userID { return "\(path) is owned by uid \(st.owner), not by root or this user" }
        return nil
    }

    /// Why the program at `path` could have been changed by another user, or nil (the program, its folder, `libraries`).
    public static func problem(program path: String, libraries: [String] = []) -> String? {
        var walk = Walk()
        if let problem = entryProblem(path) { return problem }
        for folder in [FileSystem.directory(of: path)] + libraries {
            if let problem = treeProblem(folder, &walk) { return problem }
        }
        return nil
    }

    /// Why the integration at `path` must not be run (with the library it sources), or nil.
    public static func integrationProblem(_ path: String, environment: (String) -> String? = Posix.environment) -> String? {
        let own = FileSystem.directory(of: path)
        let libraries = integrationLibrary(of: path, environment: environment).map { $0.hasPrefix(own + "/") ? [] : [$0] } ?? []
        if let problem = problem(program: path, libraries: libraries) { return problem }
        return FileSystem.executableProblem(path).map { _ in "\(path) is not executable" }
    }

    /// The folder of the library an integration at `path` sources, found as the shipped scripts find it.

    public static func integrationLibrary(of path: String, environment: (String) -> String? = Posix.environment) -> String? {
        func set(_ name: String) -> String? { environment(name).flatMap { $0.isEmpty ? nil : $0 } }
        let dataHome = set("XDG_DATA_HOME") ?? (environment("HOME") ?? "") + "/.local/share"
        let dataDirs = (set("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        let candidates = [FileSystem.directory(of: path) + "/lib"] + ([dataHome] + dataDirs).map { $0 + "/appearanced/integrations/lib" }
        return candidates.first { access($0 + "/common.sh", R_OK) == 0 }
    }

    /// One file or folder: what it is (a link: what it leads to), and for a link the folder that holds its target.
    private static func entryProblem(_ path: String) -> String? {
        let st: FileStatus
        do { st = try FileSystem.status(path) } catch { return "cannot check \(path): \(error.message)" }
        if let problem = writableByOthers(path, st) { return problem }
        guard (try? FileSystem.status(path, followLinks: false))?.kind == .symbolicLink else { return nil }
        guard let real = realPath(path) else { return "cannot resolve \(path)" }
        let folder = FileSystem.directory(of: real)
        guard let held = try? FileSystem.status(folder) else { return "cannot check \(folder)" }
        return writableByOthers(folder, held)
    }

    /// What a check has looked at: how many entries, and which folders (each looked through once: links may loop).
    private struct Walk {
        var budget = Trust.maxEntries
        var seen: Set<[UInt64]> = []
    }

    /// A folder and everything in it, at any depth, within the walk's budget.
    private static func treeProblem(_ folder: String, _ walk: inout Walk) -> String? {
        if let problem = entryProblem(folder) { return problem }
        if let st = try? FileSystem.status(folder), !walk.seen.insert([st.version.device, st.version.inode]).inserted { return nil }
        guard let names = FileSystem.names(in: folder) else { return "cannot read \(folder)" }
        for name in names.sorted() {
            walk.budget -= 1
            guard walk.budget >= 0 else { return "\(folder) holds more than \(maxEntries) files and folders to check" }
            let path = folder + "/" + name
            if (try? FileSystem.status(path))?.kind == .directory {
                if let problem = treeProblem(path, &walk) { return problem }
            } else if let problem = entryProblem(path) {
                return problem
            }
        }
        return nil
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
