import AppearanceCore
import AppearanceFormats
import Testing

struct PaletteFileTests {
    static let path = "/home/u/.config/appearanced/palette.toml"
    static func parse(_ text: String) throws(ConfigError) -> Palette {
        try PaletteFile.parse(text, path: path, home: "/home/u")
    }

    static let shipped = repository + "/config/palette.toml"

    @Test func theShippedPaletteHasTheSeedTokens() throws {
        let text = try configText(try #require(fileBytes(Self.shipped)), path: Self.shipped)
        let p = try PaletteFile.parse(text, path: Self.shipped, home: "/home/u")
        #expect(p.names == ["fill.bg", "fill.card", "fill.gap", "fill.divider", "text.title", "text.desc", "text.note",
                            "accent", "wallpaper"])
        let light = p.resolved(Variant(.light), accent: nil), dark = p.resolved(Variant(.dark), accent: nil)
        let expected: [(String, String, String)] = [
            ("fill.bg", "#ffffff", "#262626"), ("fill.card", "#fafafa", "#3c3c3c"), ("fill.gap", "#f8f9fa", "#202020"),
            ("fill.divider", "#00000014", "#ffffff4d"), ("text.title", "#262626", "#ffffff"),
            ("text.desc", "#26262699", "#ffffff99"), ("text.note", "#26262666", "#ffffff66"),
        ]
        for (name, l, d) in expected {
            #expect(light[name]?.color?.hex == l, "\(name)")
            #expect(dark[name]?.color?.hex == d, "\(name)")
        }
        #expect(dark["wallpaper"] == .asset("/usr/share/backgrounds/gnome/adwaita-d.jpg"))
    }

    @Test func formsOfTokens() throws {
        let p = try Self.parse("""
            brand = "#3584E4"
            text.desc = { light = "#262626@60%", dark = "#FFFFFF@60%" }
            [fill]
            bg = { light = "#fff", dark = "#000", dark-high = "#000000FF" }
            [fill.card]
            default = "#FAFAFA"
            dark = "#3C3C3C"
            ["icons"]
            home = { light = "~/icons/home-light.svg", dark = "/usr/share/icons/home-dark.svg" }
            """)
        #expect(p.names == ["brand", "text.desc", "fill.bg", "fill.card", "icons.home"])
        #expect(p.resolve("brand", Variant(.dark, .high), accent: nil)?.value == .color(Color(0x35, 0x84, 0xe4)))
        #expect(p.resolve("text.desc", Variant(.light), accent: nil)?.value == .color(Color(0x26, 0x26, 0x26, alpha: 153)))
        #expect(p.resolve("fill.card", Variant(.light, .high), accent: nil)?.value == .color(Color(0xfa, 0xfa, 0xfa)))
        #expect(p.resolve("icons.home", Variant(.light), accent: nil)?.value == .asset("/home/u/icons/home-light.svg"))
        #expect(try Self.parse("").isEmpty)
    }

    static let errors: [(String, String)] = [
        ("[fill.bg]\nlight = \"#FFFFFF\"\n", "palette.toml:1: fill.bg: no value for dark (give a default, or both light and dark)"),
        ("[fill.bg]\nlight = \"#FFFFFF\"\ndark = \"262626\"\n",
         ##"palette.toml:3: fill.bg.dark: expected a color (#RGB, #RRGGBB or #RRGGBBAA, optionally with an alpha as in "#262626@60%") or an asset path starting with / or ~/, got "262626""##),
        ("[fill.bg]\nlight = \"#FFFFFF\"\ndark = \"#26262\"\n", ##"palette.toml:3: fill.bg.dark: invalid color "#26262""##),
        ("\n\n[text.title]\nlight = \"#000\"\ndrak = \"#fff\"\n", ##"palette.toml:5: text.title.drak: unknown variant "drak""##),
        ("fill.bg = 3\n", "palette.toml:1: fill.bg: expected a color, an asset path or a table of variants, got an integer"),
        ("[fill.bg]\nlight = \"#fff\"\ndark = 0\n", "palette.toml:3: fill.bg.dark: expected a string, got an integer"),
        ("[w]\nlight = \"/a.png\"\ndark = \"#000\"\n", "palette.toml:3: w.dark: is a color but w has asset paths; an entry holds one kind"),
        ("accent = \"/a.png\"\n", "palette.toml:1: accent: must be a color"),
        ("[fill]\n", "palette.toml:1: fill: empty table"),
        ("[a]\nlight = \"#fff\"\ndark = \"#000\"\n[a.b]\ndefault = \"#111\"\n", "palette.toml:4: a.b: a token cannot also be a group"),
        ("[a]\nlight = \"#fff\"\nlight = \"#000\"\n", "palette.toml:3:1: \"a.light\" is already defined"),
        // The bounds every reply that carries the palette is sized for (ReplyBounds; maxReplyLength).
        ("\(String(repeating: "n", count: 256)) = \"#fff\"\n", "palette.toml:1: \(String(repeating: "n", count: 256)): a token name is at most 255 bytes"),
        ("w = \"/\(String(repeating: "p", count: 4_096))\"\n", "palette.toml:1: w: an asset path is at most 4096 bytes"),
        ((0...4_096).map { "t\($0) = \"#fff\"\n" }.joined(), "palette.toml:4097: t4096: a palette holds at most 4096 tokens"),
    ]

    @Test func aPaletteAtTheBoundsIsRead() throws {
        let text = (0..<4_096).map { "t\($0) = \"#fff\"\n" }.joined() + "\(String(repeating: "n", count: 250)) = \"#000\"\n"
        #expect(throws: ConfigError.self) { try Self.parse(text) }  // 4,097 tokens
        let fits = (0..<4_095).map { "t\($0) = \"#fff\"\n" }.joined() + "\(String(repeating: "n", count: 255)) = \"/\(String(repeating: "p", count: 4_095))\"\n"
        #expect(try Self.parse(fits).names.count == 4_096)
    }

    @Test("errors name the file, the line and the key", arguments: errors)
    func error(text: String, expected: String) {
        do {
            let p = try Self.parse(text)
            Issue.record("parsed as \(p)")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
            #expect(error.path == Self.path && error.line != nil)
        }
    }

    @Test func paletteKeyInTheConfig() throws {
        #expect(try Config.parse("palette = \"~/p.toml\"", path: "c.toml").palette == "~/p.toml")
    }
}
