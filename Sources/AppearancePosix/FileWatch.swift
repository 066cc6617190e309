import Glibc

/// A file watched by its directory (inotify): readable when the file is made, replaced, written or removed.

public enum FileWatch {
    /// An inotify descriptor watching the directory of `file` (which must exist).
    public static func changes(of file: String) throws(Errno) -> Descriptor {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw Errno.current("inotify_init1", path: nil) }
        let d = Descriptor(adopting: fd, name: "inotify")
        let dir = FileSystem.directory(of: file)
        let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_DELETE | IN_ATTRIB)
        guard inotify_add_watch(fd, dir, mask) >= 0 else { throw Errno.current("inotify_add_watch", path: dir) }
        return d
    }

    /// Reads what `fd` has (everything, up to 64 KiB a call): true when an event names `file`'s own name.
    public static func changed(_ fd: Descriptor, file: String) -> Bool {
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
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[start..<min(start + length, n)])
                if length > 0, String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) == name { changed = true }
                offset = start + length
            }
        }
    }
}
