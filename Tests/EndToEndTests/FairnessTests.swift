import AppearancePosix
import AppearanceProtocol
import Foundation
import Testing

/// One client's worst requests cost the others at most one line's work: a client that floods the daemon with
/// the costliest lines it can send, and reads every reply, must not hold back anyone else's `get`, `set` or
/// notification. The victims use the CLI, whose own 4 s deadline is what fails them when they are held back;
/// the flood runs until every victim is done, so a daemon that serves the flooder first fails them. No timing
/// is asserted.
@Suite struct FairnessTests {
    /// A `get` of nearly 64 KiB whose params are thousands of unknown members: the costliest line to refuse.
    static let costlyLine: [UInt8] = {
        var text = #"{"jsonrpc":"2.0","id":7,"method":"get","params":{"#
        var i = 0
        while text.utf8.count < 64_900 {
            text += #""p\#(i)":0,"#
            i += 1
        }
        text += #""app":"x"}}"#
        return Array(text.utf8) + [0x0A]
    }()

    /// Writes costly lines as fast as the socket takes them on one thread and reads every reply on another,
    /// until `stop`; counts the replies.
    final class ReadingFlooder: @unchecked Sendable {
        let client: RawClient
        let stop = Atomic(false)
        let replies = Atomic(0)
        private let done = DispatchGroup()

        init(_ socket: String) throws {
            client = try RawClient(socket)
            var tv = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(client.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            let chunk = Array((0..<8).map { _ in FairnessTests.costlyLine }.joined())
            let (socket, stop, replies) = (client.socket, stop, replies)
            done.enter()
            Thread { [done] in
                while !stop.value { _ = try? socket.writeAll(chunk) }
                done.leave()
            }.start()
            done.enter()
            Thread { [done, self] in
                while !stop.value, let line = try? self.client.line() {
                    if line.contains(#""error""#) { replies.value += 1 }
                }
                done.leave()
            }.start()
        }

        /// Waits until the flood is answered at least once (it is on), with a deadline.
        func waitUntilFlowing() throws {
            try waitUntil("the flooder's first reply") { replies.value > 0 }
        }

        func end() {
            stop.value = true
            shutdown(client.fd, Int32(SHUT_RDWR))
            _ = done.wait(timeout: .now() + 30)
        }
    }

    @Test func aFlooderThatReadsItsRepliesHoldsNoOneBack() throws {
        let s = try Sandbox.started()
        let subscriber = try RawClient(s.socket)
        try subscriber.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
        #expect(try subscriber.line()?.contains(#""mode":"light""#) == true)

        let flood = try ReadingFlooder(s.socket)
        defer { flood.end() }
        try flood.waitUntilFlowing()
        for _ in 0..<5 {
            let r = try s.ctl("get")
            #expect(r.status == 0 && r.out == "light\n", "\(r)")
        }
        let set = try s.ctl("set", "dark")
        #expect(set.status == 0 && set.out == "dark\n", "\(set)")
        let told = try subscriber.line()
        #expect(told?.contains(#""method":"changed""#) == true && told?.contains(#""mode":"dark""#) == true, "\(told ?? "nil")")
        // A new client is accepted and answered during the flood too.
        let late = try s.ctl("get")
        #expect(late.status == 0 && late.out == "dark\n", "\(late)")
        // The flood was on the whole time, and the flooder itself is answered: it waits its turn, but is never starved itself.
        let before = flood.replies.value
        try waitUntil("more replies for the flooder (had \(before))") { flood.replies.value > before }
    }

    @Test func twoFloodersAndAVictimEachGetTheirTurn() throws {
        let s = try Sandbox.started()
        let floods = try (0..<2).map { _ in try ReadingFlooder(s.socket) }
        defer { floods.forEach { $0.end() } }
        for f in floods { try f.waitUntilFlowing() }
        for _ in 0..<3 {
            let r = try s.ctl("status")
            #expect(r.status == 0 && r.out.contains("mode:"), "\(r)")
        }
        let counts = floods.map { $0.replies.value }
        for (f, n) in zip(floods, counts) {
            try waitUntil("each flooder answered again") { f.replies.value > n }
        }
    }
}
