import CPosix
import Glibc

/// What tells the daemon that local time changed without a timer firing: the clock set, the time zone replaced.
public enum ClockWatch {
    /// A timerfd that becomes readable when the realtime clock is set.
    public static func clockSet() throws(Errno) -> Descriptor {
        let fd = cposix_clock_set_watch()
        guard fd >= 0 else { throw Errno.current("timerfd_create", path: nil) }
        return Descriptor(adopting: fd, name: "timerfd")
    }

    /// Reads `fd` after it became readable: true when the clock was set (then it is armed again).
    public static func clockWasSet(_ fd: Descriptor) -> Bool {
        var expirations: UInt64 = 0
        let n = read(fd.raw, &expirations, MemoryLayout<UInt64>.size)
        guard n < 0, errno == ECANCELED else { return false }
        _ = cposix_clock_set_rearm(fd.raw)
        return true
    }

    /// The time-zone file in force: the one TZ names (":/path", "/path" or a zone name), else /etc/localtime.
    public static func zoneFile(tz: String?) -> String {
        guard var tz, !tz.isEmpty else { return "/etc/localtime" }
        if tz.hasPrefix(":") { tz.removeFirst() }
        if tz.hasPrefix("/") { return tz }
        return "/usr/share/zoneinfo/" + tz
    }

    /// An inotify descriptor that becomes readable when the time-zone `file` is replaced or changed.
    public static func zoneChanges(of file: String) throws(Errno) -> Descriptor { try FileWatch.changes(of: file) }

    /// Reads what `fd` has: true when the time-zone file changed.
    public static func zoneFileChanged(_ fd: Descriptor, file: String) -> Bool { FileWatch.changed(fd, file: file) }

    /// Makes the C library read the time zone again; touches the environment (call it on the daemon's queue).

    public static func reloadTimeZone() { cposix_reload_timezone() }
}
