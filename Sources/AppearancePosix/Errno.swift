@preconcurrency import Glibc

/// An errno with its call and path: `connect /run/user/1000/appearanced/socket: Connection refused`.
public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: Int32
    /// The call, as a verb: "open", "connect", "rename … to" (a rename names its target here).
    public var call: String
    /// The file or socket the call was about, when there is one.
    public var path: String?

    public init(_ code: Int32, _ call: String, path: String? = nil) {
        (self.code, self.call, self.path) = (code, call, path)
    }

    /// The calling thread's errno now.
    static func current(_ call: String, path: String?) -> Errno { Errno(errno, call, path: path) }

    /// strerror(3): "No such file or directory".
    public var message: String { String(cString: strerror(code)) }

    public var description: String { (path.map { "\(call) \($0)" } ?? call) + ": " + message }

    // The codes callers tell apart, so that they need not import Glibc.
    public static let noSuchFile = ENOENT
    public static let exists = EEXIST
    public static let isDirectory = EISDIR
    public static let tooBig = EFBIG
    public static let invalid = EINVAL
    public static let notImplemented = ENOSYS
    public static let wouldBlock = EAGAIN
    public static let timedOut = ETIMEDOUT
    public static let nameTooLong = ENAMETOOLONG
    public static let tooManyFiles = EMFILE
    public static let tooManyFilesInSystem = ENFILE
    public static let textBusy = ETXTBSY
    public static let connectionRefused = ECONNREFUSED
    public static let wrongSocketType = EPROTOTYPE
    public static let inProgress = EINPROGRESS
}

/// A point on the monotonic clock: how long a client waits for the daemon.
public struct Deadline: Sendable {
    /// The bound it was made with, for messages ("within 4 s").
    public let seconds: Double
    private let end: UInt64

    public init(seconds: Double) {
        self.seconds = seconds
        end = Deadline.now() + UInt64(max(0, seconds) * 1e9)
    }

    static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

    public var passed: Bool { Deadline.now() >= end }

    /// What is left, rounded up to whole milliseconds, for poll(2).
    var remainingMilliseconds: Int32 {
        let now = Deadline.now()
        guard now < end else { return 0 }
        return Int32(min((end - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }
}
