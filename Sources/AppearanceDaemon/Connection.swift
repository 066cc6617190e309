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
    private var readSource: DispatchSourceRead?
    /// Exists only while output waits for the client: most clients never fill their socket buffer.
    private var writeSource: DispatchSourceWrite?
    /// Sources made and not yet fully cancelled; the fd is closed when the last one is.
    private var liveSources = 0
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
    }

    // Sources are made when needed and cancelled when not, never suspended: with libdispatch on Linux a
    // suspended source, or an fd closed while any source on it is still being cancelled, was seen to make
    // other sources miss events (a client's requests or hang-up went unseen, its descriptor stayed open).
    func start() { startReading() }

    private func startReading() {
        let r = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        r.setEventHandler { [unowned self] in self.readable() }
        track(r)
        readSource = r
    }

    private func track(_ source: DispatchSourceProtocol) {
        liveSources += 1
        source.setCancelHandler { [self] in
            liveSources -= 1
            if closed, liveSources == 0 { Glibc.close(fd) }
        }
        source.resume()
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
    /// `encode` lets a broadcast share one encoding among subscribers that get the same bytes.
    func deliverIfIdle(_ encode: (Notification) -> [UInt8] = Outgoing.changed) {
        guard !closed, !hasPendingOutput, let n = delivery?.take() else { return }
        send(encode(n))
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
        if readPaused, !closed { readPaused = false; startReading() }
        deliverIfIdle()
    }

    private func armWrite(_ on: Bool) {
        guard on != (writeSource != nil), !closed else { return }
        if on {
            let w = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            w.setEventHandler { [unowned self] in self.flush() }
            track(w)
            writeSource = w
        } else {
            writeSource?.cancel()
            writeSource = nil
        }
    }

    private func pauseReading() {
        guard !readPaused, !closed else { return }
        readPaused = true
        readSource?.cancel()
        readSource = nil
    }

    func close() {
        guard !closed else { return }
        closed = true
        readSource?.cancel()
        writeSource?.cancel()
        readSource = nil
        writeSource = nil
        if liveSources == 0 { Glibc.close(fd) }  // otherwise the last cancel handler closes it
        output = []
        onClose(self)
    }
}
