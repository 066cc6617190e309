import AppearanceCore
import AppearanceProtocol
import Testing

/// The lines written straight to bytes (a change's notification, a `get`'s state) are the JSON tree's
/// lines, byte for byte, for every kind of value a state and a notification can carry.
@Suite struct DirectWriterTests {
    /// QuickReplyTests' states (every member's values), the same for an app, and with a configuration
    /// problem whose text needs escapes.
    static var states: [AppearanceState] {
        var all = QuickReplyTests.states
        for var s in QuickReplyTests.states.prefix(40) {
            (s.app, s.globalMode, s.globalSource) = ("org.example.Editor", s.mode == .dark ? .light : .dark, .override)
            all.append(s)
            s.globalMode = nil
            s.globalSource = nil
            all.append(s)
            s.configProblem = "config.toml:3: \"lat\" is\tnot a number\n\u{1}"
            all.append(s)
        }
        return all
    }

    static let palettes: [ResolvedPalette?] = [
        nil,
        ResolvedPalette(variant: Variant(.dark, .high), tokens: []),
        ResolvedPalette(variant: Variant(.light), tokens: [
            PaletteToken(name: "background", value: .color(Color(0xFA, 0xFA, 0xFA))),
            PaletteToken(name: "accent\"quoted", value: .color(Color(0, 0, 0, alpha: 7))),
            PaletteToken(name: "logo", value: .asset("/usr/share/icons/a b/\u{7}.svg")),
        ]),
    ]

    @Test func aNotificationIsItsTreesLine() {
        for s in Self.states {
            for previous in Mode.allCases {
                for palette in Self.palettes {
                    let n = Notification(state: s, previous: previous, palette: palette)
                    let tree = JSON.object([("jsonrpc", .string("2.0")), ("method", .string("changed")), ("params", n.json)])
                    let written = Outgoing.changed(n)
                    #expect(written == tree.bytes + [0x0A], "\(String(decoding: written, as: UTF8.self))")
                }
            }
        }
    }

    @Test func aStateReplyIsItsTreesLine() {
        let ids: [JSON] = [.int(1), .int(0), .string("a\"b"), .null, .number("-3")]
        for s in Self.states {
            for id in ids {
                let written = Outgoing.state(id: id, s)
                #expect(written == Outgoing.result(id: id, s.json), "\(String(decoding: written, as: UTF8.self))")
            }
        }
    }

    @Test func aChangeLogLineIsItsTreesLine() {
        var entries: [LogEntry] = []
        for from in [nil] + Mode.allCases.map(Optional.some) {
            for source in [nil, Source.system, .override, .schedule] {
                for app in [nil, "org.example.Editor"] {
                    for changes in [1, 2, 1_000] {
                        entries.append(LogEntry(time: 1_764_200_000, from: from, to: .dark, source: source,
                                                cause: "override dark set by \"appearancectl\"\t(pid 42)\n\u{1}é", app: app, changes: changes))
                    }
                }
            }
        }
        entries.append(LogEntry(time: -5, from: .light, to: .light, source: .temporary, cause: ""))
        for e in entries {
            for replacing in [false, true] {
                var json = e.json
                if replacing, case .object(let members) = json { json = .object(members + [("replaces", .bool(true))]) }
                let written = e.line(replacing: replacing)
                #expect(written == json.bytes + [0x0A], "\(String(decoding: written, as: UTF8.self))")
            }
        }
    }
}
