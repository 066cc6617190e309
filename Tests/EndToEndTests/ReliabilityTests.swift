import Foundation
import Testing

/// What a peer names itself, and what the daemon writes about it, stays honest and harmless.
@Suite struct ReliabilityTests {
    /// A client's /proc/PID/comm is its executable's file name, which anyone can choose: terminal escapes in
    /// it reach neither `appearancectl log` nor the daemon's log as raw bytes.
    @Test func aClientsNameWithControlCharactersIsEscapedInTheLog() throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        let evil = s.root + "/x\u{1b}]0;pwn\u{7}"
        try FileManager.default.createSymbolicLink(atPath: evil, withDestinationPath: Bin.ctl)
        let r = try s.run(evil, ["set", "dark"])
        #expect(r.status == 0, "\(r)")
        let log = try s.ctl("log")
        #expect(log.status == 0)
        #expect(!log.out.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(log.out.debugDescription)")
        #expect(log.out.contains(#"override dark set by x\x1b]0;pwn\x07 (pid"#), "\(log.out)")
        #expect(!d.stderr.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(d.stderr.debugDescription)")
    }

    /// `set … --for DURATION` is logged with the time it ends, not the time it was set.
    @Test func aTemporaryOverrideForADurationIsLoggedWithItsEnd() throws {
        let s = try Sandbox()
        s.env["TZ"] = "UTC"
        let d = try s.startDaemon()
        func shown(_ t: Date) -> String {
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = TimeZone(identifier: "UTC")
            f.dateFormat = "EEE yyyy-MM-dd HH:mm"
            return f.string(from: t)
        }
        let before = shown(Date().addingTimeInterval(7_200))
        #expect(try s.ctl("set", "dark", "--for", "2h").status == 0)
        let after = shown(Date().addingTimeInterval(7_200))
        try waitUntil("the log line of the temporary override; stderr: \(d.stderr)") {
            d.stderr.contains("temporary override: dark until \(before)") || d.stderr.contains("temporary override: dark until \(after)")
        }
    }
}
