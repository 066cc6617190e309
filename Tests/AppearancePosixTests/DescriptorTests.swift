import AppearancePosix
import Foundation
import Testing
import TestSupport

/// The layer on real descriptors, sockets, files and processes: what each call does and how it fails.
@Suite struct DescriptorTests {
    @Test func writeAllWaitsForRoomAndReadReturnsNilWhenNothingIsThere() throws {
        let (a, b) = try Descriptor.socketPair()
        a.setNonBlocking()
        b.setNonBlocking()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        #expect(try b.read(into: buffer) == nil)  // EAGAIN, not an error
        // More than a socket buffer holds: writeAll has to wait for the reader, which runs on another thread.
        let payload = [UInt8](repeating: 0x61, count: 4 << 20)
        // A thread of its own, not a task: the cooperative pool's few threads may all be busy with other tests.
        let total = ReaderTotal()
        let reader = Thread {
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
            defer { chunk.deallocate(); total.done.signal() }
            while total.value < payload.count {
                let read: Int?
                do { read = try b.read(into: chunk) } catch { return }
                if let n = read {
                    if n == 0 { return }
                    total.value += n
                } else if (try? b.wait(.readable, until: Deadline(seconds: Double(20 * timeoutScale)))) == nil {
                    return
                }
            }
        }
        reader.start()
        try a.writeAll(payload, until: Deadline(seconds: Double(20 * timeoutScale)))
        #expect(total.done.wait(timeout: .now() + .seconds(20 * timeoutScale)) == .success)
        #expect(total.value == payload.count)
    }

    /// What the reader thread counted; read after `done`.
    final class ReaderTotal: @unchecked Sendable {
        var value = 0
        let done = DispatchSemaphore(value: 0)
    }

    @Test func writeAllGivesUpAtItsDeadlineWhenNobodyReads() throws {
        let (a, _b) = try Descriptor.socketPair()
        a.setNonBlocking()
        #expect(throws: Errno(Errno.timedOut, "send")) {
            try a.writeAll([UInt8](repeating: 0, count: 16 << 20), until: Deadline(seconds: 0.05))
        }
        _ = _b
    }

    @Test func aClosedPeerIsAnErrorNotASignal() throws {
        let (a, b) = try Descriptor.socketPair()
        b.close()
        #expect(b.isOpen == false)
        b.close()  // idempotent
        #expect(a.isClosedByPeer)
        let error = #expect(throws: Errno.self) { try a.writeAll(Array("x".utf8)) }
        #expect(error?.call == "send")
    }

    @Test func waitReturnsFalseAtTheDeadlineAndFirstReadyNamesTheReadyOne() throws {
        let (a, b) = try Descriptor.socketPair()
        let (c, d) = try Descriptor.socketPair()
        #expect(try a.wait(.readable, until: Deadline(seconds: 0.01)) == false)
        try d.writeAll("!")
        #expect(try Descriptor.firstReady([a, c], .readable, until: Deadline(seconds: 5)) == 1)
        _ = (b, d)
    }

    @Test func pipeEndsAreCloseOnExecAndCarryData() throws {
        let (r, w) = try Descriptor.pipe()
        try w.writeAll("hello\n")
        w.close()
        #expect(try r.readAll() == Array("hello\n".utf8))
    }
}

@Suite struct SocketTests {
    @Test func bindListenAcceptConnectAndPeerCredentials() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("s")
        let listener = try Descriptor.unixStreamSocket(nonBlocking: true, name: path)
        try listener.bind(to: path)
        try listener.listen()
        #expect(listener.boundPath == path)
        #expect(listener.isUnixStreamSocket)
        #expect(try listener.accept(nonBlocking: true) == nil)  // nobody waiting: nil, not an error

        let client = try Descriptor.unixStreamSocket(name: path)
        try client.connect(to: path)
        let server = try #require(try listener.accept(nonBlocking: true))
        let peer = try #require(server.peerCredentials)
        #expect(peer.uid == Posix.userID)
        #expect(peer.pid == Posix.processID)
        try client.writeAll("ping\n")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 1)
        defer { buffer.deallocate() }
        _ = try server.wait(.readable, until: Deadline(seconds: 5))
        let n = try #require(try server.read(into: buffer))
        #expect(Array(buffer[0..<n]) == Array("ping\n".utf8))
    }

    @Test func connectErrorsNameThePath() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("nobody-here")
        let s = try Descriptor.unixStreamSocket(name: path)
        let error = #expect(throws: Errno.self) { try s.connect(to: path) }
        #expect(error?.code == Errno.noSuchFile)
        #expect(error?.description == "connect \(path): No such file or directory")
        let long = "/" + String(repeating: "x", count: 200)
        #expect(throws: Errno(Errno.nameTooLong, "socket path", path: long)) { try s.connect(to: long) }
    }

    @Test func datagramsReachANotifySocket() throws {
        let dir = try TemporaryDirectory()
        #expect(Descriptor.sendDatagram("READY=1", to: dir.file("none")) == false)
    }
}

@Suite struct FileSystemTests {
    @Test func writeAtomicallyThenReadAllWithExactPermissions() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("a/b/file")
        try FileSystem.makeDirectories(FileSystem.directory(of: path))
        try FileSystem.writeAtomically(path, Array("data\n".utf8), permissions: 0o644)
        #expect(try FileSystem.readAll(path) == Array("data\n".utf8))
        let st = try FileSystem.status(path)
        #expect(st.kind == .regular && st.permissions == 0o644 && st.owner == Posix.userID)
        #expect(FileSystem.names(in: FileSystem.directory(of: path)) == ["file"])  // no temp file left
    }

    @Test func readAllRefusesDirectoriesFifosAndLargeFilesNamingThePath() throws {
        let dir = try TemporaryDirectory()
        #expect(throws: Errno(Errno.isDirectory, "open", path: dir.path)) { try FileSystem.readAll(dir.path) }
        let big = dir.file("big")
        try FileSystem.writeAtomically(big, [UInt8](repeating: 1, count: 100))
        #expect(throws: Errno(Errno.tooBig, "read", path: big)) { try FileSystem.readAll(big, limit: 10) }
        let missing = dir.file("missing")
        let error = #expect(throws: Errno.self) { try FileSystem.readAll(missing) }
        #expect(error?.description == "open \(missing): No such file or directory")
    }

    @Test func leftoversAreRemovedAndBadFilesMovedAside() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("state.json")
        try FileSystem.writeAtomically(path + ".tmp-12345", [1])
        try FileSystem.writeAtomically(path + ".tmp-other", [1])
        #expect(FileSystem.removeLeftovers(of: path) == 1)
        try FileSystem.writeAtomically(path, [1])
        #expect(try FileSystem.moveAside(path) == path + ".corrupt")
        try FileSystem.writeAtomically(path, [2])
        #expect(try FileSystem.moveAside(path) == path + ".corrupt.1")
        let error = #expect(throws: Errno.self) { try FileSystem.rename(path, to: path + ".x") }
        #expect(error?.description == "rename \(path) to \(path).x: No such file or directory")
    }

    @Test func aFileLockIsExclusive() throws {
        let dir = try TemporaryDirectory()
        let a = try Descriptor.open(dir.file("lock"), [.readWrite, .create])
        let b = try Descriptor.open(dir.file("lock"), [.readWrite])
        #expect(try a.tryLock())
        #expect(try b.tryLock() == false)
        a.close()
        #expect(try b.tryLock())
    }
}

@Suite struct ChildTests {
    @Test func spawnWithAPipeReapAndExitStatus() throws {
        let (r, w) = try Descriptor.pipe()
        let child = try Spawned.spawn(["/bin/sh", "-c", "echo out; exit 3"], stdout: .descriptor(w)).get()
        w.close()
        #expect(try r.readAll() == Array("out\n".utf8))
        #expect(child.wait() == .exited(3))
        let missing = Spawned.spawn(["no-such-program-here"], searchPath: true)
        #expect(throws: Errno.self) { try missing.get() }
    }

    @Test func aSignalledChildSaysWhichSignal() throws {
        let child = try Spawned.spawn(["/bin/sleep", "60"], newProcessGroup: true).get()
        child.signalGroup(.terminate)
        #expect(child.wait() == .signalled(Signal.terminate.rawValue))
    }
}
