import Foundation
import Testing
import TestSupport

/// The shipped integrations (integrations/NAME), run as the daemon runs them: the contract's environment, a
/// private HOME and XDG folders per test, and the real programs wherever Debian ships one that runs here.
enum IntegrationScripts {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let dir = root + "/integrations"

    /// Every integration: the executable files in integrations/ (lib/ holds what they share).
    static let names: [String] = {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return entries.filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: dir + "/" + name, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }()

    static func path(_ name: String) -> String { dir + "/" + name }

    static func installed(_ program: String) -> Bool {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].contains { FileManager.default.isExecutableFile(atPath: $0 + program) }
    }
}

struct ScriptRun: CustomStringConvertible {
    var status: Int32
    var out: String
    var err: String
    var description: String { "exit \(status); stdout: \(out); stderr: \(err)" }
    var errLines: [String] { err.split(separator: "\n").map(String.init) }
}

/// One test's world for the integrations: a Sandbox (HOME, XDG_CONFIG_HOME, XDG_RUNTIME_DIR), TMPDIR and
/// TMUX_TMPDIR inside it (so the real user's servers in /tmp are never seen), a bin/ first on PATH for
/// stand-ins, and each integration's private folder, as the daemon gives it.
final class IntegrationRig: @unchecked Sendable {
    let sandbox: Sandbox
    var env: [String: String]

    init() throws {
        sandbox = try Sandbox()
        for d in ["tmp", "bin", "integration", "outside"] {
            try FileManager.default.createDirectory(atPath: sandbox.root + "/" + d, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        env = sandbox.env
        env["TMPDIR"] = sandbox.root + "/tmp"
        env["TMUX_TMPDIR"] = sandbox.root + "/tmp"
        // Neovim writes its log (.nvimlog) into the working directory when it cannot use its own.
        env["NVIM_LOG_FILE"] = sandbox.root + "/tmp/nvim.log"
        env["PATH"] = sandbox.root + "/bin:" + (env["PATH"] ?? "/usr/bin:/bin")
        env["XDG_DATA_HOME"] = sandbox.root + "/home/.local/share"
    }

    var root: String { sandbox.root }
    var home: String { sandbox.root + "/home" }
    var config: String { sandbox.root + "/config" }
    var runtime: String { sandbox.root + "/runtime" }
    var tmp: String { sandbox.root + "/tmp" }

    /// `~/x` is in HOME; anything else is relative to XDG_CONFIG_HOME.
    func file(_ relative: String) -> String {
        relative.hasPrefix("~/") ? home + "/" + relative.dropFirst(2) : config + "/" + relative
    }

    func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Runs `integrations/NAME VERB` with the daemon's environment: APPEARANCE and the rest when `mode` is
    /// given, the settings as APPEARANCE_OPT_<KEY>.
    func run(_ name: String, _ verb: String, mode: String? = nil, settings: [String: String] = [:],
             env extra: [String: String] = [:], arguments: [String]? = nil) throws -> ScriptRun {
        let child = try start(name, verb, mode: mode, settings: settings, env: extra, arguments: arguments)
        let status = try child.waitForEnd(timeout: 30)
        return ScriptRun(status: status, out: child.stdout, err: child.stderr)
    }

    /// As `run`, without waiting for its end.
    func start(_ name: String, _ verb: String, mode: String? = nil, settings: [String: String] = [:],
               env extra: [String: String] = [:], arguments: [String]? = nil) throws -> Child {
        try Child(IntegrationScripts.path(name), arguments ?? [verb], env: env(for: name, mode: mode, settings: settings, extra: extra))
    }

    /// The environment the daemon gives integration `name` (its private folder made here).
    func env(for name: String, mode: String? = nil, settings: [String: String] = [:], extra: [String: String] = [:]) throws -> [String: String] {
        var env = self.env
        let state = root + "/integration/" + name
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        env["APPEARANCE_INTEGRATION_DIR"] = state
        env["APPEARANCE_APP"] = name
        if let mode {
            env["APPEARANCE"] = mode
            env["DARKMODE"] = mode == "dark" ? "1" : "0"
            env["APPEARANCE_PREVIOUS"] = mode == "dark" ? "light" : "dark"
            env["APPEARANCE_CAUSE"] = "test"
        }
        for (key, value) in settings {
            env["APPEARANCE_OPT_" + key.uppercased().replacingOccurrences(of: "-", with: "_")] = value
        }
        env.merge(extra) { $1 }
        return env
    }

    /// A program run to its end (with a deadline), in this rig's environment.
    func program(_ exe: String, _ args: [String], env extra: [String: String] = [:]) throws -> ScriptRun {
        let child = try Child(exe, args, env: env.merging(extra) { $1 })
        let status = try child.waitForEnd(timeout: 30)
        return ScriptRun(status: status, out: child.stdout, err: child.stderr)
    }

    /// Every regular file and symlink under HOME and XDG_CONFIG_HOME, relative to the sandbox.
    func userFiles() -> Set<String> {
        var found = Set<String>()
        for base in ["home", "config"] {
            let path = root + "/" + base
            guard let walker = FileManager.default.enumerator(atPath: path) else { continue }
            while let entry = walker.nextObject() as? String {
                let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + entry)
                if let type = attributes?[.type] as? FileAttributeType, type != .typeDirectory {
                    found.insert(base + "/" + entry)
                }
            }
        }
        return found
    }

    /// Writes an executable file through a shell of its own: no descriptor open for writing on it ever exists in
    /// this process, so a child another test thread forks meanwhile cannot hold one, which would make starting
    /// the file fail with ETXTBSY ("Text file busy").
    func writeExecutable(_ text: String, to path: String) throws {
        let r = try program("/bin/sh", ["-c", "printf '%s' \"$2\" > \"$1\" && chmod 755 \"$1\"", "sh", path, text])
        try #require(r.status == 0, "cannot write \(path): \(r)")
    }

    /// An executable stand-in for a program that needs a display, first on PATH: it prints `version` for
    /// --version, else notes each SIGUSR1 and SIGUSR2 it gets in `log` and waits for them (no timer); SIGTERM
    /// ends it and its sleep (`stopAndReap(_:)`).
    func standIn(_ program: String, version: String, log: String) throws -> String {
        let path = root + "/bin/" + program
        try writeExecutable("""
            #!/bin/sh
            [ "$1" = --version ] && { echo '\(version)'; exit 0; }
            trap 'echo USR1 >> \(log)' USR1
            trap 'echo USR2 >> \(log)' USR2
            trap 'kill $s 2>/dev/null; exit 0' TERM
            echo ready >> \(log)
            while :; do sleep 60 & s=$!; wait $s; kill $s 2>/dev/null; done

            """, to: path)
        return path
    }
}

extension IntegrationRig {
    /// `standIn` started in this rig's environment, once it has logged "ready"; ended with the rig's sandbox.
    func startStandIn(_ program: String, version: String, log: String) throws -> Child {
        let child = try Child(try standIn(program, version: version, log: log), [], env: env)
        sandbox.atEnd { stopAndReap(child) }
        try waitUntil("the stand-in to start") { read(log)?.contains("ready") == true }
        return child
    }
}

/// Ends a child the test started (SIGTERM, which the stand-ins handle, then SIGKILL) and reaps it.
func stopAndReap(_ child: Child) {
    child.stop(SIGTERM)
    if (try? child.waitForExit(timeout: 5)) == nil {
        child.stop(SIGKILL)
        _ = try? child.waitForExit()
    }
}

@Suite("Integration scripts: the contract") struct IntegrationContractTests {
    @Test func thereAreTheElevenAtLeast() {
        let wanted = ["alacritty", "emacs", "foot", "gtk", "kitty", "neovim", "qt", "tmux", "vim", "vscode", "wallpaper"]
        #expect(Set(wanted).isSubset(of: Set(IntegrationScripts.names)), "integrations/ has \(IntegrationScripts.names)")
    }

    @Test(arguments: IntegrationScripts.names) func isAReadablePOSIXShellScript(name: String) throws {
        let path = IntegrationScripts.path(name)
        #expect(FileManager.default.isExecutableFile(atPath: path), "\(path) is not executable")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("#!/bin/sh\n"), "\(name) does not start with #!/bin/sh")
        let rig = try IntegrationRig()
        // dash: Debian's /bin/sh, which has no bash extensions.
        let check = try rig.program("/bin/dash", ["-n", path])
        #expect(check.status == 0, "dash -n \(name): \(check)")
        #expect(text.contains("lib/common.sh"), "\(name) does not use lib/common.sh")
    }

    @Test(arguments: IntegrationScripts.names) func describesItselfInThreeLines(name: String) throws {
        let rig = try IntegrationRig()
        let r = try rig.run(name, "describe")
        #expect(r.status == 0, "\(r)")
        let lines = r.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 4 && lines[3].isEmpty, "describe printed \(lines.count) lines: \(r.out)")
        guard lines.count >= 3 else { return }
        #expect(lines[0].hasPrefix("what: ") && lines[0].count > 12, "\(lines[0])")
        #expect(lines[1].hasPrefix("touches: ") && lines[1].count > 12, "\(lines[1])")
        #expect(lines[2] == "settings: none" || lines[2].hasPrefix("settings: "), "\(lines[2])")
        if lines[2] != "settings: none" {
            // key (meaning, default); … : every entry names a key, then its meaning and default in parentheses.
            for entry in lines[2].dropFirst("settings: ".count).components(separatedBy: "; ") {
                #expect(entry.range(of: #"^[a-z][a-z0-9-]* \(.+, [^,]+\)$"#, options: .regularExpression) != nil,
                        "\(name): setting \"\(entry)\" is not `key (meaning, default)`")
            }
        }
    }

    @Test(arguments: IntegrationScripts.names) func answersAvailable(name: String) throws {
        let rig = try IntegrationRig()
        let r = try rig.run(name, "available")
        #expect(r.status == 0 || r.status == 1, "\(r)")
        if r.status == 0 {
            #expect(r.out.hasPrefix("found: "), "\(r)")
        } else {
            #expect(r.out.hasPrefix("not installed: "), "\(r)")
        }
    }

    @Test(arguments: IntegrationScripts.names) func refusesAnUnknownVerbWithUsage(name: String) throws {
        let rig = try IntegrationRig()
        for args in [["frobnicate"], [], ["apply", "extra"]] {
            let r = try rig.run(name, "", arguments: args)
            #expect(r.status == 64, "\(name) \(args): \(r)")
            #expect(r.err.hasPrefix("usage: \(name) apply|restore|available|describe"), "\(name) \(args): \(r)")
        }
    }

    @Test(arguments: IntegrationScripts.names) func refusesABadModeInOneLine(name: String) throws {
        let rig = try IntegrationRig()
        let r = try rig.run(name, "apply", env: ["APPEARANCE": "grey"])
        #expect(r.status != 0, "\(r)")
        #expect(r.errLines == ["\(name): APPEARANCE must be dark or light, not 'grey'"], "\(r)")
    }

    @Test(arguments: IntegrationScripts.names) func restoreWithNothingAppliedChangesNothing(name: String) throws {
        let rig = try IntegrationRig()
        try rig.write("# mine\n", to: rig.config + "/kitty/kitty.conf")
        let before = rig.userFiles()
        let r = try rig.run(name, "restore")
        #expect(r.status == 0, "\(r)")
        #expect(rig.userFiles() == before)
        #expect(rig.read(rig.config + "/kitty/kitty.conf") == "# mine\n")
    }

    @Test func aMissingPrivateFolderIsNamed() throws {
        let rig = try IntegrationRig()
        let r = try rig.run("kitty", "apply", mode: "dark", env: ["APPEARANCE_INTEGRATION_DIR": rig.root + "/nope"])
        #expect(r.status == 1, "\(r)")
        #expect(r.errLines == ["kitty: APPEARANCE_INTEGRATION_DIR '\(rig.root)/nope' is not a writable directory"], "\(r)")
    }

    /// DARKMODE alone (APPEARANCE unset) is the mode too.
    @Test func darkmodeAloneIsTheMode() throws {
        let rig = try IntegrationRig()
        let r = try rig.run("kitty", "apply", env: ["DARKMODE": "1"])
        #expect(r.status == 0, "\(r)")
        #expect(rig.read(rig.config + "/kitty/appearanced.conf")?.contains("(dark)") == true)
    }

    /// A copy in ~/.config/appearanced/integrations/NAME finds lib/common.sh in the installed share folder.
    @Test func aUsersCopyFindsTheSharedLibrary() throws {
        let rig = try IntegrationRig()
        let share = rig.home + "/.local/share/appearanced/integrations/lib"
        try FileManager.default.createDirectory(atPath: share, withIntermediateDirectories: true)
        for file in ["common.sh", "files.sh"] {
            try FileManager.default.copyItem(atPath: IntegrationScripts.dir + "/lib/" + file, toPath: share + "/" + file)
        }
        let copy = rig.config + "/appearanced/integrations/kitty"
        try FileManager.default.createDirectory(atPath: (copy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try rig.writeExecutable(String(contentsOfFile: IntegrationScripts.path("kitty"), encoding: .utf8), to: copy)
        let r = try rig.program(copy, ["describe"])
        #expect(r.status == 0 && r.out.hasPrefix("what: "), "\(r)")
        try FileManager.default.removeItem(atPath: share + "/common.sh")
        let lost = try rig.program(copy, ["describe"])
        #expect(lost.status == 70, "\(lost)")
        #expect(lost.err.contains("lib/common.sh"), "\(lost)")
        // common.sh without the files.sh it sources beside it: the same exit, naming it.
        try FileManager.default.copyItem(atPath: IntegrationScripts.dir + "/lib/common.sh", toPath: share + "/common.sh")
        try FileManager.default.removeItem(atPath: share + "/files.sh")
        let half = try rig.program(copy, ["describe"])
        #expect(half.status == 70 && half.errLines == ["kitty: lib/files.sh is not next to lib/common.sh (\(share)/common.sh)"], "\(half)")
    }
}

/// docs/integrations.md and the README hold the table of integrations; it must say what each script's
/// `describe` says.
@Suite("Integration scripts: the documentation") struct IntegrationDocsTests {
    /// The table's rows: `| name | what | touches | settings |`, by name.
    static func rows(in path: String) throws -> [String: [String]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var rows: [String: [String]] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\\|", with: "|") }
            guard cells.count == 4 else { continue }
            rows[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = Array(cells.dropFirst())
        }
        return rows
    }

    @Test(arguments: ["docs/integrations.md", "README.md"]) func tableMatchesEveryDescribe(doc: String) throws {
        let rows = try Self.rows(in: IntegrationScripts.root + "/" + doc)
        let rig = try IntegrationRig()
        #expect(Set(rows.keys) == Set(IntegrationScripts.names), "\(doc)'s table has \(rows.keys.sorted()), integrations/ has \(IntegrationScripts.names)")
        for name in IntegrationScripts.names {
            let r = try rig.run(name, "describe")
            let said = r.out.split(separator: "\n").map { line in
                String(line.drop(while: { $0 != ":" }).dropFirst(2))
            }
            let row = rows[name] ?? []
            #expect(row == said, "\(doc), row \(name): \(row)\n  describe says: \(said)")
        }
    }
}
