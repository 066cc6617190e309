import AppearanceCore
import Testing
@testable import AppearanceProtocol

struct RequestDecodingTests {
    func decode(_ s: String) throws(RequestFailure) -> Request { try Request.decode(Array(s.utf8)) }

    @Test(arguments: [
        (#"{"jsonrpc":"2.0","id":1,"method":"get"}"#, Call.get),
        (#"{"jsonrpc":"2.0","id":1,"method":"status","params":{}}"#, .status),
        (#"{"jsonrpc":"2.0","id":1,"method":"toggle","params":[]}"#, .toggle),
        (#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"#, .subscribe),
        (#"{"jsonrpc":"2.0","id":"a","method":"set","params":{"override":"dark"}}"#, .set(.dark)),
        (#"{"jsonrpc":"2.0","id":null,"method":"set","params":{"override":"light"}}"#, .set(.light)),
        (#"{"method":"set","params":{"override":"system"},"jsonrpc":"2.0","id":7}"#, .set(.system)),
        (##"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"traits":true}}"##, .subscribe(Interest(traits: true))),
        (##"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"palette":true,"traits":false}}"##, .subscribe(Interest(palette: true))),
        (##"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":null}"##, .subscribe(.mode)),
        (##"{"jsonrpc":"2.0","id":1,"method":"resolve","params":{"tokens":["fill.bg","accent"]}}"##, .resolve(["fill.bg", "accent"], .current)),
        (#"{"jsonrpc":"2.0","id":1,"method":"resolve","params":{"tokens":["a"],"mode":"dark","contrast":"high"}}"#,
         .resolve(["a"], VariantRequest(mode: .dark, contrast: .high))),
        (##"{"jsonrpc":"2.0","id":1,"method":"palette"}"##, .palette(.current)),
        (##"{"jsonrpc":"2.0","id":1,"method":"palette","params":{"mode":"light"}}"##, .palette(VariantRequest(mode: .light))),
    ])
    func valid(line: String, call: Call) throws {
        #expect(try decode(line).call == call)
    }

    @Test func everyCallEncodesToWhatDecodes() throws {
        for call in [Call.get, .status, .toggle, .subscribe, .set(.dark), .set(.light), .set(.system),
                     .subscribe(Interest(traits: true, palette: true)), .subscribe(Interest(palette: true)),
                     .resolve(["x", "y.z"], .current), .resolve(["a"], VariantRequest(mode: .light, contrast: .high)),
                     .palette(.current), .palette(VariantRequest(contrast: .high))] {
            let r = Request(id: .int(3), call: call)
            let line = r.line
            #expect(line.last == 0x0A)
            #expect(try Request.decode(line.dropLast()) == r)
        }
    }

    @Test func notificationHasNoID() throws {
        #expect(try decode(#"{"jsonrpc":"2.0","method":"get"}"#).id == nil)
    }

    @Test(arguments: [
        ("not json", ErrorCode.parseError, "parse error"),
        ("[1]", .invalidRequest, "batch requests are not supported"),
        ("42", .invalidRequest, "must be a JSON object"),
        (#"{"jsonrpc":"1.0","id":1,"method":"get"}"#, .invalidRequest, "\"jsonrpc\" must be \"2.0\""),
        (#"{"jsonrpc":"2.0","id":[1],"method":"get"}"#, .invalidRequest, "\"id\" must be"),
        (#"{"jsonrpc":"2.0","id":1,"method":5}"#, .invalidRequest, "\"method\" must be a string"),
        (#"{"jsonrpc":"2.0","id":1,"method":"paint"}"#, .methodNotFound, "unknown method \"paint\""),
        (#"{"jsonrpc":"2.0","id":1,"method":"get","params":{"x":1}}"#, .invalidParams, "unknown parameter \"x\""),
        (#"{"jsonrpc":"2.0","id":1,"method":"get","params":3}"#, .invalidParams, "params as an object"),
        (#"{"jsonrpc":"2.0","id":1,"method":"set"}"#, .invalidParams, "missing parameter \"override\""),
        (#"{"jsonrpc":"2.0","id":1,"method":"set","params":{"override":"blue"}}"#, .invalidParams, "invalid override \"blue\""),
        (#"{"jsonrpc":"2.0","id":1,"method":"set","params":{"override":1}}"#, .invalidParams, "invalid override 1"),
        (##"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"traits":"yes"}}"##, .invalidParams, ##"subscribe: "traits" must be true or false, got "yes""##),
        (#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"colors":true}}"#, .invalidParams, #"subscribe: unknown parameter "colors""#),
        (#"{"jsonrpc":"2.0","id":1,"method":"resolve"}"#, .invalidParams, #"resolve: missing parameter "tokens""#),
        (#"{"jsonrpc":"2.0","id":1,"method":"resolve","params":{"tokens":[]}}"#, .invalidParams, "non-empty array of strings"),
        (##"{"jsonrpc":"2.0","id":1,"method":"resolve","params":{"tokens":"fill.bg"}}"##, .invalidParams, "non-empty array of strings"),
        (#"{"jsonrpc":"2.0","id":1,"method":"resolve","params":{"tokens":["a",1]}}"#, .invalidParams, "non-empty array of strings"),
        (#"{"jsonrpc":"2.0","id":1,"method":"resolve","params":{"tokens":["a"],"mode":"dim"}}"#, .invalidParams, #"resolve: invalid mode "dim""#),
        (##"{"jsonrpc":"2.0","id":1,"method":"palette","params":{"contrast":"low"}}"##, .invalidParams, ##"palette: invalid contrast "low""##),
    ])
    func invalid(line: String, code: ErrorCode, message: String) {
        do {
            _ = try decode(line)
            Issue.record("accepted \(line)")
        } catch {
            #expect(error.error.code == code.rawValue)
            #expect(error.error.message.contains(message), "\(error.error.message)")
        }
    }

    @Test func errorsEchoTheIDWhenKnown() {
        do { _ = try decode(#"{"jsonrpc":"2.0","id":"q","method":"paint"}"#) } catch {
            #expect(error.id == .string("q"))
            #expect(error.wantsReply)
        }
        do { _ = try decode(#"{"jsonrpc":"2.0","method":"paint"}"#) } catch {
            #expect(!error.wantsReply)
        }
    }
}

struct ServerMessageTests {
    let state = AppearanceState(mode: .dark, system: .light, override: .dark, source: .override, seq: 9, instance: "abc")

    @Test func stateObjectHasEveryField() throws {
        #expect(state.json.text == ##"{"mode":"dark","darkMode":true,"system":"light","override":"dark","source":"override","seq":9,"instance":"abc","traits":{"contrast":null,"reducedMotion":null,"accentColor":null},"temporary":null}"##)
        #expect(try AppearanceState(json: state.json) == state)
    }

    @Test func traitsInTheStateObject() throws {
        var s = state
        s.traits = Traits(contrast: .high, reducedMotion: false, accentColor: Color(0x35, 0x84, 0xe4))
        #expect(s.json["traits"]?.text == ##"{"contrast":"high","reducedMotion":false,"accentColor":"#3584e4"}"##)
        #expect(try AppearanceState(json: s.json) == s)
        // A protocol 1 daemon sends no traits: nothing is known about them.
        let old = try JSON.parse(#"{"mode":"dark","darkMode":true,"system":"light","override":"dark","source":"override","seq":9,"instance":"abc"}"#)
        #expect(try AppearanceState(json: old) == state)
    }

    @Test func paletteInSubscribeRepliesAndNotifications() throws {
        let p = ResolvedPalette(variant: Variant(.dark, .high), tokens: [
            PaletteToken(name: "fill.bg", value: .color(Color(0x26, 0x26, 0x26))),
            PaletteToken(name: "text.desc", value: .color(Color(255, 255, 255, alpha: 153))),
            PaletteToken(name: "wallpaper", value: .asset("/usr/share/backgrounds/night.jpg")),
        ])
        #expect(p.json.text == ##"{"mode":"dark","contrast":"high","colors":{"fill.bg":"#262626","text.desc":"#ffffff99"},"assets":{"wallpaper":"/usr/share/backgrounds/night.jpg"}}"##)
        #expect(try ResolvedPalette(json: p.json) == p)
        let sub = Subscription(state: state, palette: p)
        #expect(try Subscription(json: sub.json) == sub)
        #expect(try Subscription(json: state.json) == Subscription(state: state, palette: nil))
        let n = Notification(state: state, previous: .light, palette: p)
        #expect(try Notification(json: n.json) == n)
        #expect(n.json["palette"] != nil && Notification(state: state, previous: .light).json["palette"] == nil)
    }

    @Test func resultAndErrorLines() throws {
        #expect(Outgoing.result(id: .int(1), .bool(true)) == Array(#"{"jsonrpc":"2.0","id":1,"result":true}"#.utf8) + [0x0A])
        let e = Outgoing.error(id: .null, RPCError(.parseError, "bad"))
        #expect(e == Array(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#.utf8) + [0x0A])
        #expect(try Incoming.decode(e.dropLast()) == .error(id: .null, RPCError(code: -32700, message: "bad")))
    }

    @Test func changedCarriesPrevious() throws {
        let line = Outgoing.changed(Notification(state: state, previous: .light))
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.hasPrefix(#"{"jsonrpc":"2.0","method":"changed","params":{"mode":"dark""#))
        #expect(text.hasSuffix(#""previous":"light"}}"# + "\n"))
        #expect(try Incoming.decode(line.dropLast()) == .changed(Notification(state: state, previous: .light)))
    }

    @Test func statusRoundTrip() throws {
        let s = StatusInfo(state: state, systemDetail: "portal v1", defaultMode: .light, subscribers: 2, version: "1", pid: 5)
        #expect(try StatusInfo(json: s.json) == s)
    }

    @Test func clientsIgnoreUnknownFieldsAndNotifications() throws {
        let line = #"{"jsonrpc":"2.0","id":1,"result":{"mode":"light","darkMode":false,"system":"light","override":"system","source":"system","seq":1,"instance":"i","future":[1]}}"#
        guard case .result(_, let json) = try Incoming.decode(Array(line.utf8)) else { Issue.record("not a result"); return }
        #expect(try AppearanceState(json: json).mode == .light)
        #expect(try Incoming.decode(Array(#"{"jsonrpc":"2.0","method":"later"}"#.utf8)) == .other(method: "later"))
    }
}

struct LineFramerTests {
    @Test func splitsAndSkipsBlankLines() throws {
        var f = LineFramer()
        f.append(Array("a\n\n  \r\nbc".utf8))
        #expect(try f.next().map(Array.init) == Array("a".utf8))
        #expect(try f.next() == nil)
        f.append(Array("d\n".utf8))
        #expect(try f.next().map(Array.init) == Array("bcd".utf8))
        #expect(try f.next() == nil)
        #expect(f.pendingCount == 0)
    }

    @Test func lineAtTheLimitPassesOneOverFails() throws {
        var f = LineFramer(limit: 8)
        f.append(Array("12345678\n".utf8))
        #expect(try f.next()?.count == 8)
        f.append(Array("123456789".utf8))
        #expect(throws: LineFramer.LineTooLong.self) { try f.next() }
    }

    @Test func overLongLineArrivingInPiecesIsCaughtBeforeItsNewline() throws {
        var f = LineFramer()
        for _ in 0..<20 {
            f.append([UInt8](repeating: 0x61, count: 4096))
            if (try? f.next()) == nil, f.pendingCount > maxLineLength { break }
        }
        #expect(throws: LineFramer.LineTooLong.self) { try f.next() }
    }
}
