import Foundation
import Testing

/// What building the Arch and RPM packages needs (`make deps-test` installs them).
private let distroPackageTools = ["/usr/bin/makepkg", "/usr/bin/pacman", "/usr/bin/bsdtar", "/usr/bin/fakeroot",
                                  "/usr/bin/rpmbuild", "/usr/bin/rpmspec", "/usr/bin/rpmlint", "/usr/bin/file"]

/// `make arch` and `make rpm` as a user runs them, and their packages read as a user reads them: `bsdtar -tvf` and
/// `rpm -qp`, each extracted with bsdtar and held against `make install-files DESTDIR=… PREFIX=/usr` (the install
/// step of `make install`): the same files, bytes and modes, the distribution's own additions and nothing else,
/// all owned by root, the binaries running and reporting the package's version; rpmlint finds no error.
/// Like PackageTests it runs only in `make test`'s serial run (APPEARANCED_PACKAGE_TEST=1): it builds the release
/// binaries in .build-deb (reused when PackageTests built them first), writes out/ in the checkout, and as root
/// `make arch` adds (and removes) a system user for makepkg.
@Suite(
    .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["APPEARANCED_PACKAGE_TEST"] == "1",
             "builds the release binaries and, as root, adds a build user, so it runs only in a serial run: `make test` sets APPEARANCED_PACKAGE_TEST=1"),
    .enabled(if: distroPackageTools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
             "needs makepkg, pacman, bsdtar, fakeroot, rpmbuild, rpmlint and file (`make deps-test` installs them)")
)
struct DistroPackageTests {
    static let version = packageVersionOfTheBinaries()

    /// appearancectl's version, as the packages must carry it (the code's packageVersion).
    static func packageVersionOfTheBinaries() -> String {
        let text = (try? String(contentsOfFile: Repo.root + "/Sources/AppearanceProtocol/Messages.swift", encoding: .utf8)) ?? ""
        let match = text.firstMatch(of: /public let packageVersion = "([^"]+)"/)
        return match.map { String($0.1) } ?? "unknown"
    }

    func sandbox() throws -> Sandbox {
        let s = try Sandbox()
        s.env["PATH"] = (s.env["PATH"] ?? "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        return s
    }

    func run(_ s: Sandbox, _ exe: String, _ args: [String], timeout: Double = 120) throws -> String {
        let r = try s.run(exe, args, timeout: timeout)
        try #require(r.status == 0, "\(exe) \(args.joined(separator: " ")) failed (\(r.status)):\n\(r.out)\(r.err)")
        return r.out
    }

    /// `make TARGET VAR=dir` in the checkout; returns make's output and the one package file it wrote in dir.
    func make(_ s: Sandbox, _ target: String, _ dirVariable: String, suffix: String) throws -> (output: String, package: String) {
        let dir = s.root + "/" + target
        let make = try Child("/usr/bin/make", ["-C", Repo.root, "--no-print-directory", target, "\(dirVariable)=\(dir)"], env: s.env)
        let status = try make.waitForEnd(timeout: 900)  // the release build when nothing built it yet: 1-2 minutes
        try #require(status == 0, "make \(target) failed (\(status)):\n\(make.stdout)\(make.stderr)")
        let built = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(suffix) }
        try #require(built.count == 1, "expected one *\(suffix) in \(dir), found \(built)")
        return (make.stdout + make.stderr, dir + "/" + built[0])
    }

    /// Regular files and symlinks under `dir`, relative to it, sorted.
    func files(under dir: String) -> [String] {
        guard let e = FileManager.default.enumerator(atPath: dir) else { return [] }
        var found: [String] = []
        while let path = e.nextObject() as? String {
            if e.fileAttributes?[.type] as? FileAttributeType != .typeDirectory { found.append(path) }
        }
        return found.sorted()
    }

    /// What `make install PREFIX=/usr` installs, in a tree of its own (the binaries are the tests' own build).
    func installTree(_ s: Sandbox) throws -> (root: String, files: [String]) {
        let dest = s.root + "/install"
        _ = try run(s, "/usr/bin/make", ["-C", Repo.root, "--no-print-directory", "install-files", "BIN_DIR=\(Bin.dir)",
                                         "DESTDIR=\(dest)", "PREFIX=/usr"])
        return (dest, files(under: dest))
    }

    /// Where a package keeps an installed file: man pages gzipped, as both distributions ship them.
    static func packaged(_ path: String) -> String {
        path.hasPrefix("usr/share/man/") ? path + ".gz" : path
    }

    func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    /// Every installed file in the extracted package: same mode, same bytes (man pages once gunzipped); the two
    /// binaries (stripped by the package build) run and report the package's version.
    func compareContents(_ s: Sandbox, install: (root: String, files: [String]), extracted: String, package: String) throws {
        for f in install.files {
            let mine = extracted + "/" + Self.packaged(f), theirs = install.root + "/" + f
            let (modeMine, modeTheirs) = (try mode(mine), try mode(theirs))
            #expect(modeMine == modeTheirs, "\(package): \(Self.packaged(f)) has mode \(String(modeMine, radix: 8)), make install's \(String(modeTheirs, radix: 8))")
            if f.hasPrefix("usr/bin/") {
                let exe = (f as NSString).lastPathComponent
                let version = try run(s, mine, ["--version"])
                #expect(version == "\(exe) \(Self.version)\n", "\(package): \(f) --version: \(version)")
            } else if f.hasPrefix("usr/share/man/") {
                let text = try run(s, "/usr/bin/gzip", ["-dc", mine])
                #expect(text == (try String(contentsOfFile: theirs, encoding: .utf8)), "\(package): \(f).gz differs from make install's")
            } else {
                #expect(FileManager.default.contentsEqual(atPath: mine, andPath: theirs), "\(package): \(f) differs from make install's")
            }
        }
        let license = try String(contentsOfFile: extracted + "/usr/share/licenses/appearanced/LICENSE", encoding: .utf8)
        #expect(license == (try String(contentsOfFile: Repo.root + "/LICENSE", encoding: .utf8)), "\(package): LICENSE differs")
    }

    @Test(.timeLimit(.minutes(20)))
    func archPackageHoldsWhatMakeInstallInstalls() throws {
        let s = try sandbox()
        let install = try installTree(s)
        let (output, pkg) = try make(s, "arch", "ARCH_DIR", suffix: ".pkg.tar.zst")
        let machine = try run(s, "/usr/bin/uname", ["-m"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(pkg.hasSuffix("/appearanced-\(Self.version)-1-\(machine).pkg.tar.zst"), "\(pkg)")

        // bsdtar -tvf: "-rw-r--r--  0 0      0         522 Nov 27 07:56 usr/lib/systemd/user/appearanced.socket"
        let listing = try run(s, "/usr/bin/bsdtar", ["--numeric-owner", "-tvf", pkg]).split(separator: "\n")
        let entries = listing.map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        let notRoot = entries.filter { $0.count < 9 || $0[2] != "0" || $0[3] != "0" }
        #expect(notRoot.isEmpty, "entries not owned by root:\n\(notRoot)")
        let names = entries.filter { $0.first?.first != "d" }.compactMap { $0.last.map(String.init) }
        #expect(names.filter { $0.hasPrefix(".") }.sorted() == [".BUILDINFO", ".MTREE", ".PKGINFO"])
        let expected = (install.files.map(Self.packaged) + ["usr/share/licenses/appearanced/LICENSE"]).sorted()
        #expect(names.filter { !$0.hasPrefix(".") }.sorted() == expected, "bsdtar -tvf \(pkg):\n\(listing.joined(separator: "\n"))")

        // The package's metadata, as pacman reads it.
        let info = try run(s, "/usr/bin/bsdtar", ["-xOf", pkg, ".PKGINFO"])
        for line in ["pkgname = appearanced", "pkgver = \(Self.version)-1", "license = Apache-2.0", "depend = dbus"] {
            #expect(info.contains("\n\(line)\n"), ".PKGINFO has no '\(line)':\n\(info)")
        }

        let extracted = s.root + "/arch-root"
        try FileManager.default.createDirectory(atPath: extracted, withIntermediateDirectories: true)
        _ = try run(s, "/usr/bin/bsdtar", ["-xf", pkg, "-C", extracted])
        try compareContents(s, install: install, extracted: extracted, package: "the Arch package")

        // As root, makepkg ran as a user made for this build, and that user is gone (its group too).
        if geteuid() == 0 {
            let user = try #require(output.firstMatch(of: /building as (appearanced-build-[0-9]+),/).map { String($0.1) },
                                    "make arch as root does not say which user built:\n\(output)")
            for db in ["/etc/passwd", "/etc/group"] {
                let entries = try String(contentsOfFile: db, encoding: .utf8).split(separator: "\n")
                #expect(!entries.contains { $0.hasPrefix(user + ":") }, "\(user) is left in \(db)")
            }
        }
    }

    @Test(.timeLimit(.minutes(20)))
    func rpmHoldsWhatMakeInstallInstallsAndPassesRpmlint() throws {
        let s = try sandbox()
        let install = try installTree(s)
        let (output, rpm) = try make(s, "rpm", "RPM_DIR", suffix: ".rpm")
        let machine = try run(s, "/usr/bin/uname", ["-m"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(rpm.hasSuffix("/appearanced-\(Self.version)-1.\(machine).rpm"), "\(rpm)")
        // make rpm ends with rpmlint (Fedora's settings), which fails the target on any error.
        #expect(output.contains(" 0 errors, "), "rpmlint:\n\(output)")

        let header = try run(s, "/usr/bin/rpm", ["-qp", "--qf", "%{NAME} %{VERSION} %{LICENSE}\n", rpm])
        #expect(header == "appearanced \(Self.version) Apache-2.0\n", "\(header)")

        // rpm -qp: "-rw-r--r-- root:root /usr/lib/systemd/user/appearanced.socket"
        let listing = try run(s, "/usr/bin/rpm", ["-qp", "--qf", "[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILENAMES}\n]", rpm])
            .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(listing.allSatisfy { $0.count == 3 && $0[1] == "root:root" }, "\(listing)")
        let files = listing.filter { !$0[0].hasPrefix("d") }.map { String($0[2].dropFirst()) }
        // rpmbuild adds a link to each ELF file by its build ID (as on Fedora).
        let buildIDLinks = files.filter { $0.hasPrefix("usr/lib/.build-id/") }
        #expect(buildIDLinks.count == 2, "\(buildIDLinks)")
        let expected = (install.files.map(Self.packaged) + ["usr/share/licenses/appearanced/LICENSE"]).sorted()
        #expect(files.filter { !$0.hasPrefix("usr/lib/.build-id/") }.sorted() == expected, "rpm -qp \(rpm):\n\(listing)")
        // It owns its own folders only, never one of the system's (/usr/bin, /usr/share/man/man1, ...).
        let dirs = listing.filter { $0[0].hasPrefix("d") }.map { $0[2] }.filter { !$0.hasPrefix("/usr/lib/.build-id") }.sorted()
        #expect(dirs == ["/usr/share/appearanced", "/usr/share/appearanced/integrations", "/usr/share/appearanced/integrations/lib",
                         "/usr/share/doc/appearanced", "/usr/share/licenses/appearanced"], "\(dirs)")

        let extracted = s.root + "/rpm-root"
        try FileManager.default.createDirectory(atPath: extracted, withIntermediateDirectories: true)
        _ = try run(s, "/usr/bin/bsdtar", ["-xf", rpm, "-C", extracted])
        try compareContents(s, install: install, extracted: extracted, package: "the RPM")
        for link in buildIDLinks {
            let target = try FileManager.default.destinationOfSymbolicLink(atPath: extracted + "/" + link)
            #expect(["../../../../usr/bin/appearanced", "../../../../usr/bin/appearancectl"].contains(target), "\(link) -> \(target)")
        }
    }
}
