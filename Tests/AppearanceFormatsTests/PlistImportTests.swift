import AppearanceFormats
import Testing

/// `appearancectl palette import`: LFLDarkModeKit's flat plists into palette.toml, with the end-to-end
/// tests' golden bundles and more cases as strings.
struct PlistImportTests {
    @Test func theGoldenBundlesBecomeTheGoldenPalette() throws {
        let light = try #require(golden("lfl-light.plist")), dark = try #require(golden("lfl-dark.plist"))
        let result = try convertLFL(light: light, lightFile: "GOLDEN/lfl-light.plist", dark: dark, darkFile: "GOLDEN/lfl-dark.plist")
        #expect(result.toml == golden("lfl-import.toml"))
        #expect(result.onlyLight == ["PColorLightOnly"] && result.onlyDark == ["PColorDarkOnly"])
        // What it writes is a palette appearanced reads: AARRGGBB became #RRGGBBAA.
        let palette = try PaletteFile.parse(result.toml, path: "imported.toml", home: "/home/u")
        #expect(palette.resolved(.init(.light), accent: nil)["PColorDivider"]?.color?.hex == "#00000014")
        #expect(palette.resolved(.init(.dark), accent: nil)["PColorDarkOnly"]?.color?.hex == "#202020")
        #expect(palette.resolved(.init(.dark), accent: nil)["Brand & Logo"]?.color?.hex == "#78aeed")
    }

    @Test func aFlatPlistIsReadInOrderWithLines() throws {
        let text = """
            <?xml version="1.0"?>
            <!DOCTYPE plist>
            <plist version="1.0"><dict>
              <!-- a comment -->
              <key>b &amp; c</key>
              <string>&#x23;FFF&#65;AA</string>
              <key>a</key><string/>
            </dict></plist>
            """
        let pairs = try readFlatPlist(text, file: "x.plist")
        #expect(pairs.map(\.key) == ["b & c", "a"])
        #expect(pairs.map(\.value) == ["#FFFAAA", ""])
        #expect(pairs.map(\.line) == [6, 7])
    }

    @Test(arguments: [
        ("<plist><dict><key>A</key><string>12345</string></dict></plist>", #"bad.plist:1: A: "12345" is not a hex color (RRGGBB or AARRGGBB)"#),
        ("<plist><array/></plist>", "bad.plist:1: expected <dict> inside <plist> (a flat dictionary of colors)"),
        ("<plist><dict>\n<key>A</key>\n<integer>1</integer></dict></plist>", "bad.plist:3: A: expected a <string> value, found <integer>"),
        ("<plist><dict><key>A</key><string>000000</string><key>A</key><string>000000</string></dict></plist>",
         #"bad.plist:1: duplicate key "A""#),
        ("<dict></dict>", "bad.plist:1: expected <plist>"),
        ("<plist><dict></dict></plist>\ntext", "bad.plist:2: expected a tag, found text"),
        ("<plist><dict></dict></plist><plist>", "bad.plist:1: unexpected content after </plist>"),
        ("<plist><dict><key>A</key><string>&bogus;</string></dict></plist>", "bad.plist:1: unknown entity &bogus;"),
        ("<plist><dict><!-- never closed", #"bad.plist:1: unterminated markup (no "-->")"#),
    ])
    func badPlistsAreErrorsNamingFileAndLine(text: String, message: String) {
        #expect(throws: ImportError(description: message)) {
            try convertLFL(light: text, lightFile: "bad.plist", dark: "<plist><dict></dict></plist>", darkFile: "dark.plist")
        }
    }

    @Test(arguments: [("262626", "#262626"), ("#ff00aa", "#FF00AA"), ("0x99262626", "#26262699"), (" 14000000\n", "#00000014"),
                      ("12345", nil), ("GGGGGG", nil), ("", nil), ("#1234567", nil)] as [(String, String?)])
    func lflColors(value: String, color: String?) {
        #expect(lflColor(value) == color)
    }

    /// A key that is not a bare TOML key is quoted; a file name cannot end the header comment.
    @Test func keysAndFileNamesCannotInjectTOML() throws {
        let light = #"<plist><dict><key>a "b"\c</key><string>000000</string><key>x]</key><string>111111</string></dict></plist>"#
        let result = try convertLFL(light: light, lightFile: "l.plist\n[evil]", dark: "<plist><dict></dict></plist>", darkFile: "d.plist")
        #expect(result.toml.contains(#"[a "b"\c]"#) == false)
        #expect(result.toml.contains(#"["a \"b\"\\c"]"#), "\(result.toml)")
        #expect(result.toml.contains(#"#   light: l.plist\u{a}[evil]"#), "\(result.toml)")
        let palette = try PaletteFile.parse(result.toml, path: "imported.toml", home: "/home/u")
        #expect(palette.names == [#"a "b"\c"#, "x]"])
    }
}
