@testable import AppearanceBus
import Dispatch
import TestSupport
import Testing

/// The libdbus wrapper on its own, on a private bus: what it reads is dispatched in bounded passes that
/// follow each other, replies find their calls, and a call's timeout (armed in the turn after the call is
/// written) or the loss of the bus still ends it.
@Suite struct BusConnectionTests {
    /// A connection on `queue`, registered: its unique name once `Hello` is answered.
    static func connect(_ bus: PrivateBus, _ queue: DispatchQueue) async throws -> (BusConnection, String) {
        let names = Recorder<String>()
        let connection = try queue.sync {
            let connection = try BusConnection(address: bus.address, queue: queue)
            let hello = try #require(Message.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                        interface: "org.freedesktop.DBus", method: "Hello"))
            try connection.call(hello) { reply in
                if case .string(let name)? = reply.arguments(limit: 1)?.first { names.append(name) }
            }
            return connection
        }
        try await names.wait(for: "the answer to Hello") { _ in true }
        return (connection, names.all[0])
    }

    /// Two registered connections on a private bus, on one queue: the server and the client of a test.
    struct Pair {
        let directory: TemporaryDirectory
        let bus: PrivateBus
        let queue: DispatchQueue
        let server: BusConnection, serverName: String, client: BusConnection

        static func make() async throws -> Pair {
            let directory = try TemporaryDirectory(prefix: "apd-conn")
            let bus = try await PrivateBus(in: directory)
            let queue = DispatchQueue(label: "appearanced.test.connection")
            let (server, serverName) = try await BusConnectionTests.connect(bus, queue)
            let (client, _) = try await BusConnectionTests.connect(bus, queue)
            return Pair(directory: directory, bus: bus, queue: queue, server: server, serverName: serverName, client: client)
        }

        private init(directory: TemporaryDirectory, bus: PrivateBus, queue: DispatchQueue, server: BusConnection,
                     serverName: String, client: BusConnection) {
            (self.directory, self.bus, self.queue) = (directory, bus, queue)
            (self.server, self.serverName, self.client) = (server, serverName, client)
        }

        func close() {
            queue.sync {
                client.close()
                server.close()
            }
            bus.stop()
        }
    }

    static func ping(_ destination: String) throws -> Message {
        try #require(Message.methodCall(destination: destination, path: "/test", interface: "org.example.Test", method: "Ping"))
    }

    /// Many more calls than one dispatch pass takes arrive together: each pass must be followed by the next
    /// without waiting for more input (none comes: the server only writes), or some would never be answered.
    @Test func pipelinedCallsAreAllAnswered() async throws {
        let pair = try await Pair.make()
        defer { pair.close() }
        let (queue, server, serverName, client) = (pair.queue, pair.server, pair.serverName, pair.client)
        let replies = Recorder<String>()
        let calls = 120  // dbus-daemon allows 128 pending replies per connection
        try queue.sync {
            server.onMethodCall = { [unowned server] call in
                if let answer = Message.methodReturn(to: call) { try? server.send(answer) }
                return true
            }
            for _ in 0..<calls {
                try client.call(try Self.ping(serverName)) { reply in replies.append(reply.error?.name ?? "answer") }
            }
        }
        _ = try await waitUntil("\(calls) replies", seen: { "\(replies.count)" }) { replies.count == calls ? true : nil }
        #expect(replies.all.allSatisfy { $0 == "answer" }, "\(Set(replies.all))")
    }

    /// The timeout of a call nobody answers ends it with NoReply; an answered call's timeout never fires
    /// (its timer, armed a turn later, is cancelled with it).
    @Test func aCallNobodyAnswersEndsAtItsTimeout() async throws {
        let pair = try await Pair.make()
        defer { pair.close() }
        let (queue, server, serverName, client) = (pair.queue, pair.server, pair.serverName, pair.client)
        let replies = Recorder<String>()
        try queue.sync {
            // Takes every call; answers only the first.
            var answered = false
            server.onMethodCall = { [unowned server] call in
                if !answered, let answer = Message.methodReturn(to: call) {
                    answered = true
                    try? server.send(answer)
                }
                return true
            }
            try client.call(try Self.ping(serverName), timeout: 100) { reply in replies.append("first: " + (reply.error?.name ?? "answer")) }
        }
        try await replies.wait(for: "the first call's answer") { _ in true }
        // Twice the first call's timeout: its timer would have fired by the time this one's does.
        try queue.sync {
            try client.call(try Self.ping(serverName), timeout: 200) { reply in replies.append("second: " + (reply.error?.name ?? "answer")) }
        }
        try await replies.wait(for: "the second call to time out", from: 1) { _ in true }
        #expect(replies.all == ["first: answer", "second: org.freedesktop.DBus.Error.NoReply"])
    }

    /// A call still waiting when the bus goes away ends with NoReply, before the loss itself is told (the
    /// order libdbus keeps for its own pending calls): nothing waits for a reply that cannot come.
    @Test func aCallWaitingWhenTheBusIsLostEndsBeforeTheLossIsTold() async throws {
        let pair = try await Pair.make()
        defer { pair.close() }
        let (bus, queue, server, serverName, client) = (pair.bus, pair.queue, pair.server, pair.serverName, pair.client)
        let seen = Recorder<String>()
        try queue.sync {
            server.onMethodCall = { _ in
                seen.append("server has the call")
                return true  // and never answers
            }
            client.onSignal = { signal in
                if signal.isSignal(interface: "org.freedesktop.DBus.Local", member: "Disconnected") { seen.append("lost") }
            }
            try client.call(try Self.ping(serverName)) { reply in seen.append("reply: " + (reply.error?.name ?? "answer")) }
        }
        try await seen.wait(for: "the call to reach the server") { _ in true }
        bus.stop()
        try await seen.wait(for: "the loss told", from: 1) { $0 == "lost" }
        #expect(seen.all == ["server has the call", "reply: org.freedesktop.DBus.Error.NoReply", "lost"])
    }
}
