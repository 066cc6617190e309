import AppearanceCLI
import AppearanceCore
import AppearanceKit
import AppearanceProtocol

// Output of `appearancectl color`, `asset` and `palette`: pure functions from resolved values to text.

func format(_ c: Color, _ f: ColorFormat) -> String {
    switch f {
    case .hex: return c.hex
    case .rgb: return "\(c.red) \(c.green) \(c.blue)" + (c.isOpaque ? "" : " \(c.alphaFraction)")
    case .css: return "rgb(\(c.red) \(c.green) \(c.blue)" + (c.isOpaque ? ")" : " / \(c.alphaFraction))")
    }
}

/// A token name as an identifier: every character other than a letter or digit becomes `separator`.
func identifier(_ name: String, _ separator: Character, upper: Bool = false) -> String {
    String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? (upper ? Character($0.uppercased()) : $0) : separator })
}

/// Single-quoted for sh: `'…'`, with `'` written as `'\''`.
func shellQuoted(_ s: String) -> String {
    "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
}

func cssString(_ s: String) -> String {
    "\"" + s.replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"") + "\""
}

extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

func render(_ p: ResolvedPalette, as f: PaletteFormat) -> String {
    var lines: [String] = []
    let header = "appearanced palette: \(p.variant.mode.rawValue), \(p.variant.contrast.rawValue) contrast"
    switch f {
    case .json:
        return p.json.text
    case .css:
        lines.append("/* \(header) */")
        lines.append(":root {")
        for t in p.tokens {
            switch t.value {
            case .color(let c): lines.append("  --\(identifier(t.name, "-")): \(c.hex);")
            case .asset(let path): lines.append("  --\(identifier(t.name, "-")): url(\(cssString(path)));")
            }
        }
        lines.append("}")
    case .sh:
        lines.append("# \(header)")
        lines.append("export APPEARANCE=\(p.variant.mode.rawValue)")
        for t in p.tokens {
            lines.append("export PALETTE_\(identifier(t.name, "_", upper: true))=\(shellQuoted(t.value.text))")
        }
    case .gtk:
        lines.append("/* \(header) */")
        for t in p.tokens {
            switch t.value {
            case .color(let c):
                let value = c.isOpaque ? c.hex : "rgba(\(c.red), \(c.green), \(c.blue), \(c.alphaFraction))"
                lines.append("@define-color \(identifier(t.name, "_")) \(value);")
            case .asset(let path):
                lines.append("/* \(t.name): \(path) (an asset: GTK colors cannot hold it) */")
            }
        }
    }
    return lines.joined(separator: "\n")
}

/// Both modes side by side: for each token its name, then per mode a truecolor swatch and the value.
/// Translucent colors are drawn over that mode's `fill.bg` (white or black when the palette has none),
/// as they would appear on the page.
/// With `color: false` (a pipe, `NO_COLOR`, `TERM=dumb`, `--color=never`) the same table without escape
/// sequences: names and values only.
func preview(light: ResolvedPalette, dark: ResolvedPalette, color: Bool = true) -> String {
    func esc(_ s: String) -> String { color ? "\u{1B}[" + s : "" }
    func background(_ p: ResolvedPalette) -> Color {
        p["fill.bg"]?.color.map { $0.over(p.variant.mode == .dark ? Color(0, 0, 0) : Color(255, 255, 255)) }
            ?? (p.variant.mode == .dark ? Color(0, 0, 0) : Color(255, 255, 255))
    }
    let names = light.tokens.map(\.name) + dark.tokens.map(\.name).filter { n in !light.tokens.contains { $0.name == n } }
    let nameWidth = max(5, names.map(\.count).max() ?? 0)
    let valueWidth = 11
    func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
    func cell(_ value: PaletteValue?, in p: ResolvedPalette) -> String {
        let bg = background(p)
        switch value {
        case .color(let c)? where !color:
            return "       " + "  " + pad(c.hex, valueWidth)
        case .color(let c)?:
            let shown = c.over(bg)
            // The swatch sits on the mode's background, so a translucent color looks as it will.
            return esc("48;2;\(bg.red);\(bg.green);\(bg.blue)m") + " " + esc("48;2;\(shown.red);\(shown.green);\(shown.blue)m")
                + "      " + esc("48;2;\(bg.red);\(bg.green);\(bg.blue)m") + " " + esc("0m") + " " + pad(c.hex, valueWidth)
        case .asset(let path)?:
            let base = path.split(separator: "/").last.map(String.init) ?? path
            return pad("▣ " + base, 9 + valueWidth)
        case nil:
            return pad("-", 9 + valueWidth)
        }
    }
    var lines: [String] = []
    let contrast = light.variant.contrast == .high ? " (high contrast)" : ""
    lines.append(pad("", nameWidth) + "  " + esc("1m") + pad("light" + contrast, 9 + valueWidth) + "  " + pad("dark" + contrast, 9 + valueWidth) + esc("0m"))
    for name in names {
        lines.append(pad(shown(name), nameWidth) + "  " + cell(light[name], in: light) + "  " + cell(dark[name], in: dark))
    }
    if names.isEmpty { lines.append("(the palette is empty: see appearancectl status)") }
    return lines.joined(separator: "\n")
}
