import Foundation
import Testing

/// A fresh clone's walk through README.md: every shell command of its code blocks, in order, run as a user
/// would (bash, in a private HOME and XDG_RUNTIME_DIR, with this build's binaries first on PATH), each
/// exiting 0 and printing what the README shows under it, where it shows something. A block that is not
/// shell (TOML, Swift, the protocol's lines, pictures of output) is recognised by its kind below; TOML is
/// checked with `appearanced --check` as a config or a palette. A command that cannot run in a test is in
/// `skipped`, with the reason: a command the README gains is walked unless it is added there.
@Suite(.serialized) struct ReadmeWalkTests {
    /// Commands not run, by their text (without a trailing comment), and why.
    static let skipped: [String: String] = [
        "make run": "builds a release and runs the daemon in the foreground until Ctrl-C; the walk starts this build's appearanced instead",
        "make test": "is this suite",
        "make deb": "installs build tools as root and builds a Debian package (PackageTests builds it)",
        "sudo apt install ./appearanced_*.deb": "installs into the real system as root",
        "make arch": "installs build tools as root and builds an Arch package (DistroPackageTests builds it)",
        "sudo pacman -U ./appearanced-*.pkg.tar.zst": "installs with pacman, which Debian does not run",
        "make rpm": "installs build tools as root and builds an RPM (DistroPackageTests builds and lints it)",
        "sudo dnf install ./appearanced-*.rpm": "installs with dnf, which Debian does not run",
        "make install PREFIX=~/.local": "a release build installed into the real home (InstallTests installs into a private prefix)",
        "make install PREFIX=/usr": "installs into the real system as root",
        "systemctl --user daemon-reload": "needs the user's systemd manager (SystemdTests runs the units with systemd-socket-activate)",
        "systemctl --user enable --now appearanced.socket": "enables a unit in the real user manager",
        "systemctl --user status appearanced.socket appearanced": "needs the user's systemd manager",
        "journalctl --user -u appearanced": "reads the real journal",
        "appearancectl palette import --light light.plist --dark dark.plist -o ~/.config/appearanced/palette.toml":
            "needs the reader's own LFLDarkModeKit plists (PlistImportTests and PaletteTests convert real ones)",
        "busctl --user get-property io.github.appearanced.Appearance1 /io/github/appearanced/Appearance1 io.github.appearanced.Appearance1 Mode":
            "needs the daemon on a session bus (AppearanceServiceTests calls the same methods on a private bus)",
        "gdbus call --session --dest io.github.appearanced.Appearance1 --object-path /io/github/appearanced/Appearance1 --method io.github.appearanced.Appearance1.Set light \"{'until': <'next'>}\"":
            "needs the daemon on a session bus (AppearanceServiceTests)",
        "gdbus call --session --dest io.github.appearanced.Appearance1 --object-path /io/github/appearanced/Appearance1 --method io.github.appearanced.Appearance1.Toggle \"{'app': <'org.gnome.TextEditor'>}\"":
            "needs the daemon on a session bus (AppearanceServiceTests)",
        "gdbus monitor --session --dest io.github.appearanced.Appearance1": "needs a session bus, and runs until interrupted",
        "(<<uint32 1>>,)": "what the gdbus call above prints, not a command",
        "gdbus call --session --dest org.freedesktop.portal.Desktop --object-path /org/freedesktop/portal/desktop --method org.freedesktop.portal.Settings.Read org.freedesktop.appearance color-scheme":
            "needs xdg-desktop-portal with appearanced as its backend (PortalBackendTests runs the real portal)",
    ]

    /// Commands whose output is the user's own and is not compared (they still must exit 0), and why.
    static let outputNotCompared: [String: String] = [
        "appearancectl status": "a user's values (a GNOME session, a palette); ReadmeTests compares its lines' labels and protocol",
        "appearancectl log": "the times and causes of the user's day",
    ]

    /// Blocks that are not shell, by what they are.
    static func kind(_ block: [String]) -> String? {
        let text = block.joined(separator: "\n")
        if text.contains("import AppearanceKit") { return "Swift" }
        if text.contains("import appearanced") { return "Python" }  // run by clients/python/tests/test_docs.py
        if block[0].hasPrefix("→") { return "protocol lines" }
        if text.contains("██") { return "a picture of palette --preview" }
        if block[0].hasPrefix("mode = a temporary override") { return "the decision rule" }
        if block[0].trimmingCharacters(in: .whitespaces) == "[preferred]" { return "portals.conf" }
        if block.allSatisfy({ $0.wholeMatch(of: Self.tomlLine) != nil }) { return "TOML" }
        return nil
    }
    nonisolated(unsafe) static let tomlLine = /\s*(#.*)?|\s*\[[A-Za-z0-9._-]+\]\s*(#.*)?|\s*[A-Za-z0-9_-]+\s*=\s*("[^"]*"|[-+0-9.]+|true|false)\s*(#.*)?/

    struct Block {
        var heading: String
        var lines: [String]
    }

    /// The README's indented code blocks (four spaces, after a blank line), with the heading above each.
    static func blocks() throws -> [Block] {
        let readme = try String(contentsOfFile: Repo.root + "/README.md", encoding: .utf8)
        var blocks: [Block] = [], heading = "", current: [String]? = nil, previousBlank = true
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("#") { heading = line }
            if current != nil, line.hasPrefix("    ") || line.isEmpty {
                current!.append(line.isEmpty ? "" : String(line.dropFirst(4)))
            } else if current == nil, previousBlank, line.hasPrefix("    ") {
                current = [String(line.dropFirst(4))]
            } else if let c = current {
                blocks.append(Block(heading: heading, lines: Array(c.reversed().drop { $0.isEmpty }.reversed())))
                current = nil
            }
            previousBlank = line.isEmpty
        }
        if let c = current { blocks.append(Block(heading: heading, lines: c.filter { !$0.isEmpty })) }
        return blocks
    }

    /// A command line without its trailing comment (`# …` after two spaces), as the skip lists name it.
    static func bare(_ command: String) -> String {
        var s = command
        if let r = s.range(of: #"\s{2,}# .*$"#, options: .regularExpression) { s.removeSubrange(r) }
        return s.trimmingCharacters(in: .whitespaces)
    }

    /// The README's lines against what ran: equal, where "…" stands for any number of lines.
    static func matches(_ shown: [String], _ real: [String]) -> Bool {
        guard let first = shown.first else { return real.isEmpty }
        if first == "…" || first.trimmingCharacters(in: .whitespaces) == "…" {
            return (0...real.count).contains { matches(Array(shown.dropFirst()), Array(real.dropFirst($0))) }
        }
        return real.first == first && matches(Array(shown.dropFirst()), Array(real.dropFirst()))
    }

    final class Walk {
        let s: Sandbox
        var ran: [String] = []
        var skippedSeen: Set<String> = []
        var notComparedSeen: Set<String> = []

        init(_ s: Sandbox) { self.s = s }

        /// Runs bash with `script` in HOME; its status and output.
        func bash(_ script: String) throws -> (status: Int32, out: [String], err: [String]) {
            let r = try s.run("/bin/bash", ["--norc", "--noprofile", "-c", "cd \"$HOME\" && " + script])
            func lines(_ t: String) -> [String] {
                t.isEmpty ? [] : t.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(t.hasSuffix("\n") ? 1 : 0)
            }
            return (r.status, lines(r.out), lines(r.err))
        }

        /// One `$ command` and the lines the README shows under it.
        func run(_ command: String, shown: [String], heading: String) throws {
            let key = ReadmeWalkTests.bare(command)
            if ReadmeWalkTests.skipped[key] != nil { skippedSeen.insert(key); return }
            ran.append(key)
            if key.contains("appearancectl watch") { return try watch(command, key: key, shown: shown) }
            let r = try bash(command)
            #expect(r.status == 0, "\(heading): `\(command)` exited \(r.status): \(r.err.joined(separator: "\n"))")
            if ReadmeWalkTests.outputNotCompared[key] != nil { notComparedSeen.insert(key); return }
            guard !shown.isEmpty else { return }
            // What the README shows is standard output, or standard error for a command that prints nothing else.
            let real = r.out.isEmpty ? r.err : r.out
            // The README's reader is /home/me.
            let shown = shown.map { $0.replacingOccurrences(of: "/home/me", with: s.root + "/home") }
            #expect(ReadmeWalkTests.matches(shown, real),
                    "\(heading): `\(command)`\nREADME.md shows:\n\(shown.joined(separator: "\n"))\nit printed:\n\(r.out.joined(separator: "\n"))\n\(r.err.joined(separator: "\n"))")
        }

        /// A watch runs until interrupted: its first lines are compared (a change made meanwhile, as from
        /// another terminal, gives the README's second line), then Ctrl-C ends it with status 0.
        func watch(_ command: String, key: String, shown: [String]) throws {
            let c = try Child("/bin/bash", ["--norc", "--noprofile", "-c", "cd \"$HOME\" && exec env " + command], env: s.env)
            defer { c.stop(SIGKILL) }
            if key.contains("--exec") {
                // It runs the command now: the symlink it makes is there.
                try waitUntil("`\(command)` to run its command; stderr: \(c.stderr)") {
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: s.root + "/home/.config/alacritty/theme.toml"))?
                        .hasSuffix("/\(try s.ctl("get").out.dropLast()).toml") == true
                }
            } else if let first = shown.first {
                #expect(try c.waitForLines(1) == [first], "`\(command)`: \(c.stdout) \(c.stderr)")
                if shown.count > 1 {
                    #expect(try s.ctl("toggle").status == 0)
                    #expect(Array(try c.waitForLines(2).prefix(2)) == Array(shown.prefix(2)), "`\(command)`: \(c.stdout)")
                    #expect(try s.ctl("toggle").status == 0)  // back to what it was
                }
            } else {
                _ = try c.waitForLines(1)
            }
            c.stop(SIGINT)
            #expect(try c.waitForExit() == 0, "`\(command)` did not end with status 0 on Ctrl-C: \(c.stderr)")
        }
    }

    /// A private HOME with the XDG folders at their defaults under it (a user sets none of them), a private
    /// XDG_RUNTIME_DIR and TMPDIR, and this build's binaries first on PATH.
    static func sandbox() throws -> Sandbox {
        let s = try Sandbox()
        s.env["PATH"] = Bin.dir + ":" + (s.env["PATH"] ?? "/usr/bin:/bin")
        s.env["TMPDIR"] = s.root
        s.env["XDG_CONFIG_HOME"] = nil
        s.env["XDG_STATE_HOME"] = nil
        return s
    }
    static func config(_ s: Sandbox) -> String { s.root + "/home/.config/appearanced/config.toml" }

    @Test(.timeLimit(.minutes(3)))
    func theReadmeWalksFromAFreshClone() throws {
        let s = try Self.sandbox()
        let home = s.root + "/home"
        // The reader whose session the README's outputs show: a desktop that prefers dark, and the shipped
        // palette copied to its place as the palette section says.
        try s.write("default-mode = \"dark\"\n", to: Self.config(s))
        try s.write(try String(contentsOfFile: Repo.root + "/config/palette.toml", encoding: .utf8),
                    to: home + "/.config/appearanced/palette.toml")
        try FileManager.default.createDirectory(atPath: home + "/.config/alacritty", withIntermediateDirectories: true)
        try s.startDaemon()

        let walk = Walk(s)
        var kinds: [String] = [], hooksShown = false
        for block in try Self.blocks() {
            if let kind = Self.kind(block.lines) {
                kinds.append(kind)
                if kind == "TOML" { try checkTOML(block, s) }
                continue
            }
            if block.heading.hasPrefix("### Try it without touching your session") {
                try trial(block, s)
                continue
            }
            if block.lines.contains(where: { $0.hasPrefix("$ appearancectl import-darkman") }) {
                // The reader this section speaks to has darkman's config and none of appearanced's yet.
                try s.write("lat: 52.52\nlng: 13.40\nusegeoclue: true\n", to: home + "/.config/darkman/config.yaml")
                try? FileManager.default.removeItem(atPath: Self.config(s))
            }
            // `$ command` lines with what they print below them; a block without them is one command a line.
            var commands: [(command: String, shown: [String])] = []
            var pending = ""
            for line in block.lines {
                if line.hasPrefix("$ ") || !block.lines.contains(where: { $0.hasPrefix("$ ") }) {
                    let text = line.hasPrefix("$ ") ? String(line.dropFirst(2)) : line
                    if !pending.isEmpty { pending += " " + text.trimmingCharacters(in: .whitespaces) } else { commands.append(("", [])); pending = text }
                } else if !pending.isEmpty {
                    pending += " " + line.trimmingCharacters(in: .whitespaces)
                } else if !line.isEmpty, !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") {
                    guard !commands.isEmpty else {
                        Issue.record("\(block.heading): a block that starts with output, not a `$ command`: \(block.lines)")
                        break
                    }
                    commands[commands.count - 1].shown.append(line)
                }
                if pending.hasSuffix("\\") { pending.removeLast(); pending = pending.trimmingCharacters(in: .whitespaces); continue }
                if !pending.isEmpty { commands[commands.count - 1].command = pending; pending = "" }
            }
            for c in commands where !c.command.isEmpty {
                try walk.run(c.command, shown: c.shown, heading: block.heading)
            }
            // A block that makes a hook: the change it makes ran it, as `status` says.
            if block.lines.contains(where: { $0.contains("hooks.d/") && !$0.hasPrefix("#") }) {
                hooksShown = true
                try waitUntil("the hook the README makes to run") {
                    let line = try s.ctl("status").out.split(separator: "\n").first { $0.hasPrefix("hooks:") } ?? ""
                    return line.contains(" hook for ") && line.hasSuffix(": ok")
                }
            }
        }
        // The walk reached the README's commands (and each list names only commands that are still there).
        for needed in ["appearancectl get", "appearancectl set light", "appearancectl toggle", "appearancectl watch",
                       "appearancectl status", "appearancectl log", "appearancectl import-darkman -o ~/.config/appearanced/config.toml"] {
            #expect(walk.ran.contains(needed), "the walk did not run `\(needed)`: \(walk.ran)")
        }
        #expect(walk.ran.contains { $0.contains("watch --exec") })
        #expect(Set(Self.skipped.keys) == walk.skippedSeen, "skip list entries the README no longer has: \(Set(Self.skipped.keys).subtracting(walk.skippedSeen))")
        #expect(Set(Self.outputNotCompared.keys) == walk.notComparedSeen)
        #expect(kinds.contains("TOML") && kinds.contains("Swift"), "\(kinds)")
        #expect(hooksShown, "the README shows no hook being made")
    }

    /// A TOML block is a config `appearanced --check` takes, or else a palette it takes. One that says it is
    /// `~/.config/appearanced/config.toml` is put there and `appearancectl reload` applies it, as the README says.
    func checkTOML(_ block: Block, _ s: Sandbox) throws {
        let text = block.lines.joined(separator: "\n") + "\n"
        let file = s.root + "/readme-block.toml"
        try s.write(text, to: file)
        let asConfig = try s.run(Bin.daemon, ["--check", "--config", file])
        if asConfig.status != 0 {
            let config = s.root + "/readme-palette-config.toml"
            try s.write("palette = \"\(file)\"\n", to: config)
            let asPalette = try s.run(Bin.daemon, ["--check", "--config", config])
            #expect(asPalette.status == 0, "\(block.heading): a TOML block that is neither a config (\(asConfig.out)\(asConfig.err)) nor a palette (\(asPalette.out)\(asPalette.err)):\n\(text)")
        }
        if block.lines.first == "# ~/.config/appearanced/config.toml" {
            try s.write(text, to: Self.config(s))
            let r = try s.ctl("reload")
            #expect(r.status == 0, "\(r.err)")
        }
    }

    /// The trial section's block runs as one script (`.build/release/` being this build's binaries) and touches
    /// nothing of the session: not the session daemon's mode, not its state directory.
    func trial(_ block: Block, _ s: Sandbox) throws {
        let script = block.lines.joined(separator: "\n").replacingOccurrences(of: ".build/release/", with: Bin.dir + "/")
        let stateDir = s.root + "/home/.local/state/appearanced"
        func snapshot() throws -> [String: Data] {
            var files: [String: Data] = [:]
            for name in (try? FileManager.default.contentsOfDirectory(atPath: stateDir)) ?? [] {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: stateDir + "/" + name))
            }
            return files
        }
        let before = try snapshot(), mode = try s.ctl("get", "--json").out
        let r = try s.run("/bin/bash", ["--norc", "--noprofile", "-e", "-c", script])
        #expect(r.status == 0, "the trial block:\n\(script)\n\(r.out)\(r.err)")
        #expect(r.out.hasPrefix("dark\n") && r.out.contains("override:    dark"), "\(r.out)")
        #expect(try snapshot() == before, "the trial changed the session's state directory")
        #expect(try s.ctl("get", "--json").out == mode)
        let left = try FileManager.default.contentsOfDirectory(atPath: s.root).filter { $0.hasPrefix("tmp.") }
        #expect(left.isEmpty, "the trial left \(left)")
    }
}
