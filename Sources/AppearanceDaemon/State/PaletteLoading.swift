import AppearanceCore
import AppearanceFormats

extension AppearanceFormats.PaletteFile {
    /// Reads and parses the palette at `path`. A file that does not exist is not an error: nil.
    public static func load(path: String, home: String) throws(ConfigError) -> Palette? {
        guard let text = try readTextFile(path: path) else { return nil }
        return try parse(text, path: path, home: home)
    }
}
