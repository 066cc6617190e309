import AppearanceCore
import AppearancePosix
import AppearanceProtocol

/// One element of `AppearanceClient.changes()`.
public enum AppearanceChange: Equatable, Sendable {
    /// Always the first state element: the state when the subscription started (the `subscribe` reply).
    case initial(AppearanceState)
    /// The mode changed (a `changed` notification, or a different mode found after reconnecting).
    /// `previous` is the mode of the state element yielded before this one; it always differs from `state.mode`.
    case changed(AppearanceState, previous: Mode)
    /// The connection broke, or the daemon could not be reached: yielded once per outage, with the first error.
    /// The sequence keeps trying to reconnect; the mode is unknown until `.reconnected`.
    case connectionLost(AppearanceError)
    /// Subscribed again after `.connectionLost`. A `.changed` follows only if the mode is not the one last
    /// yielded (an `.initial` follows instead if no state had been yielded yet).
    case reconnected
    /// Only with `changes(palette: true)`: the palette resolved for the current appearance, after `.initial`
    /// and whenever it differs from the one yielded last (a change of mode, contrast or accent color, or a
    /// palette file the daemon reloaded). Re-apply colors and assets here.
    case paletteChanged(ResolvedPalette)

    /// The state this element carries, if any.
    public var state: AppearanceState? {
        switch self {
        case .initial(let s), .changed(let s, _): s
        case .connectionLost, .reconnected, .paletteChanged: nil
        }
    }
}

/// The current state, then each change of mode: what `AppearanceClient.changes()` returns.
///
/// - The first state element is `.initial(state)`, then `.changed(state, previous:)` for every change of mode,
///   in order, each `previous` being the mode yielded just before. Changes of other fields that leave the mode
///   alone are not notified (notification rule 1 in docs/protocol.md), except the traits with `traits: true`.
/// - With `palette: true`, `.paletteChanged(palette)` follows `.initial` and every state element whose
///   resolved palette differs from the one yielded last, and comes alone after a palette reload.
/// - When the daemon goes away (stopped, crashed, restarted), the sequence yields `.connectionLost(error)` once,
///   then tries to connect and `subscribe` again after 50 ms, doubling the pause up to 2 s between attempts
///   (no busy loop). When it succeeds it yields `.reconnected`, then `.changed` only if the mode differs from
///   the one last yielded: the same mode is never yielded twice in a row.
/// - The sequence ends (`nil`) when the task iterating it is cancelled or the loop breaks; its connection is
///   closed then. It throws only what reconnecting cannot fix: `.rejected` (the daemon refused `subscribe`) or
///   `.protocolError` (it sent something this client cannot read), or, with `reconnect: false`, the error that
///   broke the connection.
///
/// Each iteration (`makeAsyncIterator`) opens its own connection on a dedicated thread.
public struct AppearanceChanges: AsyncSequence, Sendable {
    public typealias Element = AppearanceChange
    public typealias Failure = AppearanceError

    let socketPath: String
    let reconnect: Bool
    var interest = Interest.mode
    /// The bound on connecting and on the reply to `subscribe`; notifications are waited for without one.
    var timeout = AppearanceConnection.defaultTimeout

    public func makeAsyncIterator() -> AsyncIterator {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: AppearanceChange.self, throwing: (any Error).self)
        let wake: Wake
        do { wake = try Wake() } catch {
            continuation.finish(throwing: AppearanceError.connectionLost(socket: socketPath, reason: "\(error)"))
            return AsyncIterator(base: stream.makeAsyncIterator())
        }
        continuation.onTermination = { _ in wake.signal() }
        let loop = SubscriptionLoop(path: socketPath, reconnect: reconnect, interest: interest, timeout: timeout, wake: wake,
                                    continuation: continuation)
        if !Posix.startThread({ var l = loop; l.run() }) {
            continuation.finish(throwing: AppearanceError.connectionLost(socket: socketPath, reason: "cannot start a thread"))
        }
        return AsyncIterator(base: stream.makeAsyncIterator())
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = AppearanceChange
        public typealias Failure = AppearanceError

        var base: AsyncThrowingStream<AppearanceChange, any Error>.AsyncIterator

        public mutating func next() async throws(AppearanceError) -> AppearanceChange? {
            do { return try await base.next() } catch { throw Self.typed(error) }
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(AppearanceError) -> AppearanceChange? {
            do { return try await base.next(isolation: actor) } catch { throw Self.typed(error) }
        }

        private static func typed(_ error: any Error) -> AppearanceError {
            error as? AppearanceError ?? .protocolError("\(error)")
        }
    }
}

/// A socket pair whose read end becomes readable once `signal()` is called: cancels the subscription thread's
/// poll, whether it waits for the daemon or sleeps before reconnecting.
final class Wake: Sendable {
    let readEnd: Descriptor
    private let writeEnd: Descriptor

    init() throws(Errno) {
        (readEnd, writeEnd) = try Descriptor.socketPair()
    }

    func signal() { writeEnd.sendWithoutWaiting([1]) }

    /// Waits up to `seconds` (nil: for ever) for `signal()`; true when it came (or the wait failed).
    func wait(seconds: Double?) -> Bool {
        (try? readEnd.wait(.readable, until: seconds.map { Deadline(seconds: $0) })) ?? true
    }
}

/// The subscription: connect, `subscribe`, read notifications, and on loss wait and start again.
/// Runs on its own thread with blocking calls; every wait also watches `wake`, so cancelling is immediate.
struct SubscriptionLoop: Sendable {
    let path: String
    let reconnect: Bool
    let interest: Interest
    let timeout: Double
    let wake: Wake
    let continuation: AsyncThrowingStream<AppearanceChange, any Error>.Continuation

    // fileprivate, not private: the memberwise initializer stays callable from `AppearanceChanges`.
    /// The view (mode, and traits if asked) of the last state element yielded.
    fileprivate var last: View?
    /// The last palette yielded.
    fileprivate var lastPalette: ResolvedPalette?
    /// Between a `.connectionLost` and the next successful `subscribe`.
    fileprivate var outage = false

    private enum End {
        case cancelled
        case lost(AppearanceError, subscribed: Bool)
        case fatal(AppearanceError)
    }

    mutating func run() {
        var backoff = Backoff.client
        while true {
            switch session() {
            case .cancelled: return continuation.finish()
            case .fatal(let e): return continuation.finish(throwing: e)
            case .lost(let e, let subscribed):
                guard reconnect else { return continuation.finish(throwing: e) }
                if !outage {
                    outage = true
                    continuation.yield(.connectionLost(e))
                }
                if subscribed { backoff.reset() }
                if wake.wait(seconds: backoff.next()) { continuation.finish(); return }
            }
        }
    }

    private func lost(_ reason: String) -> AppearanceError { .connectionLost(socket: path, reason: reason) }

    /// One connection, from connect to loss (or cancellation). Connecting and the reply to `subscribe` have
    /// a deadline (a stopped daemon is a loss, and is tried again); notifications are waited for without one.
    private mutating func session() -> End {
        if wake.wait(seconds: 0) { return .cancelled }
        let deadline = Deadline(seconds: timeout)
        let socket: Descriptor
        do { socket = try AppearanceConnection.connect(path, deadline: deadline) } catch {
            if case .untrustedSocket = error { return .fatal(error) }
            return .lost(error, subscribed: false)
        }
        defer { socket.close() }
        let id = JSON.int(1)
        do { try socket.writeAll(Request(id: id, call: .subscribe(interest), app: interest.app).line, until: deadline) } catch {
            return .lost(error.code == Errno.timedOut ? .notAnswering(socket: path, seconds: timeout) : lost("\(error)"), subscribed: false)
        }
        var framer = LineFramer(limit: maxReplyLength)
        var subscribed = false
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let ready: Int?
            do { ready = try Descriptor.firstReady([socket, wake.readEnd], .readable, until: subscribed ? nil : deadline) } catch {
                return .lost(lost("\(error)"), subscribed: subscribed)
            }
            guard let ready else { return .lost(.notAnswering(socket: path, seconds: timeout), subscribed: false) }
            if ready == 1 { return .cancelled }
            let read: Int?
            do { read = try socket.read(into: buffer) } catch { return .lost(lost("\(error)"), subscribed: subscribed) }
            guard let n = read else { continue }
            if n == 0 { return .lost(lost("the daemon closed the connection"), subscribed: subscribed) }
            framer.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            while true {
                let line: ArraySlice<UInt8>?
                do { line = try framer.next() } catch {
                    return .fatal(.protocolError("the daemon sent a line over \(maxReplyLength) bytes"))
                }
                guard let line else { break }
                let message: Incoming
                do { message = try Incoming.decode(line) } catch { return .fatal(.protocolError(error.message)) }
                switch message {
                case .result(let rid, let json) where rid == id:
                    let reply: Subscription
                    do { reply = try Subscription(json: json) } catch { return .fatal(.protocolError(error.message)) }
                    subscribed = true
                    if outage {
                        outage = false
                        continuation.yield(.reconnected)
                    }
                    offer(reply.state, reply.palette)
                case .error(_, let e):
                    return .fatal(.rejected(e))
                case .changed(let n) where subscribed:
                    offer(n.state, n.palette)
                case .result, .changed, .other:
                    continue
                }
            }
        }
    }

    /// Yields `state` if its view (mode, and traits if asked) is news to the consumer, then the palette if it is.
    private mutating func offer(_ state: AppearanceState, _ palette: ResolvedPalette?) {
        let view = Interest(traits: interest.traits).view(of: state, palette: nil)
        if let previous = last {
            if view != previous {
                last = view
                continuation.yield(.changed(state, previous: previous.mode))
            }
        } else {
            last = view
            continuation.yield(.initial(state))
        }
        if interest.palette, let palette, palette != lastPalette {
            lastPalette = palette
            continuation.yield(.paletteChanged(palette))
        }
    }
}
