import AppearanceKit
import AppearancePosix

/// `appearancectl get` exactly as prompts and status bars run it (no options, no APPEARANCED_APP), before
/// anything else: the arguments are read from argv as bytes, the request is a constant, and the reply is
/// recognised by its bytes, so the query builds no array, dictionary or JSON value (whose generic types the
/// Swift runtime would set up on first use: most of what a `get` cost above a C client; docs/decisions.md,
/// "appearancectl get's fast path").
///
/// It prints only when the reply is the one it knows: a complete single line that starts
/// `{"jsonrpc":"2.0","id":1,"result":{"mode":"light"` (or `"dark"`) and ends `}}`. Anything else (no daemon, an
/// untrusted socket, a refused connection, an error reply, a reply of another shape, the daemon closing)
/// falls back to the general path, which then says and exits exactly what it always did; the one exception is
/// the deadline, which the general path would only wait out again: that error is given at once, the same way.
enum QuickGet {
    enum Outcome {
        case printed
        case fallBack
        case timedOut(socket: String)
    }

    /// True for the argument vector `get` alone, with no app in the environment.
    static var applies: Bool {
        guard CommandLine.argc == 2, let arg = CommandLine.unsafeArgv[1] else { return false }
        guard arg[0] == UInt8(ascii: "g"), arg[1] == UInt8(ascii: "e"), arg[2] == UInt8(ascii: "t"), arg[3] == 0 else {
            return false
        }
        return Posix.environment("APPEARANCED_APP") == nil
    }

    static let request: StaticString = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get\"}\n"
    static let prefix: StaticString = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"mode\":\""

    static func run() -> Outcome {
        // Without XDG_RUNTIME_DIR (or APPEARANCED_SOCKET) the general path finds the socket, with its warnings.
        guard let (path, _) = SocketLocation.fromEnvironment() else { return .fallBack }
        if let _ = SocketLocation.untrustedReason(path) { return .fallBack }  // not `== nil`: a generic call
        let deadline = Deadline(seconds: AppearanceConnection.defaultTimeout)
        guard let socket = try? Descriptor.unixStreamSocket(nonBlocking: true, name: path) else { return .fallBack }
        defer { socket.close() }
        do { try socket.connect(to: path) } catch { return .fallBack }  // EAGAIN too: the general path retries
        do {
            try socket.writeAll(UnsafeRawBufferPointer(start: request.utf8Start, count: request.utf8CodeUnitCount),
                                until: deadline)
        } catch where error.code == Errno.timedOut {
            return .timedOut(socket: path)
        } catch {
            return .fallBack
        }
        return withUnsafeTemporaryAllocation(byteCount: 2048, alignment: 16) { buffer -> Outcome in
            var count = 0
            while true {
                let n: Int?
                do { n = try socket.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...])) } catch {
                    return .fallBack
                }
                guard let n else {
                    do {
                        guard try socket.wait(.readable, until: deadline) else { return .timedOut(socket: path) }
                    } catch {
                        return .fallBack
                    }
                    continue
                }
                if n == 0 { return .fallBack }  // closed without a whole reply
                count += n
                if buffer[count - 1] == 0x0A { break }
                if count == buffer.count { return .fallBack }  // longer than any reply it knows
            }
            guard let mode = recognise(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else { return .fallBack }
            out(mode == .dark ? "dark" : "light")
            return .printed
        }
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
}
