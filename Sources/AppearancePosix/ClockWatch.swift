import CPosix
import Glibc

/// What tells the daemon that local time changed under it without a timer firing: the realtime clock set (a
/// timerfd, TFD_TIMER_CANCEL_ON_SET) and the time-zone file replaced (inotify on its directory: /etc/localtime
/// is a symlink that gets replaced). Both become readable only when it happens: nothing wakes an idle daemon.
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

    /// The time-zone file in force: the file TZ names (":/path" or "/path"), a zone name under
    /// /usr/share/zoneinfo, or /etc/localtime when TZ is unset or empty.
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

    /// Makes the C library read the time zone again (localtime_r then uses the new one). Touches the
    /// environment: call it on the daemon's queue, where the environment is read.
    public static func reloadTimeZone() { cposix_reload_timezone() }
}
