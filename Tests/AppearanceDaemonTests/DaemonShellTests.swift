import AppearanceCore
@testable import AppearanceDaemon
import AppearancePosix
import AppearanceProtocol
import Dispatch
import Foundation
import Testing

/// The daemon's shell in the test process: a fake sentry and outlet, the real rooms, a real socket. What a
/// reading, a subscriber and a write do, without a subprocess.
@Suite struct DaemonShellTests {
    final class FakeSentry: Sentry, @unchecked Sendable {
        var report: ((SystemReading) -> Void)?
        func start(report: @escaping (SystemReading) -> Void) { self.report = report }
        func stop() {}
    }

    final class FakeOutlet: Outlet, @unchecked Sendable {
        private let lock = NSLock()
        private var values: [ServedValues] = []
        func start(policy: BackendPolicy, report: @escaping (OutletStatus) -> Void) {
            report(OutletStatus(serving: false, detail: "a fake outlet"))
        }
        func setPolicy(_ policy: BackendPolicy) {}
        func publish(_ v: ServedValues) { lock.lock(); values.append(v); lock.unlock() }
        func stop() {}
        var published: [ServedValues] { lock.lock(); defer { lock.unlock() }; return values }
    }

    /// A daemon on a queue of its own, in a private directory (no hooks, no desktop to drive).
    final class Rig: @unchecked Sendable {
        let root: String
        let queue = DispatchQueue(label: "daemon-shell-test")
        let sentry = FakeSentry()
        let outlet = FakeOutlet()
        let daemon: Daemon
        var socket: String { root + "/run/socket" }
        var stateFile: String { root + "/state/appearanced/state.json" }

        /// - Parameter notifier: the daemon's notifier, made for its queue.
        init(notifier: ((DispatchQueue) -> Notifier)? = nil) throws {
            root = NSTemporaryDirectory() + "appearanced-shell-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: root + "/run", withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try "hooks = false\n[desktop]\nfollow = \"off\"\n".write(toFile: root + "/config.toml", atomically: true, encoding: .utf8)
            let env = ["HOME": root, "XDG_STATE_HOME": root + "/state", "XDG_CONFIG_HOME": root + "/config"]
            var paths = Paths.resolve(socket: root + "/run/socket", config: root + "/config.toml") { env[$0] }
            paths.socket = SocketLocation(path: root + "/run/socket", ownsDirectory: false)
            daemon = Daemon(paths: paths, logLevelOption: .error, sentry: sentry, outlet: outlet, notifier: notifier?(queue), queue: queue,
                            logger: Logger(level: .error))
            var failure: StartupError?
            queue.sync { do throws(StartupError) { try daemon.start(signals: false) } catch { failure = error } }
            if let failure { throw failure }
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        func read(_ scheme: SystemScheme) {
            queue.async { [sentry] in sentry.report?(SystemReading(scheme, detail: "fake portal")) }
        }
    }

    /// A client on the daemon's socket, reading lines with a deadline.
    final class Client {
        let socket: Descriptor
        private var framer = LineFramer(limit: 1 << 20)

        init(_ path: String) throws {
            socket = try Descriptor.unixStreamSocket(name: path)
            try socket.connect(to: path)
        }

        deinit { socket.close() }

        func send(_ line: String) throws { try socket.writeAll(line + "\n", until: Deadline(seconds: 20)) }

        func line() throws -> String {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
            defer { buffer.deallocate() }
            let deadline = Deadline(seconds: 20)
            while true {
                if let l = try framer.next() { return String(decoding: l, as: UTF8.self) }
                guard try socket.wait(.readable, until: deadline) else { throw TimedOut() }
                guard let n = try socket.read(into: buffer), n > 0 else { throw Closed() }
                framer.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            }
        }

        struct Closed: Error {}
        struct TimedOut: Error {}
    }

    @Test func aReadingReachesSubscribersAndTheOutletOnlyWhenItChangesSomething() throws {
        let rig = try Rig()
        rig.read(.light)
        let c = try Client(rig.socket)
        try c.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"#)
        #expect(try c.line().contains(#""mode":"light""#))
        rig.read(.dark)
        let told = try c.line()
        #expect(told.contains(#""method":"changed""#) && told.contains(#""mode":"dark""#) && told.contains(#""previous":"light""#), "\(told)")
        // Subscribers are told first; the outlet later in the same turn of the daemon's queue.
        rig.queue.sync {}
        let published = rig.outlet.published.count
        #expect(rig.outlet.published.last?.mode == .dark)
        // The same value again changes nothing: the next line is the reply to `get`, not a notification, and
        // the outlet is not told again.
        rig.read(.dark)
        try c.send(#"{"jsonrpc":"2.0","id":2,"method":"get"}"#)
        let reply = try c.line()
        #expect(reply.hasPrefix(#"{"jsonrpc":"2.0","id":2,"result":{"mode":"dark""#), "\(reply)")
        #expect(rig.outlet.published.count == published)
    }

    @Test func aSetIsDurableBeforeItIsAnsweredAndToldToSubscribers() throws {
        let rig = try Rig()
        rig.read(.light)
        let subscriber = try Client(rig.socket)
        try subscriber.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"#)
        _ = try subscriber.line()
        let c = try Client(rig.socket)
        try c.send(#"{"jsonrpc":"2.0","id":7,"method":"set","params":{"override":"dark"}}"#)
        let reply = try c.line()
        #expect(reply.contains(#""id":7"#) && reply.contains(#""mode":"dark""#) && reply.contains(#""source":"override""#), "\(reply)")
        // By the time of the reply the state file holds it.
        let saved = try String(contentsOfFile: rig.stateFile, encoding: .utf8)
        #expect(saved.contains(#""override":"dark""#), "\(saved)")
        #expect(try subscriber.line().contains(#""mode":"dark""#))
        // A change of the desktop's value (dark, then light again) cannot change what the user forced.
        rig.read(.dark)
        rig.read(.light)
        try c.send(#"{"jsonrpc":"2.0","id":8,"method":"get"}"#)
        let after = try c.line()
        #expect(after.contains(#""mode":"dark""#) && after.contains(#""system":"light""#), "\(after)")
    }

    /// A notifier whose stop reports across first (a `sync` onto the daemon's queue, as the answer to a Notify in
    /// flight does), then closes the notice; without `answers`, `done` is kept for the test to call.
    final class ClosingNotifier: Notifier, @unchecked Sendable {
        private let lock = NSLock()
        private var said: [String] = []
        private var report: ((NoticeReport) -> Void)?
        private let answers: Bool
        private(set) var kept: (@Sendable () -> Void)?
        init(answers: Bool) { self.answers = answers }

        func add(_ event: String) { lock.lock(); said.append(event); lock.unlock() }
        var events: [String] { lock.lock(); defer { lock.unlock() }; return said }

        func start(report: @escaping (NoticeReport) -> Void) { self.report = report }
        func show(_ notice: Notice?) { add("show \(notice?.summary ?? "none")") }
        func stop(done: @escaping @Sendable () -> Void) {
            report?(.status("closing"))
            add("closed")
            if answers { done() } else { kept = done }
        }
    }

    /// A daemon whose notifier reports across from a bus queue, stopped: returns once the daemon went on stopping.
    func stopWithNotice(answers: Bool, grace: DispatchTimeInterval) throws -> (Rig, ClosingNotifier, DispatchQueue) {
        let bus = DispatchQueue(label: "daemon-shell-test.bus")
        let notifier = ClosingNotifier(answers: answers)
        let rig = try Rig { NotifierProxy(notifier, busQueue: bus, daemonQueue: $0) }
        let finished = DispatchSemaphore(value: 0)
        rig.queue.async {
            rig.daemon.closeNotice(grace: grace) {
                notifier.add("daemon went on")
                finished.signal()
            }
        }
        try #require(finished.wait(timeout: .now() + 20) == .success, "the daemon waited for the bus's queue, which waited for it")
        return (rig, notifier, bus)
    }

    /// A stopping daemon closes its notice without holding its queue: a report the bus's queue brings over meanwhile
    /// gets through, and the daemon goes on once the notice is closed, long before the grace.
    @Test func aStoppingDaemonClosesItsNoticeWhileTheBusReportsAcross() throws {
        let (rig, notifier, _) = try stopWithNotice(answers: true, grace: .seconds(3600))
        #expect(notifier.events == ["closed", "daemon went on"])
        rig.queue.sync { #expect(rig.daemon.notices.detail == "closing") }
    }

    /// A server that does not answer: the daemon goes on at the grace, once, even when the answer comes later; no
    /// notice is shown after.
    @Test func aStoppingDaemonGoesOnOnceAtTheGrace() throws {
        let (rig, notifier, bus) = try stopWithNotice(answers: false, grace: .milliseconds(10))
        bus.sync { notifier.kept?() }
        rig.queue.sync { rig.daemon.notices.want(Notice(time: 0, mode: .dark, when: "19:00", cause: "sunset", postponeBy: 60)) }
        rig.queue.sync {}
        bus.sync {}
        #expect(notifier.events.sorted() == ["closed", "daemon went on"])
    }

    @Test func aBadRequestIsAnsweredAndTheConnectionGoesOn() throws {
        let rig = try Rig()
        rig.read(.light)
        let c = try Client(rig.socket)
        try c.send(#"{"jsonrpc":"2.0","id":1,"method":"set","params":{"override":"dark","app":null}}"#)
        let refused = try c.line()
        #expect(refused.contains("-32602") && refused.contains(#"\"app\" is null"#), "\(refused)")
        try c.send(#"{"jsonrpc":"2.0","id":2,"method":"get"}"#)
        #expect(try c.line().contains(#""mode":"light""#))
    }
}
