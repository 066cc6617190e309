import AppearanceCore
@testable import AppearanceDaemon
import AppearanceProtocol
import Dispatch
import Foundation
import Testing

/// The crossings between the daemon's queue and the session bus's (BusQueue.swift): each side runs on its
/// own queue, hears the other in order, and the daemon's queue never waits for the bus's.
@Suite struct BusQueueTests {
    static let daemonKey = DispatchSpecificKey<String>()
    static let daemonQueue: DispatchQueue = {
        let q = DispatchQueue(label: "bus-queue-test.daemon")
        q.setSpecific(key: daemonKey, value: "daemon")
        return q
    }()
    static let busQueue: DispatchQueue = {
        let q = DispatchQueue(label: "bus-queue-test.bus")
        q.setSpecific(key: daemonKey, value: "bus")
        return q
    }()
    static var here: String { DispatchQueue.getSpecific(key: daemonKey) ?? "neither" }

    /// Thread-safe record of what happened where.
    final class Record: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func add(_ s: String) { lock.lock(); items.append(s); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return items }

        func wait(for count: Int) throws -> [String] {
            let deadline = Date().addingTimeInterval(10)
            while all.count < count {
                guard Date() < deadline else { throw WaitError(got: all) }
                usleep(1000)
            }
            return all
        }
        struct WaitError: Error { var got: [String] }
    }

    final class BusSentry: Sentry, @unchecked Sendable {
        let record: Record
        var report: ((SystemReading) -> Void)?
        init(_ record: Record) { self.record = record }
        func start(report: @escaping (SystemReading) -> Void) {
            record.add("start on \(BusQueueTests.here)")
            self.report = report
            // Readings come on the bus's queue, one after another.
            for i in 0..<50 { report(SystemReading(i % 2 == 0 ? .dark : .light, detail: "\(i)")) }
        }
        func stop() { record.add("stop on \(BusQueueTests.here)") }
    }

    @Test func readingsCrossOntoTheDaemonsQueueInOrder() throws {
        let record = Record()
        let sentry = SentryProxy(BusSentry(record), busQueue: Self.busQueue, daemonQueue: Self.daemonQueue)
        Self.daemonQueue.async {
            sentry.start { reading in record.add("\(reading.detail) on \(BusQueueTests.here)") }
            sentry.stop()
        }
        let got = try record.wait(for: 52)
        #expect(got.first == "start on bus")
        #expect(Array(got[1...50]) == (0..<50).map { "\($0) on daemon" })
        #expect(got.last == "stop on bus")
    }

    /// The daemon's queue, busy, does not make the bus's wait forever, and the daemon never waits for the bus:
    /// while the bus's queue is held, the daemon's goes on.
    @Test func theDaemonsQueueNeverWaitsForTheBuses() throws {
        let record = Record()
        let outlet = FakeOutlet(record)
        let crossing = OutletProxy(outlet, busQueue: Self.busQueue, daemonQueue: Self.daemonQueue)
        let release = DispatchSemaphore(value: 0)
        Self.busQueue.async { release.wait() }   // the bus's queue is stuck (a 60 MB message, say)
        Self.daemonQueue.async {
            crossing.start(policy: .auto) { status in record.add("\(status.detail) on \(BusQueueTests.here)") }
            crossing.publish(ServedValues(mode: .dark, accent: nil))
            record.add("daemon went on")
        }
        #expect(try record.wait(for: 1) == ["daemon went on"])
        release.signal()
        let got = try record.wait(for: 4)
        #expect(got == ["daemon went on", "start on bus", "status on daemon", "publish dark on bus"])
    }

    final class FakeOutlet: Outlet, @unchecked Sendable {
        let record: Record
        init(_ record: Record) { self.record = record }
        func start(policy: BackendPolicy, report: @escaping (OutletStatus) -> Void) {
            record.add("start on \(BusQueueTests.here)")
            report(OutletStatus(serving: false, detail: "status"))
        }
        func setPolicy(_ policy: BackendPolicy) {}
        func publish(_ values: ServedValues) { record.add("publish \(values.mode.rawValue) on \(BusQueueTests.here)") }
        func stop() {}
    }

    final class Desk: BusServiceRequests, @unchecked Sendable {
        let record: Record
        init(_ record: Record) { self.record = record }
        func state(for app: String, answer: @escaping (AppearanceState) -> Void) {
            record.add("state for \(app) on \(BusQueueTests.here)")
            answer(AppearanceState(mode: .dark, system: .unavailable, override: .dark, source: .override, seq: 7, instance: "i"))
        }
        func write(_ call: Call, app: String?, by who: String, answer: @escaping (Result<AppearanceState, RPCError>) -> Void) {
            record.add("write by \(who) on \(BusQueueTests.here)")
            // Answered later, as a durable save is.
            let later = Across(answer)
            BusQueueTests.daemonQueue.async { later.value(.failure(RPCError(.requestFailed, "refused"))) }
        }
        func nextChange(_ request: NextChange.Request, by who: String, answer: @escaping (Result<ScheduleInfo, RPCError>) -> Void) {
            record.add("next change by \(who) on \(BusQueueTests.here)")
            answer(.failure(RPCError(.requestFailed, "refused")))
        }
    }

    @Test func aFacesRequestsAreDecidedOnTheDaemonsQueueAndAnsweredOnTheBuses() throws {
        let record = Record()
        let desk = RequestsProxy(Desk(record), QueuePair(daemon: Self.daemonQueue, bus: Self.busQueue))
        Self.busQueue.async {
            desk.state(for: "org.example.App") { state in record.add("seq \(state.seq) on \(BusQueueTests.here)") }
            desk.write(.toggle, app: nil, by: "D-Bus :1.5") { result in
                if case .failure(let e) = result { record.add("\(e.message) on \(BusQueueTests.here)") }
            }
        }
        let got = try record.wait(for: 4)
        #expect(got == ["state for org.example.App on daemon", "write by D-Bus :1.5 on daemon", "seq 7 on bus", "refused on bus"])
    }

    /// The notifier: started, shown and stopped on the bus's queue; what it reports reaches the daemon's, in order;
    /// the stop's `done` is called where the notifier calls it (the bus's queue), which the daemon waits for.
    final class FakeNotifier: Notifier, @unchecked Sendable {
        let record: Record
        init(_ record: Record) { self.record = record }
        func start(report: @escaping (NoticeReport) -> Void) {
            record.add("start on \(BusQueueTests.here)")
            report(.status("none showing"))
            report(.action(.skip, Notice(time: 0, mode: .dark, when: "19:00", cause: "sunset", postponeBy: 60)))
        }
        func show(_ notice: Notice?) { record.add("show \(notice?.summary ?? "none") on \(BusQueueTests.here)") }
        func stop(done: @escaping @Sendable () -> Void) {
            record.add("stop on \(BusQueueTests.here)")
            done()
        }
    }

    @Test func theNotifiersCallsAndReportsCross() throws {
        let record = Record()
        let notifier = NotifierProxy(FakeNotifier(record), busQueue: Self.busQueue, daemonQueue: Self.daemonQueue)
        Self.daemonQueue.async {
            notifier.start { report in
                switch report {
                case .status(let s): record.add("\(s) on \(BusQueueTests.here)")
                case .action(let a, let n): record.add("\(a.rawValue) \(n.summary) on \(BusQueueTests.here)")
                }
            }
            notifier.show(Notice(time: 0, mode: .light, when: "07:00", cause: "sunrise", postponeBy: 60))
            notifier.show(nil)
            notifier.stop { record.add("closed on \(BusQueueTests.here)") }
        }
        let got = try record.wait(for: 7)
        #expect(got == ["start on bus", "none showing on daemon", "skip Dark mode at 19:00 on daemon", "show Light mode at 07:00 on bus",
                        "show none on bus", "stop on bus", "closed on bus"])
    }
}
