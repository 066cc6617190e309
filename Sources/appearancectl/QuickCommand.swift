import AppearanceKit
import AppearancePosix
import AppearanceProtocol

/// `appearancectl get`, `set light|dark|system` and `toggle` without options, before anything else: a constant
/// request, the reply recognised by its bytes, anything else left to the general client on the same connection
/// (docs/decisions.md, "appearancectl's fast path").
enum QuickCommand {
    /// The request line for the argument vector, or nil when the general path takes it.
    static var request: StaticString? {
        guard Posix.environment("APPEARANCED_APP") == nil else { return nil }
        let argv = CommandLine.unsafeArgv
        switch CommandLine.argc {
        case 2:
            guard let command = argv[1] else { return nil }
            if equals(command, "get") { return QuickRequest.get }
            if equals(command, "toggle") { return QuickRequest.toggle }
        case 3:
            guard let command = argv[1], let mode = argv[2], equals(command, "set") else { return nil }
            if equals(mode, "dark") { return QuickRequest.set(.dark) }
            if equals(mode, "light") { return QuickRequest.set(.light) }
            if equals(mode, "system") { return QuickRequest.set(.system) }
        default: break
        }
        return nil
    }

    /// Runs `request`: false when nothing was sent and the general path should run the command.
    static func run(_ request: StaticString) -> Bool {
        // Without XDG_RUNTIME_DIR (or APPEARANCED_SOCKET) the general path finds the socket, with its warnings.
        guard let (path, _) = SocketLocation.fromEnvironment() else { return false }
        guard SocketLocation.untrustedReason(path) == nil else { return false }
        let deadline = Deadline(seconds: AppearanceConnection.defaultTimeout)
        guard let socket = try? Descriptor.unixStreamSocket(nonBlocking: true, name: path) else { return false }
        defer { socket.close() }
        do { try socket.connect(to: path) } catch { return false }  // EAGAIN too: the general path retries
        do {
            try socket.writeAll(UnsafeRawBufferPointer(start: request.utf8Start, count: request.utf8CodeUnitCount),
                                until: deadline)
        } catch where error.code == Errno.timedOut {
            fail(.notAnswering(socket: path, seconds: deadline.seconds))  // part of it may be out: not again
        } catch {
            return false  // the daemon closed before reading it (the general path shows why)
        }
        return withUnsafeTemporaryAllocation(byteCount: 2048, alignment: 16) { buffer -> Bool in
            let count = readLine(socket, into: buffer, until: deadline)
            let line = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if let mode = QuickReply.mode(ofLine: line) {
                out(mode == .dark ? "dark" : "light")
                return true
            }
            do throws(AppearanceError) {
                let state = try AppearanceConnection.finishStateCall(on: socket, path: path, deadline: deadline,
                                                                     received: line)
                printState(state, json: false)
                warnOfConfigProblem(state)
            } catch {
                fail(error)
            }
            return true
        }
    }

    /// Reads until a newline, a full buffer, the daemon's close or the deadline: how many bytes it holds.

    private static func readLine(_ socket: Descriptor, into buffer: UnsafeMutableRawBufferPointer, until deadline: Deadline) -> Int {
        var count = 0
        while count < buffer.count {
            let n: Int?
            do { n = try socket.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...])) } catch { break }
            guard let n else {
                guard (try? socket.wait(.readable, until: deadline)) == true else { break }
                continue
            }
            if n == 0 { break }
            count += n
            if buffer[count - 1] == 0x0A { break }
        }
        return count
    }

    /// A C string from argv equal to `word`.
    private static func equals(_ arg: UnsafeMutablePointer<CChar>, _ word: StaticString) -> Bool {
        let w = word.utf8Start
        for i in 0..<word.utf8CodeUnitCount where UInt8(bitPattern: arg[i]) != w[i] { return false }
        return arg[word.utf8CodeUnitCount] == 0
    }
}
