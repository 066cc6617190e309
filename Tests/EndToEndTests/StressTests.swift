import AppearanceCore
import AppearanceKit
import AppearanceProtocol
import Foundation
import Testing
import class TestSupport.FakePortal
import class TestSupport.PrivateBus
import class TestSupport.Recorder
import class TestSupport.TemporaryDirectory
import let TestSupport.underSanitizer

/// The reliability scenarios of docs/reliability.md. `make test` runs them at reduced sizes that still take
/// every path; `make stress` (APPEARANCED_STRESS=full) at full size. They assert behaviour, never timings;
/// the figures they print (`figure: …`) are what docs/reliability.md reports.
enum Stress {
    static let full = ProcessInfo.processInfo.environment["APPEARANCED_STRESS"] == "full"
    static let subscribers = full ? 10_000 : 200
    static let flips = full ? 1_000 : 40
    static let readers = 100
    static let portalRestarts = full ? 100 : 4
    static let busCycles = full ? 100 : 6
    static let killedSets = full ? 1_000 : 120
    static let connectCycles = full ? 100_000 : 2_000
    static let crowdRounds = full ? 8 : 3
    static let crowd = full ? 3_000 : 300

    static func figure(_ name: String, _ value: String) { print("figure: \(name): \(value)") }

    /// The test process holds one descriptor per subscriber too.
    static func raiseFileLimit() {
        var r = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &r)
        r.rlim_cur = r.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &r)
    }
}

/// What /proc says about a process.
struct ProcStat {
    let pid: Int32
    func field(_ name: String) -> Int {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }
    var rssKiB: Int { field("VmRSS") }
    var peakKiB: Int { field("VmHWM") }
    var fds: Int { ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count }
    /// utime + stime, in clock ticks.
    var cpuTicks: Int {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let fields = text.split(separator: ")").last?.split(separator: " ") ?? []
        return (Int(fields.count > 12 ? fields[11] : "") ?? 0) + (Int(fields.count > 12 ? fields[12] : "") ?? 0)
    }
}

extension RawClient {
    /// Sends `get` and reads up to its reply; returns the notifications before it and the reply.
    func notificationsUntilGet(id: Int) throws -> (notifications: [String], reply: String) {
        try send(#"{"jsonrpc":"2.0","id":\#(id),"method":"get"}"# + "\n")
        var seen: [String] = []
        while let l = try line() {
            if l.contains(#""id":\#(id),"#) { return (seen, l) }
            if l.contains(#""method":"changed""#) { seen.append(l) }
        }
        throw TimedOut(description: "connection closed before the get reply")
    }

    /// The mode this subscriber ends up knowing, given the daemon's final mode: what it was last told, plus
    /// the coalesced notification that must follow the get reply when that differs (docs/protocol.md rule 5).
    func finalKnownMode(initial: String, final: String, id: Int) throws -> String {
        let (notes, reply) = try notificationsUntilGet(id: id)
        #expect(reply.contains(#""mode":"\#(final)""#))
        // Each notification starts from the mode the one before it ended on, and changes it (rules 1 and 2).
        var known = initial
        for n in notes {
            #expect(n.contains(#""previous":"\#(known)""#) && !n.contains(#""mode":"\#(known)""#), "\(n)")
            known = n.contains(#""mode":"dark""#) ? "dark" : "light"
        }
        guard known != final else { return known }
        let pending = try #require(try line())
        #expect(pending.contains(#""previous":"\#(known)""#), "\(pending)")
        return pending.contains(#""mode":"dark""#) ? "dark" : "light"
    }
}

@Suite(.serialized) struct StressTests {
    /// Many subscribers, then mode flips as fast as the (fake) portal signals them: everyone ends on the final
    /// state, nobody is dropped.
    @Test func manySubscribersManyFlips() async throws {
        Stress.raiseFileLimit()
        let (s, portal) = try await Sandbox.withFakePortal(.v2, colorScheme: 2)
        let d = try s.startDaemon()
        let stat = ProcStat(pid: d.pid)
        let idle = stat.rssKiB

        var clients: [RawClient] = []
        for _ in 0..<Stress.subscribers {
            let c = try RawClient(s.socket)
            try c.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
            clients.append(c)
        }
        for c in clients { #expect(try c.line()?.contains(#""mode":"light""#) == true) }
        let connected = stat.rssKiB

        for i in 0..<Stress.flips { try await portal.send("set \(i % 2 == 0 ? 1 : 2)") }
        let final = Stress.flips % 2 == 1 ? "dark" : "light"
        // No child processes while thousands of descriptors are open: Foundation's Process.run has been
        // seen to crash then. Ask through the client library instead of appearancectl.
        let probe = try AppearanceConnection(socketPath: s.socket)
        try waitUntil("the daemon to settle on \(final)") { try probe.state().system.rawValue == final }
        for (k, c) in clients.enumerated() {
            #expect(try c.finalKnownMode(initial: "light", final: final, id: 1000 + k) == final)
        }
        Stress.figure("subscribers", "\(Stress.subscribers), flips \(Stress.flips), every subscriber ends on \(final)")
        Stress.figure("daemon RSS", "idle \(idle) KiB, with subscribers \(connected) KiB, peak \(stat.peakKiB) KiB")
    }

    /// Changes that come while a large fan-out is still being written (it goes out a turn of 32 subscribers at
    /// a time): every subscriber ends on the last state, each told a change from what it knew (docs/decisions.md).
    @Test func changesDuringALargeFanOutReachEveryone() throws {
        Stress.raiseFileLimit()
        let s = try Sandbox.started()
        let clients = try (0..<(12 * 32 + 1)).map { _ in try RawClient(s.socket) }
        for c in clients { try c.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n") }
        for c in clients { #expect(try c.line()?.contains(#""mode":"light""#) == true) }
        let setter = try RawClient(s.socket)
        let sets = 11
        try setter.send((0..<sets).map { i in
            #"{"jsonrpc":"2.0","id":\#(i + 2),"method":"set","params":{"override":"\#(i % 2 == 0 ? "dark" : "light")"}}"# + "\n"
        }.joined())
        for _ in 0..<sets { #expect(try setter.line()?.contains(#""result""#) == true) }
        for (k, c) in clients.enumerated() {
            #expect(try c.finalKnownMode(initial: "light", final: "dark", id: 1000 + k) == "dark")
        }
    }

    /// One subscriber that never reads among readers: the readers get every change, memory stays bounded.
    @Test func nonReaderAmongReaders() throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        let stat = ProcStat(pid: d.pid)
        let stuck = try RawClient(s.socket)
        try stuck.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
        let readers = try (0..<Stress.readers).map { _ in try AppearanceConnection(socketPath: s.socket) }
        for r in readers { _ = try r.subscribe() }
        let setter = try AppearanceConnection(socketPath: s.socket)
        let before = stat.rssKiB
        let rounds = Stress.full ? 10_000 : 1_000
        for i in 0..<rounds {
            let target: Override = i % 2 == 0 ? .dark : .light
            _ = try setter.set(target)
            for r in readers {
                let n = try r.nextChange()
                #expect(n.state.mode == target.mode && n.state.seq == UInt64(i + 1))
            }
        }
        let growth = stat.rssKiB - before
        #expect(underSanitizer || growth < 16 * 1024, "daemon RSS grew by \(growth) KiB with a stuck subscriber")
        Stress.figure("stuck subscriber", "\(rounds) changes to \(Stress.readers) readers, daemon RSS growth \(growth) KiB")
    }

    /// The portal killed and restarted with the value changed while it was down: the daemon converges each time.
    @Test func portalRestartsConverge() async throws {
        let dir = try TemporaryDirectory()
        let bus = try await PrivateBus(in: dir)
        var portal = try await FakePortal(bus: bus, directory: dir, version: .v2, colorScheme: 1)
        let s = try Sandbox()
        s.env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        try s.startDaemon()
        var worst = 0.0
        for i in 0..<Stress.portalRestarts {
            portal.stop()
            try waitUntil("the daemon to see the portal leave") {
                try s.ctl("get", "--json").out.contains(#""system":"unavailable""#)
            }
            let (value, expected) = i % 2 == 0 ? (2, "light") : (1, "dark")
            let started = Date()
            portal = try await FakePortal(bus: bus, directory: dir, version: i % 3 == 0 ? .v1 : .v2, colorScheme: UInt32(value))
            try waitUntil("the daemon to converge on \(expected) after restart \(i)") {
                try s.ctl("get", "--json").out.contains(#""system":"\#(expected)""#)
            }
            worst = max(worst, Date().timeIntervalSince(started))
        }
        portal.stop()
        Stress.figure("portal restarts", "\(Stress.portalRestarts), slowest convergence \(String(format: "%.3f", worst)) s")
    }

    /// The session bus killed, then a new one at the same address: the daemon keeps answering, does not spin,
    /// reconnects and resyncs.
    @Test func sessionBusReplaced() async throws {
        let dir = try TemporaryDirectory()
        var bus = try await PrivateBus(in: dir)
        var portal = try await FakePortal(bus: bus, directory: dir, colorScheme: 1)
        let s = try Sandbox()
        s.env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let d = try s.startDaemon(["--log-level", "debug"])  // later reconnect attempts log at debug level
        #expect(try s.ctl("get").out == "dark\n")
        let stat = ProcStat(pid: d.pid)
        portal.stop()
        bus.stop()
        try d.waitForStderr("the session bus went away")
        let ticks = stat.cpuTicks
        // Let a few reconnect attempts fail (each logs); the socket answers all along.
        try d.waitForStderr("trying again in 1")
        #expect(try s.ctl("get", "--json").out.contains(#""system":"unavailable""#))
        let spent = stat.cpuTicks - ticks
        #expect(spent < 50, "the daemon used \(spent) CPU ticks while the bus was gone")
        bus = try await PrivateBus(in: dir)
        portal = try await FakePortal(bus: bus, directory: dir, colorScheme: 2)
        try waitUntil("the daemon to resync with the new bus") {
            try s.ctl("get", "--json").out.contains(#""system":"light""#)
        }
        Stress.figure("bus gone", "daemon CPU while reconnecting: \(spent) ticks")
        portal.stop()
    }

    /// Subscribers spread over many app ids, every tenth app forced dark, then desktop flips: every
    /// subscriber ends on its own app's state (forced dark ones never moved), nobody is dropped.
    @Test func subscribersOverManyAppsConverge() async throws {
        Stress.raiseFileLimit()
        let (s, portal) = try await Sandbox.withFakePortal(.v2, colorScheme: 2)
        try s.startDaemon()
        let apps = Stress.full ? 100 : 10
        let probe = try AppearanceConnection(socketPath: s.socket)
        for a in stride(from: 0, to: apps, by: 10) {
            _ = try AppearanceConnection(socketPath: s.socket, app: "app\(a)").set(.dark)
        }
        var clients: [(RawClient, Int)] = []
        for k in 0..<Stress.subscribers {
            let c = try RawClient(s.socket)
            try c.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"app":"app\#(k % apps)"}}"# + "\n")
            clients.append((c, k % apps))
        }
        for (c, a) in clients { #expect(try c.line()?.contains(a % 10 == 0 ? #""mode":"dark""# : #""mode":"light""#) == true) }
        for i in 0..<Stress.flips { try await portal.send("set \(i % 2 == 0 ? 1 : 2)") }
        let final = Stress.flips % 2 == 1 ? "dark" : "light"
        try waitUntil("the daemon to settle on \(final)") { try probe.state().system.rawValue == final }
        for (k, (c, a)) in clients.enumerated() {
            let expected = a % 10 == 0 ? "dark" : final
            try c.send(#"{"jsonrpc":"2.0","id":\#(1000 + k),"method":"get","params":{"app":"app\#(a)"}}"# + "\n")
            var last: String?
            var reply = ""
            while let l = try c.line() {
                if l.contains(#""id":\#(1000 + k)"#) { reply = l; break }
                last = l
            }
            #expect(reply.contains(#""mode":"\#(expected)""#), "\(reply)")
            // The last thing it was told (or a notification still on its way) is its own final mode.
            if let last, !last.contains(#""mode":"\#(expected)""#) {
                let pending = try #require(try c.line())
                #expect(pending.contains(#""mode":"\#(expected)""#), "subscriber \(k) of app\(a)")
            }
            if a % 10 == 0 { #expect(last == nil, "a forced-dark app's subscriber was told of desktop flips: \(last ?? "")") }
        }
        Stress.figure("app subscribers", "\(Stress.subscribers) over \(apps) apps, flips \(Stress.flips), all converged")
        portal.stop()
    }

    /// The session bus lost and regained many times while clients come and go: libdbus closes its socket as
    /// soon as the bus goes, and the next client's `accept` usually gets that descriptor number. The watch
    /// sources on the bus use a descriptor of their own, so a client on the reused number is still read, a
    /// watcher sees every change, and no descriptor is left behind.
    @Test func sessionBusLostAndRegainedWhileClientsComeAndGo() async throws {
        let dir = try TemporaryDirectory()
        var bus = try await PrivateBus(in: dir)
        var portal = try await FakePortal(bus: bus, directory: dir, colorScheme: 1)
        let s = try Sandbox()
        s.env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let d = try s.startDaemon()
        let w = try s.start(Bin.ctl, ["watch"])
        #expect(try w.waitForLines(1) == ["dark"])
        let fdsBefore = ProcStat(pid: d.pid).fds
        var expected = ["dark"]
        for i in 0..<Stress.busCycles {
            portal.stop()
            bus.stop()
            try waitUntil("the daemon to see the bus go (cycle \(i))") {
                try s.ctl("get", "--json").out.contains(#""system":"unavailable""#)
            }
            // Clients while the daemon is without a bus: they take the descriptor numbers libdbus gave up.
            for _ in 0..<10 { #expect(try s.ctl("get").status == 0) }
            let (value, mode): (UInt32, String) = i % 2 == 0 ? (2, "light") : (1, "dark")
            bus = try await PrivateBus(in: dir)
            portal = try await FakePortal(bus: bus, directory: dir, colorScheme: value)
            try waitUntil("the daemon to read \(mode) on the new bus (cycle \(i))") {
                try s.ctl("get", "--json").out.contains(#""system":"\#(mode)""#)
            }
            for _ in 0..<10 { #expect(try s.ctl("get").out == "\(mode)\n") }
            expected.append(mode)
            #expect(try w.waitForLines(expected.count) == expected, "cycle \(i)")
        }
        let fdsAfter = ProcStat(pid: d.pid).fds
        #expect(fdsAfter <= fdsBefore + 1, "descriptors \(fdsBefore) → \(fdsAfter)")
        Stress.figure("bus cycles", "\(Stress.busCycles) losses and returns of the session bus, daemon fds \(fdsBefore) → \(fdsAfter)")
        portal.stop()
    }

    /// SIGKILL at random moments while `set` calls run: on every restart the state file parses and holds the
    /// last acknowledged override or the one in flight; an acknowledged set is never lost.
    @Test func sigkillDuringSets() throws {
        let s = try Sandbox()
        var acknowledged = Override.system
        var done = 0
        var kills = 0
        while done < Stress.killedSets {
            let d = try s.startDaemon()
            let recorder = Recorder<(Override, Bool)>()  // (target, acknowledged)
            let budget = min(Stress.killedSets - done, Int.random(in: 5...40))
            let socket = s.socket
            let worker = Thread {
                guard let c = try? AppearanceConnection(socketPath: socket) else { return }
                for k in 0..<budget {
                    let target: Override = [.dark, .light, .system][k % 3]
                    recorder.append((target, false))
                    guard (try? c.set(target)) != nil else { return }
                    recorder.append((target, true))
                }
            }
            worker.start()
            usleep(UInt32.random(in: 0...3_000))  // a random moment to kill, not a wait for a condition
            try d.end(SIGKILL)
            kills += 1
            try waitUntil("the writer thread to notice") { worker.isFinished }
            let events = recorder.all
            var inFlight: Override?
            for (target, acked) in events {
                if acked { acknowledged = target; inFlight = nil; done += 1 } else { inFlight = target }
            }
            let d2 = try s.startDaemon()
            let json = try s.ctl("get", "--json").out
            try d2.end(SIGKILL)
            let allowed = [acknowledged] + (inFlight.map { [$0] } ?? [])
            #expect(allowed.contains { json.contains(#""override":"\#($0.rawValue)""#) }, "got \(json), allowed \(allowed)")
            if let text = FileManager.default.contents(atPath: s.stateFile) {
                let parsed = try JSON.parse(Array(text))
                #expect(parsed["override"]?.stringValue.flatMap(Override.init(rawValue:)) != nil)
            }
            for (_, o) in allowed.enumerated() where json.contains(#""override":"\#(o.rawValue)""#) { acknowledged = o }
        }
        Stress.figure("SIGKILL during set", "\(done) acknowledged sets, \(kills) kills, none lost")
    }

    /// Crowds of subscribers arrive and all leave, round after round: every one is answered in every round
    /// and the daemon's descriptors come back each time (descriptor numbers get reused: a stale source on a
    /// reused number once left new connections unread).
    @Test func crowdsComeAndGo() throws {
        Stress.raiseFileLimit()
        let s = try Sandbox()
        let d = try s.startDaemon()
        let stat = ProcStat(pid: d.pid)
        let probe = try AppearanceConnection(socketPath: s.socket)
        _ = try probe.state()
        let fds = stat.fds
        for round in 0..<Stress.crowdRounds {
            var crowd: [RawClient] = []
            for _ in 0..<Stress.crowd {
                let c = try RawClient(s.socket)
                try c.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
                crowd.append(c)
            }
            for c in crowd { #expect(try c.line()?.contains(#""id":1,"result""#) == true, "round \(round)") }
            crowd = []
            try waitUntil("descriptors back to \(fds) after round \(round) (now \(stat.fds))") { stat.fds <= fds }
        }
        Stress.figure("crowds", "\(Stress.crowdRounds) rounds of \(Stress.crowd) subscribers, every one answered, fds back to \(fds)")
    }

    /// Connect/disconnect cycles with every kind of bad input: descriptors come back, and after a first
    /// quarter (which sets the heap's high-water mark) memory does not grow.
    @Test func connectDisconnectCycles() throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        let stat = ProcStat(pid: d.pid)
        _ = try s.ctl("get")
        let fds = stat.fds
        let idle = stat.rssKiB
        let junk: [String] = ["", #"{"jsonrpc":"2.0","id":1,"met"#, "\u{FF}\u{FE}\n", "[1,2]\n",
                              String(repeating: "x", count: maxLineLength + 1), #"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n"]
        func cycles(_ range: Range<Int>) throws {
            for i in range {
                let c = try RawClient(s.socket)
                let j = junk[i % junk.count]
                if !j.isEmpty { try? c.send(j) }
            }
            try waitUntil("the daemon's descriptors to return to \(fds) (now \(stat.fds))") { stat.fds <= fds }
        }
        let quarter = Stress.connectCycles / 4
        try cycles(0..<quarter)
        let warm = stat.rssKiB
        try cycles(quarter..<Stress.connectCycles)
        let growth = stat.rssKiB - warm
        #expect(underSanitizer || growth < 4 * 1024, "RSS grew by \(growth) KiB after the first quarter")
        #expect(try s.ctl("get").status == 0)
        Stress.figure("connect cycles", "\(Stress.connectCycles), fds \(fds) → \(stat.fds), RSS idle \(idle) KiB, after a quarter \(warm) KiB, at the end \(stat.rssKiB) KiB, peak \(stat.peakKiB) KiB")
    }
}
