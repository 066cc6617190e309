import CPosix
import Glibc

/// A thread of its own blocked in poll(2) on a duplicate of a descriptor, calling `readable` whenever there is
/// something to read (or a hang-up or an error, for the reader to find), until cancelled. Idle, it costs
/// nothing: poll waits without a timeout. The session bus's connection is read this way (AppearanceBus,
/// ConnectionSources.swift): one thread woken per message, where a Dispatch read source wakes two.
///
/// The thread holds the object until it ends, and the object closes its descriptors when the last holder lets
/// go: the duplicate outlives the original (which its owner may close at once) for as long as the thread may
/// poll it, and `cancel` never writes to a number that was closed and reused.
public final class ReadingThread: @unchecked Sendable {
    // Immutable after init.
    private let fd: Int32
    /// A pipe: `cancel` writes to [1], the thread polls [0].
    private var stop: [Int32] = [-1, -1]
    private let readable: @Sendable (ReadingThread) -> Void
    private let slice: UInt64?

    /// Starts the thread. Out of descriptors or threads, nothing reads: `started` is false. `slice` (ns, 100 µs
    /// at least) asks the scheduler for short turns for it (sched_setattr(2); docs/decisions.md, "A short slice
    /// for the bus's reader"); where the kernel or a system call filter refuses, it runs as any thread.
    public init(_ descriptor: Int32, slice: UInt64? = nil, readable: @escaping @Sendable (ReadingThread) -> Void) {
        fd = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        (self.readable, self.slice) = (readable, slice)
        guard fd >= 0, cposix_pipe(&stop) == 0 else { return }
        started = Posix.startThread { [self] in run() }
    }

    /// Whether the thread runs (or ran: it ends when cancelled).
    public private(set) var started = false

    private func run() {
        if let slice { _ = cposix_set_slice(slice) }
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: stop[0], events: Int16(POLLIN), revents: 0)]
        while true {
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            if fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { readable(self) }
        }
    }

    /// Ends the thread the next time it polls (it may still be in `readable`, which must then find it cancelled).
    public func cancel() {
        guard stop[1] >= 0 else { return }
        var one: UInt8 = 1
        _ = write(stop[1], &one, 1)
    }

    deinit {
        for d in [fd] + stop where d >= 0 { close(d) }
    }
}
