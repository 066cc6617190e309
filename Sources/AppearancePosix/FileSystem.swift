import CPosix
@preconcurrency import Glibc

/// What stat(2) says of a file, in the terms callers use.
public struct FileStatus: Equatable, Sendable {
    public enum Kind: Sendable { case regular, directory, socket, symbolicLink, fifo, other }
    public var kind: Kind
    /// The permission bits (0o777 and the set-id and sticky bits).
    public var permissions: UInt32
    public var owner: UInt32
    public var size: Int64
    /// Which file this is and which version of its content.
    public var version: FileVersion

    init(_ st: stat) {
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFSOCK: kind = .socket
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        default: kind = .other
        }
        permissions = UInt32(st.st_mode & 0o7777)
        owner = st.st_uid
        size = Int64(st.st_size)
        version = FileVersion(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: size,
                              modified: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }
}

/// A file and a version of its content: its device and inode, its size and the time of its last write (ns).
public struct FileVersion: Equatable, Sendable {
    public var device: UInt64, inode: UInt64, size: Int64, modified: Int64

    /// The same file (device and inode), whatever its content.
    public func sameFile(as other: FileVersion) -> Bool { device == other.device && inode == other.inode }
}

extension Descriptor {
    public struct OpenOptions: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let readOnly = OpenOptions([])
        public static let writeOnly = OpenOptions(rawValue: O_WRONLY)
        public static let readWrite = OpenOptions(rawValue: O_RDWR)
        public static let create = OpenOptions(rawValue: O_CREAT)
        /// Each write at the end of the file, as one (the change log's lines).
        public static let append = OpenOptions(rawValue: O_APPEND)
        public static let exclusive = OpenOptions(rawValue: O_EXCL)
        public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
        public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
        public static let directory = OpenOptions(rawValue: O_DIRECTORY)
        public static let noControllingTerminal = OpenOptions(rawValue: O_NOCTTY)
    }

    /// open(2), always close-on-exec. `mode` applies with `.create` (before the umask).
    public static func open(_ path: String, _ options: OpenOptions = .readOnly, mode: UInt32 = 0o600) throws(Errno) -> Descriptor {
        while true {
            let fd = Glibc.open(path, options.rawValue | O_CLOEXEC, mode_t(mode))
            if fd >= 0 { return Descriptor(adopting: fd, name: path) }
            if errno != EINTR { throw Errno.current("open", path: path) }
        }
    }

    public func status() throws(Errno) -> FileStatus {
        var st = stat()
        guard fstat(raw, &st) == 0 else { throw error("stat") }
        return FileStatus(st)
    }

    public func sync() throws(Errno) { guard fsync(raw) == 0 else { throw error("fsync") } }

    /// fchmod(2): exactly `permissions`, whatever the umask was at creation.
    public func setPermissions(_ permissions: UInt32) throws(Errno) {
        guard fchmod(raw, mode_t(permissions)) == 0 else { throw error("chmod") }
    }

    /// flock(LOCK_EX | LOCK_NB): true when taken, false when another process holds it.
    public func tryLock() throws(Errno) -> Bool {
        while true {
            if flock(raw, LOCK_EX | LOCK_NB) == 0 { return true }
            switch errno {
            case EINTR: continue
            case EWOULDBLOCK: return false
            default: throw error("lock")
            }
        }
    }
}

/// Calls on paths. Each throws an `Errno` naming the call and the path.
public enum FileSystem {
    /// stat(2), or lstat(2) with `followLinks: false`.
    public static func status(_ path: String, followLinks: Bool = true) throws(Errno) -> FileStatus {
        var st = stat()
        guard (followLinks ? stat(path, &st) : lstat(path, &st)) == 0 else {
            throw Errno.current(followLinks ? "stat" : "lstat", path: path)
        }
        return FileStatus(st)
    }

    /// Whether anything is at `path` (the link itself for a symbolic link).
    public static func exists(_ path: String) -> Bool { (try? status(path, followLinks: false)) != nil }

    /// mkdir(2) with `permissions` (less the umask).
    public static func makeDirectory(_ path: String, permissions: UInt32 = 0o700) throws(Errno) {
        guard mkdir(path, mode_t(permissions)) == 0 else { throw Errno.current("mkdir", path: path) }
    }

    /// `mkdir -p`, with `permissions` for the directories it creates.
    public static func makeDirectories(_ path: String, permissions: UInt32 = 0o700) throws(Errno) {
        if path.isEmpty || path == "/" || path == "." { return }
        if let st = try? status(path) {
            guard st.kind == .directory else { throw Errno(ENOTDIR, "mkdir", path: path) }
            return
        }
        try makeDirectories(directory(of: path), permissions: permissions)
        do { try makeDirectory(path, permissions: permissions) } catch where error.code == EEXIST {}
    }

    public static func setPermissions(_ path: String, _ permissions: UInt32) throws(Errno) {
        guard chmod(path, mode_t(permissions)) == 0 else { throw Errno.current("chmod", path: path) }
    }

    /// rename(2); the error names both paths.
    public static func rename(_ from: String, to: String) throws(Errno) {
        guard Glibc.rename(from, to) == 0 else { throw Errno.current("rename \(from) to", path: to) }
    }

    /// Swaps two names in the directory `dir` atomically (RENAME_EXCHANGE); `EINVAL` where the file system cannot.
    public static func exchange(_ a: String, _ b: String, in dir: Descriptor) throws(Errno) {
        guard cposix_exchange(dir.raw, a, b) == 0 else { throw Errno.current("exchange \(a) with", path: b) }
    }

    /// lstat(2) of `name` in the directory `dir` (fstatat with AT_SYMLINK_NOFOLLOW).
    public static func status(_ name: String, in dir: Descriptor) throws(Errno) -> FileStatus {
        var st = stat()
        guard fstatat(dir.raw, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { throw Errno.current("lstat", path: name) }
        return FileStatus(st)
    }

    public static func remove(_ path: String) throws(Errno) {
        guard unlink(path) == 0 else { throw Errno.current("unlink", path: path) }
    }

    /// access(X_OK): nil when `path` may be executed, else why not.
    public static func executableProblem(_ path: String) -> Errno? {
        access(path, X_OK) == 0 ? nil : Errno.current("access", path: path)
    }

    /// The names in a directory, "." and ".." left out; nil when it cannot be read.
    public static func names(in directory: String) -> [String]? {
        guard let d = opendir(directory) else { return nil }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Runs `body` with the process's umask set to `mask`, then puts the old one back.
    public static func withUmask<R>(_ mask: UInt32, _ body: () throws(Errno) -> R) throws(Errno) -> R {
        let old = umask(mode_t(mask))
        defer { umask(old) }
        return try body()
    }

    /// dirname(3) without touching the argument: "/a/b" → "/a", "/a" → "/", "a" → ".".
    public static func directory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }

    // MARK: Whole files

    /// Reads a whole file of at most `limit` bytes (EFBIG), not a directory (EISDIR); with `regularOnly`, nothing
    /// but a regular file (EINVAL).
    public static func readAll(_ path: String, limit: Int = 1 << 20, regularOnly: Bool = true) throws(Errno) -> [UInt8] {
        let d = try Descriptor.open(path, regularOnly ? [.nonBlocking, .noControllingTerminal] : [.noControllingTerminal])
        defer { d.close() }
        let st = try d.status()
        guard st.kind != .directory else { throw Errno(EISDIR, "open", path: path) }
        guard !regularOnly || st.kind == .regular else { throw Errno(EINVAL, "open (not a regular file)", path: path) }
        return try d.readAll(limit: limit)
    }

    /// Replaces `path` atomically through `PATH.tmp-PID` and a rename (`durable`: fsynced, the directory too),
    /// with exactly `permissions`.

    public static func writeAtomically(_ path: String, _ bytes: [UInt8], permissions: UInt32 = 0o600, durable: Bool = true) throws(Errno) {
        let tmp = "\(path).tmp-\(Posix.processID)"
        let options: Descriptor.OpenOptions = [.writeOnly, .create, .exclusive, .noFollow]
        let d: Descriptor
        do {
            d = try Descriptor.open(tmp, options, mode: permissions)
        } catch where error.code == EEXIST {
            // Left by a crashed instance that had our pid (`removeLeftovers` cleans the others).
            try? remove(tmp)
            d = try Descriptor.open(tmp, options, mode: permissions)
        }
        var ok = false
        defer { if !ok { try? remove(tmp) } }
        do {
            defer { d.close() }
            try d.setPermissions(permissions)
            try d.writeAll(bytes)
            if durable { try d.sync() }
        }
        try rename(tmp, to: path)
        ok = true
        guard durable, let dir = try? Descriptor.open(directory(of: path), [.directory]) else { return }
        try? dir.sync()
        dir.close()
    }

    /// Removes the `NAME.tmp-PID` files a killed writer left next to `path`; returns how many.
    @discardableResult
    public static func removeLeftovers(of path: String) -> Int {
        let dir = directory(of: path)
        let prefix = String(path.dropFirst(dir.count + (dir == "/" ? 0 : 1))) + ".tmp-"
        var removed = 0
        for name in names(in: dir) ?? [] where name.hasPrefix(prefix) && Int32(name.dropFirst(prefix.count)) != nil {
            if (try? remove(dir + "/" + name)) != nil { removed += 1 }
        }
        return removed
    }

    /// Moves a bad file aside (never deletes it): `state.json` → `state.json.corrupt`, `.corrupt.1`, …
    public static func moveAside(_ path: String) throws(Errno) -> String {
        var n = 0
        while true {
            let target = n == 0 ? "\(path).corrupt" : "\(path).corrupt.\(n)"
            if !exists(target) {
                try rename(path, to: target)
                return target
            }
            n += 1
        }
    }
}
