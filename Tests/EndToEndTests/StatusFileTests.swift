import AppearanceCore
import AppearanceProtocol
import Foundation
import Testing

/// Counts what a reader of the mode file saw, on a thread of its own.
final class FileHammer: @unchecked Sendable {
    // The counters are behind `lock`.
    private let lock = NSLock()
    private var stop = false
    private var reads = 0
    private var bad: [String] = []
    private var finished = false

    init(_ path: String) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 64)
            while !lock.withLock({ stop }) {
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                var text = "(missing: \(String(cString: strerror(errno))))"
                if fd >= 0 {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    close(fd)
                    text = n < 0 ? "(read failed)" : String(decoding: buffer[0..<n], as: UTF8.self)
                }
                lock.withLock {
                    reads += 1
                    if text != "dark\n" && text != "light\n" && bad.count < 20 { bad.append(text) }
                }
            }
            lock.withLock { finished = true }
        }
    }

    /// Stops the reader; returns how many reads it made and the odd ones.
    func finish() throws -> (reads: Int, bad: [String]) {
        lock.withLock { stop = true }
        try waitUntil("the reader to stop") { lock.withLock { finished } }
        return lock.withLock { (reads, bad) }
    }
}

@Suite struct StatusFileTests {
    /// The mode file next to the socket: there from start-up, replaced before subscribers are told, never
    /// partial, gone after a clean exit.
    @Test func modeFileAgreesWithEveryNotificationAndIsNeverPartial() throws {
        let s = try Sandbox()
        let modeFile = s.root + "/runtime/appearanced/mode"
        let d = try s.startDaemon()
        #expect(try String(contentsOfFile: modeFile, encoding: .utf8) == "light\n")

        let subscriber = try RawClient(s.socket)
        try subscriber.send(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"# + "\n")
        _ = try #require(try subscriber.line())
        let toggler = try RawClient(s.socket)
        let hammer = FileHammer(modeFile)
        var mismatches: [String] = []
        for i in 0..<500 {
            try toggler.send(#"{"jsonrpc":"2.0","id":\#(i),"method":"toggle"}"# + "\n")
            guard case .result(_, let r)? = try toggler.line().map({ try Incoming.decode(Array($0.utf8)) }) else {
                Issue.record("toggle \(i) got no result"); break
            }
            let mode = try AppearanceState(json: r).mode
            let line = try #require(try subscriber.line(), "no notification for toggle \(i)")
            guard case .changed(let n) = try Incoming.decode(Array(line.utf8)) else { Issue.record("not a notification: \(line)"); break }
            // The file is replaced before the notification is written: reading it now gives the notified mode.
            let file = try String(contentsOfFile: modeFile, encoding: .utf8)
            if n.state.mode != mode || file != mode.rawValue + "\n" {
                mismatches.append("toggle \(i): reply \(mode), notification \(n.state.mode), file \(file.debugDescription)")
            }
        }
        let (reads, bad) = try hammer.finish()
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        #expect(bad.isEmpty, "a reader saw: \(bad)")
        #expect(reads > 0)

        d.stop(SIGTERM)
        #expect(try d.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: modeFile))
        #expect(!FileManager.default.fileExists(atPath: s.root + "/runtime/appearanced/.mode-other"))
    }
}
