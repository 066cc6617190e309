import AppearanceCore
import AppearancePosix
import AppearanceProtocol

/// A blocking connection to appearanced (`AppearanceClient` is the async API): each call sends one request and
/// waits for its reply; `changed` notifications that arrive meanwhile are kept, in order, for `nextChange()`.
public final class AppearanceConnection {
    public let socketPath: String
    /// Seconds connecting and each request may take before the daemon counts as not answering: longer than
    /// the daemon's own wait for the first portal reading (3 s).
    public static let defaultTimeout = 4.0
    public let timeout: Double
    /// The app this connection speaks for (`"app"` in every request that takes it); nil: everyone's.
    public let app: String?
    private let socket: Descriptor
    private var framer = LineFramer(limit: maxReplyLength)
    private var nextID = 0
    private var changes: [Notification] = []
    private let buffer: UnsafeMutableRawBufferPointer

    /// Connects to `socketPath`, or to the path every client and the daemon agree on (docs/protocol.md).
    public convenience init(socketPath: String? = nil, timeout: Double = AppearanceConnection.defaultTimeout,
                            app: String? = nil) throws(AppearanceError) {
        let path = SocketLocation.resolve(explicit: socketPath).path
        self.init(adopting: try Self.connect(path, deadline: Deadline(seconds: timeout)), path: path, timeout: timeout, app: app)
    }

    /// Finishes a state request (id 1) already written on `socket`, with the reply's bytes read so far, as
    /// `state()` would: appearancectl's fast path hands over this way whatever reply it does not know.
    package static func finishStateCall(on socket: Descriptor, path: String, deadline: Deadline,
                                        received: UnsafeRawBufferPointer) throws(AppearanceError) -> AppearanceState {
        let c = AppearanceConnection(adopting: socket, path: path, timeout: deadline.seconds)
        c.nextID = 1
        c.framer.append(received)
        return try decoded(c.awaitReply(.int(1), deadline: deadline), AppearanceState.init(json:))
    }

    private init(adopting socket: Descriptor, path: String, timeout: Double, app: String? = nil) {
        (self.socket, socketPath, self.timeout, self.app) = (socket, path, timeout, app)
        buffer = .allocate(byteCount: 16 * 1024, alignment: 16)
    }

    /// Connects without blocking, retrying a full backlog (EAGAIN) until the deadline.
    static func connect(_ path: String, deadline: Deadline) throws(AppearanceError) -> Descriptor {
        if let reason = SocketLocation.untrustedReason(path) { throw .untrustedSocket(socket: path, reason: reason) }
        let socket: Descriptor
        do { socket = try Descriptor.unixStreamSocket(nonBlocking: true, name: path) } catch {
            throw .daemonNotRunning(socket: path, reason: "\(error)")
        }
        // A full backlog has nothing to poll for: try again every 10 ms.
        while true {
            do {
                try socket.connect(to: path)
                return socket
            } catch where error.code == Errno.wouldBlock && !deadline.passed {
                Posix.sleep(seconds: 0.01)
            } catch {
                socket.close()
                if error.code == Errno.wouldBlock { throw .notAnswering(socket: path, seconds: deadline.seconds) }
                throw .daemonNotRunning(socket: path, reason: error.message)
            }
        }
    }

    deinit {
        socket.close()
        buffer.deallocate()
    }

    /// The current state (`get`).
    public func state() throws(AppearanceError) -> AppearanceState { try stateCall(.get) }

    /// The state plus where it came from and who listens (`status`).
    public func status() throws(AppearanceError) -> StatusInfo { try decoded(call(.status), StatusInfo.init(json:)) }

    /// Sets the override (`set`); `.system` goes back to following the desktop. Returns the new state.
    public func set(_ override: Override) throws(AppearanceError) -> AppearanceState { try stateCall(.set(override)) }

    /// Flips the mode (`toggle`), done atomically by the daemon. Returns the new state.
    public func toggle() throws(AppearanceError) -> AppearanceState { try stateCall(.toggle) }

    /// Forces `mode` until the next automatic change or for a number of seconds (`set` with `until`/`for`).
    public func set(_ mode: Mode, for lifetime: Lifetime) throws(AppearanceError) -> AppearanceState {
        try stateCall(.setTemporary(mode, lifetime))
    }

    /// Flips the mode for a while (`toggle` with `until`/`for`).
    public func toggle(for lifetime: Lifetime) throws(AppearanceError) -> AppearanceState { try stateCall(.toggleTemporary(lifetime)) }

    /// Every app override, by app id (`apps`).
    public func apps() throws(AppearanceError) -> [(app: String, override: Mode)] {
        let json = try call(.apps)
        guard case .array(let items)? = json["apps"] else { throw .protocolError("the daemon's apps reply has no list") }
        return items.compactMap { item in
            guard let a = item["app"]?.stringValue, let m = item["override"]?.stringValue.flatMap(Mode.init(rawValue:)) else { return nil }
            return (a, m)
        }
    }

    /// Reads the config and palette files again (`reload`, protocol 5); a config with a mistake is `.rejected`.
    public func reload() throws(AppearanceError) -> ReloadReply {
        let json = try call(.reload)
        guard let reply = ReloadReply(json: json) else { throw .protocolError("the daemon's reload reply says nothing was reloaded") }
        return reply
    }

    /// The integrations, after enabling and disabling the ones named (`integrations`, protocol 6).
    public func integrations(enable: [String] = [], disable: [String] = []) throws(AppearanceError) -> [IntegrationInfo] {
        try integrationsReply(enable: enable, disable: disable).list
    }

    /// `integrations`, and whether this daemon runs them at all. With `wait` (protocol 8, seconds) the daemon
    /// answers once the runs the change started have ended; an older daemon refuses it (`.rejected`).
    public func integrationsReply(enable: [String] = [], disable: [String] = [], wait: Int? = nil) throws(AppearanceError)
        -> (list: [IntegrationInfo], run: Bool) {
        let json = try call(.integrations(enable: enable, disable: disable, wait: wait), patience: Double(max(0, wait ?? 0)))
        guard let list = IntegrationInfo.list(from: json) else { throw .protocolError("the daemon's integrations reply has no list") }
        return (list, IntegrationInfo.run(in: json))
    }

    /// The schedule now and its changes over the next `days` days (`schedule`, protocol 5).
    public func schedule(days: Int = Call.defaultScheduleDays) throws(AppearanceError) -> ScheduleInfo {
        try decoded(call(.schedule(days: days)), ScheduleInfo.init(json:))
    }

    /// `postpone`, `skip` and their `cancel` (protocol 7): what the schedule then says of the next two days.
    public func nextChange(_ request: NextChange.Request) throws(AppearanceError) -> ScheduleInfo {
        try decoded(call(.nextChange(request)), ScheduleInfo.init(json:))
    }

    /// The changes of the mode with their causes, oldest first (`log`); with `app`, only that app's own.
    public func log(limit: Int? = nil, app: String? = nil) throws(AppearanceError) -> [LogEntry] {
        let json = try call(.log(limit: limit), app: app)
        guard case .array(let items)? = json["entries"] else { throw .protocolError("the daemon's log reply has no entries") }
        return items.compactMap(LogEntry.init(json:))
    }

    /// Starts notifications (`subscribe`); returns the current state they start from.
    public func subscribe() throws(AppearanceError) -> AppearanceState { try stateCall(.subscribe) }

    /// Starts notifications, with trait and palette changes when asked; returns the state (and palette).
    public func subscribe(traits: Bool, palette: Bool) throws(AppearanceError) -> Subscription {
        try decoded(call(.subscribe(Interest(traits: traits, palette: palette))), Subscription.init(json:))
    }

    /// Resolves palette tokens for the current appearance, or the given one (`resolve`); unknown: `.rejected`.
    public func resolve(_ tokens: [String], mode: Mode? = nil, contrast: Contrast? = nil) throws(AppearanceError) -> ResolvedPalette {
        try paletteCall(.resolve(tokens, VariantRequest(mode: mode, contrast: contrast)))
    }

    /// The whole palette resolved for the current appearance, or the given mode and contrast (`palette`).
    public func palette(mode: Mode? = nil, contrast: Contrast? = nil) throws(AppearanceError) -> ResolvedPalette {
        try paletteCall(.palette(VariantRequest(mode: mode, contrast: contrast)))
    }

    private func paletteCall(_ c: Call) throws(AppearanceError) -> ResolvedPalette { try decoded(call(c), ResolvedPalette.init(json:)) }

    /// Blocks until the next `changed` notification, with no deadline: a change may be hours away.
    public func nextChange() throws(AppearanceError) -> Notification {
        while changes.isEmpty { try receive(deadline: nil) }
        return changes.removeFirst()
    }

    private func stateCall(_ c: Call) throws(AppearanceError) -> AppearanceState { try decoded(call(c), AppearanceState.init(json:)) }

    /// `app`: the one to send with a call that does not take the connection's own (`log`'s filter);
    /// `patience`: seconds the daemon may hold the reply on purpose.
    private func call(_ c: Call, app given: String? = nil, patience: Double = 0) throws(AppearanceError) -> JSON {
        nextID += 1
        let id = JSON.int(nextID)
        let deadline = Deadline(seconds: timeout + patience)
        let takesApp: Bool = switch c {
        case .get, .set, .toggle, .subscribe, .resolve, .palette: true
        default: false
        }
        let line = Request(id: id, call: c, app: takesApp ? app : given).line
        do {
            try socket.writeAll(line, until: deadline)
        } catch where error.code == Errno.timedOut {
            throw .notAnswering(socket: socketPath, seconds: deadline.seconds)
        } catch {
            // The daemon may have said why before closing (too many connections): show that instead.
            if case .error(_, let e)? = (try? receive(deadline: Deadline(seconds: 0.2))) ?? nil { throw .rejected(e) }
            throw lost("\(error)")
        }
        return try awaitReply(id, deadline: deadline)
    }

    /// Reads until the reply to request `id` (or an error without an id) arrives.
    private func awaitReply(_ id: JSON, deadline: Deadline) throws(AppearanceError) -> JSON {
        while true {
            switch try receive(deadline: deadline) {
            case .result(let rid, let json)? where rid == id: return json
            case .error(let rid, let e)? where rid == id || rid == .null: throw .rejected(e)
            default: continue
            }
        }
    }

    /// Waits until the socket is readable, or throws `.notAnswering` at the deadline (nil: never).
    private func waitReadable(until deadline: Deadline?) throws(AppearanceError) {
        let ready: Bool
        do { ready = try socket.wait(.readable, until: deadline) } catch { throw lost("\(error)") }
        if !ready { throw .notAnswering(socket: socketPath, seconds: deadline?.seconds ?? timeout) }
    }

    /// Reads one message; notifications are queued, replies returned.
    @discardableResult
    private func receive(deadline: Deadline?) throws(AppearanceError) -> Incoming? {
        while true {
            let line: ArraySlice<UInt8>?
            do { line = try framer.next() } catch { throw .protocolError("the daemon sent a line over \(maxReplyLength) bytes") }
            if let line {
                let msg: Incoming
                do { msg = try Incoming.decode(line) } catch { throw .protocolError(error.message) }
                if case .changed(let n) = msg { changes.append(n); return nil }
                return msg
            }
            let read: Int?
            do { read = try socket.read(into: buffer) } catch { throw lost("\(error)") }
            guard let n = read else {
                try waitReadable(until: deadline)
                continue
            }
            if n == 0 { throw lost("the daemon closed the connection") }
            framer.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    private func lost(_ reason: String) -> AppearanceError { .connectionLost(socket: socketPath, reason: reason) }

    /// True when the daemon has closed this connection (it exited or restarted): a peek that does not block.
    var isClosedByPeer: Bool { socket.isClosedByPeer }
}

/// A reply read as `T`; what it cannot be read as is a protocol error.
private func decoded<T>(_ json: JSON, _ read: (JSON) throws(RPCError) -> T) throws(AppearanceError) -> T {
    do { return try read(json) } catch { throw .protocolError(error.message) }
}
