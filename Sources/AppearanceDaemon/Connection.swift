#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AppearanceCore
import AppearanceProtocol
import Dispatch

/// One client. Confined to the daemon's queue (hence `@unchecked Sendable` for Dispatch's handlers).
///
/// The daemon never blocks on it: reads and writes are non-blocking; what the kernel will not take waits in
/// `output` and a write source fires when the client reads again. While output is waiting, notifications
/// are coalesced in `delivery` (one pending at most); if the client stops reading replies, reading its
/// requests pauses too, so its memory stays bounded.
final class Connection: @unchecked Sendable {
    let fd: Int32
    let id: UInt64
    let peer: String
    var delivery: Delivery?

    private let queue: DispatchQueue
    private let readSource: DispatchSourceRead
    /// Made on the first EAGAIN only: most clients never fill their socket buffer.
    private var writeSource: DispatchSourceWrite?
    private var writeArmed = false
    private var readPaused = false
    private var closed = false
    private var closeWhenFlushed = false
    private var framer = LineFramer()
    private var output: [UInt8] = []
    private var sent = 0

    /// Output beyond this pauses reading: a client that sends requests but never reads replies.
    static let outputHighWater = 256 * 1024

    var onLine: (Connection, ArraySlice<UInt8>) -> Void = { _, _ in }
    var onLineTooLong: (Connection) -> Void = { _ in }
    var onClose: (Connection) -> Void = { _ in }

    init(fd: Int32, id: UInt64, peer: String, queue: DispatchQueue) {
        self.fd = fd
        self.id = id
        self.peer = peer
        self.queue = queue
        readSource = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
    }

    func start() {
        readSource.setEventHandler { [unowned self] in self.readable() }
        let fd = self.fd
        readSource.setCancelHandler { Glibc.close(fd) }
        readSource.resume()
    }

    var hasPendingOutput: Bool { sent < output.count }

    // Used only on the daemon's queue, one read at a time.
    nonisolated(unsafe) private static let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// Reads until the socket is drained: Dispatch may report readiness only once for data and end-of-file
    /// arriving together, so stopping after one read could leave a hang-up unseen and the descriptor open.
    private func readable() {
        while !closed, !readPaused {
            let n: Int
            do { n = try Posix.read(fd, into: Self.scratch) } catch {
                if error.code != EAGAIN { close() }  // ECONNRESET and friends: the client went away
                return
            }
            if n == 0 {
                // End of stream (a hang-up, or a half-close as `socat` or `nc -N` do after their input): answer
                // what was asked, an unterminated last line included, then close. Hang-ups are normal, not errors.
                if !closeWhenFlushed, let last = framer.remainder() { onLine(self, last) }
                closeAfterFlush()
                return
            }
            framer.append(Self.scratch[0..<n])
            do {
                while !closed, !closeWhenFlushed, let line = try framer.next() { onLine(self, line) }
            } catch {
                onLineTooLong(self)
            }
        }
    }

    /// Queues bytes and writes what the socket takes now.
    func send(_ bytes: [UInt8]) {
        guard !closed else { return }
        if !hasPendingOutput { output.removeAll(keepingCapacity: true); sent = 0 }
        output.append(contentsOf: bytes)
        flush()
    }

    /// Sends a pending notification if the client is keeping up; otherwise it stays pending (coalesced).
    func deliverIfIdle() {
        guard !closed, !hasPendingOutput, let n = delivery?.take() else { return }
        send(Outgoing.changed(n))
    }

    /// Stops reading, sends what is queued, then closes (used after a fatal protocol error).
    func closeAfterFlush() {
        guard !closed else { return }
        // Nothing queued (the usual case): close now. Suspending the read source from inside its own handler
        // and resuming it to cancel was seen to leave the descriptor open with libdispatch on Linux.
        guard hasPendingOutput else { close(); return }
        closeWhenFlushed = true
        pauseReading()
    }

    private func flush() {
        guard !closed else { return }
        while hasPendingOutput {
            let r = output.withUnsafeBytes { raw in
                Result { () throws(Errno) -> Int in try Posix.send(fd, UnsafeRawBufferPointer(rebasing: raw[sent...])) }
            }
            switch r {
            case .success(let n): sent += n
            case .failure(let e) where e.code == EAGAIN:
                armWrite(true)
                if output.count - sent > Self.outputHighWater { pauseReading() }
                return
            case .failure:
                close()
                return
            }
        }
        armWrite(false)
        output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
        sent = 0
        if closeWhenFlushed { close(); return }
        if readPaused { readPaused = false; readSource.resume() }
        deliverIfIdle()
    }

    private func armWrite(_ on: Bool) {
        guard on != writeArmed, !closed else { return }
        writeArmed = on
        if writeSource == nil {
            let w = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            w.setEventHandler { [unowned self] in self.flush() }
            writeSource = w
        }
        if on { writeSource?.resume() } else { writeSource?.suspend() }
    }

    private func pauseReading() {
        guard !readPaused, !closed else { return }  // a suspended source must never be released or cancelled
        readPaused = true
        readSource.suspend()
    }

    func close() {
        guard !closed else { return }
        closed = true
        // A suspended source never runs its cancel handler: resume before cancelling.
        if let w = writeSource {
            if !writeArmed { w.resume() }
            w.cancel()
        }
        if readPaused { readSource.resume() }
        readSource.cancel()  // its cancel handler closes the fd
        output = []
        onClose(self)
    }
}
