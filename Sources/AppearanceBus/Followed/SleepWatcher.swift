// Resume from suspend, from logind's PrepareForSleep(false) on the system bus: the daemon plans its schedule
// again at once. No system bus is fine: one log line, nothing else.
import AppearanceCore
import Dispatch

public final class SleepWatcher: BusPeer, @unchecked Sendable {
    // Confined to the bus client's queue.
    private let bus: BusClient
    private let log: (LogLevel, String) -> Void
    private var resumed: (() -> Void)?
    /// What was last said about the bus, so a loss is said once.
    private var said: String?

    private static let manager = "org.freedesktop.login1.Manager"
    private static let rule = "type='signal',interface='\(manager)',member='PrepareForSleep',path='/org/freedesktop/login1'"

    public init(bus: BusClient, log: @escaping (LogLevel, String) -> Void) { (self.bus, self.log) = (bus, log) }

    /// Calls `resumed` after every resume; starts the client without retrying. Call on the bus's queue.
    public func start(resumed: @escaping () -> Void) {
        dispatchPrecondition(condition: .onQueue(bus.queue))
        self.resumed = resumed
        bus.addMatch(Self.rule, for: self)
        bus.onSignal(Self.manager, "PrepareForSleep", for: self) { [weak self] message in
            guard message.path == "/org/freedesktop/login1", message.hasSignature("b"),
                  case .boolean(false)? = message.arguments(limit: 1)?.first else { return }
            self?.resumed?()
        }
        bus.add(self)
        bus.start(retrying: false)
    }

    public func stop() {
        resumed = nil
        bus.forget(self)
    }

    func connected(_ connection: BusConnection) { said = nil }

    func disconnected(_ detail: String) {
        guard said == nil, detail != "stopped" else { return }
        said = detail
        log(.info, "\(detail): resume from suspend is noticed by the clock alone")
    }
}
