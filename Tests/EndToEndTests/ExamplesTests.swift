import Foundation
import Testing

enum Repo {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static var examples: String { root + "/examples" }
    static var protocolDoc: String { root + "/docs/protocol.md" }
}

/// Every example in examples/ runs against a real daemon, and its output is checked.
@Suite struct ExamplesTests {
    @Test func swiftExample() throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        let app = try s.start(Bin.dir + "/appearance-example", ["--socket", s.socket])
        #expect(try app.waitForLines(2) == ["appearanced 0.1.0 (protocol 8), system: unavailable", "now light"])
        _ = try s.ctl("toggle")
        #expect(try app.waitForLines(3).last == "light -> dark")
        try d.end(SIGKILL)
        #expect(try app.waitForLines(4).last?.hasPrefix("lost: lost the connection to appearanced on \(s.socket)") == true)
        d = try s.startDaemon()
        #expect(try app.waitForLines(5).last == "reconnected")
        _ = try s.ctl("toggle")
        #expect(try app.waitForLines(6).last == "dark -> light")
        #expect(app.lines.count == 6)

        // `toggle` first, through the environment's socket.
        let once = try s.start(Bin.dir + "/appearance-example", ["toggle"])
        #expect(try once.waitForLines(3) == ["toggled to dark", "appearanced 0.1.0 (protocol 8), system: unavailable", "now dark"])
    }

    @Test func pythonExample() throws {
        let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
        let s = try Sandbox()
        let d = try s.startDaemon()
        // It finds the socket as docs/protocol.md says: here through XDG_RUNTIME_DIR.
        let py = try s.start("/usr/bin/env", [python, Repo.examples + "/python/subscribe.py"])
        #expect(try py.waitForLines(1) == ["now light"])
        _ = try s.ctl("set", "dark")
        _ = try s.ctl("set", "light")
        #expect(try py.waitForLines(3) == ["now light", "light -> dark", "dark -> light"])
        d.stop(SIGTERM)
        #expect(try py.waitForLines(4).last == "appearanced closed the connection")
        #expect(try py.waitForExit() == 1)

        // APPEARANCED_SOCKET wins; no daemon there is a clear message.
        var env = s.env
        env["APPEARANCED_SOCKET"] = s.root + "/elsewhere.sock"
        let r = try Sandbox.runWith(env: env, "/usr/bin/env", [python, Repo.examples + "/python/subscribe.py"])
        #expect(r.status == 1)
        #expect(r.err.contains("appearanced is not running: cannot connect to \(s.root)/elsewhere.sock"), "\(r.err)")
    }

    @Test func socatOneLiners() throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        let script = Repo.examples + "/socat.sh"
        func reply(_ args: String...) throws -> String {
            let r = try s.run(script, args)
            #expect(r.status == 0, "\(args): \(r.err)")
            return r.out
        }
        #expect(try reply("get").hasPrefix(#"{"jsonrpc":"2.0","id":1,"result":{"mode":"light","darkMode":false,"#))
        let sub = try s.start(script, ["subscribe"])
        #expect(try sub.waitForLines(1)[0].contains(#""id":1,"result":{"mode":"light""#))
        #expect(try reply("set", "dark").contains(#""result":{"mode":"dark","darkMode":true,"system":"unavailable","override":"dark""#))
        #expect(try reply("toggle").contains(#""mode":"light""#))
        #expect(try reply("status").contains(#""subscribers":1,"protocol":8"#))
        let lines = try sub.waitForLines(3)
        #expect(lines[1].hasPrefix(#"{"jsonrpc":"2.0","method":"changed","params":{"mode":"dark""#) && lines[1].hasSuffix(#""previous":"light"}}"#))
        #expect(lines[2].contains(#""mode":"light""#) && lines[2].hasSuffix(#""previous":"dark"}}"#))
        // The subscription ends when the daemon does.
        d.stop(SIGTERM)
        #expect(try sub.waitForExit() == 0)
        #expect(try s.run(script, ["bogus"]).status == 64)
    }
}

extension Sandbox {
    /// Runs a program to completion with `env`.
    static func runWith(env: [String: String], _ exe: String, _ args: [String]) throws -> (status: Int32, out: String, err: String) {
        let s = try Sandbox()
        s.env = env
        return try s.run(exe, args)
    }
}
