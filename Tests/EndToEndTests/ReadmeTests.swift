import AppearanceProtocol
import Foundation
import Testing

/// README.md's `appearancectl status` sample against a real daemon: the same lines in the same order, and the
/// protocol the daemon reports. The values are a user's (a GNOME session, a palette), so only the labels and
/// the protocol number are compared.
@Suite struct ReadmeTests {
    /// The lines of README.md's sample that follow `$ appearancectl status`, without their indentation.
    static func statusSample() throws -> [String] {
        let readme = try String(contentsOfFile: Repo.root + "/README.md", encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "$ appearancectl status" },
                                 "README.md has no `$ appearancectl status` sample")
        return lines[(start + 1)...].prefix { $0.hasPrefix("    ") && !$0.hasPrefix("    $") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// "mode:        dark (…)" → "mode".
    static func labels(_ lines: [String]) -> [String] {
        lines.map { line in line.firstIndex(of: ":").map { String(line[..<$0]) } ?? line }
    }

    /// The number after "protocol " on the `daemon:` line.
    static func protocolNumber(_ lines: [String]) -> Int? {
        lines.first { $0.hasPrefix("daemon:") }?.firstMatch(of: /protocol ([0-9]+)/).flatMap { Int($0.1) }
    }

    @Test func theStatusSampleHasTheRealLinesAndProtocol() throws {
        let sample = try Self.statusSample()
        #expect(sample.count > 1, "README.md's status sample is empty")

        let s = try Sandbox.started()
        let r = try s.ctl("status")
        #expect(r.status == 0, "\(r.err)")
        let real = r.out.split(separator: "\n").map(String.init)

        #expect(Self.labels(sample) == Self.labels(real), "README.md's status sample:\n\(sample.joined(separator: "\n"))\nappearancectl status:\n\(r.out)")
        let realProtocol = try #require(Self.protocolNumber(real), "no protocol in: \(r.out)")
        #expect(realProtocol == protocolVersion)
        #expect(Self.protocolNumber(sample) == realProtocol, "README.md's status sample names another protocol than \(realProtocol)")
    }
}

/// appearanced(1)'s OPTIONS section documents exactly the options appearanced takes (AppearanceCLI's
/// DaemonOptions table, as `appearanced --help` prints them).
@Suite struct DaemonManPageTests {
    @Test func theManPageListsEveryOptionOfTheHelp() throws {
        let page = try String(contentsOfFile: Repo.root + "/man/appearanced.1.scd", encoding: .utf8)
        let section = try #require(page.components(separatedBy: "# OPTIONS").dropFirst().first?.components(separatedBy: "\n# ").first)
        let documented = Set(section.matches(of: /\*(-{1,2}[a-z-]+)\*/).map { String($0.1) })
        let help = try Sandbox().run(Bin.daemon, ["--help"]).out
        let offered = Set(help.matches(of: /(?m)^  (?:(-[a-z]), )?(--[a-z-]+)/).flatMap { m in [m.1.map(String.init), String(m.2)].compactMap { $0 } })
        #expect(!offered.isEmpty)
        #expect(documented == offered, "man page: \(documented.sorted()); --help: \(offered.sorted())")
    }
}
