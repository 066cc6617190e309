import Foundation
import Testing

/// A stand-in daemon on a Unix socket: it answers every connection's first request line in one way,
/// counts the connections and keeps the lines: a command that sent its request twice would show it.
final class ScriptedDaemon: @unchecked Sendable {
    enum Answer {
        case reply(String)  // this line, then close
        case close          // close without a word
        case silence        // keep the connection open, never answer
    }

    let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var stopped = false
    private var accepted = 0
    private var got: [String] = []
    private let finished = DispatchSemaphore(value: 0)

    init(in dir: String, answer: Answer) throws {
        path = dir + "/socket"
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let path = path
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else { throw TimedOut(description: "cannot listen on \(path)") }
        DispatchQueue.global().async { self.serve(answer) }
    }

    var connections: Int { lock.withLock { accepted } }
    var lines: [String] { lock.withLock { got } }

    /// Stops serving: its loop sees the flag within 50 ms; a loop that has not ended 10 s later fails the test.
    /// Once: the sandbox of `sandbox(_:)` stops it at its end too.
    func stop() {
        guard !lock.withLock({ defer { stopped = true }; return stopped }) else { return }
        let ended = finished.wait(timeout: .now() + 10) == .success
        #expect(ended, "the scripted daemon's loop did not end")
        close(fd)
    }

    private func serve(_ answer: Answer) {
        var held: [Int32] = []
        defer {
            held.forEach { close($0) }
            finished.signal()
        }
        while !lock.withLock({ stopped }) {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { continue }
            let c = accept(fd, nil, nil)
            guard c >= 0 else { continue }
            lock.withLock { accepted += 1 }
            let line = readLine(c)
            lock.withLock { got.append(line) }
            switch answer {
            case .reply(let text):
                _ = Array(text.utf8).withUnsafeBytes { send(c, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(c)
            case .close: close(c)
            case .silence: held.append(c)
            }
        }
    }

    /// The first line a client sends (without its newline), read within 5 s.
    private func readLine(_ c: Int32) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(5)
        while !bytes.contains(0x0A), Date() < deadline {
            var p = pollfd(fd: c, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { recv(c, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }
}

/// `appearancectl get`, `set MODE` and `toggle` (the exact argument vectors prompts and key bindings use)
/// answer from the reply's bytes without the general client; a reply they do not know is handed to the
/// general client on the same connection: the same messages and exit codes, and one request only.
@Suite(.serialized, .timeLimit(.minutes(2))) struct QuickCommandTests {
    static let request = #"{"jsonrpc":"2.0","id":1,"method":"get"}"#
    static func reply(_ mode: String) -> String {
        #"{"jsonrpc":"2.0","id":1,"result":{"mode":"\#(mode)","darkMode":\#(mode == "dark"),"system":"unavailable","#
            + #""override":"\#(mode)","source":"override","seq":3,"instance":"f39693da2e92ee75","traits":{"contrast":null,"#
            + #""reducedMotion":null,"accentColor":null},"temporary":null}}"# + "\n"
    }

    /// A sandbox whose clients find `server`'s socket through APPEARANCED_SOCKET (no --socket: that would
    /// not be the fast path's argument vector).
    func sandbox(_ answer: ScriptedDaemon.Answer) throws -> (Sandbox, ScriptedDaemon) {
        let s = try Sandbox()
        let dir = s.root + "/scripted"
        mkdir(dir, 0o700)
        let server = try ScriptedDaemon(in: dir, answer: answer)
        s.atEnd { server.stop() }
        s.env["APPEARANCED_SOCKET"] = server.path
        return (s, server)
    }

    @Test(arguments: ["light", "dark"])
    func aKnownReplyIsPrintedFromOneConnection(mode: String) throws {
        let (s, server) = try sandbox(.reply(Self.reply(mode)))
        #expect(try s.ctl("get") == (0, mode + "\n", ""))
        #expect(server.connections == 1)
        #expect(server.lines == [Self.request])
    }

    /// A reply the general client refuses as incomplete is refused on the fast path too: the recogniser takes
    /// only the encoder's complete state reply (AppearanceProtocol's QuickReply), and anything else ends as
    /// the general client ends, here with EX_PROTOCOL and its message.
    @Test(arguments: [["get"], ["set", "dark"], ["toggle"]])
    func anIncompleteReplyEndsAsTheGeneralClientEnds(command: [String]) throws {
        let short = #"{"jsonrpc":"2.0","id":1,"result":{"mode":"dark","darkMode":true}}"# + "\n"
        let (s, server) = try sandbox(.reply(short))
        let quick = try s.run(Bin.ctl, command)
        let general = try s.run(Bin.ctl, command + ["--json"])
        #expect(general.status == 76, "\(general)")  // EX_PROTOCOL: the general client checks every member
        #expect(quick.status == 76 && quick.out.isEmpty && quick.err == general.err, "\(quick) \(general)")
        #expect(server.connections == 2 && server.lines.count == 2 && server.lines[0] == server.lines[1], "\(server.lines)")
    }

    /// A state reply longer than a request may be (a member this client does not know, 100 KB of it) is read
    /// whole: the fast path hands it to the general client, whose limit is the longest reply a daemon sends.
    @Test func aReplyLongerThanARequestIsReadWhole() throws {
        let long = Self.reply("dark").replacingOccurrences(of: #""temporary":null}}"#,
                                                          with: #""temporary":null,"future":""# + String(repeating: "x", count: 100_000) + #""}}"#)
        let (s, server) = try sandbox(.reply(long))
        #expect(try s.ctl("get") == (0, "dark\n", ""))
        #expect(server.connections == 1)
    }

    /// An error, a line that is not JSON, a result of another shape, a reply spread over two lines, and a
    /// hang-up: `get` hands the reply to the general client (no second connection, no second request) and
    /// ends exactly as the general path does.
    @Test(arguments: [
        #"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the state could not be read"}}"# + "\n",
        "hello\n",
        #"{"jsonrpc":"2.0","id":1,"result":{"mode":"dim","darkMode":false}}"# + "\n",
        #"{"jsonrpc":"2.0","id":1,"result":{"mode":"dark""# + "\n" + #","darkMode":true}}"# + "\n",
        "",
    ])
    func anythingElseGoesTheGeneralWay(reply: String) throws {
        let answer: ScriptedDaemon.Answer = reply.isEmpty ? .close : .reply(reply)
        let (s, server) = try sandbox(answer)
        let quick = try s.ctl("get")
        #expect(server.connections == 1 && server.lines == [Self.request], "\(quick) \(server.lines)")
        server.stop()
        let (g, general) = try sandbox(answer)
        let slow = try g.ctl("get", "--json")
        #expect(general.connections == 1)
        #expect(quick.status != 0 && quick.status == slow.status, "\(quick) \(slow)")
        #expect(quick.err.replacingOccurrences(of: s.root, with: "ROOT") == slow.err.replacingOccurrences(of: g.root, with: "ROOT"))
        #expect(quick.out.isEmpty)
    }

    @Test(arguments: ["light", "dark", "system"])
    func setSendsItsRequestOnceAndPrintsTheMode(mode: String) throws {
        let shown = mode == "system" ? "light" : mode
        let (s, server) = try sandbox(.reply(Self.reply(shown)))
        #expect(try s.ctl("set", mode) == (0, shown + "\n", ""))
        #expect(server.lines == [#"{"jsonrpc":"2.0","id":1,"method":"set","params":{"override":"\#(mode)"}}"#])
    }

    /// toggle is not idempotent: whatever the reply, it is sent once, and an error reads as the general
    /// path's (`toggle --json` takes that path against the same answer).
    @Test(arguments: [
        #"{"jsonrpc":"2.0","id":1,"result":{"mode":"dim","darkMode":true}}"# + "\n",
        #"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the state could not be saved"}}"# + "\n",
        "",
    ])
    func toggleIsSentOnce(reply: String) throws {
        let answer: ScriptedDaemon.Answer = reply.isEmpty ? .close : .reply(reply)
        let (s, server) = try sandbox(answer)
        let quick = try s.ctl("toggle")
        #expect(server.lines == [#"{"jsonrpc":"2.0","id":1,"method":"toggle"}"#], "\(server.lines)")
        server.stop()
        let (g, general) = try sandbox(answer)
        let slow = try g.ctl("toggle", "--json")
        #expect(general.connections == 1)
        #expect(quick.status == slow.status, "\(quick) \(slow)")
        #expect(quick.err.replacingOccurrences(of: s.root, with: "ROOT") == slow.err.replacingOccurrences(of: g.root, with: "ROOT"))
    }

    /// The fast path's constant request lines are the general client's, byte for byte (`--json` takes the
    /// general path and sends the same request).
    @Test(arguments: [["get"], ["set", "light"], ["set", "dark"], ["set", "system"], ["toggle"]])
    func theFastPathSendsWhatTheGeneralClientSends(command: [String]) throws {
        let (s, server) = try sandbox(.reply(Self.reply("dark")))
        _ = try s.run(Bin.ctl, command)
        _ = try s.run(Bin.ctl, command + ["--json"])
        let lines = server.lines
        #expect(lines.count == 2 && lines[0] == lines[1], "\(lines)")
    }

    /// An app in the environment changes what `get` asks: the general path, which names the app.
    @Test func anAppInTheEnvironmentIsAsked() throws {
        let (s, server) = try sandbox(.reply(Self.reply("dark")))
        s.env["APPEARANCED_APP"] = "org.example.Editor"
        #expect(try s.ctl("get") == (0, "dark\n", ""))
        #expect(server.connections == 1)
        #expect(server.lines.first?.contains(#""app":"org.example.Editor""#) == true, "\(server.lines)")
    }

    /// The socket trust rule holds on the fast path too: a directory anyone may write to is never asked.
    @Test func anUntrustedSocketIsNeverAsked() throws {
        let (s, server) = try sandbox(.reply(Self.reply("dark")))
        chmod(s.root + "/scripted", 0o777)
        let r = try s.ctl("get")
        #expect(r.status == 69 && r.err.contains("may be written by anyone (mode 777)"), "\(r)")
        #expect(server.connections == 0)
    }

    /// A daemon that never answers: the deadline's error at once, not a second wait on the general path.
    @Test func silenceEndsAtTheDeadlineOnce() throws {
        let (s, server) = try sandbox(.silence)
        let r = try s.ctl("get")
        #expect(r.status == 69)
        #expect(r.err.contains("appearanced did not answer on \(server.path) within 4 s"), "\(r.err)")
        #expect(server.connections == 1)
    }

    @Test func noDaemonSaysWhatTheGeneralPathSays() throws {
        let s = try Sandbox()
        s.env["APPEARANCED_SOCKET"] = s.root + "/nothing/socket"
        let quick = try s.ctl("get")
        let slow = try s.ctl("get", "--json")
        #expect(quick.status == 69 && quick.status == slow.status)
        #expect(quick.err == slow.err && quick.err.contains(s.root + "/nothing/socket"), "\(quick.err)")
    }
}
