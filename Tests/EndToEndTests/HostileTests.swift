import AppearancePosix
import AppearanceProtocol
import Foundation
import Testing
import let TestSupport.underSanitizer

/// Hostile and careless input (issue "Hardened against hostile input"): each test reproduces one failure
/// the review found and checks the outcome the daemon now has. No timings are asserted.
@Suite struct HostileTests {
    /// Sends as much of `bytes` as the socket takes within `seconds`; a daemon that stops reading is expected.
    static func sendWhatFits(_ c: RawClient, _ bytes: [UInt8], seconds: Int = 2) {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(c.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        _ = try? c.socket.writeAll(bytes)
    }

    @Test func aClientStreamingRequestsHoldsNoOneBack() throws {
        let s = try Sandbox.started()
        // 64 KiB lines full of duplicate keys (the costliest to parse), streamed without end.
        let pairs = String(repeating: #""a":1,"#, count: 10_900)
        let line = Array(#"{"jsonrpc":"2.0","id":1,"method":"get","params":{\#(pairs)"b":2}}"#.utf8.prefix(65_000)) + [0x0A]
        let hostile = try RawClient(s.socket)
        let fd = hostile.fd
        let socket = hostile.socket
        let stop = Atomic(false)
        var tv = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let streamer = Thread {
            let chunk = Array((0..<32).map { _ in line }.joined())
            while !stop.value { _ = try? socket.writeAll(chunk) }
        }
        streamer.start()
        defer { stop.value = true; withExtendedLifetime(hostile) {} }
        for _ in 0..<20 {
            let r = try s.ctl("get")
            #expect(r.status == 0 && r.out == "light\n", "\(r.err)")
        }
    }

    @Test func pipeliningWithoutReadingStaysWithinItsMemory() throws {
        let s = try Sandbox()
        let d = try s.startDaemon()
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"status"}"#.utf8) + [0x0A]
        let burst = Array((0..<1_500).map { _ in request }.joined())
        var clients: [RawClient] = []
        for _ in 0..<20 {
            let c = try RawClient(s.socket)
            Self.sendWhatFits(c, burst, seconds: 1)
            clients.append(c)
        }
        #expect(try s.ctl("get").out == "light\n")
        let rss = ProcStat(pid: d.pid).rssKiB
        print("figure: 20 clients pipelining 1,500 status requests each without reading: daemon RSS \(rss) KiB")
        if !underSanitizer { #expect(rss < 64 * 1024, "RSS \(rss) KiB") }
        withExtendedLifetime(clients) {}
    }

    @Test func connectionsOverTheCapAreRefusedWithAnError() throws {
        let s = try Sandbox()
        try s.write("max-connections = 3\n", to: s.configFile)
        let d = try s.startDaemon()
        let held = try (0..<3).map { _ in try RawClient(s.socket) }
        try held[0].send(#"{"jsonrpc":"2.0","id":1,"method":"get"}"# + "\n")
        #expect(try held[0].line()?.contains(#""mode":"light""#) == true)
        let extra = try RawClient(s.socket)
        let refusal = try extra.line()
        #expect(refusal?.contains("too many connections (3, the limit is 3); try again later") == true, "\(refusal ?? "nil")")
        #expect(try extra.line() == nil)
        try d.waitForStderr("refusing connections: 3 clients are connected, the limit is 3")
        let r = try s.ctl("get")
        #expect(r.status != 0 && r.err.contains("too many connections"), "\(r)")
        withExtendedLifetime(held) {}
    }

    @Test func aFifoConfigIsRefusedAtStartAndOnReloadWithoutHanging() throws {
        let s = try Sandbox()
        try s.write("default-mode = \"dark\"\n", to: s.configFile)
        let d = try s.startDaemon()
        unlink(s.configFile)
        #expect(mkfifo(s.configFile, 0o600) == 0)
        kill(d.pid, SIGHUP)
        try d.waitForStderr("config.toml: is not a regular file (a FIFO, a device or a socket); only regular files are read; keeping the previous configuration")
        #expect(try s.ctl("get").out == "dark\n")   // alive, answering, the old config in force
        try d.end()
        let r = try s.run(Bin.daemon, ["--check"])
        #expect(r.status == 78 && r.err.contains("is not a regular file"), "\(r.err)")
        let again = try s.startDaemon()
        try again.waitForStderr("is not a regular file (a FIFO, a device or a socket); only regular files are read; using the defaults until it is fixed")
        #expect(try s.ctl("get").out == "light\n")  // the defaults' mode: answering, nothing hung
    }

    @Test func aDeeplyNestedConfigIsRefusedAtStartAndOnReloadWithoutACrash() throws {
        let s = try Sandbox()
        let nested = "x = " + String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000) + "\n"
        try s.write(nested, to: s.configFile)
        let start = try s.startDaemon()
        try start.waitForStderr("config.toml:1:69: arrays and inline tables nested deeper than 64 levels")
        #expect(try s.ctl("get").out == "light\n")
        try start.end()
        let check = try s.run(Bin.daemon, ["--check"])
        #expect(check.status == 78 && check.err.contains("nested deeper than 64 levels"))

        try s.write("default-mode = \"dark\"\n", to: s.configFile)
        #expect(try s.run(Bin.daemon, ["--check"]).out.hasPrefix("ok: config \(s.configFile)"))
        let d = try s.startDaemon()
        try s.write(Array(repeating: "a", count: 60_000).joined(separator: ".") + " = 1\n", to: s.configFile)
        kill(d.pid, SIGHUP)
        try d.waitForStderr("a dotted key of more than 64 parts; keeping the previous configuration")
        #expect(d.isRunning)
        #expect(try s.ctl("get").out == "dark\n")
    }

    @Test func aSocketElsewhereLeavesTheFilesBesideItAlone() throws {
        let s = try Sandbox()
        let project = s.root + "/project"
        try s.write("my notes\n", to: project + "/mode")
        let d = try s.start(Bin.daemon, ["--socket", project + "/sock"])
        try waitUntil("the daemon on \(project)/sock") { (try? s.ctl("--socket", project + "/sock", "set", "dark"))?.status == 0 }
        #expect(try String(contentsOfFile: project + "/mode", encoding: .utf8) == "my notes\n")
        try d.end()
        #expect(try String(contentsOfFile: project + "/mode", encoding: .utf8) == "my notes\n")
    }

    @Test func aLiveDatagramSocketAtThePathIsNotReplaced() throws {
        let s = try Sandbox()
        let path = s.root + "/dgram.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        try Descriptor.withAddress(path) { addr, len in #expect(bind(fd, addr, len) == 0) }
        let r = try s.run(Bin.daemon, ["--socket", path])
        #expect(r.status != 0 && r.err.contains("it is a socket of another type (datagram or seqpacket)"), "\(r.err)")
        var st = stat()
        #expect(lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK)
        // Still the same, live socket: a datagram sent to it arrives.
        let sender = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(sender) }
        let sent = try Descriptor.withAddress(path) { addr, len in sendto(sender, "x", 1, 0, addr, len) }
        #expect(sent == 1)
    }

    @Test func aPlantedHardLinkIsNotWrittenThroughAndLeftoversGo() throws {
        let s = try Sandbox()
        let dir = s.root + "/state/appearanced"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try s.write("left by a killed instance", to: dir + "/state.json.tmp-99999")
        let d = try s.startDaemon()
        #expect(!FileManager.default.fileExists(atPath: dir + "/state.json.tmp-99999"))
        let victim = s.root + "/victim"
        try s.write("precious\n", to: victim)
        #expect(link(victim, dir + "/state.json.tmp-\(d.pid)") == 0)
        #expect(try s.ctl("set", "dark").out == "dark\n")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        #expect(try String(contentsOfFile: s.stateFile, encoding: .utf8).contains(#""override":"dark""#))
    }
}

/// A flag shared with a thread.
final class Atomic<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}

/// `palette import` with careless or hostile files.
@Suite struct ImportHostileTests {
    static let plist = #"<?xml version="1.0"?><plist version="1.0"><dict><key>fill.bg</key><string>FFFFFF</string></dict></plist>"#

    @Test func aDeviceOrFifoIsRefusedNotReadForever() throws {
        let s = try Sandbox()
        try s.write(Self.plist, to: s.root + "/dark.plist")
        let r = try s.run(Bin.ctl, ["palette", "import", "--light", "/dev/zero", "--dark", s.root + "/dark.plist"])
        #expect(r.status == 66 && r.err.contains("cannot read /dev/zero: not a regular file"), "\(r.err)")
    }

    @Test func namesWithControlCharactersAreEscapedAndOutputIsReplacedNotWrittenThrough() throws {
        let s = try Sandbox()
        let light = s.root + "/light\nx = 1.plist"
        try s.write(Self.plist, to: light)
        try s.write(Self.plist.replacingOccurrences(of: "FFFFFF", with: "262626"), to: s.root + "/dark.plist")
        let victim = s.root + "/victim.toml"
        try s.write("precious\n", to: victim)
        let out = s.root + "/palette.toml"
        #expect(symlink(victim, out) == 0)
        let r = try s.run(Bin.ctl, ["palette", "import", "--light", light, "--dark", s.root + "/dark.plist", "-o", out, "--force"])
        #expect(r.status == 0, "\(r.err)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        let toml = try String(contentsOfFile: out, encoding: .utf8)
        #expect(toml.contains(#"#   light: \#(s.root)/light\u{a}x = 1.plist"#), "\(toml)")
        #expect(!toml.contains("\nx = 1"))
        // The written palette is one the daemon accepts.
        try s.write("palette = \"\(out)\"\n", to: s.configFile)
        #expect(try s.run(Bin.daemon, ["--check"]).status == 0)
    }
}
