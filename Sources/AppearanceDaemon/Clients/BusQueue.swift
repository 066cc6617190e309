import AppearanceCore
import AppearanceProtocol
import Dispatch

// The session bus's own queue (docs/decisions.md): the wrappers carry every call across, in order, to the
// bus's queue with `async` and back with `sync`.

/// A value handed across to the other queue, used only there once handed over.
final class Across<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// The two queues, and the hops between them.
struct QueuePair: Sendable {
    let daemon: DispatchQueue
    let bus: DispatchQueue

    /// Runs `body` on the bus's queue, in order after everything said before.
    func toBus(_ body: @escaping () -> Void) {
        let b = Across(body)
        bus.async { b.value() }
    }

    /// A callback to call on the bus's queue that runs `body` on the daemon's before it returns.
    func toDaemon<T>(_ body: @escaping (T) -> Void) -> (T) -> Void { { [daemon] value in daemon.sync { body(value) } } }
}

/// What the wrappers share: the object on the bus's queue, and the way there.
public class BusQueueProxy<Inner>: @unchecked Sendable {
    // Immutable; `inner` is used only on the bus's queue.
    private let inner: Across<Inner>
    let queues: QueuePair

    public init(_ inner: Inner, busQueue: DispatchQueue, daemonQueue: DispatchQueue) {
        self.inner = Across(inner)
        queues = QueuePair(daemon: daemonQueue, bus: busQueue)
    }

    /// Runs `body` with the object on the bus's queue, in order after everything said before.
    func onBus(_ body: @escaping (Inner) -> Void) { queues.toBus { [inner] in body(inner.value) } }
}

/// The sentry on the bus's queue, as the daemon sees it on its own.
public final class SentryProxy: BusQueueProxy<Sentry>, Sentry, @unchecked Sendable {
    public func start(report: @escaping (SystemReading) -> Void) { onBus { [report = queues.toDaemon(report)] in $0.start(report: report) } }
    public func stop() { onBus { $0.stop() } }
}

/// The portal backend on the bus's queue, as the daemon sees it on its own.
public final class OutletProxy: BusQueueProxy<Outlet>, Outlet, @unchecked Sendable {
    public func start(policy: BackendPolicy, report: @escaping (OutletStatus) -> Void) {
        onBus { [report = queues.toDaemon(report)] in $0.start(policy: policy, report: report) }
    }
    public func setPolicy(_ policy: BackendPolicy) { onBus { $0.setPolicy(policy) } }
    public func publish(_ values: ServedValues) { onBus { $0.publish(values) } }
    public func stop() { onBus { $0.stop() } }
}

/// The notifier on the bus's queue, as the daemon sees it on its own.
public final class NotifierProxy: BusQueueProxy<Notifier>, Notifier, @unchecked Sendable {
    public func start(report: @escaping (NoticeReport) -> Void) { onBus { [report = queues.toDaemon(report)] in $0.start(report: report) } }
    public func show(_ notice: Notice?) { onBus { $0.show(notice) } }
    public func stop(done: @escaping @Sendable () -> Void) { onBus { $0.stop(done: done) } }
}

/// A D-Bus service on the bus's queue, as the daemon sees it; the daemon's requests go with it, as the service sees them.
public final class BusServiceProxy: BusQueueProxy<BusService>, BusService, @unchecked Sendable {
    public func start(_ options: BusServiceOptions, state: AppearanceState, requests: BusServiceRequests, report: @escaping (String) -> Void) {
        onBus { [report = queues.toDaemon(report), proxy = RequestsProxy(requests, queues)] in
            $0.start(options, state: state, requests: proxy, report: report)
        }
    }
    public func setOptions(_ options: BusServiceOptions) { onBus { $0.setOptions(options) } }
    public func publish(_ state: AppearanceState, previous: Mode) { onBus { $0.publish(state, previous: previous) } }
    public func stop() { onBus { $0.stop() } }
}

/// The daemon's requests across the queues: asked on the bus's, decided on the daemon's, answered on the bus's (maybe later).
final class RequestsProxy: BusServiceRequests, @unchecked Sendable {
    // Immutable; `requests` is used only on the daemon's queue.
    private let requests: BusServiceRequests
    private let queues: QueuePair

    init(_ requests: BusServiceRequests, _ queues: QueuePair) { (self.requests, self.queues) = (requests, queues) }

    func state(for app: String, answer: @escaping (AppearanceState) -> Void) { ask(answer) { $0.state(for: app, answer: $1) } }

    func write(_ call: Call, app: String?, by who: String, answer: @escaping (Result<AppearanceState, RPCError>) -> Void) {
        ask(answer) { $0.write(call, app: app, by: who, answer: $1) }
    }

    func nextChange(_ request: NextChange.Request, by who: String, answer: @escaping (Result<ScheduleInfo, RPCError>) -> Void) {
        ask(answer) { $0.nextChange(request, by: who, answer: $1) }
    }

    /// Asks the daemon on its queue; its answer goes back to the bus's.
    private func ask<R: Sendable>(_ answer: @escaping (R) -> Void, _ call: (BusServiceRequests, @escaping (R) -> Void) -> Void) {
        let answer = Across(answer)
        queues.daemon.sync { call(requests) { [queues] r in queues.bus.async { answer.value(r) } } }
    }
}
