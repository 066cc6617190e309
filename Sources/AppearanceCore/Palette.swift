/// Named colors and assets that differ per appearance, resolved by best match (docs/protocol.md).

/// A resolved value: a color, or the path of an asset (an image per appearance, say).
public enum PaletteValue: Hashable, Sendable {
    case color(Color)
    case asset(String)

    public var color: Color? { if case .color(let c) = self { c } else { nil } }
    public var asset: String? { if case .asset(let p) = self { p } else { nil } }
}

public enum PaletteKind: String, Sendable {
    case color, asset
}

/// The appearance a palette is resolved for.
public struct Variant: Hashable, Sendable, CustomStringConvertible {
    public var mode: Mode
    public var contrast: Contrast

    public init(_ mode: Mode, _ contrast: Contrast = .normal) { (self.mode, self.contrast) = (mode, contrast) }

    public static let all: [Variant] = [Variant(.light), Variant(.light, .high), Variant(.dark), Variant(.dark, .high)]

    /// The key naming this variant in palette.toml: `light`, `light-high`, `dark`, `dark-high`.
    public var key: String { contrast == .normal ? mode.rawValue : "\(mode.rawValue)-high" }

    public init?(key: String) {
        guard let v = Variant.all.first(where: { $0.key == key }) else { return nil }
        self = v
    }

    public var description: String { key }
}

/// Which step of the best-match order answered.
public enum Match: Equatable, Sendable {
    case exact
    case normalContrast
    case fallback
    /// `accent` with the desktop's accent color.
    case systemAccent
}

public struct PaletteEntry: Equatable, Sendable {
    public var kind: PaletteKind
    /// The value when no variant matches (`default` in palette.toml).
    public var fallback: PaletteValue?
    public var variants: [Variant: PaletteValue]

    public init(kind: PaletteKind, fallback: PaletteValue? = nil, variants: [Variant: PaletteValue] = [:]) {
        (self.kind, self.fallback, self.variants) = (kind, fallback, variants)
    }

    /// Best match for `variant`; nil only for an entry that the palette reader would have refused.
    public func resolve(_ variant: Variant) -> (value: PaletteValue, match: Match)? {
        if let v = variants[variant] { return (v, .exact) }
        if variant.contrast != .normal, let v = variants[Variant(variant.mode)] { return (v, .normalContrast) }
        if let fallback { return (fallback, .fallback) }
        return nil
    }

    /// True when every variant resolves: a default, or a light and a dark value at normal contrast.
    public var isComplete: Bool { Variant.all.allSatisfy { resolve($0) != nil } }
}

public struct PaletteToken: Equatable, Sendable {
    public var name: String
    public var value: PaletteValue

    public init(name: String, value: PaletteValue) { (self.name, self.value) = (name, value) }
}

public struct Palette: Equatable, Sendable {
    /// Token names in the order of the palette file.
    public private(set) var names: [String] = []
    public private(set) var entries: [String: PaletteEntry] = [:]

    public init() {}

    public static let empty = Palette()
    public static let accentToken = "accent"

    public var isEmpty: Bool { names.isEmpty }

    /// Adds or replaces an entry (a replaced one keeps its place).
    public mutating func set(_ name: String, _ entry: PaletteEntry) {
        if entries[name] == nil { names.append(name) }
        entries[name] = entry
    }

    /// One token for one appearance; nil when the palette has no such token.
    public func resolve(_ name: String, _ variant: Variant, accent: Color?) -> (value: PaletteValue, match: Match)? {
        guard let entry = entries[name] else { return nil }
        if name == Palette.accentToken, entry.kind == .color, let accent { return (.color(accent), .systemAccent) }
        return entry.resolve(variant)
    }

    /// Every token for one appearance, in file order.
    public func resolved(_ variant: Variant, accent: Color?) -> ResolvedPalette {
        ResolvedPalette(variant: variant, tokens: names.compactMap { name in
            resolve(name, variant, accent: accent).map { PaletteToken(name: name, value: $0.value) }
        })
    }
}

/// A palette resolved for one appearance: what `palette` returns and what `palette` subscribers are sent.
public struct ResolvedPalette: Equatable, Sendable {
    public var variant: Variant
    public var tokens: [PaletteToken]

    public init(variant: Variant, tokens: [PaletteToken]) { (self.variant, self.tokens) = (variant, tokens) }

    public subscript(name: String) -> PaletteValue? { tokens.first { $0.name == name }?.value }
    public var colors: [(name: String, color: Color)] { tokens.compactMap { t in t.value.color.map { (t.name, $0) } } }
    public var assets: [(name: String, path: String)] { tokens.compactMap { t in t.value.asset.map { (t.name, $0) } } }
}

extension AppearanceState {
    /// The variant this state asks for: its mode, at the desktop's contrast (normal when it does not say).
    public var variant: Variant { Variant(mode, traits.contrast ?? .normal) }
}
