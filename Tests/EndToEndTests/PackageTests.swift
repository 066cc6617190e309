import Foundation
import Testing

/// What building and checking the package needs (`make deps-test` installs them).
private let packageTools = ["/usr/bin/dpkg-deb", "/usr/bin/dpkg-buildpackage", "/usr/bin/dh", "/usr/bin/lintian"]

/// The Debian package as a user gets it: `make deb-build` (dpkg-buildpackage over debian/), lintian, then
/// `dpkg -i` into the real system, the files and the per-user socket in place, the binaries running, and
/// `dpkg --purge` leaving nothing. Unlike InstallTests it installs into /, where other tests could see it
/// (its D-Bus service file, its .portal file), so it runs only where no other test runs beside it: `make test`,
/// whose run is serial, enables it (APPEARANCED_PACKAGE_TEST=1); anywhere else it is skipped.
@Suite(
    .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["APPEARANCED_PACKAGE_TEST"] == "1",
             "installs a package system-wide, so it runs only in a serial run: `make test` sets APPEARANCED_PACKAGE_TEST=1"),
    .enabled(if: geteuid() == 0, "dpkg -i and dpkg --purge need root"),
    .enabled(if: packageTools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
             "needs dpkg-deb, dpkg-buildpackage, debhelper and lintian (`make deps-test` installs them)")
)
struct PackageTests {
    static let package = "appearanced"

    /// What the package holds: exactly what `make install PREFIX=/usr` installs (InstallTests.expectedFiles),
    /// with the man pages compressed, plus the changelog and copyright every Debian package carries.
    static let expectedFiles = (InstallTests.expectedFiles.map { $0.hasPrefix("usr/share/man/") ? $0 + ".gz" : $0 }
        + ["usr/share/doc/appearanced/changelog.gz", "usr/share/doc/appearanced/copyright",
           "usr/share/lintian/overrides/appearanced"]).sorted()  // debian/appearanced.lintian-overrides

    /// The per-user enabling that deb-systemd-helper does for the socket (sockets.target.wants).
    static let socketLink = "/etc/systemd/user/sockets.target.wants/appearanced.socket"

    /// The sandbox with /usr/sbin on PATH (dpkg looks for ldconfig and start-stop-daemon there).
    func sandbox() throws -> Sandbox {
        let s = try Sandbox()
        s.env["PATH"] = (s.env["PATH"] ?? "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        s.env["DEBIAN_FRONTEND"] = "noninteractive"
        return s
    }

    /// `make deb-build` into the sandbox; returns the path of the .deb (the one that is not -dbgsym).
    func build(_ s: Sandbox) throws -> String {
        let out = s.root + "/deb"
        let make = try Child("/usr/bin/make", ["-C", InstallTests.root, "--no-print-directory", "deb-build", "DEB_DIR=\(out)"],
                             env: s.env)
        let status = try make.waitForEnd(timeout: 900)  // a release build: 1-2 minutes on two cores
        try #require(status == 0, "make deb-build failed (\(status)):\n\(make.stdout)\(make.stderr)")
        let debs = try FileManager.default.contentsOfDirectory(atPath: out)
            .filter { $0.hasPrefix(Self.package + "_") && $0.hasSuffix(".deb") }
        try #require(debs.count == 1, "expected one \(Self.package)_*.deb in \(out), found \(debs)")
        return out + "/" + debs[0]
    }

    /// Whether anything (a dangling symlink too) is at `path`.
    func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Paths under `dir` whose name mentions appearanced (deb-systemd-helper's links and state files).
    func mentions(under dir: String) -> [String] {
        guard let e = FileManager.default.enumerator(atPath: dir) else { return [] }
        return e.compactMap { $0 as? String }.filter { $0.contains(Self.package) }.map { dir + "/" + $0 }.sorted()
    }

    func purge(_ s: Sandbox) throws -> (status: Int32, out: String, err: String) {
        try s.run("/usr/bin/dpkg", ["--purge", Self.package])
    }

    @Test func buildLintInstallRunAndPurge() throws {
        let s = try sandbox()
        // A previous run that died half-way may have left it installed.
        let before = try purge(s)
        try #require(before.status == 0, "dpkg --purge before the test failed: \(before.err)")
        try #require(!exists("/usr/bin/appearancectl"), "/usr/bin/appearancectl exists without the package: remove it first")
        defer { _ = try? purge(s) }  // whatever fails below

        let deb = try build(s)

        // The package: its name, the version appearancectl reports, and exactly the install list.
        let fields = try s.run("/usr/bin/dpkg-deb", ["--field", deb, "Package", "Version"])
        try #require(fields.status == 0, "\(fields.err)")
        let version = try #require(fields.out.split(separator: "\n").first { $0.hasPrefix("Version: ") }
            .map { String($0.dropFirst("Version: ".count)) }, "no Version in:\n\(fields.out)")
        #expect(fields.out.contains("Package: \(Self.package)\n"), "\(fields.out)")
        let contents = try s.run("/usr/bin/dpkg-deb", ["--contents", deb])
        try #require(contents.status == 0, "\(contents.err)")
        // "-rw-r--r-- root/root  522 2026-11-24 05:59 ./usr/lib/systemd/user/appearanced.socket"
        let files = contents.out.split(separator: "\n").filter { !$0.hasPrefix("d") }
            .compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).last }
            .map { String($0.dropFirst(2)) }.sorted()
        #expect(files == Self.expectedFiles, "dpkg-deb --contents:\n\(contents.out)")

        // lintian: no error and no warning (info and pedantic tags are not asked for).
        let lint = try s.run("/usr/bin/lintian", ["--fail-on", "error,warning", deb])
        #expect(lint.status == 0, "lintian failed:\n\(lint.out)\(lint.err)")
        let tags = lint.out.split(separator: "\n").filter { $0.hasPrefix("E: ") || $0.hasPrefix("W: ") }
        #expect(tags.isEmpty, "lintian:\n\(lint.out)")

        // Installed for real.
        let install = try s.run("/usr/bin/dpkg", ["--install", deb])
        try #require(install.status == 0, "dpkg -i failed:\n\(install.out)\(install.err)")
        let status = try s.run("/usr/bin/dpkg-query", ["--show", "--showformat=${Status} ${Version}", Self.package])
        #expect(status.out == "install ok installed \(version)", "\(status)")
        for f in Self.expectedFiles {
            #expect(FileManager.default.isReadableFile(atPath: "/" + f), "/\(f) is missing after dpkg -i")
        }
        let service = try String(contentsOfFile: "/usr/lib/systemd/user/appearanced.service", encoding: .utf8)
        #expect(service.contains("\nExecStart=/usr/bin/appearanced\n"), "\(service)")

        // Enabled for every user: logging in starts the socket. Only the socket: the service follows it.
        let link = try? FileManager.default.destinationOfSymbolicLink(atPath: Self.socketLink)
        #expect(link == "/usr/lib/systemd/user/appearanced.socket", "\(Self.socketLink) -> \(link ?? "nothing")")
        #expect(!exists("/etc/systemd/user/graphical-session.target.wants/appearanced.service"))
        // systemd's own reading of it (offline: these machines run no user manager).
        for (unit, state) in [("appearanced.socket", "enabled"), ("appearanced.service", "disabled")] {
            let r = try s.run("/usr/bin/systemctl", ["--global", "is-enabled", unit])
            #expect(r.out == state + "\n", "systemctl --global is-enabled \(unit): \(r)")
        }

        let ctl = try s.run("/usr/bin/appearancectl", ["--version"])
        #expect(ctl.status == 0 && ctl.out == "appearancectl \(version)\n", "\(ctl)")
        let daemon = try s.run("/usr/bin/appearanced", ["--version"])
        #expect(daemon.status == 0 && daemon.out == "appearanced \(version)\n", "\(daemon)")

        // Purged: none of its files, links or state is left.
        let purged = try purge(s)
        #expect(purged.status == 0, "dpkg --purge failed:\n\(purged.out)\(purged.err)")
        let gone = try s.run("/usr/bin/dpkg-query", ["--show", "--showformat=${Status}", Self.package])
        #expect(gone.status != 0 || gone.out.hasSuffix("not-installed"), "\(gone)")
        let left = (Self.expectedFiles.map { "/" + $0 } + [Self.socketLink, "/usr/share/doc/appearanced"]).filter(exists)
            + mentions(under: "/etc/systemd/user") + mentions(under: "/var/lib/systemd/deb-systemd-user-helper-enabled")
        #expect(left.isEmpty, "left after dpkg --purge: \(left)")
    }
}
