import Testing
@testable import AppearanceCore

struct ColorTests {
    @Test(arguments: [
        ("#fff", Color(255, 255, 255)), ("#FFFFFF", Color(255, 255, 255)), ("#262626", Color(0x26, 0x26, 0x26)),
        ("#26262699", Color(0x26, 0x26, 0x26, alpha: 0x99)), ("#262626@60%", Color(0x26, 0x26, 0x26, alpha: 153)),
        ("#000000@8%", Color(0, 0, 0, alpha: 20)), ("#FFFFFF@30%", Color(255, 255, 255, alpha: 77)),
        ("#abc@100%", Color(0xaa, 0xbb, 0xcc)), ("#F8F9FA", Color(0xf8, 0xf9, 0xfa)), ("#000@0%", Color(0, 0, 0, alpha: 0)),
    ])
    func parses(text: String, color: Color) {
        #expect(Color(parsing: text) == color)
    }

    @Test(arguments: ["", "#", "fff", "#ff", "#ffff", "#fffff", "#ggg", "#262626@60", "#262626@101%", "#26262699@50%",
                      "#262626@-1%", "#262626@x%", "#1234567", "red"])
    func refuses(text: String) {
        #expect(Color(parsing: text) == nil)
    }

    @Test func formats() {
        #expect(Color(0x26, 0x26, 0x26).hex == "#262626")
        #expect(Color(255, 255, 255, alpha: 153).hex == "#ffffff99")
        #expect(Color(255, 255, 255, alpha: 153).alphaFraction == "0.6")
        #expect(Color(0, 0, 0, alpha: 20).alphaFraction == "0.08")
        #expect(Color(0, 0, 0, alpha: 77).alphaFraction == "0.3")
        #expect(Color(0, 0, 0).alphaFraction == "1")
        #expect(Color(255, 255, 255, alpha: 153).over(Color(0, 0, 0)) == Color(153, 153, 153))
    }

    @Test func portalAccentColor() {
        #expect(Traits.accent(red: 0.2, green: 0.5, blue: 1) == Color(51, 128, 255))
        #expect(Traits.accent(red: 0, green: 0, blue: 0) == Color(0, 0, 0))
        // Out of range is the portal's "unset".
        #expect(Traits.accent(red: -1, green: -1, blue: -1) == nil)
        #expect(Traits.accent(red: 0.5, green: 1.5, blue: 0) == nil)
        #expect(Traits.accent(red: .nan, green: 0, blue: 0) == nil)
    }
}

/// Every case of the best-match order: exact variant, then the same mode at normal contrast, then the default.
struct BestMatchTests {
    static let white = PaletteValue.color(Color(255, 255, 255))
    static let black = PaletteValue.color(Color(0, 0, 0))
    static let grey = PaletteValue.color(Color(128, 128, 128))
    static let red = PaletteValue.color(Color(255, 0, 0))

    typealias Case = (name: String, entry: PaletteEntry, variant: Variant, value: PaletteValue, match: Match)

    static let cases: [Case] = [
        // All four variants: always exact.
        ("full, light", PaletteEntry(kind: .color, variants: [Variant(.light): white, Variant(.light, .high): red,
                                                              Variant(.dark): black, Variant(.dark, .high): grey]),
         Variant(.light), white, .exact),
        ("full, light high", PaletteEntry(kind: .color, variants: [Variant(.light): white, Variant(.light, .high): red,
                                                                   Variant(.dark): black, Variant(.dark, .high): grey]),
         Variant(.light, .high), red, .exact),
        ("full, dark high", PaletteEntry(kind: .color, variants: [Variant(.light): white, Variant(.light, .high): red,
                                                                  Variant(.dark): black, Variant(.dark, .high): grey]),
         Variant(.dark, .high), grey, .exact),
        // Light and dark only: high contrast falls back to the same mode at normal contrast.
        ("light/dark, dark", PaletteEntry(kind: .color, variants: [Variant(.light): white, Variant(.dark): black]),
         Variant(.dark), black, .exact),
        ("light/dark, dark high", PaletteEntry(kind: .color, variants: [Variant(.light): white, Variant(.dark): black]),
         Variant(.dark, .high), black, .normalContrast),
        ("light/dark, light high", PaletteEntry(kind: .color, variants: [Variant(.light): white, Variant(.dark): black]),
         Variant(.light, .high), white, .normalContrast),
        // A default only: every variant gets it.
        ("default, light", PaletteEntry(kind: .color, fallback: grey), Variant(.light), grey, .fallback),
        ("default, dark high", PaletteEntry(kind: .color, fallback: grey), Variant(.dark, .high), grey, .fallback),
        // A default and a dark variant: light uses the default; dark high uses dark (step 2 before step 3).
        ("default+dark, light", PaletteEntry(kind: .color, fallback: grey, variants: [Variant(.dark): black]),
         Variant(.light), grey, .fallback),
        ("default+dark, light high", PaletteEntry(kind: .color, fallback: grey, variants: [Variant(.dark): black]),
         Variant(.light, .high), grey, .fallback),
        ("default+dark, dark high", PaletteEntry(kind: .color, fallback: grey, variants: [Variant(.dark): black]),
         Variant(.dark, .high), black, .normalContrast),
        // Only a high-contrast variant besides the default: normal contrast takes the default, not the high one.
        ("default+dark-high, dark", PaletteEntry(kind: .color, fallback: grey, variants: [Variant(.dark, .high): red]),
         Variant(.dark), grey, .fallback),
        ("default+dark-high, dark high", PaletteEntry(kind: .color, fallback: grey, variants: [Variant(.dark, .high): red]),
         Variant(.dark, .high), red, .exact),
        // Assets resolve the same way.
        ("asset", PaletteEntry(kind: .asset, variants: [Variant(.light): .asset("/l.png"), Variant(.dark): .asset("/d.png")]),
         Variant(.dark, .high), .asset("/d.png"), .normalContrast),
    ]

    @Test(arguments: cases.indices)
    func bestMatch(index: Int) throws {
        let c = Self.cases[index]
        let r = try #require(c.entry.resolve(c.variant), "\(c.name)")
        #expect(r.value == c.value, "\(c.name)")
        #expect(r.match == c.match, "\(c.name)")
    }

    @Test func incompleteEntriesAreDetected() {
        #expect(!PaletteEntry(kind: .color, variants: [Variant(.light): Self.white]).isComplete)
        #expect(!PaletteEntry(kind: .color, variants: [Variant(.light, .high): Self.white, Variant(.dark, .high): Self.black]).isComplete)
        #expect(PaletteEntry(kind: .color, variants: [Variant(.light): Self.white, Variant(.dark): Self.black]).isComplete)
        #expect(PaletteEntry(kind: .color, fallback: Self.grey).isComplete)
    }

    @Test func accentIsTheSystemAccentElseItsFallback() throws {
        var p = Palette()
        p.set("accent", PaletteEntry(kind: .color, fallback: Self.grey, variants: [Variant(.dark): Self.red]))
        p.set("fill.bg", PaletteEntry(kind: .color, variants: [Variant(.light): Self.white, Variant(.dark): Self.black]))
        let blue = Color(0x35, 0x84, 0xe4)
        #expect(p.resolve("accent", Variant(.light), accent: blue)?.value == .color(blue))
        #expect(p.resolve("accent", Variant(.light), accent: blue)?.match == .systemAccent)
        #expect(p.resolve("accent", Variant(.dark, .high), accent: blue)?.value == .color(blue))
        #expect(p.resolve("accent", Variant(.light), accent: nil)?.value == Self.grey)
        #expect(p.resolve("accent", Variant(.dark), accent: nil)?.value == Self.red)
        // Only the token named accent.
        #expect(p.resolve("fill.bg", Variant(.dark), accent: blue)?.value == Self.black)
        #expect(p.resolve("nope", Variant(.dark), accent: blue) == nil)
        // A palette without an accent entry has no accent token, whatever the desktop says.
        #expect(Palette().resolve("accent", Variant(.dark), accent: blue) == nil)
        let all = p.resolved(Variant(.dark), accent: blue)
        #expect(all.tokens.map(\.name) == ["accent", "fill.bg"])
        #expect(all["accent"] == .color(blue))
    }

    @Test func variantOfAState() {
        var s = AppearanceState(mode: .dark, system: .dark, override: .system, source: .system, seq: 0, instance: "i")
        #expect(s.variant == Variant(.dark, .normal))
        s.traits.contrast = .high
        #expect(s.variant == Variant(.dark, .high))
    }
}
