import AppearanceCore
@testable import AppearanceDaemon
import AppearancePosix
import Foundation
import Testing

/// The status file and its spare: every write leaves the file saying the mode, the spare holding the other
/// one, and a spare that is not the file written for it is never swapped in.
@Suite struct ModeFileTests {
    private static func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    @Test func everyChangeLeavesTheFileSayingTheModeAndTheSpareTheOther() throws {
        let dir = TemporaryDirectory()
        var file = ModeFile(path: dir.path + "/mode")
        #expect(file.spare == dir.path + "/.mode-other")
        for mode: Mode in [.light, .dark, .light, .dark, .dark, .light, .light, .dark] {
            try file.write(mode)
            #expect(Self.read(file.path) == mode.rawValue + "\n")
            #expect(Self.read(file.spare) == mode.opposite.rawValue + "\n")
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            #expect((attributes[.posixPermissions] as? Int) == 0o644)
        }
        // Swapped, not written: the two inodes go back and forth.
        let inode = { (path: String) in try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int }
        let (a, b) = (try inode(file.path), try inode(file.spare))
        try file.write(.light)
        #expect(try inode(file.path) == b && inode(file.spare) == a)
        file.remove()
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(!FileManager.default.fileExists(atPath: file.spare))
    }

    /// Whatever happened to the spare or the file since they were written, the next write leaves the file
    /// saying the mode: a spare written to, removed, or replaced by a link is not swapped in; a removed mode
    /// file is written again.
    @Test func aSpareThatIsNotTheOneWrittenIsNeverSwappedIn() throws {
        let dir = TemporaryDirectory()
        var file = ModeFile(path: dir.path + "/mode")
        try file.write(.dark)
        let elsewhere = dir.file("notes", "mine\n")
        let tampering: [(String, () throws -> Void)] = [
            ("written to", { try Data("dark\n".utf8).write(to: URL(fileURLWithPath: file.spare)) }),
            ("removed", { try FileManager.default.removeItem(atPath: file.spare) }),
            ("a link", {
                try FileManager.default.removeItem(atPath: file.spare)
                try FileManager.default.createSymbolicLink(atPath: file.spare, withDestinationPath: elsewhere)
            }),
            ("the mode file removed", { try FileManager.default.removeItem(atPath: file.path) }),
        ]
        var mode = Mode.dark
        for (what, tamper) in tampering {
            try tamper()
            mode = mode.opposite
            try file.write(mode)
            #expect(Self.read(file.path) == mode.rawValue + "\n", "spare \(what)")
            #expect(Self.read(file.spare) == mode.opposite.rawValue + "\n", "spare \(what)")
            #expect(Self.read(elsewhere) == "mine\n", "spare \(what)")
        }
        file.remove()
    }

    /// A file system that cannot exchange two names (EINVAL, as before Linux 3.15 or on some file systems):
    /// that change is written in full, and every one after it, without trying the swap again.
    @Test func aFileSystemThatCannotExchangeGetsTheFullWriteForGood() throws {
        let dir = TemporaryDirectory()
        var file = ModeFile(path: dir.path + "/mode")
        final class Count: @unchecked Sendable { var n = 0 }
        let tries = Count()
        file.exchange = { _, _, _ throws(Errno) in
            tries.n += 1
            throw Errno(Errno.invalid, "renameat2")
        }
        var mode = Mode.dark
        for _ in 0..<4 {
            try file.write(mode)
            #expect(Self.read(file.path) == mode.rawValue + "\n")
            mode = mode.opposite
        }
        #expect(tries.n == 1)
        file.remove()
        #expect(!FileManager.default.fileExists(atPath: file.path) && !FileManager.default.fileExists(atPath: file.spare))
    }

    /// The directory removed and made again (a new runtime directory): the files are written in the new one,
    /// and the spare is swapped there again from the change after.
    @Test func aDirectoryMadeAgainGetsTheFilesAndTheSpareAgain() throws {
        let root = TemporaryDirectory()
        let dir = root.path + "/appearanced"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        var file = ModeFile(path: dir + "/mode")
        try file.write(.dark)
        try file.write(.light)
        try FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        let inode = { (path: String) in try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int }
        var mode = Mode.light
        for _ in 0..<3 {
            mode = mode.opposite
            try file.write(mode)
            #expect(Self.read(file.path) == mode.rawValue + "\n")
        }
        // Swapped again: the two names trade their files.
        let (a, b) = (try inode(file.path), try inode(file.spare))
        try file.write(mode.opposite)
        #expect(Self.read(file.path) == mode.opposite.rawValue + "\n")
        #expect(try inode(file.path) == b && inode(file.spare) == a)
        file.remove()
    }
}
