import Foundation
import Testing

/// `set` and `toggle` from many clients at once: changes that arrive while a save runs are made durable by the
/// next single save (docs/architecture.md), and still behave as if they had come one at a time.
@Suite struct GroupCommitTests {
    /// A client that pipelines a change and a query reads the change's reply first, and the query sees it.
    @Test func aClientReadsItsRepliesInOrder() throws {
        let s = try Sandbox.started()
        let c = try RawClient(s.socket)
        try c.send(#"{"jsonrpc":"2.0","id":1,"method":"set","params":{"override":"dark"}}"# + "\n"
                   + #"{"jsonrpc":"2.0","id":2,"method":"get"}"# + "\n"
                   + #"{"jsonrpc":"2.0","id":3,"method":"toggle"}"# + "\n"
                   + #"{"jsonrpc":"2.0","id":4,"method":"get"}"# + "\n")
        let replies = try (1...4).map { _ in try #require(try c.line()) }
        for (i, r) in replies.enumerated() { #expect(r.contains(#""id":\#(i + 1),"#), "\(replies)") }
        #expect(replies[0].contains(#""mode":"dark""#) && replies[1].contains(#""mode":"dark""#), "\(replies)")
        #expect(replies[2].contains(#""override":"system""#) && replies[3].contains(#""override":"system""#), "\(replies)")
    }

    /// Forty toggles from eight clients at once: each toggles the result of the one before it (an even number
    /// ends where it began), every reply is a state, and the state file holds the final override.
    @Test func concurrentTogglesComposeAndTheLastIsDurable() throws {
        let s = try Sandbox.started()
        #expect(try s.ctl("set", "dark").status == 0)
        let clients = try (0..<8).map { _ in try RawClient(s.socket) }
        for (i, c) in clients.enumerated() {
            try c.send((0..<5).map { #"{"jsonrpc":"2.0","id":\#(i * 5 + $0),"method":"toggle"}"# + "\n" }.joined())
        }
        var overrides: [String] = []
        for c in clients {
            for _ in 0..<5 {
                let r = try #require(try c.line())
                #expect(r.contains(#""result":{"#), "\(r)")
                overrides.append(r.contains(#""override":"system""#) ? "system" : "dark")
            }
        }
        // Starting from dark, toggles alternate system (follow the light desktop) and dark: 20 of each.
        #expect(overrides.filter { $0 == "system" }.count == 20, "\(overrides)")
        #expect(try s.ctl("get", "--json").out.contains(#""override":"dark""#))
        let file = try String(contentsOfFile: s.stateFile, encoding: .utf8)
        #expect(file.contains(#""override":"dark""#), "\(file)")
    }

    /// A subscriber sees the changes that one save made durable as notifications of real changes only, and
    /// ends on the final state.
    @Test func subscribersEndOnTheFinalState() throws {
        let s = try Sandbox.started()
        let w = try RawClient(s.socket)
        try w.send(#"{"jsonrpc":"2.0","id":0,"method":"subscribe"}"# + "\n")
        #expect(try w.line()?.contains(#""mode":"light""#) == true)
        let clients = try (0..<4).map { _ in try RawClient(s.socket) }
        for (i, c) in clients.enumerated() {
            let mode = i % 2 == 0 ? "dark" : "light"
            try c.send(#"{"jsonrpc":"2.0","id":\#(i),"method":"set","params":{"override":"\#(mode)"}}"# + "\n")
        }
        for c in clients { #expect(try c.line()?.contains(#""result""#) == true) }
        let final = try s.ctl("get").out.trimmingCharacters(in: .whitespacesAndNewlines)
        // Every notification is a change from the previous one, and the last says the final mode.
        var last = "light"
        try waitUntil("the subscriber to see \(final)") {
            while last != final {
                guard let n = try w.line() else { return false }
                let mode = n.contains(#""mode":"dark""#) ? "dark" : "light"
                #expect(mode != last, "a notification without a change: \(n)")
                last = mode
            }
            return true
        }
    }
}
