import AppearanceCore
import Testing
@testable import AppearanceDaemon  // readTextFile: the bytes-to-text step every config and palette takes
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `Config.load(path:)` and `readTextFile`: the file around the config's parse (AppearanceFormats'
/// ConfigTests test the parse with string fixtures).
struct ConfigFileTests {
    @Test("a missing file is no config")
    func missing() throws {
        let dir = TemporaryDirectory()
        #expect(try Config.load(path: dir.path + "/config.toml") == nil)
        #expect(try Config.load(path: dir.path + "/no/such/dir/config.toml") == nil)
    }

    @Test("a file is read and parsed")
    func loads() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("config.toml", "default-mode = \"dark\"\nlog-level = \"info\"\n")
        #expect(try Config.load(path: path) == Config(defaultMode: .dark, logLevel: .info))
        #expect(try Config.load(path: dir.file("empty.toml", "")) == Config())
        #expect(try Config.load(path: "/dev/null") == Config())
    }

    @Test("a FIFO, a socket or a device is refused without blocking")
    func notRegular() throws {
        let dir = TemporaryDirectory()
        let fifo = dir.path + "/config.toml"
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }  // not made by dir.file: removed here, or the folder stays in /tmp
        #expect(throws: ConfigError(path: fifo, message: "is not a regular file (a FIFO, a device or a socket); only regular files are read")) {
            try Config.load(path: fifo)
        }
        #expect(throws: ConfigError(path: "/dev/zero", message: "is not a regular file (a FIFO, a device or a socket); only regular files are read")) {
            try Config.load(path: "/dev/zero")
        }
    }

    @Test("errors in a file name that file")
    func badFile() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("config.toml", "\nlog-level = \"loud\"\n")
        #expect(throws: ConfigError(path: path, line: 2, message:
            #"log-level: expected one of "error", "warning", "notice", "info" or "debug", got "loud""#)) {
            try Config.load(path: path)
        }
    }

    @Test("a directory is an error")
    func directory() {
        let dir = TemporaryDirectory()
        #expect(throws: ConfigError(path: dir.path, message: "is a directory, expected a file")) {
            try Config.load(path: dir.path)
        }
    }

    @Test("a path through a file is an error")
    func notADirectory() {
        let dir = TemporaryDirectory()
        let path = dir.file("file", "") + "/config.toml"
        #expect(throws: ConfigError(path: path, message: "cannot open: Not a directory")) {
            try Config.load(path: path)
        }
    }

    @Test("an unreadable file is an error", .enabled(if: geteuid() != 0, "root reads every file"))
    func unreadable() {
        let dir = TemporaryDirectory()
        let path = dir.file("config.toml", "default-mode = \"dark\"\n", mode: 0)
        #expect(throws: ConfigError(path: path, message: "cannot open: Permission denied")) {
            try Config.load(path: path)
        }
    }

    @Test("invalid UTF-8 is an error naming its line")
    func invalidUTF8() {
        let dir = TemporaryDirectory()
        let path = dir.file("config.toml", Array("# ok\n# caf".utf8) + [0xE9] + Array("\n".utf8))
        #expect(throws: ConfigError(path: path, line: 2, message: "not valid UTF-8 text")) {
            try Config.load(path: path)
        }
    }

    @Test("a huge file is an error")
    func tooLarge() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("config.toml", String(repeating: "# padding\n", count: 20))
        #expect(throws: ConfigError(path: path, message: "is larger than 100 bytes")) {
            try readTextFile(path: path, limit: 100)
        }
        #expect(try readTextFile(path: path, limit: 200)?.utf8.count == 200)
    }

    /// `palette = "PATH"` of the config, resolved: absolute, `~/…`, or relative to the config file's directory.
    @Test func paletteKeyInTheConfig() throws {
        let paths = Paths.resolve(socket: "/tmp/s", config: "/etc/x/config.toml") { ["HOME": "/home/u", "XDG_CONFIG_HOME": "/home/u/.config"][$0] }
        #expect(paths.paletteFile(for: Config()) == "/home/u/.config/appearanced/palette.toml")
        #expect(paths.paletteFile(for: Config(palette: "/p.toml")) == "/p.toml")
        #expect(paths.paletteFile(for: Config(palette: "~/colors.toml")) == "/home/u/colors.toml")
        #expect(paths.paletteFile(for: Config(palette: "themes/p.toml")) == "/etc/x/themes/p.toml")
    }

    /// The XDG base directories hooks and integrations are looked up in: defaults, and a relative path in
    /// any variable ignored, as the XDG spec says.
    @Test func xdgBaseDirectories() {
        let unset = Paths.resolve(socket: "/tmp/s", config: nil) { ["HOME": "/home/u"][$0] }
        #expect((unset.configHome, unset.dataHome, unset.dataDirs, unset.integrationsDir)
                == ("/home/u/.config", "/home/u/.local/share", ["/usr/local/share", "/usr/share"], nil))
        let env = ["HOME": "/home/u", "XDG_CONFIG_HOME": "cfg", "XDG_DATA_HOME": "/d", "XDG_DATA_DIRS": "/a:rel::/b",
                   "APPEARANCED_INTEGRATIONS_DIR": "integrations"]
        let set = Paths.resolve(socket: "/tmp/s", config: nil) { env[$0] }
        #expect((set.configHome, set.dataHome, set.dataDirs, set.integrationsDir) == ("/home/u/.config", "/d", ["/a", "/b"], nil))
        #expect(Paths.resolve(socket: "/tmp/s", config: nil) { ["APPEARANCED_INTEGRATIONS_DIR": "/src/integrations"][$0] }
            .integrationsDir == "/src/integrations")
    }
}

/// A directory from mkdtemp(3) for one test, removed with what the test put in it.
final class TemporaryDirectory {
    let path: String
    private var files: [String] = []

    init() {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/appearanced-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp: \(String(cString: strerror(errno)))") }
        path = String(cString: made)
    }

    func file(_ name: String, _ text: String, mode: mode_t = 0o644) -> String {
        file(name, Array(text.utf8), mode: mode)
    }

    func file(_ name: String, _ bytes: [UInt8], mode: mode_t = 0o644) -> String {
        let file = path + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0, "open \(file): \(String(cString: strerror(errno)))")
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        precondition(written == bytes.count)
        close(fd)
        chmod(file, mode)
        files.append(file)
        return file
    }

    deinit {
        for file in files { unlink(file) }
        rmdir(path)
    }
}
