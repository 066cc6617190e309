import AppearancePosix
import Dispatch
import Synchronization

/// Runs one child process on a serial queue and calls back, on that queue, with how it ended (docs/architecture.md):
/// its exit heard through SIGCHLD (each runner reaps only its own pid), its output read from a socket pair
/// `sliceBytes` a turn (after the exit, one per `backgroundPause`); SIGTERM at `timeout`, SIGKILL `killGrace` after.
final class ChildRunner: @unchecked Sendable {
    // Confined to `queue`, but for `pid`, which never changes.

    struct Ending: Sendable {
        var status: ExitStatus
        /// It was still running at its timeout, and was sent SIGTERM (or SIGKILL).
        var timedOut: Bool
        /// The first `outputLimit` bytes it printed before it exited.
        var output: [UInt8]
    }

    /// Output as it comes, for a log.
    enum Output: Sendable {
        /// One line, without its newline; a last line without one comes at the exit or the end of output.
        case line(String)
        /// The caps were reached: nothing more is passed until `.ended`.
        case capped
        /// End of output (everything that shared the socket closed it), with the bytes not passed.
        case ended(dropped: Int)
    }

    static let sliceBytes = 64 * 1024
    static let backgroundPause = DispatchTimeInterval.milliseconds(100)
    static let lineBytes = 1000
    static let logLines = 100
    static let logBytes = 16 * 1024

    let pid: Int32
    private let process: Spawned
    fileprivate let queue: DispatchQueue
    private let newProcessGroup: Bool
    private let killGrace: Double
    private let outputLimit: Int
    private var onOutput: ((Output) -> Void)?
    private var onTimeout: (() -> Void)?
    private var completion: ((Ending) -> Void)?

    private var source: DispatchSourceRead? { didSet { oldValue?.cancel() } }
    private var timer: DispatchSourceTimer? { didSet { oldValue?.cancel() } }
    private var buffer: [UInt8] = []
    private var kept: [UInt8] = []
    private var partial: [UInt8] = []
    private var partialCut = false
    /// Bytes read, and bytes passed to `onOutput` (newlines included).
    private var total = 0
    private var emitted = 0
    private var loggedLines = 0
    private var capped = false
    private var timedOut = false
    private(set) var exitStatus: ExitStatus?

    private init(process: Spawned, queue: DispatchQueue, newProcessGroup: Bool, killGrace: Double, outputLimit: Int) {
        (self.process, pid, self.queue) = (process, process.pid, queue)
        (self.newProcessGroup, self.killGrace, self.outputLimit) = (newProcessGroup, killGrace, max(0, outputLimit))
    }

    // MARK: Starting

    /// Starts `argv[0]` (in PATH with `searchPath`), stdin on /dev/null: the runner, or why not (then no completion).
    /// `onTimeout` is told when the timeout passes, before the signal is sent.
    static func run(_ argv: [String], environment: [String]? = nil, searchPath: Bool = false,
                    inheritErrors: Bool = false, newProcessGroup: Bool = false,
                    timeout: Double? = nil, killGrace: Double = 2, outputLimit: Int = 4096,
                    queue: DispatchQueue, onOutput: ((Output) -> Void)? = nil, onTimeout: (() -> Void)? = nil,
                    completion: @escaping (Ending) -> Void) -> Result<ChildRunner, Errno> {
        dispatchPrecondition(condition: .onQueue(queue))
        prepare()
        // A socket pair, not a pipe: a pipe's bare EPOLLHUP crashed libdispatch (docs/reliability.md).
        let pipe: (read: Descriptor, write: Descriptor)
        do { pipe = try Descriptor.socketPair() } catch { return .failure(error) }
        let spawned = Spawned.spawn(argv, environment: environment, searchPath: searchPath, stdin: .null,
                                    stdout: .descriptor(pipe.write), stderr: inheritErrors ? .inherit : .descriptor(pipe.write),
                                    newProcessGroup: newProcessGroup)
        // Only the child (and what it starts) holds the write end now: end of output means they all closed it.
        pipe.write.close()
        let process: Spawned
        do { process = try spawned.get() } catch {
            pipe.read.close()
            return .failure(error)
        }
        let runner = ChildRunner(process: process, queue: queue, newProcessGroup: newProcessGroup, killGrace: killGrace,
                                 outputLimit: outputLimit)
        (runner.onOutput, runner.onTimeout, runner.completion) = (onOutput, onTimeout, completion)
        runner.startReading(pipe.read)
        if let timeout {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + max(0, timeout))
            timer.setEventHandler { [weak runner] in runner?.timeoutPassed() }
            runner.timer = timer
            timer.resume()
        }
        Reaper.shared.add(runner)
        // A child that exits before SIGCHLD's source is armed (right after start-up) is found here.
        queue.async { runner.checkExit() }
        return .success(runner)
    }

    /// Listens for SIGCHLD, once per process; later calls do nothing.
    static func prepare() { Reaper.shared.install() }

    /// Sends `signal` to the child, or to its process group when it leads one.
    func signal(_ signal: Signal) {
        if newProcessGroup { process.signalGroup(signal) } else if exitStatus == nil { process.signal(signal) }
    }

    // MARK: Exit

    /// Reaps the child if it has exited (its own pid only), and finishes.
    fileprivate func checkExit() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard exitStatus == nil, let status = process.reap() else { return }
        exitStatus = status
        Reaper.shared.remove(pid)
        timer = nil
        readSlice()  // what it printed before it exited, for the completion (a slice at most)
        flushPartialLine()
        let done = completion
        (completion, onTimeout) = (nil, nil)
        done?(Ending(status: status, timedOut: timedOut, output: kept))
        kept = []
    }

    private func timeoutPassed() {
        checkExit()  // it may have exited unheard
        guard exitStatus == nil, !timedOut else { return }
        timedOut = true
        onTimeout?()
        guard killGrace > 0 else { return signal(.kill) }
        signal(.terminate)
        // The group is killed whether or not its leader has gone by then: helpers that ignore SIGTERM stop too.
        queue.asyncAfter(deadline: .now() + killGrace) { [self] in signal(.kill) }
    }

    // MARK: Output

    private var readEnd: Descriptor?
    /// Read sources made and not yet through their cancel handler: the descriptor is closed after the last.
    private var liveSources = 0
    private var outputEnded = false
    private var continuationPending = false

    private func startReading(_ readEnd: Descriptor) {
        readEnd.setNonBlocking()
        self.readEnd = readEnd
        buffer = [UInt8](repeating: 0, count: Self.sliceBytes)
        makeSource()
    }

    /// A read source on the output, never suspended (the pause after the exit is a cancelled source and a timer).
    private func makeSource() {
        guard source == nil, !outputEnded, let readEnd else { return }
        let s = DispatchSource.makeReadSource(fileDescriptor: readEnd.raw, queue: queue)
        // The handler holds the runner until end of output, even after the exit: helpers may hold the socket.
        s.setEventHandler { [self] in readSlice() }
        liveSources += 1
        s.setCancelHandler { [self] in
            liveSources -= 1
            if outputEnded, liveSources == 0 { self.readEnd?.close(); self.readEnd = nil }
        }
        source = s
        s.resume()
    }

    /// Reads at most `sliceBytes`, then leaves the next slice to a continuation (`backgroundPause` after the exit).
    private func readSlice() {
        guard !outputEnded, let readEnd else { return }
        var budget = Self.sliceBytes
        while budget > 0 {
            let n: Int?
            do {
                n = try buffer.withUnsafeMutableBytes { raw throws(Errno) in
                    try readEnd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[..<budget]))
                }
            } catch {
                n = 0  // an error ends the output like end of file
            }
            guard let n else { return makeSource() }  // nothing more for now: the source fires when there is
            guard n > 0 else { return endOfOutput() }
            take(buffer[..<n])
            budget -= n
        }
        guard !continuationPending else { return }
        continuationPending = true
        let next: @Sendable () -> Void = { [self] in
            continuationPending = false
            readSlice()
        }
        if exitStatus != nil {
            source = nil
            queue.asyncAfter(deadline: .now() + Self.backgroundPause, execute: next)
        } else {
            queue.async(execute: next)
        }
    }

    private func take(_ bytes: ArraySlice<UInt8>) {
        total += bytes.count
        if kept.count < outputLimit, completion != nil { kept += bytes.prefix(outputLimit - kept.count) }
        var rest = bytes
        while onOutput != nil, !capped, !rest.isEmpty {
            guard let nl = rest.firstIndex(of: 0x0A) else { return appendToLine(rest) }
            appendToLine(rest[..<nl])
            rest = rest[(nl + 1)...]
            emitLine(newline: true)
        }
    }

    /// Keeps at most `lineBytes` of a line; the rest of it is counted as dropped.
    private func appendToLine(_ bytes: ArraySlice<UInt8>) {
        let room = Self.lineBytes - partial.count
        if bytes.count > room { partialCut = true }
        if room > 0 { partial += bytes.prefix(room) }
    }

    private func emitLine(newline: Bool) {
        guard !capped else { return }
        let text = String(decoding: partial, as: UTF8.self) + (partialCut ? "…" : "")
        emitted += partial.count + (newline ? 1 : 0)
        (partial, partialCut) = ([], false)
        loggedLines += 1
        onOutput?(.line(text))
        if loggedLines >= Self.logLines || emitted >= Self.logBytes {
            capped = true
            onOutput?(.capped)
        }
    }

    private func flushPartialLine() { if !partial.isEmpty || partialCut { emitLine(newline: false) } }

    private func endOfOutput() {
        flushPartialLine()
        outputEnded = true
        source = nil
        if liveSources == 0 {
            readEnd?.close()
            readEnd = nil
        }
        buffer = []
        let tell = onOutput
        onOutput = nil
        tell?(.ended(dropped: total - emitted))
    }
}

/// The one SIGCHLD source, and the runners waiting: its handler tells each, on its own queue, to check its pid.
private final class Reaper: Sendable {
    static let shared = Reaper()

    private struct State {
        var waiting: [Int32: ChildRunner] = [:]
        var source: DispatchSourceSignal?
    }

    // Runners on different queues register: all of it behind the mutex.
    private let state = Mutex(State())
    private let signalQueue = DispatchQueue(label: "appearanced.children")

    func install() {
        state.withLock { state in
            guard state.source == nil else { return }
            // SIGCHLD ignored would make the kernel reap children itself: there would be no status to read.
            Signal.child.setDefault()
            let s = DispatchSource.makeSignalSource(signal: Signal.child.rawValue, queue: signalQueue)
            s.setEventHandler { Reaper.shared.childExited() }
            s.resume()
            state.source = s
        }
    }

    func add(_ runner: ChildRunner) { state.withLock { $0.waiting[runner.pid] = runner } }

    func remove(_ pid: Int32) { state.withLock { _ = $0.waiting.removeValue(forKey: pid) } }

    private func childExited() {
        let runners = state.withLock { Array($0.waiting.values) }
        for runner in runners { runner.queue.async { runner.checkExit() } }
    }
}
