import Foundation
import Testing
import class TestSupport.FakePortal

/// Per-app overrides on the real daemon with the fake portal.
@Suite struct AppOverrideEndToEndTests {
    /// A subscriber's raw lines after its reply.
    static func subscribe(_ s: Sandbox, app: String?) throws -> RawClient {
        let c = try RawClient(s.socket)
        let params = app.map { #","params":{"app":"\#($0)"}"# } ?? ""
        try c.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"\#(params)}"# + "\n")
        _ = try c.line()
        return c
    }

    /// Reads notifications until the reply to a `get` sent now: what the subscriber was told before it.
    static func told(_ c: RawClient) throws -> [String] {
        try c.send(#"{"jsonrpc":"2.0","id":99,"method":"get"}"# + "\n")
        var lines: [String] = []
        while let l = try c.line(), !l.contains(#""id":99"#) { lines.append(l) }
        return lines
    }

    /// One change told to subscribers of several apps, with and without the palette, in mixed order: each
    /// gets its own app's state, the palette when it asked, and the same bytes as the others of its kind.
    @Test func aPassOverMixedSubscribersTellsEachItsOwn() throws {
        let s = try Sandbox.started()
        let kinds: [(app: String?, palette: Bool)] = [(nil, false), ("B", false), (nil, true), ("B", true), ("C", false), (nil, false), ("C", true)]
        let clients = try kinds.map { kind in
            let c = try RawClient(s.socket)
            let params = [kind.app.map { #""app":"\#($0)""# }, kind.palette ? #""palette":true"# : nil].compactMap { $0 }
            try c.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"# + params.joined(separator: ",") + "}}\n")
            _ = try c.line()
            return c
        }
        #expect(try s.ctl("set", "dark").out == "dark\n")
        var seen: [String: String] = [:]
        for (kind, c) in zip(kinds, clients) {
            let told = try Self.told(c)
            #expect(told.count == 1, "\(kind): \(told)")
            guard let line = told.first else { continue }
            #expect(line.contains(#""mode":"dark""#) && line.contains(#""previous":"light""#), "\(kind): \(line)")
            #expect(line.contains(#""app":"B""#) == (kind.app == "B") && line.contains(#""app":"C""#) == (kind.app == "C")
                    && line.contains(#""palette":"#) == kind.palette, "\(kind): \(line)")
            let key = "\(kind.app ?? "-") \(kind.palette)"
            if let other = seen[key] { #expect(other == line, "\(kind)") }
            seen[key] = line
        }
        #expect(seen.count == 6)
    }

    @Test func eachSubscriberIsToldOfItsOwnAppOnly() async throws {
        let (s, portal) = try await Sandbox.withFakePortal(colorScheme: 2)
        try s.startDaemon()
        #expect(try s.ctl("set", "dark", "--app", "A").out == "dark\n")
        let everyone = try Self.subscribe(s, app: nil), a = try Self.subscribe(s, app: "A"), b = try Self.subscribe(s, app: "B")

        try await portal.send("set 1")   // the desktop goes dark: A is dark already
        try waitUntil("the daemon to see dark") { try s.ctl("get").out == "dark\n" }
        let e1 = try Self.told(everyone), a1 = try Self.told(a), b1 = try Self.told(b)
        #expect(e1.count == 1 && e1[0].contains(#""mode":"dark""#) && e1[0].contains(#""previous":"light""#), "\(e1)")
        #expect(a1.isEmpty, "\(a1)")
        #expect(b1.count == 1 && b1[0].contains(#""app":"B""#) && b1[0].contains(#""previous":"light""#), "\(b1)")

        #expect(try s.ctl("set", "light", "--app", "A").out == "light\n")
        let e2 = try Self.told(everyone), a2 = try Self.told(a), b2 = try Self.told(b)
        #expect(e2.isEmpty && b2.isEmpty, "\(e2) \(b2)")
        #expect(a2.count == 1 && a2[0].contains(#""mode":"light","darkMode":false"#) && a2[0].contains(#""source":"app""#)
                && a2[0].contains(#""globalMode":"dark""#) && a2[0].contains(#""previous":"dark""#), "\(a2)")

        // Back to following: A's mode changes to the desktop's dark, so A is told once; the others nothing.
        #expect(try s.ctl("set", "system", "--app", "A").out == "dark\n")
        let a3 = try Self.told(a)
        #expect(a3.count == 1 && a3[0].contains(#""source":"system""#) && a3[0].contains(#""previous":"light""#), "\(a3)")
        #expect(try Self.told(everyone).isEmpty && Self.told(b).isEmpty)
        // Removing it again changes nothing at all.
        #expect(try s.ctl("set", "system", "--app", "A").out == "dark\n")
        #expect(try Self.told(a).isEmpty)
    }

    @Test func appOverridesPersistAcrossAKillAndAreListed() throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        #expect(try s.ctl("apps").out.isEmpty)
        for i in 0..<30 { #expect(try s.ctl("set", i % 2 == 0 ? "dark" : "light", "--app", "app\(i)").status == 0) }
        try d.end(SIGKILL)
        d = try s.startDaemon()
        let lines = try s.ctl("apps").out.split(separator: "\n")
        #expect(lines.count == 30 && lines.contains("app0\tdark") && lines.contains("app29\tlight"), "\(lines)")
        #expect(try s.ctl("get", "--app", "app3").out == "light\n")
        s.env["APPEARANCED_APP"] = "app0"
        #expect(try s.ctl("get").out == "dark\n")
        #expect(try s.ctl("get", "--json").out.contains(#""app":"app0""#))
        #expect(try s.ctl("status").out.contains("apps:        30 app overrides"))
        let toggled = try s.ctl("toggle").out       // app0 was dark, everyone's is light: back to following
        #expect(toggled == "light\n")
        #expect(!(try s.ctl("apps").out.contains("app0\t")))
    }

    @Test func badIdsAndTooManyAppsAreClearErrors() throws {
        let s = try Sandbox()
        // 4,096 overrides already: one more is refused and nothing changes.
        let apps = (0..<4096).map { #""a\#($0)":"dark""# }.joined(separator: ",")
        try s.write(#"{"override":"system","apps":{\#(apps)}}"#, to: s.stateFile)
        try s.startDaemon()
        let r = try s.run(Bin.ctl, ["set", "dark", "--app", "one-more"])
        #expect(r.status == 65 && r.err.contains("too many app overrides (the limit is 4096)"), "\(r.err)")
        #expect(try s.ctl("set", "light", "--app", "a1").status == 0)   // changing an existing one is fine
        for bad in [".hidden", "has space", String(repeating: "x", count: 256), "ümlaut"] {
            let b = try s.run(Bin.ctl, ["get", "--app", bad])
            #expect(b.status == 64 && b.err.contains("invalid --app"), "\(bad): \(b.err)")
        }
        let raw = try RawClient(s.socket)
        try raw.send(#"{"jsonrpc":"2.0","id":1,"method":"get","params":{"app":"a b"}}"# + "\n")
        #expect(try raw.line()?.contains(#""code":-32602,"message":"get: invalid \"app\" \"a b\""#) == true)
        try raw.send(#"{"jsonrpc":"2.0","id":2,"method":"set","params":{"override":"dark","app":"x","until":"next"}}"# + "\n")
        #expect(try raw.line()?.contains("an app override cannot be temporary") == true)
        let t = try s.run(Bin.ctl, ["set", "dark", "--app", "x", "--for", "1h"])
        #expect(t.status == 64 && t.err.contains("an app override cannot be temporary"))
    }
}
