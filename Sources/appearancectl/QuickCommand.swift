import AppearanceKit
import AppearancePosix

/// `appearancectl get`, `set light|dark|system` and `toggle` exactly as prompts, status bars and key bindings
/// run them (no options, no APPEARANCED_APP), before anything else: the arguments are read from argv as
/// bytes, the request is a constant, and the reply is recognised by its bytes, so the command builds no
/// array, dictionary or JSON value (whose generic types the Swift runtime would set up on first use: most of
/// what a `get` cost above a C client; docs/decisions.md, "appearancectl's fast path").
///
/// It prints the mode only when the reply is the one it knows: a complete single line that starts
/// `{"jsonrpc":"2.0","id":1,"result":{"mode":"light"` (or `"dark"`) and ends `}}`. Before its request is
/// sent, anything amiss (no daemon, an untrusted socket, a full backlog) leaves the command to the general
/// path, which then says and exits what it always did. Once it is sent, any other reply, a hang-up or the
/// deadline is handed to the general client on the same connection with the bytes read so far
/// (`AppearanceConnection.finishStateCall`): the same messages and exit codes, and a request is never sent
/// twice (a `toggle` sent twice would undo itself).
enum QuickCommand {
    /// The request line for the argument vector, or nil when the general path takes it.
    static var request: StaticString? {
        guard Posix.environment("APPEARANCED_APP") == nil else { return nil }
        let argv = CommandLine.unsafeArgv
        switch CommandLine.argc {
        case 2:
            guard let command = argv[1] else { return nil }
            if equals(command, "get") { return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get\"}\n" }
            if equals(command, "toggle") { return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"toggle\"}\n" }
        case 3:
            guard let command = argv[1], let mode = argv[2], equals(command, "set") else { return nil }
            if equals(mode, "dark") {
                return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"set\",\"params\":{\"override\":\"dark\"}}\n"
            }
            if equals(mode, "light") {
                return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"set\",\"params\":{\"override\":\"light\"}}\n"
            }
            if equals(mode, "system") {
                return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"set\",\"params\":{\"override\":\"system\"}}\n"
            }
        default: break
        }
        return nil
    }

    static let prefix: StaticString = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"mode\":\""

    /// Runs `request`: false when nothing was sent and the general path should run the command; otherwise
    /// it has printed the mode or ended the process with the general client's error.
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
            if let mode = recognise(line) {
                out(mode == .dark ? "dark" : "light")
                return true
            }
            do throws(AppearanceError) {
                let state = try AppearanceConnection.finishStateCall(on: socket, path: path, deadline: deadline,
                                                                     received: line)
                printState(state, json: false)
            } catch {
                fail(error)
            }
            return true
        }
    }

    /// Reads until the bytes end with a newline, the buffer is full, the daemon closes, or the deadline:
    /// how many bytes it holds (the general client reads on from there).
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

    /// The mode in a reply line (newline included) of the known shape, else nil.
    static func recognise(_ line: UnsafeRawBufferPointer) -> Mode? {
        let p = UnsafeRawBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        let n = line.count
        guard n > p.count + 8, line[n - 1] == 0x0A, line[n - 2] == 0x7D, line[n - 3] == 0x7D else { return nil }
        for i in 0..<p.count where line[i] != p[i] { return nil }
        for i in 0..<(n - 1) where line[i] == 0x0A { return nil }  // one line only
        if starts(line, at: p.count, with: "dark\"") { return .dark }
        if starts(line, at: p.count, with: "light\"") { return .light }
        return nil
    }

    private static func starts(_ line: UnsafeRawBufferPointer, at offset: Int, with word: StaticString) -> Bool {
        let w = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard line.count >= offset + w.count else { return false }
        for i in 0..<w.count where line[offset + i] != w[i] { return false }
        return true
    }

    /// A C string from argv equal to `word`.
    private static func equals(_ arg: UnsafeMutablePointer<CChar>, _ word: StaticString) -> Bool {
        let w = word.utf8Start
        for i in 0..<word.utf8CodeUnitCount where UInt8(bitPattern: arg[i]) != w[i] { return false }
        return arg[word.utf8CodeUnitCount] == 0
    }
}
