import AppearanceCore
import AppearanceKit
import AppearancePosix
import AppearanceProtocol
import Foundation
import Testing
import let TestSupport.timeoutScale

/// A raw client on the daemon's socket, for what a well-behaved client library never does.
final class RawClient {
    let socket: Descriptor
    var fd: Int32 { socket.raw }
    private var framer = LineFramer(limit: 1 << 20)

    init(_ path: String) throws {
        socket = try Descriptor.unixStreamSocket(name: path)
        try socket.connect(to: path)
        var tv = timeval(tv_sec: 20 * timeoutScale, tv_usec: 0)  // a deadline for every read: a lost reply fails, not hangs
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) throws { try socket.writeAll(text) }

    /// The next line, or nil at end of stream.
    func line() throws -> String? {
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
        defer { buf.deallocate() }
        while true {
            if let l = try framer.next() { return String(decoding: l, as: UTF8.self) }
            guard let n = try socket.read(into: buf) else { throw TimedOut(description: "no reply within the read timeout") }
            if n == 0 { return nil }
            framer.append(UnsafeRawBufferPointer(rebasing: buf[0..<n]))
        }
    }
}

@Suite struct SocketBehaviourTests {
    @Test func overLongLineGetsAnErrorThenTheConnectionCloses() throws {
        let s = try Sandbox.started()
        let c = try RawClient(s.socket)
        try c.send(String(repeating: "a", count: maxLineLength + 10))
        let reply = try #require(try c.line())
        #expect(reply.contains("-32600") && reply.contains("longer than 65536 bytes"), "\(reply)")
        #expect(try c.line() == nil)
        // Nobody else is affected.
        #expect(try s.ctl("get").status == 0)
    }

    @Test func badRequestsGetErrorsAndTheConnectionStaysUsable() throws {
        let s = try Sandbox.started()
        let c = try RawClient(s.socket)
        try c.send("{oops\n")
        #expect(try c.line()?.contains(#""code":-32700"#) == true)
        try c.send(#"{"jsonrpc":"2.0","id":1,"method":"nope"}"# + "\n")
        #expect(try c.line()?.contains(#""id":1,"error":{"code":-32601"#) == true)
        try c.send(#"{"jsonrpc":"2.0","method":"set","params":{"override":"dark"}}"# + "\n")  // notification: no reply
        try c.send("\u{FF}\u{FE}\n")
        #expect(try c.line()?.contains(#""code":-32700"#) == true)
        try c.send(#"{"jsonrpc":"2.0","id":"z","method":"get"}"# + "\n")
        let got = try #require(try c.line())
        #expect(got.contains(#""id":"z""#) && got.contains(#""mode":"dark""#), "\(got)")
    }

    @Test func halfALineThenHangUpIsHarmless() throws {
        let s = try Sandbox.started()
        do {
            let c = try RawClient(s.socket)
            try c.send(#"{"jsonrpc":"2.0","id":1,"met"#)
        }
        #expect(try s.ctl("get").status == 0)
    }

    @Test func halfCloseStillGetsItsReplies() throws {
        let s = try Sandbox.started()
        // Like `echo '{…}' | socat - UNIX-CONNECT:…`: write, shut the write side, then read.
        let c = try RawClient(s.socket)
        try c.send(#"{"jsonrpc":"2.0","id":1,"method":"get"}"# + "\n" + #"{"jsonrpc":"2.0","id":2,"method":"get"}"#)
        shutdown(c.fd, Int32(SHUT_WR))
        #expect(try c.line()?.contains(#""id":1,"result":{"mode":"light""#) == true)
        #expect(try c.line()?.contains(#""id":2,"result":{"mode":"light""#) == true)
        #expect(try c.line() == nil)
    }

    /// Rule 5: a subscriber that never reads holds nobody back and is coalesced; when it reads again it gets
    /// the newest state with the previous mode it knew.
    @Test func slowSubscriberIsCoalescedAndNeverBlocksOthers() throws {
        let s = try Sandbox.started()
        let slow = try RawClient(s.socket)
        var rcv: Int32 = 4096  // a small receive buffer fills quickly
        setsockopt(slow.fd, SOL_SOCKET, SO_RCVBUF, &rcv, socklen_t(MemoryLayout<Int32>.size))
        try slow.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")

        let fast = try AppearanceConnection(socketPath: s.socket)
        _ = try fast.subscribe()
        let setter = try AppearanceConnection(socketPath: s.socket)
        let flips = 3000
        for i in 0..<flips {
            let target: Override = i % 2 == 0 ? .dark : .light
            #expect(try setter.set(target).mode == target.mode)
            let n = try fast.nextChange()
            #expect(n.state.mode == target.mode && n.previous == target.mode.opposite)
        }
        #expect(try setter.set(.dark).mode == .dark)
        _ = try fast.nextChange()

        // Now the slow one asks for the state and reads everything up to that reply: far fewer than 3000
        // notifications. Its reply is queued behind what the kernel holds; a coalesced notification, if one
        // is pending, comes after it.
        try slow.send(#"{"jsonrpc":"2.0","id":2,"method":"get"}"# + "\n")
        var notifications: [String] = []
        var reply: String?
        while reply == nil, let l = try slow.line() {
            if l.contains(#""id":1,"#) { continue }
            if l.contains(#""id":2,"#) { reply = l } else { notifications.append(l) }
        }
        #expect(reply?.contains(#""mode":"dark""#) == true && reply?.contains(#""seq":\#(flips + 1),"#) == true)
        #expect(notifications.count < flips / 2, "not coalesced: \(notifications.count) notifications")
        for (a, b) in zip(notifications, notifications.dropFirst()) {
            // Every notification changes the mode the subscriber knew: they alternate, never repeat.
            #expect(a.contains(#""mode":"dark""#) != b.contains(#""mode":"dark""#))
        }
        if notifications.last?.contains(#""mode":"dark""#) != true {
            // It last knew light; the final dark must still reach it, carrying previous light.
            let last = try #require(try slow.line())
            #expect(last.contains(#""mode":"dark""#) && last.contains(#""previous":"light""#), "\(last)")
        }
    }
}

extension Override {
    var mode: Mode { self == .dark ? .dark : .light }
}

@Suite struct ConfigFileTests {
    @Test func defaultModeFromConfigAndReloadOnSIGHUP() throws {
        let s = try Sandbox()
        try s.write("default-mode = \"dark\"\n", to: s.configFile)
        let d = try s.startDaemon()
        #expect(try s.ctl("get").out == "dark\n")
        let w = try s.start(Bin.ctl, ["watch"])
        #expect(try w.waitForLines(1) == ["dark"])
        try s.write("default-mode = \"light\"\n", to: s.configFile)
        kill(d.pid, SIGHUP)
        #expect(try w.waitForLines(2) == ["dark", "light"])
        // A bad config on reload is reported and the previous one stays in force.
        try s.write("default-mode = \"blue\"\n", to: s.configFile)
        kill(d.pid, SIGHUP)
        try d.waitForStderr("config.toml:1: default-mode: expected \"light\" or \"dark\", got \"blue\"; keeping the previous configuration")
        #expect(try s.ctl("get").out == "light\n")
    }

    /// A config with a mistake at start-up does not mean "not running": the daemon serves with the defaults
    /// and says why in the log and in `status` (as a reload with the same mistake keeps the previous config).
    /// A `--config` file that does not exist is a mistake on the command line: exit 78.
    @Test func badConfigAtStartServesTheDefaultsNamingFileAndLine() throws {
        let s = try Sandbox()
        try s.write("{\"override\":\"dark\"}\n", to: s.stateFile)
        try s.write("# comment\ndefualt-mode = \"dark\"\n", to: s.configFile)
        let d = try s.startDaemon()
        try d.waitForStderr("\(s.configFile):2: unknown key \"defualt-mode\"")
        #expect(d.stderr.contains("; using the defaults until it is fixed"), "\(d.stderr)")
        #expect(try s.ctl("get").out == "dark\n")  // the override is still the user's: nothing was lost
        let status = try s.ctl("status")
        let line = status.out.split(separator: "\n").first { $0.hasPrefix("config:") } ?? ""
        #expect(status.status == 0 && line.hasPrefix("config:      \(s.configFile): not used, unknown key \"defualt-mode\"")
                && line.hasSuffix("(line 2); using the defaults until it is fixed"), "\(status.out)")
        let json = try s.ctl("status", "--json").out
        #expect(json.contains(#"not used, unknown key \"defualt-mode\""#) && json.contains("(line 2); using the defaults"), "\(json)")
        // Fixed and reloaded: in force, and status says so.
        try s.write("default-mode = \"dark\"\n", to: s.configFile)
        kill(d.pid, SIGHUP)
        try waitUntil("status to show the fixed config") { try s.ctl("status").out.contains("config:      \(s.configFile)\n") }

        let missing = try s.run(Bin.daemon, ["--config", s.root + "/nope.toml"])
        #expect(missing.status == 78 && missing.err.contains("nope.toml does not exist"), "\(missing.err)")
    }
}
