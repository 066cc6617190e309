// TEMPORARY until the libdbus sentry lands.
import AppearanceCore
import Dispatch
public final class PortalSentry: Sentry {
    public init(queue: DispatchQueue, log: @escaping (LogLevel, String) -> Void) {}
    public func start(report: @escaping (SystemReading) -> Void) { report(SystemReading(.unavailable, detail: "stub")) }
    public func stop() {}
}
