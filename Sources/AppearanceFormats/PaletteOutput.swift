import AppearanceCore
import AppearanceProtocol

// Output of `appearancectl color`, `asset` and `palette`: pure functions from resolved values to text.

public enum PaletteOutput {
    /// `38 38 38`, or `38 38 38 0.6`: numbers for `read r g b a` in a shell.
    public static func rgb(_ c: Color) -> String {
        "\(c.red) \(c.green) \(c.blue)" + (c.isOpaque ? "" : " \(c.alphaFraction)")
    }

    /// `rgb(38 38 38)`, or `rgb(38 38 38 / 0.6)`.
    public static func css(_ c: Color) -> String {
        "rgb(\(c.red) \(c.green) \(c.blue)" + (c.isOpaque ? ")" : " / \(c.alphaFraction))")
    }

    private static func header(_ p: ResolvedPalette) -> String {
        "appearanced palette: \(p.variant.mode.rawValue), \(p.variant.contrast.rawValue) contrast"
    }

    /// CSS custom properties on `:root`: `--fill-bg: #ffffff;`, assets as `url("…")`.
    public static func css(_ p: ResolvedPalette) -> String {
        (["/* \(header(p)) */", ":root {"] + p.tokens.map { t in
            switch t.value {
            case .color(let c): "  --\(identifier(t.name, "-")): \(c.hex);"
            case .asset(let path): "  --\(identifier(t.name, "-")): url(\(cssString(path)));"
            }
        } + ["}"]).joined(separator: "\n")
    }

    /// sh: `export APPEARANCE=dark` and `export PALETTE_FILL_BG='#262626'`, values single-quoted.
    public static func sh(_ p: ResolvedPalette) -> String {
        let exports = p.tokens.map { "export PALETTE_\(identifier($0.name, "_", upper: true))=\(shellQuoted($0.value.text))" }
        return (["# \(header(p))", "export APPEARANCE=\(p.variant.mode.rawValue)"] + exports).joined(separator: "\n")
    }

    /// GTK CSS: `@define-color fill_bg #262626;`, translucent colors as `rgba(…)`; assets as comments.
    public static func gtk(_ p: ResolvedPalette) -> String {
        (["/* \(header(p)) */"] + p.tokens.map { t in
            switch t.value {
            case .color(let c) where c.isOpaque: "@define-color \(identifier(t.name, "_")) \(c.hex);"
            case .color(let c): "@define-color \(identifier(t.name, "_")) rgba(\(c.red), \(c.green), \(c.blue), \(c.alphaFraction));"
            case .asset(let path): "/* \(t.name): \(path) (an asset: GTK colors cannot hold it) */"
            }
        }).joined(separator: "\n")
    }

    /// Both modes side by side: each token's name, then per mode a truecolor swatch (translucent ones over the
    /// mode's `fill.bg`) and the value; with `color: false`, names and values only.
    public static func preview(light: ResolvedPalette, dark: ResolvedPalette, color: Bool = true) -> String {
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
            lines.append(pad(terminalSafe(name), nameWidth) + "  " + cell(light[name], in: light) + "  " + cell(dark[name], in: dark))
        }
        if names.isEmpty { lines.append("(the palette is empty: see appearancectl status)") }
        return lines.joined(separator: "\n")
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

/// A name for a terminal: control characters shown as \u{…}; `c1: false` leaves 0x80-0x9F (for a TOML comment).

func terminalSafe(_ text: String, c1: Bool = true) -> String {
    String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F || (c1 && (0x80...0x9F).contains($0.value))
        ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())
}

func commentSafe(_ name: String) -> String { terminalSafe(name, c1: false) }
