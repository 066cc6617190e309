import Foundation
import Testing
import TestSupport

/// What an integration must never do to a user's file, whatever the user, a second runner or the machine does
/// meanwhile (docs/integrations.md, "Safe with real files"): lose the user's lines, widen a file's mode or
/// replace a symlink, leave a half-written file, or rewrite bytes outside its block.
@Suite("Integration scripts: the user's file is never lost") struct IntegrationSafetyTests {
    /// An integration whose marked block goes at the end of a file of the user's.
    struct AtEnd: Sendable, CustomTestStringConvertible {
        var integration: String
        var path: String
        var comment = "#"
        var settings: [String: String] = [:]
        var extra: [String: String] = [:]
        var testDescription: String { "\(integration): \(path)" }
    }

    static let atEnd: [AtEnd] = [
        AtEnd(integration: "kitty", path: "kitty/kitty.conf"),
        AtEnd(integration: "foot", path: "foot/foot.ini"),
        AtEnd(integration: "gtk", path: "gtk-3.0/settings.ini", settings: ["backend": "settings.ini"]),
        AtEnd(integration: "qt", path: "qt5ct/qt5ct.conf", extra: IntegrationFileTests.qtColors),
        AtEnd(integration: "vim", path: "~/.vim/plugin/appearanced.vim", comment: "\""),
        AtEnd(integration: "alacritty", path: "alacritty/alacritty.toml"),
    ]

    static func bytes(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { Array($0) } }

    /// The user deletes the block's end marker and adds two settings below it: from then on the file is one
    /// appearanced no longer understands. Every switch and the restore leave every byte of it alone, and say so
    /// naming the file and what to do; mended, it is edited again and the user's lines are kept.
    @Test(arguments: atEnd) func aBlockWithoutItsEndMarkerIsLeftAlone(c: AtEnd) throws {
        let rig = try IntegrationRig()
        for (path, text) in c.extra { try rig.write(text, to: rig.file(path)) }
        let path = rig.file(c.path)
        let mine = "\(c.comment) mine\n"
        try rig.write(mine, to: path)
        #expect(try rig.run(c.integration, "apply", mode: "dark", settings: c.settings).status == 0)
        let end = "\(c.comment) <<< appearanced \(c.integration) <<<"
        let applied = try #require(rig.read(path))
        #expect(applied.contains(end + "\n"), "\(applied)")
        let damaged = applied.replacingOccurrences(of: end + "\n", with: "") + "user_one = 1\nuser_two = 2\n"
        try rig.write(damaged, to: path)
        for (verb, mode) in [("apply", "light"), ("apply", "dark"), ("restore", nil)] {
            let r = try rig.run(c.integration, verb, mode: mode, settings: c.settings)
            #expect(r.status == 1, "\(verb) \(mode ?? ""): \(r)")
            #expect(r.errLines.count == 1 && r.err.hasPrefix("\(c.integration): \(path): appearanced's marked block is damaged")
                    && r.err.contains("has no end marker") && r.err.contains("mend it"), "\(verb): \(r)")
            #expect(rig.read(path) == damaged, "\(verb) \(mode ?? "") changed the file: \(rig.read(path) ?? "(gone)")")
        }
        // Mended (the end marker put back before the user's lines): edited again, the user's lines kept.
        try rig.write(damaged.replacingOccurrences(of: "user_one", with: end + "\nuser_one"), to: path)
        #expect(try rig.run(c.integration, "apply", mode: "light", settings: c.settings).status == 0)
        #expect(rig.read(path)?.hasSuffix(end + "\nuser_one = 1\nuser_two = 2\n") == true, "\(rig.read(path) ?? "")")
        let restored = try rig.run(c.integration, "restore")
        #expect(restored.status == 0, "\(restored)")
        #expect(rig.read(path) == mine + "user_one = 1\nuser_two = 2\n")
    }

    /// Ways a user's hand (or a merge tool) leaves kitty.conf's markers.
    enum Damage: String, CaseIterable, Sendable {
        case beginDeleted = "the begin marker deleted", doubled = "the block doubled", swapped = "the end marker first"
        case endHalfEdited = "the end marker half-edited", beginHalfEdited = "the begin marker half-edited"

        func apply(to t: String) -> String {
            let begin = "# >>> appearanced kitty >>>", end = "# <<< appearanced kitty <<<"
            switch self {
            case .beginDeleted: return t.replacingOccurrences(of: begin + "\n", with: "")
            case .doubled: return t + "font_size 9\n" + t.split(separator: "\n").suffix(3).joined(separator: "\n") + "\n"
            case .swapped: return t.replacingOccurrences(of: begin, with: "@").replacingOccurrences(of: end, with: begin)
                .replacingOccurrences(of: "@", with: end)
            case .endHalfEdited: return t.replacingOccurrences(of: end, with: "# <<< appearanced kitty")
            case .beginHalfEdited: return t.replacingOccurrences(of: begin, with: "#>> appearanced kitty >>>")
            }
        }
    }

    /// Any marker out of order, doubled or half-edited makes the file one appearanced no longer understands.
    @Test(arguments: Damage.allCases) func aMarkerOutOfPlaceLeavesTheFileAlone(damage: Damage) throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/kitty/kitty.conf"
        try rig.write("# mine\nfont_size 11\n", to: path)
        #expect(try rig.run("kitty", "apply", mode: "dark").status == 0)
        let damaged = damage.apply(to: try #require(rig.read(path)))
        try rig.write(damaged, to: path)
        for (verb, mode) in [("apply", "light"), ("restore", nil)] {
            let r = try rig.run("kitty", verb, mode: mode)
            #expect(r.status == 1 && r.errLines.count == 1 && r.err.contains("\(path): appearanced's marked block is damaged"), "\(damage.rawValue), \(verb): \(r)")
            #expect(rig.read(path) == damaged, "\(damage.rawValue), \(verb)")
        }
    }

    /// The daemon says it where the user looks: `status`, `integrations` and the log name the file and what to do.
    @Test(.timeLimit(.minutes(2))) func theDaemonSaysWhichFileItNoLongerUnderstands() throws {
        let s = try Sandbox()
        s.env["APPEARANCED_INTEGRATIONS_DIR"] = IntegrationScripts.dir
        let path = s.root + "/config/kitty/kitty.conf"
        try s.write("# mine\n", to: path)
        let d = try s.startDaemon()
        #expect(try s.ctl("integrations", "enable", "kitty").status == 0)
        let applied = try String(contentsOfFile: path, encoding: .utf8)
        let damaged = applied.replacingOccurrences(of: "# <<< appearanced kitty <<<\n", with: "") + "font_size 13\n"
        try s.write(damaged, to: path)
        #expect(try s.ctl("set", "dark").status == 0)
        try waitUntil("the dark run to fail; \(d.stderr)") { try s.ctl("status").out.contains("failed: kitty") }
        let said = "kitty: \(path): appearanced's marked block is damaged"
        let status = try s.ctl("status").out
        #expect(status.contains(said) && status.contains("mend it"), "\(status)")
        let listed = try s.ctl("integrations").out
        #expect(listed.contains("last run: apply dark at ") && listed.contains(said), "\(listed)")
        try d.waitForStderr("integration kitty apply failed: exit status 1: \(said)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == damaged)
        // Disabled: appearanced.conf goes, kitty.conf stays as it is, and the run's result says why.
        let disabled = try s.ctl("integrations", "disable", "kitty")
        #expect(disabled.status == 65 && disabled.out.contains("kitty: disabled; restore at ") && disabled.out.contains(said), "\(disabled)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == damaged)
        #expect(!FileManager.default.fileExists(atPath: s.root + "/config/kitty/appearanced.conf"))
    }

    /// kitty.conf made a symlink after the apply (a dotfiles manager): restore edits the target in place when it
    /// is inside the config folder, and refuses, changing nothing, when it leads out; the link stays a link and
    /// no file's mode is widened.
    @Test(arguments: [true, false]) func restoreKeepsASymlinkASymlink(inside: Bool) throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/kitty/kitty.conf"
        try rig.write("# mine\n", to: path)
        #expect(chmod(path, 0o600) == 0)
        #expect(try rig.run("kitty", "apply", mode: "dark").status == 0)
        let target = (inside ? rig.config : rig.home) + "/dotfiles/kitty.conf"
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: path, toPath: target)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        let applied = rig.read(target)
        let r = try rig.run("kitty", "restore")
        if inside {
            #expect(r.status == 0, "\(r)")
            #expect(rig.read(target) == "# mine\n")
        } else {
            #expect(r.status == 1, "\(r)")
            #expect(r.errLines.count == 1 && r.err.hasPrefix("kitty: \(path) is a symlink to \(target), outside \(rig.config): not following it"), "\(r)")
            #expect(rig.read(target) == applied)
        }
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == target, "the link was replaced")
        let mode = try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int
        #expect(mode == 0o600, "\(target) has mode \(String(mode ?? 0, radix: 8))")
    }

    /// Two applies at once: the second waits for the first to end. A stand-in python3 holds vscode's edit of
    /// settings.json open (once); the second run, started then, must neither edit the file meanwhile nor be
    /// overtaken: it waits on the integration's lock (a flock(1) of its own is seen waiting), and its mode is
    /// the one left when both are done.
    @Test(.timeLimit(.minutes(1))) func twoRunsAtOnceTakeTurns() throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/Code/User/settings.json"
        let mine = "{\n  \"editor.fontSize\": 13\n}\n"
        try rig.write(mine, to: path)
        let hold = rig.root + "/hold", held = rig.root + "/held", claimed = rig.root + "/claimed"
        try rig.writeExecutable("""
            #!/bin/sh
            case $2 in
            *top_level_keys*)
                if mkdir \(claimed) 2>/dev/null; then
                    : > \(held)
                    i=0; while [ -e \(hold) ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
                fi ;;
            esac
            exec /usr/bin/python3 "$@"

            """, to: rig.root + "/bin/python3")
        try rig.write("", to: hold)
        let first = try rig.start("vscode", "apply", mode: "dark")
        try waitUntil("the first run to reach its edit; \(first.stderr)") { FileManager.default.fileExists(atPath: held) }
        let second = try rig.start("vscode", "apply", mode: "light")
        try waitUntil("the second run to wait for the lock, or to end; \(second.stderr)") {
            !second.isRunning || Self.children(of: second.pid).contains("flock")
        }
        #expect(rig.read(path) == mine, "settings.json was edited while the first run held it")
        try FileManager.default.removeItem(atPath: hold)
        #expect(try first.waitForEnd() == 0, "\(first.stderr)")
        #expect(try second.waitForEnd() == 0, "\(second.stderr)")
        #expect(rig.read(path)?.contains("\"workbench.colorTheme\": \"Default Light Modern\"") == true, "\(rig.read(path) ?? "")")
        #expect(try rig.run("vscode", "restore").status == 0)
        #expect(rig.read(path) == mine)
    }

    /// The names of the processes whose parent is `pid`.
    static func children(of pid: pid_t) -> [String] {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return all.compactMap { entry in
            guard Int32(entry) != nil, let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == pid ? String(stat[stat.index(after: open)..<close]) : nil
        }
    }

    /// The same, as the review found it: dark and light applied at once, over and over. The user's lines stay,
    /// with one block, and restore gives the file back.
    @Test(.timeLimit(.minutes(2))) func applyingTwiceAtOnceNeverEmptiesTheFile() throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/kitty/kitty.conf"
        let mine = "# mine\nfont_size 11\n"
        try rig.write(mine, to: path)
        for round in 1...25 {
            let runs = try [rig.start("kitty", "apply", mode: "dark"), rig.start("kitty", "apply", mode: "light")]
            for run in runs { #expect(try run.waitForEnd() == 0, "round \(round): \(run.stderr)") }
            let now = rig.read(path) ?? ""
            #expect(now.hasPrefix(mine) && now.components(separatedBy: "# >>> appearanced kitty >>>").count == 2, "round \(round): \(now)")
        }
        #expect(try rig.run("kitty", "restore").status == 0)
        #expect(rig.read(path) == mine)
    }

    /// How this machine lets a test mount a tmpfs of its own: in a mount namespace (`unshare -m` as root, or
    /// `unshare -rm`, mapped to root in a user namespace), which no other process sees and which ends with it.
    static let mountNamespace: [String]? = {
        for args in getuid() == 0 ? [["-m"], ["-rm"]] : [["-rm"]] {
            let probe = try? Child("/usr/bin/unshare", args + ["/bin/sh", "-c", "mount -t tmpfs -o size=64k tmpfs /tmp"],
                                   env: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
            if let probe, (try? probe.waitForEnd(timeout: 10)) == 0 { return args }
        }
        return nil
    }()

    /// The integration's folder on a full file system, the config elsewhere: a write that fails fails the run,
    /// and nothing of the user's is edited before what restore needs is on disk; a restore that cannot write
    /// leaves the file as it is. A real full file system: a 256 KiB tmpfs mounted over the integrations'
    /// folders in a mount namespace of the test's own, filled up.
    @Test(.timeLimit(.minutes(1)), .enabled(if: mountNamespace != nil, "this machine lets no test mount a tmpfs (unshare -m and -rm refused)"))
    func aFullStateFolderFailsTheRunAndEditsNothing() throws {
        let rig = try IntegrationRig()
        let conf = rig.config + "/kitty/kitty.conf", vimrc = rig.home + "/.vimrc"
        try rig.write("# mine\n", to: conf)
        try rig.write("\" mine\n", to: vimrc)
        let folders = rig.root + "/integration", snap = rig.root + "/snap"
        // Each step: NAME INTEGRATION MODE VERB FILE; what it said, its status, FILE and FILE's folder after it.
        let script = """
            dir=$1 kitty=$2 vim=$3 conf=$4 vimrc=$5 snap=$6
            mkdir -p "$snap" && mount -t tmpfs -o size=256k,mode=0700 tmpfs "$dir" && mkdir "$dir/kitty" "$dir/vim" || exit 90
            fill() { cat /dev/zero > "$dir/fill" 2>/dev/null; [ -s "$dir/fill" ] || exit 91; }
            step() {
                APPEARANCE_INTEGRATION_DIR=$dir/${2##*/} APPEARANCE=$3 "$2" "$4" > "$snap/$1.out" 2> "$snap/$1.err"
                echo $? > "$snap/$1.status"; cat "$5" > "$snap/$1.file"; ls "$(dirname "$5")" > "$snap/$1.ls"
            }
            fill; step full-apply "$kitty" dark apply "$conf"; step full-restore "$kitty" '' restore "$conf"
            rm "$dir/fill"; step apply "$kitty" dark apply "$conf"
            echo 'font_size 13' >> "$conf"
            fill; step full-apply-edited "$kitty" light apply "$conf"
            rm "$dir/fill"; step restore "$kitty" '' restore "$conf"
            # vim: one file, so no record restore drops first makes room for the copy it needs.
            export APPEARANCE_OPT_FILE="$vimrc"
            step vim-apply "$vim" dark apply "$vimrc"
            echo 'set number' >> "$vimrc"
            fill; step vim-full-restore "$vim" '' restore "$vimrc"
            rm "$dir/fill"; step vim-restore "$vim" '' restore "$vimrc"
            """
        let r = try rig.program("/usr/bin/unshare", try #require(Self.mountNamespace) + ["/bin/sh", "-c", script, "sh", folders,
                                IntegrationScripts.path("kitty"), IntegrationScripts.path("vim"), conf, vimrc, snap])
        #expect(r.status == 0, "\(r)")
        func step(_ name: String) -> (status: String, out: String, err: String, file: String, ls: String) {
            let read = { (ext: String) in (try? String(contentsOfFile: "\(snap)/\(name).\(ext)", encoding: .utf8)) ?? "" }
            return (read("status"), read("out"), read("err"), read("file"), read("ls"))
        }
        /// Failed, in one line that names the full folder, with the file as `file`.
        func failed(_ name: String, _ integration: String, file: String) {
            let s = step(name)
            #expect(s.status == "1\n" && s.err.split(separator: "\n").count == 1 && s.err.hasPrefix("\(integration): ")
                    && s.err.contains("\(folders)/\(integration)/") && s.err.contains("No space left on device"), "\(name): \(s)")
            #expect(s.file == file, "\(name) changed the user's file: \(s)")
        }
        failed("full-apply", "kitty", file: "# mine\n")
        #expect(step("full-apply").ls == "kitty.conf\n", "appearanced.conf made with no record of it")
        let nothing = step("full-restore")
        #expect(nothing.status == "0\n" && nothing.out == "no file to restore\n" && nothing.file == "# mine\n", "\(nothing)")
        let applied = step("apply")
        #expect(applied.status == "0\n" && applied.file.hasPrefix("# mine\n# >>> appearanced kitty >>>\n"), "\(applied)")
        failed("full-apply-edited", "kitty", file: applied.file + "font_size 13\n")
        let restored = step("restore")
        #expect(restored.status == "0\n" && restored.file == "# mine\nfont_size 13\n" && restored.ls == "kitty.conf\n", "\(restored)")
        let vim = step("vim-apply")
        #expect(vim.status == "0\n" && vim.file.hasPrefix("\" mine\n\" >>> appearanced vim >>>\n"), "\(vim)")
        failed("vim-full-restore", "vim", file: vim.file + "set number\n")
        let vimRestored = step("vim-restore")
        #expect(vimRestored.status == "0\n" && vimRestored.file == "\" mine\nset number\n", "\(vimRestored)")
    }

    /// The bare line feeds in `bytes` (a "\n" without a "\r" before it).
    static func bareLineFeeds(_ bytes: [UInt8]) -> Int {
        bytes.indices.filter { bytes[$0] == 0x0A && ($0 == 0 || bytes[$0 - 1] != 0x0D) }.count
    }

    /// settings.json with CRLF line ends keeps them: through apply, a setting the user changes and the next
    /// apply, every line ends as it did, and restore gives back the user's version byte for byte.
    @Test func vscodeKeepsEachLinesEnding() throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/Code/User/settings.json"
        try rig.write("{\r\n  // mine\r\n  \"editor.fontSize\": 13\r\n}\r\n", to: path)
        #expect(try rig.run("vscode", "apply", mode: "dark").status == 0)
        #expect(Self.bareLineFeeds(Self.bytes(path) ?? []) == 0, "\(rig.read(path) ?? "")")
        let changed = "{\r\n  // mine\r\n  \"editor.fontSize\": 14\r\n}\r\n"
        try rig.write((rig.read(path) ?? "").replacingOccurrences(of: "13", with: "14"), to: path)
        #expect(try rig.run("vscode", "apply", mode: "light").status == 0)
        #expect(Self.bareLineFeeds(Self.bytes(path) ?? []) == 0 && rig.read(path)?.contains("Default Light Modern") == true,
                "\(rig.read(path) ?? "")")
        #expect(try rig.run("vscode", "restore").status == 0)
        #expect(Self.bytes(path) == Array(changed.utf8), "\(rig.read(path) ?? "")")
    }

    /// alacritty.yml starting with a byte order mark: the block goes after it, so YAML still reads the user's
    /// first key; restore gives the file back byte for byte, and after a later edit keeps the mark in front.
    @Test func alacrittyPutsItsBlockAfterAByteOrderMark() throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/alacritty/alacritty.yml"
        let mine = "\u{FEFF}font:\n  size: 11\n"
        try rig.write(mine, to: path)
        #expect(try rig.run("alacritty", "apply", mode: "dark").status == 0)
        let text = rig.read(path) ?? ""
        #expect(text.unicodeScalars.starts(with: "\u{FEFF}# >>> appearanced alacritty >>>\n".unicodeScalars), "\(text)")
        let yaml = try rig.program("/usr/bin/python3", ["-c", "import sys, yaml\nd = yaml.safe_load(open(sys.argv[1], encoding='utf-8'))\nprint(sorted(d), d['font']['size'])", path])
        #expect(yaml.out == "['font', 'import'] 11\n", "\(yaml)")
        #expect(try rig.run("alacritty", "restore").status == 0)
        #expect(Self.bytes(path) == Array(mine.utf8))

        #expect(try rig.run("alacritty", "apply", mode: "light").status == 0)
        try rig.write((rig.read(path) ?? "") + "# later\n", to: path)
        #expect(try rig.run("alacritty", "apply", mode: "dark").status == 0)
        #expect(try rig.run("alacritty", "restore").status == 0)
        #expect(Self.bytes(path) == Array((mine + "# later\n").utf8), "\(rig.read(path) ?? "")")
    }
}
