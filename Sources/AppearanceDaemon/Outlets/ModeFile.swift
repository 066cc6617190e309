import AppearanceCore
import AppearancePosix

/// The status file (`mode` next to the socket), and a spare (`.mode-other`) holding the other mode that a change
/// swaps in with one renameat2(RENAME_EXCHANGE) (docs/decisions.md, "The mode file's spare").
struct ModeFile {
    let path: String
    let spare: String
    private let name: String
    private static let spareName = ".mode-other"
    /// The directory of both, once a spare was written.
    private var directory: Descriptor?
    /// What the mode file says, and the versions of both files, while the spare holds the other mode.
    private var ready: (mode: Mode, file: FileVersion, spare: FileVersion)?
    /// False once the file system refused an exchange: no spare from then on.
    private var exchanges = true
    /// The swap (renameat2 with RENAME_EXCHANGE); a test stands in a file system that cannot.
    var exchange: (String, String, Descriptor) throws(Errno) -> Void = { a, b, dir throws(Errno) in
        try FileSystem.exchange(a, b, in: dir)
    }

    init(path: String) {
        self.path = path
        spare = FileSystem.directory(of: path) + "/" + Self.spareName
        name = String(path.split(separator: "/").last ?? "mode")
    }

    private static func content(_ mode: Mode) -> [UInt8] { Array("\(mode.rawValue)\n".utf8) }

    /// Makes the mode file say `mode`.
    mutating func write(_ mode: Mode) throws(Errno) {
        if let r = ready, r.mode == mode.opposite, let directory,
           (try? FileSystem.status(Self.spareName, in: directory))?.version == r.spare {
            do {
                try exchange(Self.spareName, name, directory)
                ready = (mode, r.spare, r.file)
                return
            } catch where error.code == Errno.invalid || error.code == Errno.notImplemented {
                exchanges = false
            } catch {}
        }
        ready = nil
        try FileSystem.writeAtomically(path, Self.content(mode), permissions: 0o644, durable: false)
        guard exchanges else { return }
        // The other mode, ready for the next change; without it, the next change writes in full again.
        do {
            try FileSystem.writeAtomically(spare, Self.content(mode.opposite), permissions: 0o644, durable: false)
            let dir = try directory ?? Descriptor.open(FileSystem.directory(of: path), [.readOnly, .directory])
            directory = dir
            ready = (mode, try FileSystem.status(name, in: dir).version, try FileSystem.status(Self.spareName, in: dir).version)
        } catch {
            try? FileSystem.remove(spare)
            directory = nil  // opened again next time: the directory may be another one by then
        }
    }

    /// Both files gone (a clean stop: no mode file, no daemon).
    mutating func remove() {
        ready = nil
        directory = nil
        try? FileSystem.remove(path)
        try? FileSystem.remove(spare)
    }
}
