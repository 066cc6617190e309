import AppearanceCore
import AppearanceProtocol
import Testing

/// maxReplyLength against the encoder: the largest reply of each kind, written by the real encoder from the
/// longest values the caps allow, fits; and the figures in its comment are the encoder's.
@Suite struct ReplyLengthTests {
    /// A name of exactly `length` bytes, different for each `i`.
    static func name(_ i: Int, length: Int) -> String {
        let n = String(i)
        return String(repeating: "n", count: length - n.count) + n
    }

    static let longestState: AppearanceState = {
        var s = AppearanceState(mode: .light, system: .noPreference, override: .system, source: .temporary,
                                traits: Traits(contrast: .normal, reducedMotion: false, accentColor: Color(1, 2, 3)),
                                temporary: TemporaryOverride(mode: .light, expiry: .at(Int64.max)), seq: .max,
                                instance: "0123456789abcdef")
        (s.app, s.globalMode, s.globalSource) = (name(0, length: 255), .light, .temporary)
        return s
    }()

    @Test func theLongestAppsReplyFits() {
        let item = JSON.object([("app", .string(Self.name(0, length: 255))), ("override", .string("light"))])
        #expect(item.bytes.count + 1 == 285)
        let items = (0..<AppID.maxOverrides).map { i in
            JSON.object([("app", .string(Self.name(i, length: 255))), ("override", .string(Mode.light.rawValue))])
        }
        let line = Outgoing.result(id: .int(Int.max), .object([("apps", .array(items))]))
        #expect(line.count - 1 <= maxReplyLength && line.count - 1 > maxLineLength)
    }

    @Test func theLongestLogReplyFits() {
        let entry = LogEntry(time: .max, from: .light, to: .light, source: .temporary,
                             cause: String(repeating: "c", count: ReplyBounds.logCause), app: Self.name(0, length: 255))
        #expect(entry.json.bytes.count + 1 == 4_449)
        // The daemon keeps 1,000 entries (ChangeLogFile.kept).
        let line = Outgoing.result(id: .int(Int.max), .object([("entries", .array(Array(repeating: entry.json, count: 1_000)))]))
        #expect(line.count - 1 <= maxReplyLength)
    }

    static let longestPalette = ResolvedPalette(variant: Variant(.light, .normal), tokens: (0..<ReplyBounds.paletteTokens).map {
        PaletteToken(name: name($0, length: ReplyBounds.tokenName), value: .asset("/" + String(repeating: "p", count: ReplyBounds.tokenValue - 1)))
    })

    @Test func theLongestPaletteRepliesAndNotificationsFit() {
        let token = ResolvedPalette(variant: Variant(.light), tokens: [Self.longestPalette.tokens[0]]).json.bytes.count
            - ResolvedPalette(variant: Variant(.light), tokens: []).json.bytes.count
        #expect(token + 1 == 4_357)
        let palette = Outgoing.result(id: .int(Int.max), Self.longestPalette.json)
        let subscribed = Outgoing.result(id: .int(Int.max), Subscription(state: Self.longestState, palette: Self.longestPalette).json)
        let changed = Outgoing.changed(Notification(state: Self.longestState, previous: .dark, palette: Self.longestPalette))
        for line in [palette, subscribed, changed] {
            #expect(line.count - 1 <= maxReplyLength)
        }
        // What surrounds the palette is within the margin the comment gives it.
        #expect(changed.count - 1 - ReplyBounds.paletteTokens * 4_357 <= maxLineLength)
        #expect(ReplyBounds.paletteTokens * 4_357 + maxLineLength <= maxReplyLength)
    }
}
