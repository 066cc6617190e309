import AppearanceCore
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The clients (docs/architecture.md): the listening socket, the caps and budgets, the connections.
final class Clients: @unchecked Sendable {
    let queue: DispatchQueue
    private let log: Logger
    private let clock: Clock
    private let uid = Posix.userID
    private(set) var listener: Listener?
    private var acceptSource: DispatchSourceRead? { didSet { oldValue?.cancel() } }
    private(set) var connections: [UInt64: Connection] = [:]
    private var nextConnectionID: UInt64 = 0
    private var peakConnections = 0
    /// Bytes of unhandled requests across all connections (each holds at most one unfinished line).
    private var bufferedInput = 0
    private var lastRefusalLog: Int64 = 0
    /// The buffer every connection of this daemon reads into (one read at a time, on the queue).
    private let scratch = Connection.ReadBuffer()
    var subscriberCount: Int { connections.values.reduce(0) { $0 + ($1.delivery == nil ? 0 : 1) } }
    /// Config `max-connections`; nil: the descriptor limit less 64 for the daemon's own files, the bus and hooks.
    var maxConnections: Int?
    var onLine: (Connection, ArraySlice<UInt8>) -> Void = { _, _ in }

    /// All connections together may hold this much of unfinished requests; past it, the largest holder is closed.
    static let inputBudget = 16 << 20

    var connectionCap: Int { maxConnections ?? max(16, Int(min(Posix.fileLimit, 1 << 20)) - 64) }

    init(queue: DispatchQueue, log: Logger, clock: Clock) { (self.queue, self.log, self.clock) = (queue, log, clock) }

    /// Binds the socket (or adopts systemd's); connections wait in the backlog until `startAccepting`.
    func listen(_ location: SocketLocation) throws(StartupError) -> Listener {
        let listener = if let fd = try Systemd.activatedSocket() { Listener.adopt(fd, location: location) } else {
            try Listener.open(location)
        }
        self.listener = listener
        return listener
    }

    /// `c` subscribed (again: a second subscribe replaces the first).
    func subscribe(_ c: Connection, _ delivery: Delivery) { c.delivery = delivery }

    /// Closes every connection and removes the socket (the daemon is stopping).
    func closeAll() {
        for c in connections.values { c.close() }
        listener?.remove()
    }

    /// The accept source exists only while the daemon accepts (never left suspended).
    func startAccepting() {
        guard acceptSource == nil, let listener else { return }
        let accept = DispatchSource.makeReadSource(fileDescriptor: listener.fd, queue: queue)
        accept.setEventHandler { [weak self] in self?.acceptClients() }
        acceptSource = accept
        accept.resume()
    }

    private func acceptClients() {
        guard let listener else { return }
        while true {
            let accepted: Descriptor?
            do { accepted = try listener.socket.accept(nonBlocking: true) } catch {
                switch error.code {
                case Errno.tooManyFiles, Errno.tooManyFilesInSystem:
                    // Out of descriptors: stop accepting for a moment instead of spinning on the ready socket.
                    log.warning("too many open files (\(connections.count) clients); pausing new connections for 1 s")
                    acceptSource = nil
                    queue.asyncAfter(deadline: .now() + 1) { [weak self] in self?.startAccepting() }
                    return
                default:
                    log.warning("accept on \(listener.path) failed: \(error.message), ignoring")
                    return
                }
            }
            guard let client = accepted else { return }  // none waiting
            guard let cred = client.peerCredentials, cred.uid == uid else {
                let who = client.peerCredentials.map { "uid \($0.uid) (pid \($0.pid))" } ?? "an unknown peer"
                log.warning("rejected a connection from \(who): only uid \(uid) may use \(listener.path)")
                client.close()
                continue
            }
            if connections.count >= connectionCap {
                refuse(client, pid: cred.pid)
                continue
            }
            add(client, pid: cred.pid)
        }
    }

    private func add(_ client: Descriptor, pid: Int32) {
        nextConnectionID += 1
        let c = Connection(socket: client, id: nextConnectionID, peer: "pid \(pid)", queue: queue, scratch: scratch)
        // Weakly held, like every callback to a part of the daemon: a connection may outlive a daemon made in a test process.
        c.onInputChange = { [weak self] c, delta in self?.inputChanged(c, delta) }
        c.onLine = { [weak self] c, line in self?.onLine(c, line) }
        c.onLineTooLong = { [weak self] (c: Connection) in
            guard let self else { return }
            self.log.warning("client \(c.peer) sent a line over \(maxLineLength) bytes; closing it")
            c.send(Outgoing.error(id: .null, RPCError(.invalidRequest, "request line longer than \(maxLineLength) bytes; closing the connection")))
            c.closeAfterFlush()
        }
        c.onClose = { [weak self] (c: Connection) in
            guard let self else { return }
            self.connections[c.id] = nil
            self.log.debug("client \(c.peer) disconnected")
            self.returnMemoryAfterACrowd()
        }
        connections[c.id] = c
        peakConnections = max(peakConnections, connections.count)
        c.start()
    }

    /// Over the connection cap: one error line, written without waiting, then closed. Logged at most once a minute.
    private func refuse(_ client: Descriptor, pid: Int32) {
        let message = Outgoing.error(id: .null, RPCError(.requestFailed,
            "too many connections (\(connections.count), the limit is \(connectionCap)); try again later"))
        client.sendWithoutWaiting(message)
        client.close()
        let now = clock.now()
        if now - lastRefusalLog >= 60 {
            lastRefusalLog = now
            log.warning("refusing connections: \(connections.count) clients are connected, the limit is \(connectionCap) (pid \(pid) refused; max-connections in the config)")
        }
    }

    private func inputChanged(_ c: Connection, _ delta: Int) {
        bufferedInput += delta
        guard bufferedInput > Self.inputBudget else { return }
        // Over budget: the client holding the most unfinished input goes (a scan, which only an attack causes).
        guard let worst = connections.values.max(by: { $0.bufferedInput < $1.bufferedInput }), worst.bufferedInput > 0 else { return }
        log.warning("unfinished requests hold \(bufferedInput) bytes, over \(Self.inputBudget); closing client \(worst.peer), which holds \(worst.bufferedInput)")
        worst.send(Outgoing.error(id: .null, RPCError(.requestFailed, "the daemon is holding too much unfinished input from its clients; closing this connection")))
        worst.close()
    }

    /// When most of a large crowd of clients has left, hand the freed heap back to the system once.
    private func returnMemoryAfterACrowd() {
        guard peakConnections >= 256, connections.count <= peakConnections / 4 else { return }
        peakConnections = connections.count
        queue.async { Posix.returnFreeMemory() }  // after the closes of this burst have run
    }
}
