import AppearanceCore
import AppearanceFormats
import AppearanceProtocol
import Testing

/// The palette's output formats (`appearancectl palette --format`, `color --format`, `palette --preview`) for
/// the shipped palette, against the end-to-end tests' golden files: the same text without a daemon between.
struct PaletteOutputTests {
    static let shipped: Palette? = {
        let path = repository + "/config/palette.toml"
        guard let bytes = fileBytes(path), let text = try? configText(bytes, path: path) else { return nil }
        return try? PaletteFile.parse(text, path: path, home: "/home/u")
    }()

    /// appearancectl prints each of them as a line: with a newline at the end.
    static func line(_ s: String) -> String { s + "\n" }

    static func resolved(_ mode: Mode, _ contrast: Contrast = .normal) throws -> ResolvedPalette {
        try #require(shipped).resolved(Variant(mode, contrast), accent: nil)
    }

    @Test(arguments: ["css", "sh", "gtk", "json"])
    func everyFormatMatchesTheGoldenFile(format: String) throws {
        func text(_ p: ResolvedPalette) -> String {
            switch format {
            case "css": PaletteOutput.css(p)
            case "sh": PaletteOutput.sh(p)
            case "gtk": PaletteOutput.gtk(p)
            default: p.json.text
            }
        }
        #expect(Self.line(text(try Self.resolved(.light))) == golden("palette-light.\(format)"))
        #expect(Self.line(text(try Self.resolved(.dark, .high))) == golden("palette-dark-high.\(format)"))
    }

    @Test func colorsMatchTheGoldenFile() throws {
        var colors = ""
        for token in ["fill.bg", "fill.divider", "text.desc", "accent"] {
            for mode in [Mode.light, .dark] {
                let c = try #require(try Self.resolved(mode)[token]?.color, "\(token)")
                for (format, text) in [("hex", c.hex), ("rgb", PaletteOutput.rgb(c)), ("css", PaletteOutput.css(c))] {
                    colors += "\(token) \(mode.rawValue) \(format): " + Self.line(text)
                }
            }
        }
        #expect(colors == golden("colors.txt"))
    }

    @Test func previewMatchesTheGoldenFiles() throws {
        let preview = PaletteOutput.preview(light: try Self.resolved(.light), dark: try Self.resolved(.dark))
        #expect(Self.line(preview) == golden("preview.ansi"))
        let high = PaletteOutput.preview(light: try Self.resolved(.light, .high), dark: try Self.resolved(.dark, .high))
        #expect(Self.line(high) == golden("preview-high.ansi"))
        // Without colors: the same table, no escape sequences.
        let plain = PaletteOutput.preview(light: try Self.resolved(.light), dark: try Self.resolved(.dark), color: false)
        #expect(!plain.contains("\u{1B}") && plain.contains("fill.bg  ") && plain.contains("#ffffff"), "\(plain)")
    }

    static func palette(_ tokens: [(String, PaletteValue)], _ variant: Variant = Variant(.dark)) -> ResolvedPalette {
        ResolvedPalette(variant: variant, tokens: tokens.map { PaletteToken(name: $0.0, value: $0.1) })
    }

    /// Names become identifiers; values are quoted for sh and CSS, whatever they hold.
    @Test func namesAndValuesAreEscaped() throws {
        let p = Self.palette([("text.desc-2", .color(try #require(Color(parsing: "#FFFFFF99")))),
                              ("wall paper", .asset(#"/home/u/it's "mine"\x.jpg"#))])
        #expect(PaletteOutput.css(p) == """
            /* appearanced palette: dark, normal contrast */
            :root {
              --text-desc-2: #ffffff99;
              --wall-paper: url("/home/u/it's \\"mine\\"\\\\x.jpg");
            }
            """)
        #expect(PaletteOutput.sh(p) == """
            # appearanced palette: dark, normal contrast
            export APPEARANCE=dark
            export PALETTE_TEXT_DESC_2='#ffffff99'
            export PALETTE_WALL_PAPER='/home/u/it'\\''s "mine"\\x.jpg'
            """)
        #expect(PaletteOutput.gtk(p) == """
            /* appearanced palette: dark, normal contrast */
            @define-color text_desc_2 rgba(255, 255, 255, 0.6);
            /* wall paper: /home/u/it's "mine"\\x.jpg (an asset: GTK colors cannot hold it) */
            """)
    }

    @Test func anEmptyPalette() {
        let p = Self.palette([], Variant(.light))
        #expect(PaletteOutput.css(p) == "/* appearanced palette: light, normal contrast */\n:root {\n}")
        #expect(PaletteOutput.preview(light: p, dark: Self.palette([]), color: false)
                .hasSuffix("\n(the palette is empty: see appearancectl status)"))
    }

    /// A token's name with an escape sequence in it is shown, not sent to the terminal.
    @Test func previewShowsControlCharactersInNames() {
        let p = Self.palette([("evil\u{1B}[2J", .asset("/a.png"))])
        let text = PaletteOutput.preview(light: p, dark: p, color: false)
        #expect(!text.contains("\u{1B}") && text.contains(#"evil\u{1b}[2J"#), "\(text)")
    }
}
