import AppearanceCore
import AppearanceProtocol
import Testing

/// appearancectl's fast path speaks through QuickRequest and QuickReply: its requests are the general
/// client's, byte for byte, and its recogniser takes the encoder's own state replies and nothing the general
/// decoder would refuse.
@Suite struct QuickReplyTests {
    static func bytes(_ s: StaticString) -> [UInt8] {
        Array(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    /// The daemon knows the fast path's lines by their bytes, as the same requests the parse makes of them, and
    /// leaves every other line, however near, to the parse.
    @Test func theDaemonKnowsTheLinesWithoutAParse() throws {
        let lines = [QuickRequest.get, QuickRequest.toggle] + Override.allCases.map(QuickRequest.set)
        for text in lines {
            let line = Self.bytes(text).dropLast()
            let quick = try #require(Request.quick(line), "\(text)")
            // A space in front: the same request, which only the parse reads.
            #expect(Request.quick([UInt8(ascii: " ")] + line) == nil)
            #expect(try Request.decode([UInt8(ascii: " ")] + line) == quick, "\(text)")
            #expect(try Request.decode(line) == quick)
        }
        let near = [#"{"jsonrpc":"2.0","id":2,"method":"get"}"#, #"{"jsonrpc":"2.0","id":1,"method":"gex"}"#,
                    #"{"jsonrpc":"2.0","id":1,"method":"get"} "#, #"{"jsonrpc":"2.0","id":1,"method":"set","params":{"override":"dork"}}"#,
                    #"{"jsonrpc":"2.0","id":1,"method":"toggle","params":{}}"#, ""]
        for text in near {
            #expect(Request.quick(Array(text.utf8)[...]) == nil, "\(text)")
        }
        #expect(try Request.decode(Array(near[0].utf8)[...]) == Request(id: .int(2), call: .get))
    }

    @Test func theConstantRequestsAreTheEncodersLines() {
        #expect(Self.bytes(QuickRequest.get) == Request(id: .int(1), call: .get).line)
        #expect(Self.bytes(QuickRequest.toggle) == Request(id: .int(1), call: .toggle).line)
        for o in Override.allCases {
            #expect(Self.bytes(QuickRequest.set(o)) == Request(id: .int(1), call: .set(o)).line, "\(o)")
        }
    }

    static func recognise(_ line: [UInt8]) -> Mode? {
        line.withUnsafeBytes { QuickReply.mode(ofLine: $0) }
    }

    /// What the general client makes of a line as the reply to request 1 of `get`, `set` or `toggle`: the
    /// mode it prints, or nil where it fails.
    static func general(_ line: [UInt8]) -> Mode? {
        var framer = LineFramer(limit: maxReplyLength)
        framer.append(line)
        guard let first = try? framer.next(), framer.pendingCount == 0,
              case .result(let id, let json)? = try? Incoming.decode(first), id == .int(1) else { return nil }
        return (try? AppearanceState(json: json))?.mode
    }

    /// The daemon's reply to `get` (DirectWriterTests: the tree's line).
    static func reply(_ s: AppearanceState) -> [UInt8] { Outgoing.state(id: .int(1), s) }

    /// Every value the encoder can give each member of a state without an app.
    static var states: [AppearanceState] {
        let traits = [Traits.unavailable, Traits(contrast: .normal, reducedMotion: false, accentColor: Color(0x35, 0x84, 0xE4)),
                      Traits(contrast: .high, reducedMotion: true, accentColor: Color(0, 0, 0, alpha: 128)),
                      Traits(contrast: nil, reducedMotion: true, accentColor: nil)]
        let temporaries: [TemporaryOverride?] = [nil, TemporaryOverride(mode: .dark, expiry: .nextChange),
                                                 TemporaryOverride(mode: .light, expiry: .at(1_767_225_600)),
                                                 TemporaryOverride(mode: .dark, expiry: .at(0)), TemporaryOverride(mode: .light, expiry: .at(-5))]
        var all: [AppearanceState] = []
        for mode in Mode.allCases {
            for source in Source.allCases {
                for system in SystemScheme.allCases {
                    for o in Override.allCases {
                        all.append(AppearanceState(mode: mode, system: system, override: o, source: source, seq: 3, instance: "f39693da2e92ee75"))
                    }
                }
                for (i, t) in traits.enumerated() {
                    for (j, temporary) in temporaries.enumerated() {
                        let seq: UInt64 = [0, 9, 10, 4_294_967_296, UInt64.max][(i + j) % 5]
                        all.append(AppearanceState(mode: mode, system: .unavailable, override: .system, source: source,
                                                   traits: t, temporary: temporary, seq: seq, instance: ["", "0123456789abcdef", "x y"][j % 3]))
                    }
                }
            }
        }
        return all
    }

    @Test func theEncodersStateRepliesAreRecognised() {
        for s in Self.states {
            let line = Self.reply(s)
            #expect(Self.recognise(line) == s.mode, "\(String(decoding: line, as: UTF8.self))")
            #expect(Self.general(line) == s.mode)
        }
    }

    /// The general client's own reading of a state for an app is not taken on the fast path (it never asks
    /// for one): refused here, it goes the general way.
    @Test func aStateForAnAppGoesTheGeneralWay() {
        var s = AppearanceState(mode: .dark, system: .light, override: .system, source: .app, seq: 1, instance: "a")
        (s.app, s.globalMode, s.globalSource) = ("org.example.Editor", .light, .system)
        #expect(Self.recognise(Self.reply(s)) == nil)
        #expect(Self.general(Self.reply(s)) == .dark)
    }

    static let base = #"{"jsonrpc":"2.0","id":1,"result":{"mode":"dark","darkMode":true,"system":"unavailable","override":"dark","source":"override","seq":3,"instance":"f39693da2e92ee75","traits":{"contrast":null,"reducedMotion":null,"accentColor":null},"temporary":null}}"# + "\n"

    @Test func theBaseLineIsTheEncoders() {
        let s = AppearanceState(mode: .dark, system: .unavailable, override: .dark, source: .override, seq: 3, instance: "f39693da2e92ee75")
        #expect(Array(Self.base.utf8) == Self.reply(s))
    }

    /// Lines a daemon could send that are not the encoder's state reply to request 1.
    static let refused: [String] = {
        let base = Self.base
        func with(_ a: String, _ b: String) -> String { base.replacing(a, with: b) }
        var all: [String] = []
        // members missing
        all.append(#"{"jsonrpc":"2.0","id":1,"result":{"mode":"dark","darkMode":true}}"# + "\n")
        all.append(#"{"jsonrpc":"2.0","id":1,"result":{"mode":"dark","darkMode":true,"system":"unavailable","override":"dark","source":"override","instance":"f39693da2e92ee75","traits":{"contrast":null,"reducedMotion":null,"accentColor":null},"temporary":null}}"# + "\n")
        all.append(#"{"jsonrpc":"2.0","id":1,"result":{"mode":"dark","darkMode":true,"system":"unavailable","override":"dark","source":"override","seq":3,"traits":{"contrast":null,"reducedMotion":null,"accentColor":null},"temporary":null}}"# + "\n")
        all.append(#"{"id":1,"result":{"mode":"dark","darkMode":true,"system":"unavailable","override":"dark","source":"override","seq":3,"instance":"f39693da2e92ee75","traits":{"contrast":null,"reducedMotion":null,"accentColor":null},"temporary":null}}"# + "\n")
        // extra bytes after the line, or a second line
        all.append(base + "x")
        all.append(base + base)
        all.append(with("}}\n", "}} \n"))
        all.append(with("}}\n", "}}\r\n"))
        // no newline: the line is not complete
        all.append(String(base.dropLast()))
        // wrong id, wrong jsonrpc
        all.append(with(#""id":1"#, #""id":2"#))
        all.append(with(#""id":1"#, #""id":"1""#))
        all.append(with(#""id":1"#, #""id":1.0"#))
        all.append(with(#""id":1"#, #""id":10"#))
        all.append(with(#""2.0""#, #""1.0""#))
        // values the decoder refuses
        all.append(with(#""mode":"dark""#, #""mode":"dim""#))
        all.append(with(#""mode":"dark""#, #""mode":"Dark""#))
        all.append(with(#""system":"unavailable""#, #""system":"unknown""#))
        all.append(with(#""override":"dark""#, #""override":"auto""#))
        all.append(with(#""source":"override""#, #""source":"user""#))
        all.append(with(#""seq":3"#, #""seq":-3"#))
        all.append(with(#""seq":3"#, #""seq":03"#))
        all.append(with(#""seq":3"#, #""seq":3.5"#))
        all.append(with(#""seq":3"#, #""seq":18446744073709551616"#))
        all.append(with(#""seq":3"#, #""seq":"3""#))
        all.append(with(#""instance":"f39693da2e92ee75""#, #""instance":7"#))
        all.append(with(#""instance":"f39693da2e92ee75""#, #""instance":"f3\"#))
        // the decoder would accept these, the encoder never writes them: the general way
        all.append(with(#""darkMode":true"#, #""darkMode":false"#))
        all.append(with(#""jsonrpc":"2.0","#, #""jsonrpc":"2.0", "#))
        all.append(with(#""temporary":null"#, #""temporary":null,"extra":1"#))
        // an error, a notification, nothing
        all.append(#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the state could not be read"}}"# + "\n")
        all.append(#"{"jsonrpc":"2.0","method":"changed","params":{"mode":"dark"}}"# + "\n")
        all.append("\n")
        all.append("")
        return all
    }()

    @Test(arguments: refused)
    func otherLinesAreRefused(line: String) {
        #expect(Self.recognise(Array(line.utf8)) == nil)
    }

    /// Every truncation, every byte left out and every byte replaced by one that matters to JSON: whatever
    /// the recogniser takes, the general client takes too, with the same mode.
    @Test func nothingTheDecoderRefusesIsTaken() {
        var lines = Self.states.prefix(40).map(Self.reply) + [Array(Self.base.utf8)]
        lines.append(Self.reply(AppearanceState(mode: .light, system: .noPreference, override: .system, source: .temporary,
                                                traits: Traits(contrast: .high, reducedMotion: false, accentColor: Color(1, 2, 3)),
                                                temporary: TemporaryOverride(mode: .light, expiry: .at(1_700_000_000)),
                                                seq: 18_446_744_073_709_551_615, instance: "i")))
        let replacements = Array(#"{}[]",:0123456789 \nabdefghlmnrstuy-."#.utf8) + [0x00, 0x7F, 0xC3, 0xFF]
        var taken = 0
        for line in lines {
            var variants = (0..<line.count).map { Array(line[..<$0]) }
            for i in line.indices {
                var shorter = line
                shorter.remove(at: i)
                variants.append(shorter)
                for r in replacements where r != line[i] {
                    var other = line
                    other[i] = r
                    variants.append(other)
                }
            }
            for v in variants {
                guard let mode = Self.recognise(v) else { continue }
                taken += 1
                #expect(Self.general(v) == mode, "taken but not the general client's: \(String(decoding: v, as: UTF8.self))")
            }
        }
        #expect(taken > 0)  // a replaced digit of seq, or a letter of the instance: still a state reply
    }
}
