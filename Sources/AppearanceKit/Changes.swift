import AppearanceCore
import AppearancePosix
import AppearanceProtocol

/// One element of `AppearanceClient.changes()`.
public enum AppearanceChange: Equatable, Sendable {
    /// Always the first state element: the state when the subscription started (the `subscribe` reply).
    case initial(AppearanceState)
    /// The mode changed (notified, or found after reconnecting); `previous` is the mode yielded before.
    case changed(AppearanceState, previous: Mode)
    /// The connection broke or the daemon could not be reached: once per outage, with the first error.
    case connectionLost(AppearanceError)
    /// Subscribed again after `.connectionLost`; a `.changed` follows only if the mode is not the last yielded.
    case reconnected
    /// With `changes(palette: true)`: the resolved palette, after `.initial` and whenever it differs from the
    /// one yielded last. Re-apply colors and assets here.
    case paletteChanged(ResolvedPalette)

    /// The state this element carries, if any.
    public var state: AppearanceState? {
        switch self {
        case .initial(let s), .changed(let s, _): s
        case .connectionLost, .reconnected, .paletteChanged: nil
        }
    }
}

/// The current state, then each change of mode: what `AppearanceClient.changes()` returns. `.initial(state)`,
/// then `.changed(state, previous:)` for every change of mode (of the traits too with `traits: true`). When the
/// daemon goes away: `.connectionLost(error)` once, attempts again from 50 ms apart up to 2 s apart, then
/// `.reconnected` (the same mode is never yielded twice in a row). It ends when the iterating task is
/// cancelled, and throws only what reconnecting cannot fix (`.rejected`, `.protocolError`; with `reconnect:
/// false`, the error that broke the connection). Each iteration has its own connection on its own thread.
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

/// A socket pair whose read end becomes readable once `signal()` is called: cancels the subscription's waits.
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

/// The subscription, on its own thread: connect, `subscribe`, read notifications, on loss wait and start again.
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

    /// One connection, from connect to loss (or cancellation); notifications are waited for without a deadline.
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
