// Resume from suspend, from logind on the system bus (`org.freedesktop.login1.Manager.PrepareForSleep`,
// false on resume): the daemon then plans its schedule again at once, so a transition that fell due
// while the machine slept is applied on wake-up. Wall-clock timers would fire then too; this makes it
// immediate and explicit. No system bus (a container, a test) is fine: one log line, nothing else.
import AppearanceCore
import AppearancePosix
import CDBus
import Dispatch

public final class SleepWatcher: @unchecked Sendable {
    // Confined to `queue`.
    private let queue: DispatchQueue
    private let log: (LogLevel, String) -> Void
    private var bus: BusConnection?
    private var resumed: (() -> Void)?

    private static let rule = "type='signal',interface='org.freedesktop.login1.Manager',member='PrepareForSleep',"
        + "path='/org/freedesktop/login1'"

    public init(queue: DispatchQueue, log: @escaping (LogLevel, String) -> Void) {
        self.queue = queue
        self.log = log
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`) and calls
    /// `resumed` after every resume. Call on `queue`.
    public func start(resumed: @escaping () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.resumed = resumed
        let address = Posix.environment("DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/run/dbus/system_bus_socket"
        let connection: BusConnection
        do throws(BusError) {
            connection = try BusConnection(address: address, queue: queue)
        } catch {
            log(.info, "no system bus (\(error.message)): resume from suspend is noticed by the clock alone")
            return
        }
        bus = connection
        connection.onSignal = { [weak self, unowned connection] message in self?.handle(message, connection) }
        connection.callBus("Hello", []) { [weak self] reply in
            guard let self, self.bus === connection else { return }
            if let error = reply.error {
                self.log(.info, "the system bus refused us (\(error)): resume from suspend is noticed by the clock alone")
                self.stop()
                return
            }
            connection.callBus("AddMatch", [.string(SleepWatcher.rule)])
        }
    }

    public func stop() {
        bus?.close()
        bus = nil
    }

    private func handle(_ message: Message, _ connection: BusConnection) {
        if message.isSignal(interface: "org.freedesktop.DBus.Local", member: "Disconnected") {
            log(.info, "the system bus went away: resume from suspend is noticed by the clock alone")
            stop()
        } else if message.isSignal(interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep"),
                  message.hasSignature("b"), case .boolean(false)? = message.arguments(limit: 1)?.first {
            resumed?()
        }
    }

}
