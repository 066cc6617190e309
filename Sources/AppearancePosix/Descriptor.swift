@preconcurrency import Glibc
import Synchronization
#if SWIFT_SYSTEM
import SystemPackage
#endif

/// An open file descriptor, closed once by `close()` or when the last reference goes (a class: descriptors
/// live in escaping closures). Every call retries EINTR and throws an `Errno` naming the call and `name`.
public final class Descriptor: Sendable, CustomStringConvertible {
    /// The number, for Dispatch sources and the like; only valid while the descriptor is open.
    public let raw: Int32
    /// The path this descriptor was opened, bound or connected with, for error messages.
    public let name: String?
    /// Sockets are written with send(MSG_NOSIGNAL): a peer that went away is an error, never a SIGPIPE.
    private let isSocket: Bool
    /// False for the standard streams, which are never closed.
    private let owned: Bool
    private let open = Atomic<Bool>(true)

    /// Takes ownership of `raw` (it is closed with this object).
    public init(adopting raw: Int32, name: String? = nil, socket: Bool = false) {
        (self.raw, self.name, self.isSocket) = (raw, name, socket)
        owned = true
    }

    private init(standard raw: Int32, name: String) { (self.raw, self.name, isSocket, owned) = (raw, name, false, false) }

    deinit { if owned, open.load(ordering: .relaxed) { _ = Glibc.close(raw) } }

    /// close(2), once. EINTR is not retried: on Linux the descriptor is gone either way.
    public func close() {
        guard owned, open.exchange(false, ordering: .acquiringAndReleasing) else { return }
        #if SWIFT_SYSTEM
        try? FileDescriptor(rawValue: raw).close()
        #else
        _ = Glibc.close(raw)
        #endif
    }

    public var isOpen: Bool { open.load(ordering: .relaxed) }

    public var description: String { name.map { "\(raw) (\($0))" } ?? "\(raw)" }

    func error(_ call: String) -> Errno { Errno.current(call, path: name) }

    // MARK: Reading and writing: one loop each

    /// read(2) into `buffer`: the byte count, 0 at end of file, or nil when non-blocking and nothing is there (EAGAIN).
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int? {
        #if SWIFT_SYSTEM
        do { return try FileDescriptor(rawValue: raw).read(into: buffer, retryOnInterrupt: true) } catch {
            let code = (error as? SystemPackage.Errno)?.rawValue ?? EIO
            if code == EAGAIN || code == EWOULDBLOCK { return nil }
            throw Errno(code, "read", path: name)
        }
        #else
        while true {
            let n = Glibc.read(raw, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw error("read")
            }
        }
        #endif
    }

    /// write(2), send(2) with MSG_NOSIGNAL for a socket: the bytes taken, or nil when non-blocking and full (EAGAIN).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int? {
        #if SWIFT_SYSTEM
        // swift-system has no send(2): sockets keep MSG_NOSIGNAL below.
        if !isSocket {
            do { return try FileDescriptor(rawValue: raw).write(bytes, retryOnInterrupt: true) } catch {
                let code = (error as? SystemPackage.Errno)?.rawValue ?? EIO
                if code == EAGAIN || code == EWOULDBLOCK { return nil }
                throw Errno(code, "write", path: name)
            }
        }
        #endif
        while true {
            let n = isSocket ? Glibc.send(raw, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
                : Glibc.write(raw, bytes.baseAddress, bytes.count)
            if n >= 0 { return n }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw error(isSocket ? "send" : "write")
            }
        }
    }

    /// Writes all of `bytes`, waiting for room while non-blocking, until `deadline` (nil: none; past it: ETIMEDOUT).
    public func writeAll(_ bytes: UnsafeRawBufferPointer, until deadline: Deadline? = nil) throws(Errno) {
        var done = 0
        while done < bytes.count {
            if let n = try write(UnsafeRawBufferPointer(rebasing: bytes[done...])) {
                done += n
            } else if try !wait(.writable, until: deadline) {
                throw Errno(ETIMEDOUT, isSocket ? "send" : "write", path: name)
            }
        }
    }

    public func writeAll(_ bytes: [UInt8], until deadline: Deadline? = nil) throws(Errno) {
        try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try writeAll(raw, until: deadline) } }.get()
    }

    public func writeAll(_ text: String, until deadline: Deadline? = nil) throws(Errno) {
        var text = text
        try text.withUTF8 { buffer in Result { () throws(Errno) in try writeAll(UnsafeRawBufferPointer(buffer), until: deadline) } }.get()
    }

    /// Reads to end of file: at most `limit` bytes, else EFBIG.
    public func readAll(limit: Int = 1 << 20) throws(Errno) -> [UInt8] {
        var out: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            guard let n = try read(into: chunk) else { _ = try wait(.readable, until: nil); continue }
            if n == 0 { return out }
            out.append(contentsOf: chunk[0..<n])
            if out.count > limit { throw Errno(EFBIG, "read", path: name) }
        }
    }

    // MARK: Waiting

    public struct Events: OptionSet, Sendable {
        public let rawValue: Int16
        public init(rawValue: Int16) { self.rawValue = rawValue }
        public static let readable = Events(rawValue: Int16(POLLIN))
        public static let writable = Events(rawValue: Int16(POLLOUT))
    }

    /// poll(2) until ready for `events` (or hung up): true; false when `deadline` (nil: none) passed first.
    public func wait(_ events: Events, until deadline: Deadline?) throws(Errno) -> Bool {
        // One pollfd on the stack: a one-shot client (`appearancectl get`) then builds no array type at run time.

        var fd = pollfd(fd: raw, events: events.rawValue, revents: 0)
        return try Descriptor.poll(&fd, 1, until: deadline, name: name)
    }

    /// poll(2) on several descriptors: the index of the first one ready (or hung up); nil when `deadline` passed.
    public static func firstReady(_ descriptors: [Descriptor], _ events: Events, until deadline: Deadline?) throws(Errno) -> Int? {
        var fds = descriptors.map { pollfd(fd: $0.raw, events: events.rawValue, revents: 0) }
        guard try poll(&fds, fds.count, until: deadline, name: descriptors.first?.name) else { return nil }
        return fds.firstIndex { $0.revents != 0 }
    }

    /// poll(2) until one of `count` descriptors is ready (true) or `deadline` passes (false), EINTR retried.
    private static func poll(_ fds: UnsafeMutablePointer<pollfd>, _ count: Int, until deadline: Deadline?,
                             name: String?) throws(Errno) -> Bool {
        while true {
            let r = Glibc.poll(fds, nfds_t(count), deadline?.remainingMilliseconds ?? -1)
            if r > 0 { return true }
            if r == 0 { return false }
            if errno != EINTR { throw Errno.current("poll", path: name) }
        }
    }

    // MARK: Flags

    public func setNonBlocking() { _ = fcntl(raw, F_SETFL, fcntl(raw, F_GETFL) | O_NONBLOCK) }

    /// Sets FD_CLOEXEC (for descriptors inherited from a parent, like systemd's).
    public func setCloseOnExec() { _ = fcntl(raw, F_SETFD, FD_CLOEXEC) }

    public var isTerminal: Bool { isatty(raw) == 1 }

    // MARK: Standard streams (not owned: never closed)

    public static let standardOutput = Descriptor(standard: 1, name: "standard output")
    public static let standardError = Descriptor(standard: 2, name: "standard error")
}
