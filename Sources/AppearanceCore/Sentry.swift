/// The source of system readings (AppearanceBus.PortalSentry); `start`, `stop` and `report` on the daemon's queue.
/// It reports every reading, repeated or not, and never throws: no bus and no portal are readings too.
public protocol Sentry: AnyObject {
    func start(report: @escaping (SystemReading) -> Void)
    func stop()
}
