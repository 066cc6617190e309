import CPosix
import Glibc

/// A thread blocked in poll(2) on a duplicate of a descriptor, calling `readable` whenever there is something
/// to read, until cancelled (the session bus's reader). It holds the object, whose descriptors close with it.
public final class ReadingThread: @unchecked Sendable {
    // Immutable after init.
    private let fd: Int32
    /// A pipe: `cancel` writes to [1], the thread polls [0].
    private var stop: [Int32] = [-1, -1]
    private let readable: @Sendable (ReadingThread) -> Void
    private let slice: UInt64?

    /// Starts the thread (`started`: false if it could not); `slice` (ns) asks for short turns (docs/decisions.md).

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
