import Foundation
import Testing
import TestSupport

/// Nothing runs that another user could have written: not an integration, not the library it sources (next to
/// it or in the share folder), not a file in a hook's folder; and `appearancectl integrations` runs no
/// integration the daemon would refuse (one check, shared: AppearancePosix's Trust).
@Suite struct IntegrationTrustTests {
    /// Where the world-writable part is.
    enum Culprit: String, CaseIterable, Sendable {
        case libraryNextToIt = "lib/common.sh next to it", libraryFolder = "the lib folder next to it"
        case sharedLibrary = "lib/common.sh in the share folder"
    }

    /// A user's own integration `rec` that finds and sources lib/common.sh as the shipped ones do; the library
    /// and the integration each note when they run. Returns the record and the culprit's path.
    static func setUp(_ s: Sandbox, _ culprit: Culprit) throws -> (record: String, culprit: String) {
        let record = s.root + "/rec.record"
        let dir = s.root + "/config/appearanced/integrations"
        try HookTests.script(s, dir + "/rec", """
            _lib=$(dirname -- "$0")/lib/common.sh
            [ -r "$_lib" ] || _lib=${XDG_DATA_HOME:-$HOME/.local/share}/appearanced/integrations/lib/common.sh
            . "$_lib"
            echo "$1" >> \(record)
            case "$1" in
            available) echo "found: the recorder" ;;
            describe) echo "what: records its runs"; echo "touches: nothing"; echo "settings: none" ;;
            esac
            """)
        let lib = (culprit == .sharedLibrary ? s.root + "/home/.local/share/appearanced/integrations" : dir) + "/lib"
        try HookTests.script(s, lib + "/common.sh", "echo sourced >> \(record)", executable: false)
        switch culprit {
        case .libraryNextToIt, .sharedLibrary:
            #expect(chmod(lib + "/common.sh", 0o666) == 0)
            return (record, lib + "/common.sh")
        case .libraryFolder:
            #expect(chmod(lib, 0o777) == 0)
            return (record, lib)
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: Culprit.allCases)
    func theDaemonRunsNoIntegrationWhoseLibraryOthersCouldWrite(culprit: Culprit) throws {
        let s = try Sandbox()
        let (record, path) = try Self.setUp(s, culprit)
        let d = try s.startDaemon()
        let r = try s.ctl("integrations", "enable", "rec")
        #expect(r.status == 65 && r.out.contains("rec: enabling failed; apply light at ") && r.out.contains(": \(path) is writable by every user; not run; left off"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: record), "\(HookTests.lines(record))")
        try d.waitForStderr("integration rec apply failed: \(path) is writable by every user; not run")
    }

    /// `appearancectl integrations` asks `available` and `describe` only of what the daemon would run; the
    /// list says why not, and once the mode is mended it asks again.
    @Test(.timeLimit(.minutes(1)), arguments: Culprit.allCases)
    func theListAsksNothingOfAnIntegrationWhoseLibraryOthersCouldWrite(culprit: Culprit) throws {
        let s = try Sandbox()
        let (record, path) = try Self.setUp(s, culprit)
        try s.startDaemon()
        let r = try s.ctl("integrations")
        #expect(r.status == 0 && r.out.contains("rec: off\n  program:  not run: \(path) is writable by every user\n"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: record), "\(HookTests.lines(record))")
        #expect(chmod(path, culprit == .libraryFolder ? 0o755 : 0o644) == 0)
        let mended = try s.ctl("integrations")
        #expect(mended.out.contains("rec: off\n  program:  found: the recorder\n  changes:  records its runs"), "\(mended)")
        #expect(Set(HookTests.lines(record)) == ["sourced", "available", "describe"], "\(HookTests.lines(record))")
    }

    /// The integration file itself, writable by every user: the list does not run it either.
    @Test(.timeLimit(.minutes(1))) func theListAsksNothingOfAWorldWritableIntegration() throws {
        let s = try Sandbox()
        let record = try IntegrationDaemonTests.recorder(s)
        let path = s.root + "/config/appearanced/integrations/rec"
        #expect(chmod(path, 0o777) == 0)
        try s.startDaemon()
        let r = try s.ctl("integrations", "--json")
        #expect(r.status == 0 && r.out.contains(#""available":null,"availability":"not run: \#(path) is writable by every user""#), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: record))
    }

    /// A hook sources a helper from a hidden folder next to it (not a hook itself): a helper anyone could
    /// write keeps the hook from running, and `status` names it.
    @Test(.timeLimit(.minutes(1))) func aHookWhoseHelperOthersCouldWriteIsNotRun() throws {
        let s = try Sandbox()
        let record = s.root + "/record"
        let dir = s.root + "/config/appearanced/hooks.d"
        try HookTests.script(s, dir + "/10-theme", ". \(dir)/.lib/helper.sh\necho hook >> \(record)")
        try HookTests.script(s, dir + "/.lib/helper.sh", "echo helper >> \(record)", executable: false)
        #expect(chmod(dir + "/.lib/helper.sh", 0o646) == 0)
        let d = try s.startDaemon()
        try waitUntil("the start-up run; stderr: \(d.stderr)") { try s.ctl("status").out.contains(" for light at") }
        let status = try s.ctl("status").out
        #expect(status.contains("failed: 10-theme: \(dir)/.lib/helper.sh is writable by every user"), "\(status)")
        #expect(HookTests.lines(record).isEmpty, "\(HookTests.lines(record))")
    }
}
