import Foundation
import Testing

/// `make install-files` / `make uninstall` into temporary trees, and systemd-analyze and man on what was
/// installed. The binaries are the ones the other tests run (BIN_DIR=Bin.dir): the install step is tested
/// without a release build. Serialized: every test runs make in the same checkout (out/ holds the man pages).
@Suite(.serialized) struct InstallTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Every file `make install PREFIX=/usr` installs, sorted.
    static let expectedFiles = ([
        "usr/bin/appearancectl",
        "usr/bin/appearanced",
        "usr/lib/systemd/user/appearanced.service",
        "usr/lib/systemd/user/appearanced.socket",
        "usr/share/applications/appearanced.desktop",
        "usr/share/bash-completion/completions/appearancectl",
        "usr/share/dbus-1/interfaces/io.github.appearanced.Appearance1.xml",
        "usr/share/dbus-1/services/io.github.appearanced.Appearance1.service",
        "usr/share/dbus-1/services/org.freedesktop.impl.portal.desktop.appearanced.service",
        "usr/share/doc/appearanced/appearanced.toml",
        "usr/share/doc/appearanced/palette.toml",
        "usr/share/doc/appearanced/protocol.md",
        "usr/share/fish/vendor_completions.d/appearancectl.fish",
        "usr/share/man/man1/appearancectl.1",
        "usr/share/man/man1/appearanced.1",
        "usr/share/man/man7/appearanced.7",
        "usr/share/xdg-desktop-portal/portals/appearanced.portal",
        "usr/share/zsh/site-functions/_appearancectl",
    ] + integrationFiles(share: "usr/share")).sorted()

    /// The shipped integrations and their library (docs/integrations.md), under SHARE/appearanced/integrations.
    static func integrationFiles(share: String) -> [String] {
        (IntegrationScripts.names + ["lib/common.sh", "lib/files.sh"]).map { share + "/appearanced/integrations/" + $0 }
    }

    /// Runs make in the checkout; fails the test with make's output when it fails.
    func make(_ s: Sandbox, _ args: [String]) throws {
        let r = try s.run("/usr/bin/make", ["-C", Self.root, "--no-print-directory"] + args)
        try #require(r.status == 0, "make \(args.joined(separator: " ")) failed:\n\(r.out)\(r.err)")
    }

    func installFiles(_ s: Sandbox, destdir: String = "", prefix: String) throws {
        try make(s, ["install-files", "BIN_DIR=\(Bin.dir)", "DESTDIR=\(destdir)", "PREFIX=\(prefix)"])
    }

    /// Regular files and symlinks under `dir`, relative to it, sorted.
    func files(under dir: String) -> [String] {
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: dir) else { return [] }
        var found: [String] = []
        while let path = e.nextObject() as? String {
            let type = e.fileAttributes?[.type] as? FileAttributeType
            if type != .typeDirectory { found.append(path) }
        }
        return found.sorted()
    }

    /// A tree with `PREFIX=<sandbox>/usr` and no DESTDIR, so the units name real files (ExecStart=, man:).
    func installedTree() throws -> (sandbox: Sandbox, prefix: String) {
        let s = try Sandbox()
        let prefix = s.root + "/usr"
        try installFiles(s, prefix: prefix)
        return (s, prefix)
    }

    @Test func installLeavesExactlyTheFileListAndUninstallRemovesIt() throws {
        let s = try Sandbox()
        let dest = s.root + "/dest"
        try installFiles(s, destdir: dest, prefix: "/usr")
        #expect(files(under: dest) == Self.expectedFiles)

        let service = try String(contentsOfFile: dest + "/usr/lib/systemd/user/appearanced.service", encoding: .utf8)
        #expect(service.contains("\nExecStart=/usr/bin/appearanced\n"))
        #expect(!service.contains("@bindir@"), "an unsubstituted placeholder is left in the service")
        let fm = FileManager.default
        for exe in ["appearanced", "appearancectl"] {
            #expect(fm.isExecutableFile(atPath: dest + "/usr/bin/" + exe))
        }
        let manMode = try fm.attributesOfItem(atPath: dest + "/usr/share/man/man7/appearanced.7")[.posixPermissions] as? Int
        #expect(manMode == 0o644)
        let example = try String(contentsOfFile: dest + "/usr/share/doc/appearanced/appearanced.toml", encoding: .utf8)
        #expect(example == (try String(contentsOfFile: Self.root + "/config/appearanced.toml", encoding: .utf8)))
        // The completions are what the installed appearancectl generates from its option table, readable by all.
        for (shell, path) in [("bash", "bash-completion/completions/appearancectl"), ("zsh", "zsh/site-functions/_appearancectl"),
                              ("fish", "fish/vendor_completions.d/appearancectl.fish")] {
            let installed = try String(contentsOfFile: dest + "/usr/share/" + path, encoding: .utf8)
            let generated = try s.run(Bin.ctl, ["completions", shell])
            #expect(generated.status == 0 && installed == generated.out && installed.hasPrefix("#"), "\(path)")
            #expect(try fm.attributesOfItem(atPath: dest + "/usr/share/" + path)[.posixPermissions] as? Int == 0o644, "\(path)")
        }

        try make(s, ["uninstall", "DESTDIR=\(dest)", "PREFIX=/usr"])
        #expect(files(under: dest) == [])
        #expect(!fm.fileExists(atPath: dest + "/usr/share/doc/appearanced"))
        // The folders install made are gone too: nothing is left below PREFIX.
        #expect((try? fm.contentsOfDirectory(atPath: dest + "/usr")) ?? [] == [], "\((try? fm.subpathsOfDirectory(atPath: dest + "/usr")) ?? [])")
    }

    /// README's `make install PREFIX=~/.local`: the units must land in a directory the user manager searches.
    @Test func perUserInstallPutsTheUnitsWhereTheUserManagerLooks() throws {
        let s = try Sandbox()
        let home = try #require(s.env["HOME"])
        try make(s, ["install-files", "BIN_DIR=\(Bin.dir)", "PREFIX=~/.local"])  // as zsh passes it: unexpanded
        let installed = files(under: home + "/.local")
        #expect(installed == ([
            "bin/appearancectl",
            "bin/appearanced",
            "share/applications/appearanced.desktop",
            "share/bash-completion/completions/appearancectl",
            "share/dbus-1/interfaces/io.github.appearanced.Appearance1.xml",
            "share/dbus-1/services/io.github.appearanced.Appearance1.service",
            "share/dbus-1/services/org.freedesktop.impl.portal.desktop.appearanced.service",
            "share/doc/appearanced/appearanced.toml",
            "share/doc/appearanced/palette.toml",
            "share/doc/appearanced/protocol.md",
            "share/fish/vendor_completions.d/appearancectl.fish",
            "share/man/man1/appearancectl.1",
            "share/man/man1/appearanced.1",
            "share/man/man7/appearanced.7",
            "share/systemd/user/appearanced.service",
            "share/systemd/user/appearanced.socket",
            "share/xdg-desktop-portal/portals/appearanced.portal",
            "share/zsh/site-functions/_appearancectl",
        ] + Self.integrationFiles(share: "share")).sorted())
        let paths = try s.run("/usr/bin/systemd-analyze", ["--user", "unit-paths"])
        #expect(paths.out.split(separator: "\n").contains { $0 == home + "/.local/share/systemd/user" }, "\(paths)")
        let service = try String(contentsOfFile: home + "/.local/share/systemd/user/appearanced.service", encoding: .utf8)
        #expect(service.contains("\nExecStart=\(home)/.local/bin/appearanced\n"))
        try make(s, ["uninstall", "PREFIX=~/.local"])
        #expect(files(under: home + "/.local") == [])
    }

    @Test func installedBinariesRun() throws {
        let (s, prefix) = try installedTree()
        let r = try s.run(prefix + "/bin/appearancectl", ["--version"])
        #expect(r.status == 0 && r.out.hasPrefix("appearancectl "), "\(r)")
        let d = try s.run(prefix + "/bin/appearanced", ["--version"])
        #expect(d.status == 0 && d.out.hasPrefix("appearanced "), "\(d)")
    }

    /// `make install-strip` copies the binaries with `install -s`: no symbol table is left, and they still run.
    @Test func strippedInstallHasNoSymbolsAndRuns() throws {
        let s = try Sandbox()
        let prefix = s.root + "/usr"
        try make(s, ["install-files", "BIN_DIR=\(Bin.dir)", "PREFIX=\(prefix)", "INSTALL_STRIP=-s"])
        for exe in ["appearanced", "appearancectl"] {
            let sections = try s.run("/usr/bin/readelf", ["-S", "-W", prefix + "/bin/" + exe])
            #expect(sections.status == 0, "\(sections)")
            #expect(!sections.out.contains(".symtab"), "\(exe) still has a symbol table")
            #expect(!sections.out.contains(".debug_info"), "\(exe) still has debug info")
            let original = try s.run("/usr/bin/readelf", ["-S", "-W", Bin.dir + "/" + exe])
            #expect(original.out.contains(".symtab"), "the build's \(exe) has symbols to strip")
            let r = try s.run(prefix + "/bin/" + exe, ["--version"])
            #expect(r.status == 0 && r.out.hasPrefix(exe + " "), "\(r)")
        }
    }

    @Test func installedUnitsVerifyWithoutWarnings() throws {
        let (s, prefix) = try installedTree()
        let units = prefix + "/lib/systemd/user"
        s.env["MANPATH"] = prefix + "/share/man"  // verify looks up every Documentation=man: page
        let r = try s.run("/usr/bin/systemd-analyze",
                          ["verify", "--user", units + "/appearanced.socket", units + "/appearanced.service"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err == "", "systemd-analyze verify warned:\n\(r.err)")
        #expect(r.out == "")
    }

    @Test func securityExposureIsAtMost2() throws {
        let (s, prefix) = try installedTree()
        let r = try s.run("/usr/bin/systemd-analyze",
                          ["security", "--offline=true", "--user", prefix + "/lib/systemd/user/appearanced.service"])
        let line = try #require(r.out.split(separator: "\n").first { $0.contains("Overall exposure level for appearanced.service:") },
                                "no exposure line in:\n\(r.out)\(r.err)")
        // "→ Overall exposure level for appearanced.service: 1.2 OK 🙂"
        let number = line.split(separator: ":", maxSplits: 1).last?.split(separator: " ").first.map(String.init)
        let exposure = try #require(number.flatMap(Double.init), "cannot read the exposure in \"\(line)\"")
        #expect(exposure <= 2.0, "\(r.out)")
        #expect(!r.err.contains("Unknown key"), "\(r.err)")
    }

    @Test(arguments: ["man1/appearanced.1", "man1/appearancectl.1", "man7/appearanced.7"])
    func manPageRendersWithoutWarnings(page: String) throws {
        let (s, prefix) = try installedTree()
        s.env["MANWIDTH"] = "80"
        let r = try s.run("/usr/bin/man", ["--warnings", "-l", prefix + "/share/man/" + page])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err == "", "man warned about \(page):\n\(r.err)")
        #expect(r.out.contains("NAME") && r.out.contains("SEE ALSO"), "\(r.out)")
    }
}
