import AppearancePosix
import Foundation
import Testing
import TestSupport

/// The thread that reads the session bus: called for what arrives, in order, on a thread of its own; gone,
/// with its descriptors, once cancelled and let go.
@Suite struct ReadingThreadTests {
    /// What the reading thread saw, from its own thread.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes: [UInt8] = []
        private var threads: Set<UInt> = []
        func add(_ byte: UInt8, on thread: UInt) {
            lock.lock()
            bytes.append(byte)
            threads.insert(thread)
            lock.unlock()
        }
        var snapshot: ([UInt8], Set<UInt>) {
            lock.lock()
            defer { lock.unlock() }
            return (bytes, threads)
        }
    }

    /// A value set on one thread and read on another.
    final class Locked<T>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: T
        init(_ value: T) { self.value = value }
        func set(_ v: T) { lock.lock(); value = v; lock.unlock() }
        func get() -> T { lock.lock(); defer { lock.unlock() }; return value }
    }

    /// A slice asked for is the thread's own, where the kernel shows slices (/proc/thread-self/sched, Linux
    /// 6.12 or later with its scheduler's debug file); elsewhere the thread reads all the same. Its nice value
    /// stays the one it was started with (sched_setattr sets both): a thread started niced is not raised.
    @Test func theSliceAskedForIsTheReadingThreadsOwnAndItsNiceValueStays() async throws {
        let (a, b) = try Descriptor.socketPair()
        b.setNonBlocking()
        let seen = Seen()
        let sched = Locked<(text: String?, nice: Int32)?>(nil)
        let reader = Locked<ReadingThread?>(nil)
        // Started from a thread of its own niced to 3 (per thread on Linux, inherited by the threads it starts).
        #expect(Posix.startThread {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 3)
            reader.set(ReadingThread(b.raw, slice: 100_000) { _ in
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
                defer { buffer.deallocate() }
                while let n = try? b.read(into: buffer), n > 0 {
                    sched.set((try? String(contentsOfFile: "/proc/thread-self/sched", encoding: .utf8),
                               getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)))
                    for byte in buffer.prefix(n) { seen.add(byte, on: UInt(pthread_self())) }
                }
            })
        })
        _ = try await waitUntil("the reading thread started") { reader.get() != nil ? true : nil }
        defer { reader.get()?.cancel() }
        try a.writeAll([7])
        _ = try await waitUntil("the byte read", seen: { "\(seen.snapshot.0)" }) { seen.snapshot.0 == [7] ? true : nil }
        let got = try #require(sched.get())
        #expect(got.nice == 3)
        var kernel = utsname()
        uname(&kernel)
        let release = withUnsafeBytes(of: kernel.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let version = release.split(separator: ".").prefix(2).compactMap { Int($0.prefix { $0.isNumber }) }
        guard let text = got.text, let line = text.split(separator: "\n").first(where: { $0.hasPrefix("se.slice") }),
              version.count == 2, (version[0], version[1]) >= (6, 12) else { return }
        #expect(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) == "100000", "\(line)")
    }

    @Test func callsBackForWhatArrivesAndEndsWithItsDescriptorsWhenCancelled() async throws {
        let (a, b) = try Descriptor.socketPair()
        b.setNonBlocking()
        let seen = Seen()
        let testThread = UInt(pthread_self())
        var reader: ReadingThread? = ReadingThread(b.raw) { _ in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
            defer { buffer.deallocate() }
            while let n = try? b.read(into: buffer), n > 0 {
                for byte in buffer.prefix(n) { seen.add(byte, on: UInt(pthread_self())) }
            }
        }
        #expect(reader?.started == true)
        for byte: UInt8 in [1, 2, 3] {
            try a.writeAll([byte])
            _ = try await waitUntil("byte \(byte) read", seen: { "\(seen.snapshot.0)" }) {
                seen.snapshot.0.last == byte ? true : nil
            }
        }
        let (bytes, threads) = seen.snapshot
        #expect(bytes == [1, 2, 3])
        #expect(threads.count == 1 && !threads.contains(testThread))
        reader?.cancel()
        reader = nil
        // The thread lets go when it sees the cancel, and the last holder closes the duplicate: with the
        // original closed too, nothing holds the socket open and the peer reads the end of it.
        b.close()
        a.setNonBlocking()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
        defer { buffer.deallocate() }
        _ = try await waitUntil("the peer to see the socket closed") { (try? a.read(into: buffer)) == .some(0) ? true : nil }
        #expect(seen.snapshot.0 == [1, 2, 3])
    }

    @Test func aHangUpIsForTheReaderToFind() async throws {
        let (a, b) = try Descriptor.socketPair()
        b.setNonBlocking()
        let seen = Seen()
        let reader = ReadingThread(b.raw) { reader in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
            defer { buffer.deallocate() }
            // End of file: what a bus connection's owner does then is remove the watch, which cancels.
            if let n = try? b.read(into: buffer), n == 0 {
                seen.add(0, on: 0)
                reader.cancel()
            }
        }
        a.close()
        _ = try await waitUntil("the hang-up seen") { seen.snapshot.0 == [0] ? true : nil }
        #expect(reader.started)
    }
}
