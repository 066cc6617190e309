import AppearancePosix
import Foundation
import Testing
import TestSupport

/// The one check of who could have written what runs (Trust), on real files: what it looks at besides the
/// program, and the library lookup it shares with the scripts. The daemon's and appearancectl's use of it are
/// in EndToEndTests (IntegrationTrustTests, HookTests).
@Suite struct TrustTests {
    /// A file of `mode` holding `text`.
    static func create(_ path: String, mode: Int, _ text: String.UTF8View = "".utf8) throws {
        try #require(FileManager.default.createFile(atPath: path, contents: Data(text), attributes: [.posixPermissions: mode]), "cannot create \(path)")
    }

    /// A folder with a program in it, both the user's and private.
    static func folder(_ t: TemporaryDirectory) throws -> (dir: String, program: String) {
        let dir = t.file("integrations")
        try FileManager.default.createDirectory(atPath: dir + "/lib", withIntermediateDirectories: true)
        let program = dir + "/kitty"
        try Self.create(program, mode: 0o755, "#!/bin/sh\n".utf8)
        try Self.create(dir + "/lib/common.sh", mode: 0o644)
        return (dir, program)
    }

    @Test func aFolderOfTheUsersOwnIsTrusted() throws {
        let t = try TemporaryDirectory()
        let (_, program) = try Self.folder(t)
        #expect(Trust.problem(program: program) == nil)
        #expect(Trust.integrationProblem(program, environment: { _ in nil }) == nil)
    }

    /// Anything at any depth of the folder counts, a hidden one too.
    @Test func aFileDeepInTheFolderThatAnyoneCanWriteIsNamed() throws {
        let t = try TemporaryDirectory()
        let (dir, program) = try Self.folder(t)
        let deep = dir + "/lib/.helpers/more.sh"
        try FileManager.default.createDirectory(atPath: dir + "/lib/.helpers", withIntermediateDirectories: true)
        try Self.create(deep, mode: 0o666)
        #expect(Trust.problem(program: program) == "\(deep) is writable by every user")
    }

    /// A symbolic link is judged by what it leads to and by the folder that holds that: a library linked from
    /// a folder anyone can write to could be swapped there.
    @Test func aLinkIntoAFolderAnyoneCanWriteIsNamed() throws {
        let t = try TemporaryDirectory()
        let (dir, program) = try Self.folder(t)
        let open = t.file("open")
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true)
        #expect(chmod(open, 0o777) == 0)
        try Self.create(open + "/extra.sh", mode: 0o644)
        try FileManager.default.createSymbolicLink(atPath: dir + "/lib/extra.sh", withDestinationPath: open + "/extra.sh")
        #expect(Trust.problem(program: program) == "\(open) is writable by every user")
    }

    /// A loop of links is looked through once; a folder holding more than the budget is not trusted.
    @Test func aLoopOfLinksIsWalkedOnceAndAHugeFolderIsRefused() throws {
        let t = try TemporaryDirectory()
        let (dir, program) = try Self.folder(t)
        try FileManager.default.createSymbolicLink(atPath: dir + "/lib/again", withDestinationPath: dir)
        #expect(Trust.problem(program: program) == nil)
        for i in 0...Trust.maxEntries {
            try Self.create(dir + "/lib/f\(i)", mode: 0o644)
        }
        #expect(Trust.problem(program: program) == "\(dir)/lib holds more than \(Trust.maxEntries) files and folders to check")
    }

    /// The library an integration sources: next to it, else the first of XDG_DATA_HOME's and XDG_DATA_DIRS'
    /// that holds a readable common.sh, as the scripts look; checked with the integration when it is elsewhere.
    @Test func theSharedLibraryIsFoundAsTheScriptsFindItAndChecked() throws {
        let t = try TemporaryDirectory()
        let (dir, program) = try Self.folder(t)
        let env = ["XDG_DATA_HOME": t.file("data"), "XDG_DATA_DIRS": t.file("sys1") + ":" + t.file("sys2"), "HOME": t.file("home")]
        #expect(Trust.integrationLibrary(of: program, environment: { env[$0] }) == dir + "/lib")
        try FileManager.default.removeItem(atPath: dir + "/lib")
        #expect(Trust.integrationLibrary(of: program, environment: { env[$0] }) == nil)
        let shared = t.file("sys2") + "/appearanced/integrations/lib"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        try Self.create(shared + "/common.sh", mode: 0o644)
        #expect(Trust.integrationLibrary(of: program, environment: { env[$0] }) == shared)
        // Unset or empty: the scripts' defaults.
        #expect(Trust.integrationLibrary(of: program, environment: { $0 == "HOME" ? t.file("home") : "" }) != shared)
        #expect(Trust.integrationProblem(program, environment: { env[$0] }) == nil)
        #expect(chmod(shared + "/common.sh", 0o646) == 0)
        #expect(Trust.integrationProblem(program, environment: { env[$0] }) == "\(shared)/common.sh is writable by every user")
    }
}
