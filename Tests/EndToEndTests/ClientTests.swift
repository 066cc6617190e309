import AppearanceKit
import Foundation
import Testing
import TestSupport


/// Iterates `client.changes()` in a task and records each element in a short form:
/// "initial light", "dark<-light" (a change and its previous), "lost", "reconnected", "threw: …".
final class ChangeLog: @unchecked Sendable {
    // `items` is behind `lock`.
    private let lock = NSLock()
    private var items: [String] = []
    private var states: [AppearanceState] = []
    private var task: Task<Void, Never>?

    static func start(_ client: AppearanceClient, reconnect: Bool = true) -> ChangeLog {
        let log = ChangeLog()
        log.task = Task {
            do {
                for try await change in client.changes(reconnect: reconnect) { log.record(change) }
                log.append("ended")
            } catch {
                log.append("threw: \(error)")
            }
        }
        return log
    }

    private func record(_ change: AppearanceChange) {
        switch change {
        case .initial(let s): append("initial \(s.mode.rawValue)", s)
        case .changed(let s, let previous): append("\(s.mode.rawValue)<-\(previous.rawValue)", s)
        case .connectionLost: append("lost")
        case .reconnected: append("reconnected")
        case .paletteChanged(let p): append("palette \(p.variant)")
        }
    }

    private func append(_ item: String, _ state: AppearanceState? = nil) {
        lock.withLock {
            items.append(item)
            if let state { states.append(state) }
        }
    }

    var all: [String] { lock.withLock { items } }
    var allStates: [AppearanceState] { lock.withLock { states } }

    /// Waits until `count` elements were recorded; returns them all.
    @discardableResult
    func wait(count: Int) async throws -> [String] {
        _ = try await TestSupport.waitUntil("\(count) elements from changes(); have \(all)") { all.count >= count ? true : nil }
        return all
    }

    func cancel() { task?.cancel() }

    deinit { task?.cancel() }
}

@Suite struct AppearanceClientTests {
    @Test func stateSetToggleAndStatus() async throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        let client = try await AppearanceClient(socketPath: s.socket)
        #expect(client.socketPath == s.socket)

        let first = try await client.state()
        #expect((first.mode, first.override, first.source, first.system) == (.light, .system, .default, .unavailable))
        let dark = try await client.set(.dark)
        #expect((dark.mode, dark.override, dark.source, dark.darkMode) == (.dark, .dark, .override, true))
        #expect(dark.seq == first.seq + 1 && dark.instance == first.instance)
        #expect(try s.ctl("get").out == "dark\n")
        // Following the system gives light (the default), so toggling from dark returns to following it.
        let toggled = try await client.toggle()
        #expect((toggled.mode, toggled.override) == (.light, .system))
        let again = try await client.toggle()
        #expect((again.mode, again.override) == (.dark, .dark))
        #expect(try await client.set(.system).mode == .light)

        let status = try await client.status()
        #expect(status.state.mode == .light)
        #expect(status.defaultMode == .light)
        #expect(status.protocolVersion == 8)
        #expect(status.pid == Int(d.pid))
        #expect(status.subscribers == 0)
        #expect(!status.version.isEmpty)
    }

    @Test func changesStartWithTheStateThenEachChangeWithPrevious() async throws {
        let s = try Sandbox.started()
        let client = try await AppearanceClient(socketPath: s.socket)
        let log = ChangeLog.start(client)
        #expect(try await log.wait(count: 1) == ["initial light"])
        try await client.toggle()           // dark
        try await client.set(.dark)         // no change: nothing
        try await client.set(.light)        // light, though the source changes
        try await client.set(.system)       // still light: nothing
        try await client.toggle()           // dark
        _ = try s.ctl("toggle")             // light, from another client
        try await client.set(.dark)         // the last one: once it is in, nothing else can be in between
        let expected = ["initial light", "dark<-light", "light<-dark", "dark<-light", "light<-dark", "dark<-light"]
        #expect(try await log.wait(count: expected.count) == expected)
        let seqs = log.allStates.map(\.seq)
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "\(seqs)")
        #expect(try await client.status().subscribers == 1)
        log.cancel()
        // Cancelling closes the subscription's connection.
        _ = try await TestSupport.waitUntil("the subscriber to go away") {
            (try? s.ctl("status", "--json").out.contains(#""subscribers":0"#)) == true ? true : nil
        }
        // Nothing after the cancel but, possibly already, the loop's own end.
        let after = Array(log.all.dropFirst(expected.count))
        #expect(after == [] || after == ["ended"], "\(after)")
    }

    @Test func reconnectsAfterTheDaemonIsKilledAndYieldsOnlyWhatChanged() async throws {
        let s = try Sandbox()
        var d = try s.startDaemon()
        let client = try await AppearanceClient(socketPath: s.socket)
        let log = ChangeLog.start(client)
        try await log.wait(count: 1)

        // Killed and restarted with the same state: lost, reconnected, and no state element.
        try d.end(SIGKILL)
        #expect(try await log.wait(count: 2) == ["initial light", "lost"])
        d = try s.startDaemon()
        #expect(try await log.wait(count: 3) == ["initial light", "lost", "reconnected"])
        _ = try s.ctl("set", "dark")
        _ = try s.ctl("set", "system")
        // Had the reconnect yielded "light" again, it would show up before these.
        #expect(try await log.wait(count: 5) == ["initial light", "lost", "reconnected", "dark<-light", "light<-dark"])

        // Killed; while it is down the mode changes (the default becomes dark): reconnected, then the change.
        try d.end(SIGKILL)
        try await log.wait(count: 6)
        try s.write("default-mode = \"dark\"\n", to: s.configFile)
        d = try s.startDaemon()
        #expect(try await log.wait(count: 8) == ["initial light", "lost", "reconnected", "dark<-light", "light<-dark",
                                                  "lost", "reconnected", "dark<-light"])
        // The request connection follows the restart too.
        #expect(try await client.state().mode == .dark)
        #expect(log.allStates.last?.instance == (try await client.state().instance))
    }

    @Test func noDaemonIsAClearError() async throws {
        let s = try Sandbox()
        do {
            _ = try await AppearanceClient(socketPath: s.socket)
            Issue.record("connected to nothing")
        } catch {
            guard case .daemonNotRunning(let socket, _) = error else { Issue.record("\(error)"); return }
            #expect(socket == s.socket)
            // Not this process's default socket (its XDG_RUNTIME_DIR is not the sandbox's): the message says how
            // to start a daemon there; `CLITests` has the default socket's words.
            #expect("\(error)".contains("appearanced is not running on \(s.socket) ("))
            #expect("\(error)".contains("Start one there with 'appearanced --socket \(s.socket)'."))
        }

        // A daemon that stops: requests say it is not running; a non-reconnecting subscription ends with the error.
        let d = try s.startDaemon()
        let client = try await AppearanceClient(socketPath: s.socket)
        let log = ChangeLog.start(client, reconnect: false)
        try await log.wait(count: 1)
        try d.end(SIGTERM)
        let ended = try await log.wait(count: 2)
        #expect(ended.last?.hasPrefix("threw: lost the connection to appearanced on \(s.socket)") == true, "\(ended)")
        await #expect(throws: AppearanceError.self) { try await client.state() }
        do { _ = try await client.toggle() } catch {
            guard case .daemonNotRunning = error else { Issue.record("\(error)"); return }
        }
        // A reconnecting subscription started while nothing listens reports that first.
        let waiting = ChangeLog.start(client)
        #expect(try await waiting.wait(count: 1) == ["lost"])
        try s.startDaemon()
        #expect(try await waiting.wait(count: 3) == ["lost", "reconnected", "initial light"])
    }
}

/// The request bound (`timeout:`) is for connecting, requests and the reply to `subscribe`; a subscriber waits
/// for changes for as long as it takes. Each test has a deadline of its own.
@Suite(.timeLimit(.minutes(2))) struct DeadlineTests {
    @Test func aBlockingConnectionWaitsForChangesPastItsBound() async throws {
        let s = try Sandbox.started()
        let c = try AppearanceConnection(socketPath: s.socket, timeout: 0.2)
        #expect(try c.subscribe().mode == .light)
        try await Task.sleep(for: .milliseconds(600))  // three bounds with nothing to say
        #expect(try s.ctl("set", "dark").status == 0)
        #expect(try c.nextChange().state.mode == .dark)
        #expect(try c.state().mode == .dark)  // and requests still work on it
    }

    @Test func aSubscriptionWaitsForChangesPastItsBound() async throws {
        let s = try Sandbox.started()
        let client = try await AppearanceClient(socketPath: s.socket, timeout: 0.2)
        let log = ChangeLog.start(client)
        #expect(try await log.wait(count: 1) == ["initial light"])
        try await Task.sleep(for: .milliseconds(600))
        #expect(try s.ctl("set", "dark").status == 0)
        #expect(try await log.wait(count: 2) == ["initial light", "dark<-light"])
    }

    @Test func aStoppedDaemonIsNotAnsweringForRequestsAndSubscriptionsUntilItContinues() async throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        defer { kill(d.pid, SIGCONT); d.stop() }
        let client = try await AppearanceClient(socketPath: s.socket, timeout: 0.3)
        kill(d.pid, SIGSTOP)
        do {
            _ = try await client.state()
            Issue.record("a stopped daemon answered")
        } catch {
            #expect(error == .notAnswering(socket: s.socket, seconds: 0.3))
            #expect("\(error)".contains("appearanced did not answer on \(s.socket) within 0.3 s"), "\(error)")
        }
        // A subscription started now loses its first try (no reply to `subscribe` within the bound) and
        // keeps trying; once the daemon runs again it is subscribed.
        var changes = client.changes().makeAsyncIterator()
        let first = try await changes.next()
        #expect(first == .connectionLost(.notAnswering(socket: s.socket, seconds: 0.3)), "\(String(describing: first))")
        kill(d.pid, SIGCONT)
        #expect(try await changes.next() == .reconnected)
        #expect(try await changes.next()?.state?.mode == .light)
        #expect(try await client.state().mode == .light)
    }
}
