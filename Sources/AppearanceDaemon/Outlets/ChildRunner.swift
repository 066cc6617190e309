import AppearancePosix
import Dispatch
import Synchronization

/// Runs one child process on a serial queue and calls back, on that queue, with how it ended: no polling,
/// no thread waiting for it, and nothing the child does (print without end, hang, leave helpers behind)
/// can hold the queue up.
///
/// - Its exit is heard through SIGCHLD: one process-wide Dispatch signal source (`prepare()`) tells every
///   runner, and each runner reaps only its own pid (`waitpid(pid, WNOHANG)`), so runners on any queue, and
///   code that waits for its own children some other way, never take each other's exits.
/// - Its standard output (and standard error, unless `stderr` says otherwise) is one end of a socket pair
///   (why not a pipe: see `run`), read in bounded slices: at most `sliceBytes` per turn of the queue, then
///   the handler returns and a continuation on the queue reads the next slice once other work has run. What
///   is kept is bounded too: the first `outputLimit` bytes for the completion, lines of at most `lineBytes`
///   for `onOutput`, and at most `logLimit` bytes and `logLines` lines passed to `onOutput` in all, after
///   which the rest is read, counted and dropped.
/// - With a `timeout`, the child is sent SIGTERM when it passes (its process group with `newProcessGroup`,
///   else the child alone), and SIGKILL `killGrace` seconds later; `killGrace: 0` sends SIGKILL at once.
///   Output does not matter: the timer fires whatever the child prints.
/// - The completion is called once, when the child exits, with what it printed so far (what is waiting is
///   read first, up to a slice). Output that comes after, from a program the child started in the
///   background and that still holds the socket, keeps being read: a program writing where nobody reads
///   would block once the buffer fills, and closing our end would kill it with SIGPIPE (or fail its
///   writes), and /dev/null cannot be swapped in under a running program. But slowly: one slice per
///   `backgroundPause`, so that a background program printing without end costs the daemon next to nothing
///   and is merely slowed down by a full buffer. It still goes to `onOutput` within the caps, and `.ended`
///   is told at the end of output.
///
/// A one-shot command with a timeout and the first 4 KiB of its standard output:
///
///     switch ChildRunner.run(["gsettings", "set", "org.gnome.desktop.interface", "color-scheme", "prefer-dark"],
///                            searchPath: true, stderr: .inherit, timeout: 10, killGrace: 0, outputLimit: 4096,
///                            queue: queue, completion: { ending in
///         // ending.status (.exited(0) …), ending.timedOut, ending.output (the first 4 KiB)
///     }) {
///     case .success: break               // the completion will come
///     case .failure(let error): …        // not started (error.message); no completion
///     }
///
/// Call `run` on `queue`; everything about a runner happens there. Call `ChildRunner.prepare()` once, early
/// (a Dispatch signal source is armed asynchronously: a child that exits before that is still found, by a
/// check right after the start and another at its timeout, but not as soon).
final class ChildRunner: @unchecked Sendable {
    // Confined to `queue`, but for `pid`, which never changes.

    /// How the child ended, for the completion.
    struct Ending: Sendable {
        var status: ExitStatus
        /// It was still running at its timeout, and was sent SIGTERM (or SIGKILL).
        var timedOut: Bool
        /// The first `outputLimit` bytes it printed before it exited.
        var output: [UInt8]
    }

    /// Output as it comes, for a log.
    enum Output: Sendable {
        /// One line, without its newline; one longer than `lineBytes` is cut there and ends in "…". A last
        /// line without a newline comes at the exit or the end of output.
        case line(String)
        /// `logLimit` bytes or `logLines` lines were passed: nothing more is, until `.ended`.
        case capped
        /// End of output (the child and everything that shared its pipe closed it), with how many bytes were
        /// not passed because of the caps.
        case ended(dropped: Int)
    }

    /// Where the child's standard error goes.
    enum ErrorStream: Sendable {
        /// The same pipe as its standard output.
        case captured
        /// The daemon's own standard error.
        case inherit
        case null
    }

    static let sliceBytes = 64 * 1024
    static let backgroundPause = DispatchTimeInterval.milliseconds(100)

    let pid: Int32
    private let process: Spawned
    fileprivate let queue: DispatchQueue
    private let newProcessGroup: Bool
    private let killGrace: Double
    private let outputLimit: Int
    private let lineBytes: Int
    private let logLimit: Int
    private let logLines: Int
    private var onOutput: ((Output) -> Void)?
    private var onTimeout: (() -> Void)?
    private var completion: ((Ending) -> Void)?

    private var source: DispatchSourceRead?
    private var timer: DispatchSourceTimer?
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

    private init(process: Spawned, queue: DispatchQueue, newProcessGroup: Bool, killGrace: Double, outputLimit: Int,
                 lineBytes: Int, logLimit: Int, logLines: Int) {
        self.process = process
        pid = process.pid
        self.queue = queue
        self.newProcessGroup = newProcessGroup
        self.killGrace = killGrace
        self.outputLimit = outputLimit
        self.lineBytes = lineBytes
        self.logLimit = logLimit
        self.logLines = logLines
    }

    // MARK: Starting

    /// Starts `argv[0]` (looked up in PATH with `searchPath`) with `environment` (nil: the daemon's), stdin on
    /// /dev/null, stdout on the pipe and stderr as `stderr` says. Returns the runner, or why it could not
    /// start (then there is no completion). Must be called on `queue`; `onOutput`, `onTimeout` (told when
    /// the timeout passes, before the signal is sent) and `completion` are called on it.
    static func run(_ argv: [String], environment: [String]? = nil, searchPath: Bool = false,
                    stderr: ErrorStream = .captured, newProcessGroup: Bool = false,
                    timeout: Double? = nil, killGrace: Double = 2,
                    outputLimit: Int = 4096, lineBytes: Int = 1000, logLimit: Int = 16 * 1024, logLines: Int = 100,
                    queue: DispatchQueue, onOutput: ((Output) -> Void)? = nil, onTimeout: (() -> Void)? = nil,
                    completion: @escaping (Ending) -> Void) -> Result<ChildRunner, Errno> {
        dispatchPrecondition(condition: .onQueue(queue))
        prepare()
        // A socket pair, not a pipe: a pipe whose last writer closes it with nothing left to read reports a
        // bare EPOLLHUP, and libdispatch's handling of that (reader sources told of the hang-up, then the
        // muxnote's writer list read) was seen to read freed memory and crash the daemon about once in 15
        // hook runs; a socket reports EPOLLIN with its hang-up, as clients' sockets do. The one difference a
        // hook can notice: open("/dev/stdout") fails on a socket (ENXIO), as it does for any program whose
        // output goes to the journal; writing to the descriptor (`echo`, `>&2`) works.
        let pipe: (read: Descriptor, write: Descriptor)
        do { let pair = try Descriptor.socketPair(); pipe = (pair.0, pair.1) } catch { return .failure(error) }
        let errorStream: Spawned.Stream = switch stderr {
        case .captured: .descriptor(pipe.write)
        case .inherit: .inherit
        case .null: .null
        }
        let spawned = Spawned.spawn(argv, environment: environment, searchPath: searchPath, stdin: .null,
                                    stdout: .descriptor(pipe.write), stderr: errorStream, newProcessGroup: newProcessGroup)
        // Only the child (and what it starts) holds the write end now: end of output means they all closed it.
        pipe.write.close()
        let process: Spawned
        switch spawned {
        case .success(let p): process = p
        case .failure(let e):
            pipe.read.close()
            return .failure(e)
        }
        let runner = ChildRunner(process: process, queue: queue, newProcessGroup: newProcessGroup, killGrace: killGrace,
                                 outputLimit: max(0, outputLimit), lineBytes: max(1, lineBytes),
                                 logLimit: max(0, logLimit), logLines: max(0, logLines))
        runner.onOutput = onOutput
        runner.onTimeout = onTimeout
        runner.completion = completion
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

    /// Listens for SIGCHLD, once per process; later calls do nothing. Call it early: see the type's comment.
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
        timer?.cancel()
        timer = nil
        // What it printed before it exited is waiting: the completion gets it (a slice at most).
        readSlice()
        flushPartialLine()
        let done = completion
        completion = nil
        onTimeout = nil
        done?(Ending(status: status, timedOut: timedOut, output: kept))
        kept = []
        // Whatever it left behind is left alone, even if it holds the pipe (see the type's comment).
    }

    private func timeoutPassed() {
        checkExit()  // it may have exited unheard
        guard exitStatus == nil, !timedOut else { return }
        timedOut = true
        onTimeout?()
        if killGrace <= 0 {
            signal(.kill)
            return
        }
        signal(.terminate)
        // The group is killed whether or not its leader has gone by then: helpers that ignore SIGTERM stop
        // too. (A group id lives as long as one of its members, so it cannot name another group meanwhile.)
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

    /// A read source on the output, made when needed and cancelled when not, never suspended: with
    /// libdispatch on Linux a suspended source was seen to make other sources miss events (see
    /// Connection.swift), so the pause after the exit is a cancelled source and a timer, not a suspension.
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

    private func dropSource() {
        source?.cancel()
        source = nil
    }

    /// Reads at most `sliceBytes`, then returns: the queue serves other work before the next slice, which a
    /// continuation on the queue reads (Dispatch reports a hang-up once, then no more: the rest of the output
    /// must not wait for another event). After the exit the next slice waits `backgroundPause`, with no
    /// source meanwhile.
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
            guard let n else {
                makeSource()  // nothing more for now: the source fires when there is
                return
            }
            if n == 0 {
                endOfOutput()
                return
            }
            take(buffer[..<n])
            budget -= n
        }
        guard !continuationPending else { return }
        continuationPending = true
        if exitStatus != nil {
            dropSource()
            queue.asyncAfter(deadline: .now() + Self.backgroundPause) { [self] in
                continuationPending = false
                readSlice()
            }
        } else {
            queue.async { [self] in
                continuationPending = false
                readSlice()
            }
        }
    }

    private func take(_ bytes: ArraySlice<UInt8>) {
        total += bytes.count
        if kept.count < outputLimit, completion != nil { kept += bytes.prefix(outputLimit - kept.count) }
        guard onOutput != nil, !capped else { return }
        var rest = bytes
        while !rest.isEmpty, !capped {
            guard let nl = rest.firstIndex(of: 0x0A) else {
                appendToLine(rest)
                return
            }
            appendToLine(rest[..<nl])
            rest = rest[(nl + 1)...]
            emitLine(newline: true)
        }
    }

    /// Keeps at most `lineBytes` of a line; the rest of it is counted as dropped.
    private func appendToLine(_ bytes: ArraySlice<UInt8>) {
        let room = lineBytes - partial.count
        if bytes.count > room { partialCut = true }
        if room > 0 { partial += bytes.prefix(room) }
    }

    private func emitLine(newline: Bool) {
        guard !capped else { return }
        let text = String(decoding: partial, as: UTF8.self) + (partialCut ? "…" : "")
        emitted += partial.count + (newline ? 1 : 0)
        partial = []
        partialCut = false
        loggedLines += 1
        onOutput?(.line(text))
        if loggedLines >= logLines || emitted >= logLimit {
            capped = true
            onOutput?(.capped)
        }
    }

    private func flushPartialLine() {
        if !partial.isEmpty || partialCut { emitLine(newline: false) }
    }

    private func endOfOutput() {
        flushPartialLine()
        outputEnded = true
        dropSource()
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

/// The one SIGCHLD source of the process, and the runners waiting for their child. Its handler runs on a
/// queue of its own and tells each runner, on the runner's queue, to check its own pid.
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
