import AppearanceCore
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// One client (docs/architecture.md): non-blocking reads and writes, output waiting for a write source,
/// notifications coalescing in `delivery`. Confined to the daemon's queue.
final class Connection: @unchecked Sendable {
    let socket: Descriptor
    let id: UInt64
    let peer: String
    var delivery: Delivery?
    /// In the publisher's list of subscribers still to be offered the newest state.
    var awaitingOffer = false

    private let queue: DispatchQueue
    private var readSource: DispatchSourceRead? { didSet { oldValue?.cancel() } }
    /// Exists only while output waits for the client: most clients never fill their socket buffer.
    private var writeSource: DispatchSourceWrite? { didSet { oldValue?.cancel() } }
    /// Sources made and not yet fully cancelled; the fd is closed when the last one is.
    private var liveSources = 0
    private var readPaused = false
    private var closed = false
    private var closeWhenFlushed = false
    private var framer = LineFramer()
    private var output: [UInt8] = []
    private var sent = 0
    /// The client half-closed or hung up: answer what is buffered, then close.
    private var endOfStream = false
    private var continuationScheduled = false

    /// Output beyond this stops the handling of further requests (and reading), checked before every line.
    static let outputHighWater = 32 * 1024
    /// A turn's budget before the connection yields: this many lines, and `bytesPerTurn` bytes (at least one line).
    static let linesPerTurn = 16
    static let bytesPerTurn = maxLineLength
    /// Bytes read and bytes of lines handled in the current turn (reset when a turn starts).
    private var turnRead = 0
    private var turnHandled = 0
    private var turnLines = 0

    private func startTurn() { (turnRead, turnHandled, turnLines) = (0, 0, 0) }

    /// Bytes of requests read and not yet handled (at most one unfinished line between turns).
    var bufferedInput: Int { framer.pendingCount }
    /// What the daemon was last told of `bufferedInput`.
    private var reportedInput = 0
    /// Told the change of `bufferedInput` after every read and every turn: the daemon keeps a total.
    var onInputChange: (Connection, Int) -> Void = { _, _ in }

    private func reportInput() {
        let now = closed ? 0 : framer.pendingCount
        guard now != reportedInput else { return }
        let delta = now - reportedInput
        reportedInput = now
        onInputChange(self, delta)
    }

    var onLine: (Connection, ArraySlice<UInt8>) -> Void = { _, _ in }
    var onLineTooLong: (Connection) -> Void = { _ in }
    var onClose: (Connection) -> Void = { _ in }

    init(socket: Descriptor, id: UInt64, peer: String, queue: DispatchQueue, scratch: ReadBuffer) {
        (self.scratch, self.socket, self.id, self.peer, self.queue) = (scratch, socket, id, peer, queue)
    }

    // Sources are made when needed and cancelled when not, never suspended (docs/reliability.md).
    func start() { startReading() }

    private func startReading() {
        let r = DispatchSource.makeReadSource(fileDescriptor: socket.raw, queue: queue)
        r.setEventHandler { [unowned self] in self.readable() }
        track(r)
        readSource = r
    }

    private func track(_ source: DispatchSourceProtocol) {
        liveSources += 1
        source.setCancelHandler { [self] in
            liveSources -= 1
            if closed, liveSources == 0 { socket.close() }
        }
        source.resume()
    }

    var hasPendingOutput: Bool { sent < output.count }

    /// Where reads land: one buffer for a daemon's connections (not a static: tests run two daemons).
    private let scratch: ReadBuffer

    /// A daemon's read buffer, shared by its connections; confined to the daemon's queue.
    final class ReadBuffer: @unchecked Sendable {
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        deinit { bytes.deallocate() }
    }

    /// Reads until the socket is drained (Dispatch may report data and end-of-file once), or stops, its source
    /// cancelled, while requests wait; a new source made when they are done sees what is already there.
    private func readable() {
        startTurn()
        while !closed, !readPaused {
            if turnRead >= Self.bytesPerTurn {
                // The turn's reading is spent: the others go first; the continuation reads on.
                pauseReading()
                scheduleContinuation()
                return
            }
            let read: Int?
            do { read = try socket.read(into: scratch.bytes) } catch {
                close()  // ECONNRESET and friends: the client went away
                return
            }
            guard let n = read else { return }  // drained
            if n == 0 {
                // End of stream (a hang-up or a half-close): answer what was asked (a partial line too), then close.
                endOfStream = true
                pauseReading()
                if handleLines() { finishBacklog() }
                return
            }
            framer.append(UnsafeRawBufferPointer(rebasing: scratch.bytes[0..<n]))
            turnRead += n
            defer { reportInput() }
            guard handleLines() else {
                pauseReading()
                return
            }
        }
    }

    /// Handles buffered lines, at most a turn's worth; true when none is left waiting.
    private func handleLines() -> Bool {
        do {
            while !closed, !closeWhenFlushed {
                if output.count - sent > Self.outputHighWater { return false }  // resumed by flush()
                if waitingForSave { return false }  // resumed by resumeAfterSave()
                if turnLines >= Self.linesPerTurn || turnHandled >= Self.bytesPerTurn {
                    scheduleContinuation()
                    return false
                }
                guard let line = try framer.next() else { return true }
                turnHandled += line.count + 1
                turnLines += 1
                onLine(self, line)
            }
        } catch { onLineTooLong(self) }
        return true
    }

    private func scheduleContinuation() {
        guard !continuationScheduled else { return }
        continuationScheduled = true
        queue.async { [weak self] in
            guard let self else { return }
            self.continuationScheduled = false
            self.startTurn()
            defer { self.reportInput() }
            guard !self.closed, self.handleLines() else { return }
            self.finishBacklog()
        }
    }

    /// Every buffered line is handled: at end of stream the unterminated last one too, then close; else read again.
    private func finishBacklog() {
        guard !closed else { return }
        if endOfStream {
            if !closeWhenFlushed, let last = framer.remainder() { onLine(self, last) }
            closeAfterFlush()
            return
        }
        if readPaused, !closeWhenFlushed, output.count - sent <= Self.outputHighWater {
            readPaused = false
            startReading()
        }
    }

    /// A change this client asked for waits for its save: its later requests wait too, so its replies come in order.
    private(set) var waitingForSave = false

    func holdUntilSaved() { waitingForSave = true }

    func resumeAfterSave() {
        guard waitingForSave else { return }
        waitingForSave = false
        if !closed { scheduleContinuation() }  // the lines that waited, then reading again
    }

    /// Writes what the socket takes now and queues the rest: an output buffer only while the client is behind.
    func send(_ bytes: [UInt8]) {
        guard !closed else { return }
        if hasPendingOutput {
            output.append(contentsOf: bytes)
            flush()
            return
        }
        switch write(bytes, from: 0) {
        case nil: return  // closed
        case let n? where n < bytes.count:
            output = Array(bytes[n...])
            sent = 0
            armWrite(true)
        default:
            drained()
        }
    }

    /// Writes `bytes[from...]` until done or the socket is full: the bytes written, or nil when it failed (closed).
    private func write(_ bytes: [UInt8], from start: Int) -> Int? {
        var done = start
        while done < bytes.count {
            let r = bytes.withUnsafeBytes { raw in
                Result { () throws(Errno) -> Int? in try socket.write(UnsafeRawBufferPointer(rebasing: raw[done...])) }
            }
            switch r {
            case .success(let n?): done += n
            case .success(nil): return done  // the client's buffer is full
            case .failure:
                close()
                return nil
            }
        }
        return done
    }

    /// Sends the pending notification if the client keeps up; `encode` lets a broadcast share one encoding.
    func deliverIfIdle(_ encode: (Offer, Mode) -> [UInt8] = Connection.encode) {
        guard !closed, !hasPendingOutput, let (o, previous) = delivery?.takeOffer() else { return }
        send(encode(o, previous))
    }

    private static func encode(_ o: Offer, previous: Mode) -> [UInt8] {
        Outgoing.changed(Notification(state: o.state, previous: previous, palette: o.palette))
    }

    /// Stops reading, sends what is queued, then closes (used after a fatal protocol error).
    func closeAfterFlush() {
        guard !closed else { return }
        // Nothing queued (the usual case): close now.
        guard hasPendingOutput else { close(); return }
        closeWhenFlushed = true
        pauseReading()
    }

    private func flush() {
        guard !closed else { return }
        guard let n = write(output, from: sent) else { return }
        sent = n
        if hasPendingOutput {
            armWrite(true)  // wait for the client to read
            return
        }
        drained()
    }

    /// Everything queued is written: the buffer is let go, and what waited on it goes on.
    private func drained() {
        armWrite(false)
        output = []
        sent = 0
        if closeWhenFlushed { close(); return }
        // Lines that waited for the client to read go on in a turn of their own (this may be a broadcast's write).
        if readPaused, !closed { scheduleContinuation() }
        deliverIfIdle()
    }

    private func armWrite(_ on: Bool) {
        guard on != (writeSource != nil), !closed else { return }
        if on {
            let w = DispatchSource.makeWriteSource(fileDescriptor: socket.raw, queue: queue)
            w.setEventHandler { [unowned self] in self.flush() }
            track(w)
            writeSource = w
        } else {
            writeSource = nil
        }
    }

    private func pauseReading() {
        guard !readPaused, !closed else { return }
        readPaused = true
        readSource = nil
    }

    func close() {
        guard !closed else { return }
        closed = true
        readSource = nil
        writeSource = nil
        if liveSources == 0 { socket.close() }  // otherwise the last cancel handler closes it
        output = []
        framer = LineFramer()  // the object may outlive the close until its sources' cancel handlers ran
        reportInput()
        onClose(self)
    }
}
