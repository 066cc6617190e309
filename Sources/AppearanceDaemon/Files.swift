#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import AppearanceProtocol

/// File-system helpers for the daemon's own files: each returns a typed `Errno` naming the path.
enum Files {
    /// Reads a whole file (at most `limit` bytes, else EFBIG). Directories are refused (EISDIR). With
    /// `regularOnly`, so is anything but a regular file, and the open never blocks (a FIFO put in place of the
    /// state file must not hang start-up); without it, pipes work (`--config <(...)`, `/dev/null`).
    /// The error's call is the verb ("open", "read"): callers name the path in their own message.
    static func readAll(_ path: String, limit: Int = 1 << 20, regularOnly: Bool = true) throws(Errno) -> [UInt8] {
        var fd: Int32
        repeat {
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | (regularOnly ? O_NONBLOCK : 0))
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw Errno(errno, "open") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Errno(errno, "stat") }
        let type = st.st_mode & S_IFMT
        guard type != S_IFDIR else { throw Errno(EISDIR, "open") }
        guard !regularOnly || type == S_IFREG else { throw Errno(EINVAL, "open (not a regular file)") }
        var out: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let n: Int
            do { n = try Posix.read(fd, into: chunk) } catch { throw Errno(error.code, "read") }
            if n == 0 { return out }
            out.append(contentsOf: chunk[0..<n])
            if out.count > limit { throw Errno(EFBIG, "read") }
        }
    }

    /// Replaces `path` atomically and durably: a temp file in the same directory, fsync, rename, fsync of the
    /// directory. After it returns, a crash or power loss leaves either the old or the new content, never a mix.
    /// `durable: false` skips the fsyncs, for files on tmpfs that only need readers never to see a partial file.
    static func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600, durable: Bool = true) throws(Errno) {
        let dir = Posix.directory(of: path)
        let tmp = "\(path).tmp-\(getpid())"
        // O_EXCL: a file planted at the temp name (a hard link to something else) is never written through;
        // one left by a crashed instance with our pid is removed first (`removeLeftovers` cleans the rest).
        var fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        if fd < 0, errno == EEXIST {
            unlink(tmp)
            fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        }
        guard fd >= 0 else { throw Errno(errno, "create \(tmp)") }
        fchmod(fd, mode)  // the daemon's umask must not narrow a file meant to be readable
        var ok = false
        defer { if !ok { unlink(tmp) } }
        do {
            defer { close(fd) }
            var off = 0
            while off < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + off, bytes.count - off) }
                if n < 0 { if errno == EINTR { continue }; throw Errno(errno, "write \(tmp)") }
                off += n
            }
            guard !durable || fsync(fd) == 0 else { throw Errno(errno, "fsync \(tmp)") }
        }
        guard rename(tmp, path) == 0 else { throw Errno(errno, "rename \(tmp) to \(path)") }
        ok = true
        guard durable else { return }
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 { _ = fsync(dfd); close(dfd) }
    }

    /// Removes `NAME.tmp-PID` files that a killed instance left next to `path` (SIGKILL between create and
    /// rename). Returns how many.
    @discardableResult
    static func removeLeftovers(of path: String) -> Int {
        let dir = Posix.directory(of: path)
        let prefix = String(path.dropFirst(dir.count + (dir == "/" ? 0 : 1))) + ".tmp-"
        guard let d = opendir(dir) else { return 0 }
        defer { closedir(d) }
        var removed = 0
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasPrefix(prefix), Int32(name.dropFirst(prefix.count)) != nil else { continue }
            if unlink(dir + "/" + name) == 0 { removed += 1 }
        }
        return removed
    }

    /// `mkdir -p` with `mode` for the directories it creates.
    static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(Errno) {
        if path.isEmpty || path == "/" || path == "." { return }
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw Errno(ENOTDIR, "\(path) is not a directory") }
            return
        }
        try makeDirectories(Posix.directory(of: path), mode: mode)
        if mkdir(path, mode) != 0, errno != EEXIST { throw Errno(errno, "mkdir \(path)") }
    }

    /// Moves a bad file aside (never deletes it): `state.json` → `state.json.corrupt`, `.corrupt.1`, …
    static func moveAside(_ path: String) throws(Errno) -> String {
        var n = 0
        while true {
            let target = n == 0 ? "\(path).corrupt" : "\(path).corrupt.\(n)"
            var st = stat()
            if lstat(target, &st) != 0 {
                guard rename(path, target) == 0 else { throw Errno(errno, "rename \(path) to \(target)") }
                return target
            }
            n += 1
        }
    }
}
