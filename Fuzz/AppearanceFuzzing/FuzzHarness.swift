import AppearanceCore
import AppearanceDecide
import AppearanceFormats
import AppearanceProtocol

/// One fuzz input through everything that reads bytes from outside: the line framer, the JSON reader,
/// request validation and the reducer it drives, the client-side decoder, the state file and the config
/// (TOML) and palette readers, the change log, and the darkman and plist imports (all of AppearanceFormats,
/// none of the daemon). Any crash is a finding; so is a broken invariant: what the writer produces, the reader reads back
/// unchanged (a request, JSON, a state file; an imported darkman config is a config), and a notification
/// always changes the mode its subscriber knew. Broken invariants are returned (the libFuzzer target traps on
/// them; the corpus replay test reports them as a failure naming the input, instead of crashing the test runner).
public enum FuzzHarness {
    /// The invariants one input broke; empty when it ran clean.
    public static func run(_ bytes: [UInt8]) -> [String] {
        var broken: [String] = []
        check(bytes, &broken)
        return broken
    }

    private static func expect(_ condition: Bool, _ what: String, _ broken: inout [String]) {
        if !condition { broken.append(what) }
    }

    private static func check(_ bytes: [UInt8], _ broken: inout [String]) {
        var framer = LineFramer(limit: 4096)
        framer.append(bytes)
        var engine = Engine(inputs: Inputs(system: .noPreference, override: .system, defaultMode: .light), instance: "f")
        var delivery = Delivery(subscribedAt: engine.state)
        var lines: [ArraySlice<UInt8>] = []
        while let line = try? framer.next() { lines.append(line) }
        if let rest = framer.remainder() { lines.append(rest) }
        for line in lines { handle(line, &engine, &delivery, &broken) }

        if case .success(let saved) = StateFile.parse(bytes) {
            // What the daemon would write for it reads back as the same state, with nothing left out.
            let written = StateFile.Saved(override: saved.override, temporary: saved.temporary, apps: saved.apps)
            expect((try? StateFile.parse(StateFile.encode(written)).get()) == written, "state file round trip changed it", &broken)
        }
        if case .success(let loaded) = ChangeLogFile.parse(bytes) {
            // What the daemon would rewrite it with reads back as the same entries.
            let again = try? ChangeLogFile.parse(ChangeLogFile.encode(loaded.entries)).get()
            expect(again?.entries == loaded.entries && again?.needsRewrite == false, "change log round trip changed it", &broken)
        }
        if case .success(let fix) = LocationFile.parse(bytes) {
            // A place that was read back is one the daemon could have written: it reads back the same.
            expect((try? LocationFile.parse(LocationFile.encode(fix)).get()) == fix, "location file round trip changed it", &broken)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        _ = try? Config.parse(text, path: "fuzz.toml")
        if let palette = try? PaletteFile.parse(text, path: "fuzz.toml", home: "/home/f") {
            // Every token of a palette that was accepted resolves in every appearance.
            for v in Variant.all {
                expect(palette.resolved(v, accent: nil).tokens.count == palette.names.count, "a token did not resolve", &broken)
            }
        }
        // The imports: a darkman config's translation is a config appearanced reads.
        let imported = convertDarkman(text, file: "config.yaml")
        expect((try? Config.parse(imported.toml, path: "imported.toml")) != nil, "an imported darkman config does not parse", &broken)
        _ = try? convertLFL(light: text, lightFile: "light.plist", dark: text, darkFile: "dark.plist")
    }

    static func handle(_ line: ArraySlice<UInt8>, _ engine: inout Engine, _ delivery: inout Delivery, _ broken: inout [String]) {
        if let v = try? JSON.parse(line) {
            expect((try? JSON.parse(v.bytes)) == v, "JSON round trip changed the value", &broken)
        }
        _ = try? Incoming.decode(line)
        guard let request = try? Request.decode(line) else { return }
        expect((try? Request.decode(request.line.dropLast())) == request, "request round trip changed it", &broken)
        let before = engine.state
        let beforeApp = engine.state(for: request.app)
        // The daemon's own decision (Decide.write), with the app and the lifetime the request gives.
        var t: Transition?
        var refused = false
        switch Decide.write(request.call, app: request.app, on: engine, now: 1_800_000_000) {
        case .success(let event?): t = engine.apply(event)
        case .success(nil): t = nil
        case .failure(let e):
            refused = true
            expect(e.code == ErrorCode.requestFailed.rawValue, "a write refused with \(e.code)", &broken)
        }
        switch request.call {
        case .toggle where !refused, .toggleTemporary where !refused:
            expect(engine.state(for: request.app).mode == beforeApp.mode.opposite, "toggle did not flip", &broken)
        default: break
        }
        if let t {
            expect(t.state.seq == t.previous.seq + 1, "seq did not advance by one", &broken)
            delivery.offer(t.state)
            if let n = delivery.take() { expect(n.state.mode != n.previous, "a notification that changes nothing", &broken) }
        } else {
            expect(engine.state == before, "a request that changed nothing changed the state", &broken)
        }
        _ = Outgoing.result(id: request.id ?? .null, engine.state.json)
    }
}
