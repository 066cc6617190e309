import AppearanceCLI
import AppearanceCore
import AppearanceFormats
import AppearanceProtocol

// `--format` of `appearancectl color` and `palette` to AppearanceFormats' PaletteOutput, which writes the text.

func format(_ c: Color, _ f: ColorFormat) -> String {
    switch f {
    case .hex: return c.hex
    case .rgb: return PaletteOutput.rgb(c)
    case .css: return PaletteOutput.css(c)
    }
}

func render(_ p: ResolvedPalette, as f: PaletteFormat) -> String {
    switch f {
    case .json: return p.json.text
    case .css: return PaletteOutput.css(p)
    case .sh: return PaletteOutput.sh(p)
    case .gtk: return PaletteOutput.gtk(p)
    }
}
