/// The desktop's accessibility and accent traits (the portal's `contrast`, `reduced-motion`, `accent-color`); nil
/// means the desktop does not say.

/// `contrast`: 0 normal, 1 higher.
public enum Contrast: String, Sendable, CaseIterable, Hashable {
    case normal, high

    /// Maps the portal's number; nil for any other number (the caller reports it and treats it as unset).
    public init?(portalValue: UInt32) {
        guard portalValue < 2 else { return nil }
        self = portalValue == 0 ? .normal : .high
    }
}

public struct Traits: Equatable, Sendable {
    public var contrast: Contrast?
    /// `reduced-motion`: 0 no preference (false), 1 reduced (true).
    public var reducedMotion: Bool?
    /// `accent-color`, opaque. nil when unset, including a portal value outside 0…1 (the portal's "unset").
    public var accentColor: Color?

    public init(contrast: Contrast? = nil, reducedMotion: Bool? = nil, accentColor: Color? = nil) {
        (self.contrast, self.reducedMotion, self.accentColor) = (contrast, reducedMotion, accentColor)
    }

    /// Nothing known: no portal, or a portal without these keys.
    public static let unavailable = Traits()

    /// The portal's `accent-color` `(ddd)`, sRGB in 0…1; a component outside that range (or not a number) means unset.
    public static func accent(red: Double, green: Double, blue: Double) -> Color? {
        func byte(_ v: Double) -> UInt8? {
            guard v.isFinite, v >= 0, v <= 1 else { return nil }
            return UInt8((v * 255).rounded())
        }
        guard let r = byte(red), let g = byte(green), let b = byte(blue) else { return nil }
        return Color(r, g, b)
    }
}

/// An sRGB color with alpha, 8 bits per channel.
public struct Color: Hashable, Sendable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    public init(_ red: UInt8, _ green: UInt8, _ blue: UInt8, alpha: UInt8 = 255) {
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }

    public var isOpaque: Bool { alpha == 255 }

    /// `#rrggbb` when opaque, else `#rrggbbaa`; lower case. What the protocol carries.
    public var hex: String { isOpaque ? opaqueHex : opaqueHex + hex2(alpha) }

    /// `#rrggbb`, alpha dropped.
    public var opaqueHex: String { "#" + hex2(red) + hex2(green) + hex2(blue) }

    public var description: String { hex }

    /// The alpha as a fraction with at most two decimals ("1", "0.6", "0.08"): any whole percentage exactly.
    public var alphaFraction: String {
        let hundredths = (Int(alpha) * 100 + 127) / 255
        if hundredths == 100 { return "1" }
        if hundredths == 0 { return "0" }
        var s = "0." + (hundredths < 10 ? "0" : "") + String(hundredths)
        while s.hasSuffix("0") { s.removeLast() }
        return s
    }

    /// Reads `Color.syntax`: `#RGB`, `#RRGGBB` or `#RRGGBBAA`, the first two with an optional alpha `@N%`; else nil.
    public init?(parsing text: String) {
        var body = Substring(text)
        var alphaOverride: UInt8?
        if let at = body.firstIndex(of: "@") {
            let percent = body[body.index(after: at)...]
            guard percent.hasSuffix("%"), let p = Double(percent.dropLast()), p.isFinite, p >= 0, p <= 100,
                  percent.dropLast().allSatisfy({ $0.isNumber || $0 == "." })
            else { return nil }
            alphaOverride = UInt8((p * 255 / 100).rounded())
            body = body[..<at]
        }
        guard body.first == "#" else { return nil }
        let digits = body.dropFirst()
        let nibbles = digits.compactMap { $0.isASCII ? $0.hexDigitValue.map(UInt8.init) : nil }
        guard nibbles.count == digits.count else { return nil }
        func byte(_ i: Int) -> UInt8 { nibbles.count == 3 ? nibbles[i] * 17 : nibbles[2 * i] << 4 | nibbles[2 * i + 1] }
        // Two alphas (`#RRGGBBAA@N%`) are ambiguous.
        guard [3, 6, 8].contains(nibbles.count), nibbles.count < 8 || alphaOverride == nil else { return nil }
        self.init(byte(0), byte(1), byte(2), alpha: nibbles.count == 8 ? byte(3) : alphaOverride ?? 255)
    }

    public static let syntax = "#RGB, #RRGGBB or #RRGGBBAA, optionally with an alpha as in \"#262626@60%\""

    /// This color drawn over an opaque `background` (for previews of translucent colors).
    public func over(_ background: Color) -> Color {
        let a = Int(alpha)
        func mix(_ f: UInt8, _ b: UInt8) -> UInt8 {
            let fore: Int = Int(f) * a
            let back: Int = Int(b) * (255 - a)
            return UInt8((fore + back + 127) / 255)
        }
        return Color(mix(red, background.red), mix(green, background.green), mix(blue, background.blue))
    }
}

private func hex2(_ v: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(v >> 4)], digits[Int(v & 15)]])
}
