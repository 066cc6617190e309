import CPosix
import Glibc

/// What tells the daemon that local time changed under it without any timer firing: the realtime clock set
/// (a timerfd with TFD_TIMER_CANCEL_ON_SET: settimeofday, NTP's step, `date -s`) and the time-zone file
/// replaced (inotify on its directory: /etc/localtime is a symlink that timedatectl and package managers
/// replace, and TZ=":FILE" names another). Both are descriptors that become readable only when it
/// happens: nothing wakes an idle daemon.
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

    /// An inotify descriptor watching the directory of `file` for it being replaced or changed. Watching the
    /// directory, not the file: a replacement (rename, a new symlink) leaves a watch on the old file behind.
    public static func zoneChanges(of file: String) throws(Errno) -> Descriptor {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw Errno.current("inotify_init1", path: nil) }
        let d = Descriptor(adopting: fd, name: "inotify")
        let dir = FileSystem.directory(of: file)
        let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_ATTRIB)
        guard inotify_add_watch(fd, dir, mask) >= 0 else { throw Errno.current("inotify_add_watch", path: dir) }
        return d
    }

    /// Reads what `fd` has (everything, up to 64 KiB a call): true when an event names `file`'s own name.
    public static func zoneFileChanged(_ fd: Descriptor, file: String) -> Bool {
        let name = String(file.split(separator: "/").last ?? "")
        var changed = false
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd.raw, buffer.baseAddress, buffer.count)
            guard n > 0 else { return changed }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= n {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let start = offset + MemoryLayout<inotify_event>.size
                let length = Int(event.len)
                if length > 0 {
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[start..<min(start + length, n)])
                    let eventName = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                    if eventName == name { changed = true }
                }
                offset = start + length
            }
        }
    }

    /// Makes the C library read the time zone again (localtime_r then uses the new one). Touches the
    /// environment: call it on the daemon's queue, where the environment is read.
    public static func reloadTimeZone() { cposix_reload_timezone() }
}
