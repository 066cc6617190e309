// Resume from suspend, from logind on the system bus (`org.freedesktop.login1.Manager.PrepareForSleep`,
// false on resume): the daemon then plans its schedule again at once, so a transition that fell due
// while the machine slept is applied on wake-up. Wall-clock timers would fire then too; this makes it
// immediate and explicit. No system bus (a container, a test) is fine: one log line, nothing else.
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

    /// Calls `resumed` after every resume, from the system bus's client (started here if no one else has,
    /// without retrying: resume is noticed by the clock alone where there is no bus). Call on the bus's queue.
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
