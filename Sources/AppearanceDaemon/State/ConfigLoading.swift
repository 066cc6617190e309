import AppearanceCore
import AppearanceFormats
import AppearancePosix

// The config's and the palette's types live in AppearanceFormats; appearanced's main names them through here.
public typealias Config = AppearanceFormats.Config
public typealias ConfigError = AppearanceFormats.ConfigError
public typealias PaletteFile = AppearanceFormats.PaletteFile

extension AppearanceFormats.Config {
    /// Reads and parses the config file at `path`. A file that does not exist is not an error: nil.
    public static func load(path: String) throws(ConfigError) -> Config? {
        guard let text = try readTextFile(path: path) else { return nil }
        return try parse(text, path: path)
    }
}

extension AppearanceFormats.PaletteFile {
    /// Reads and parses the palette at `path`. A file that does not exist is not an error: nil.
    public static func load(path: String, home: String) throws(ConfigError) -> Palette? {
        guard let text = try readTextFile(path: path) else { return nil }
        return try parse(text, path: path, home: home)
    }
}

/// Reads a whole small text file with open(2)/read(2): nil if it does not exist; an error naming the path if
/// it cannot be read, is a directory, is larger than `limit` bytes or is not UTF-8.
func readTextFile(path: String, limit: Int = 1 << 20) throws(ConfigError) -> String? {
    // `--config /dev/null`: the defaults. Every other non-regular file is refused without blocking (a FIFO).
    if path == "/dev/null" { return "" }
    let bytes: [UInt8]
    do {
        bytes = try FileSystem.readAll(path, limit: limit, regularOnly: true)
    } catch {
        switch error.code {
        case Errno.noSuchFile: return nil
        case Errno.isDirectory: throw ConfigError(path: path, message: "is a directory, expected a file")
        case Errno.tooBig: throw ConfigError(path: path, message: "is larger than \(limit) bytes")
        case Errno.invalid: throw ConfigError(path: path, message: "is not a regular file (a FIFO, a device or a socket); only regular files are read")
        default: throw ConfigError(path: path, message: "cannot \(error.call): \(error.message)")
        }
    }
    return try configText(bytes, path: path)
}
