import Foundation
import Testing

/// The project's license: LICENSE is the Apache License 2.0 as Debian ships it, and debian/copyright (DEP-5)
/// names Apache-2.0 for the project's files and points at /usr/share/common-licenses/Apache-2.0, as lintian
/// expects (the full text is not repeated there).
@Suite struct LicenseTests {
    static let commonLicense = "/usr/share/common-licenses/Apache-2.0"

    @Test func theLicenseFileIsApache2() throws {
        let license = try String(contentsOfFile: Repo.root + "/LICENSE", encoding: .utf8)
        #expect(license.contains("Apache License"))
        #expect(license.contains("Version 2.0, January 2004"))
        #expect(license.contains("END OF TERMS AND CONDITIONS"))
        if let debian = try? String(contentsOfFile: Self.commonLicense, encoding: .utf8) {
            #expect(license == debian, "LICENSE differs from \(Self.commonLicense)")
        }
    }

    @Test func debianCopyrightNamesApache2AndTheCommonLicense() throws {
        let text = try String(contentsOfFile: Repo.root + "/debian/copyright", encoding: .utf8)
        let paragraphs = text.components(separatedBy: "\n\n")
        let files = try #require(paragraphs.first { $0.hasPrefix("Files: *") }, "no `Files: *` paragraph")
        #expect(files.contains("\nLicense: Apache-2.0"), "Files: * is not under Apache-2.0:\n\(files)")
        let standalone = try #require(paragraphs.first { $0.hasPrefix("License: Apache-2.0") },
                                      "no stand-alone `License: Apache-2.0` paragraph")
        #expect(standalone.contains(Self.commonLicense))
        #expect(!text.contains("unspecified") && !text.contains("all rights are reserved"))
    }

    /// lintian on a package holding only the copyright file: no tag about it.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/lintian")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-deb"), "needs lintian and dpkg-deb"),
          .timeLimit(.minutes(2)))
    func lintianFindsNothingInTheCopyright() throws {
        let s = try Sandbox()
        let pkg = s.root + "/pkg"
        let doc = pkg + "/usr/share/doc/appearanced"
        try FileManager.default.createDirectory(atPath: doc, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: pkg + "/DEBIAN", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Repo.root + "/debian/copyright", toPath: doc + "/copyright")
        try """
            Package: appearanced
            Version: 0.0.1
            Architecture: all
            Maintainer: Test <test@example.org>
            Description: license check
             only the copyright file.

            """.write(toFile: pkg + "/DEBIAN/control", atomically: true, encoding: .utf8)
        let build = try s.run("/usr/bin/dpkg-deb", ["--root-owner-group", "--build", pkg, s.root + "/a.deb"])
        #expect(build.status == 0, "\(build.err)")
        let lint = try s.run("/usr/bin/lintian", ["--no-tag-display-limit", s.root + "/a.deb"])
        let tags = lint.out.split(separator: "\n").filter { $0.contains("copyright") || $0.contains("license") }
        #expect(tags.isEmpty, "lintian:\n\(lint.out)")
    }
}
