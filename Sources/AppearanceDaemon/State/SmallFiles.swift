import AppearancePosix
import Dispatch

/// The one writer of the files beside state.json (integrations, location, desktop, the change log), on a queue of
/// its own: each replaced whole and durably, or removed (or appended to: `perform`); results come back in order.
final class SmallFiles: @unchecked Sendable {
    // Immutable.
    private let queue = DispatchQueue(label: "appearanced.files")
    private let daemonQueue: DispatchQueue

    init(daemonQueue: DispatchQueue) { self.daemonQueue = daemonQueue }

    /// Replaces `path` with `bytes` (its folder made), or removes it for nil; then `done` on the daemon's queue.
    func write(_ path: String, _ bytes: [UInt8]?, done: @escaping (Errno?) -> Void = { _ in }) {
        let done = Across(done)
        queue.async { [daemonQueue] in
            let failure: Errno?
            do throws(Errno) {
                if let bytes {
                    try FileSystem.makeDirectories(FileSystem.directory(of: path))
                    try FileSystem.writeAtomically(path, bytes)
                } else if FileSystem.exists(path) {
                    try FileSystem.remove(path)
                }
                failure = nil
            } catch { failure = error }
            daemonQueue.async { done.value(failure) }
        }
    }

    /// Runs `body` on the writer's queue, after every write queued before.
    func perform(_ body: @escaping @Sendable () -> Void) { queue.async(execute: body) }

    /// Waits until every write queued is done, `seconds` at most (a clean stop); false if they were not.
    func flush(within seconds: Double) -> Bool {
        let done = DispatchSemaphore(value: 0)
        queue.async { done.signal() }
        return done.wait(timeout: .now() + seconds) == .success
    }
}
