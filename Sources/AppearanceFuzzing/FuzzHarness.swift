import AppearanceCore
import AppearanceDaemon
import AppearanceProtocol

/// One fuzz input through everything that reads bytes from outside: the line framer, the JSON reader,
/// request validation and the reducer it drives, the client-side decoder, the state file and the config
/// (TOML) and palette readers. Any crash is a finding; so is a broken invariant, checked with `precondition`:
/// what the writer produces, the reader reads back unchanged, and a notification always changes the mode
/// its subscriber knew. Used by the libFuzzer target (`make fuzz`) and by the corpus replay test.
public enum FuzzHarness {
    public static func run(_ bytes: [UInt8]) {
        var framer = LineFramer(limit: 4096)
        framer.append(bytes)
        var engine = Engine(inputs: Inputs(system: .noPreference, override: .system, defaultMode: .light), instance: "f")
        var delivery = Delivery(subscribedAt: engine.state)
        var lines: [ArraySlice<UInt8>] = []
        while let line = try? framer.next() { lines.append(line) }
        if let rest = framer.remainder() { lines.append(rest) }
        for line in lines { handle(line, &engine, &delivery) }

        _ = StateStore.parse(bytes)
        let text = String(decoding: bytes, as: UTF8.self)
        _ = try? Config.parse(text, path: "fuzz.toml")
        if let palette = try? PaletteFile.parse(text, path: "fuzz.toml", home: "/home/f") {
            // Every token of a palette that was accepted resolves in every appearance.
            for v in Variant.all {
                precondition(palette.resolved(v, accent: nil).tokens.count == palette.names.count, "a token did not resolve")
            }
        }
    }

    static func handle(_ line: ArraySlice<UInt8>, _ engine: inout Engine, _ delivery: inout Delivery) {
        if let v = try? JSON.parse(line) {
            precondition((try? JSON.parse(v.bytes)) == v, "JSON round trip changed the value")
        }
        _ = try? Incoming.decode(line)
        guard let request = try? Request.decode(line) else { return }
        precondition((try? Request.decode(request.line.dropLast())) == request, "request round trip changed it")
        let before = engine.state
        let t: Transition?
        switch request.call {
        case .get, .status, .subscribe, .resolve, .palette, .log, .apps: t = nil
        case .set(let o): t = engine.apply(.override(o))
        case .toggle: t = engine.apply(.override(engine.toggleTarget))
        case .setTemporary(let m, _): t = engine.apply(.temporary(TemporaryOverride(mode: m, expiry: .nextChange)))
        case .toggleTemporary: t = engine.apply(.temporary(TemporaryOverride(mode: before.mode.opposite, expiry: .nextChange)))
        }
        switch request.call {
        case .toggle, .toggleTemporary: precondition(engine.state.mode == before.mode.opposite, "toggle did not flip")
        default: break
        }
        if let t {
            precondition(t.state.seq == t.previous.seq + 1)
            delivery.offer(t.state)
            if let n = delivery.take() { precondition(n.state.mode != n.previous, "a notification that changes nothing") }
        } else {
            precondition(engine.state == before)
        }
        _ = Outgoing.result(id: request.id ?? .null, engine.state.json)
    }
}
