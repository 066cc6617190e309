/// `reload`'s result (protocol 5): the config and palette files read again, as SIGHUP does, and how each was read.
public struct ReloadReply: Equatable, Sendable {
    /// The config file that is now in force, or how it was read (`…/config.toml: no such file (the defaults)`).
    public var config: String
    /// The palette file and how it was read (`…/palette.toml: 9 tokens`), or why it was not used.
    public var palette: String
    /// False when the palette file was read but not used (a mistake in it); absent from older daemons (true).
    public var paletteUsed: Bool

    public init(config: String, palette: String, paletteUsed: Bool = true) {
        (self.config, self.palette, self.paletteUsed) = (config, palette, paletteUsed)
    }

    public var json: JSON {
        .object([("reloaded", .bool(true)), ("config", .string(config)), ("palette", .string(palette)),
                 ("paletteUsed", .bool(paletteUsed))])
    }

    public init?(json: JSON) {
        guard json["reloaded"]?.boolValue == true, let config = json["config"]?.stringValue else { return nil }
        self.init(config: config, palette: json["palette"]?.stringValue ?? "", paletteUsed: json["paletteUsed"]?.boolValue ?? true)
    }
}
