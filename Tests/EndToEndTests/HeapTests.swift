import Foundation
import Testing

/// The daemon's heap stays one heap (docs/decisions.md, "The heap after a flood of writes"): glibc's malloc,
/// left to itself, makes a heap (an arena) for each thread that allocates, up to eight per CPU, and each keeps
/// what a burst left in it; appearanced bounds it to one at start. What is checked is the bound itself, not
/// resident memory, which depends on the machine (bench/bus_toggles.py measures that).
@Suite struct HeapTests {
    /// glibc's heaps besides the main one, as /proc/PID/maps shows them: each a reservation of 64 MiB
    /// aligned to 64 MiB, anonymous, its used part read-write and the rest without access.
    static func extraHeaps(_ pid: pid_t) throws -> Int {
        let size: UInt64 = 64 << 20
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let rows: [(start: UInt64, end: UInt64, perms: Substring, anonymous: Bool)] = maps.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let range = fields.first?.split(separator: "-") ?? []
            guard fields.count >= 5, range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16)
            else { return nil }
            return (start, end, fields[1], fields.count == 5)
        }
        var heaps = 0
        for (i, r) in rows.enumerated() where r.anonymous && r.perms == "rw-p" && r.start % size == 0 {
            var end = r.end
            if i + 1 < rows.count, rows[i + 1].start == r.end, rows[i + 1].perms == "---p", rows[i + 1].anonymous {
                end = rows[i + 1].end
            }
            if end - r.start == size { heaps += 1 }
        }
        return heaps
    }

    /// 2,000 Toggles sent over D-Bus without waiting, then one more that is waited for (answered once every
    /// one before it is durable): the daemon's threads (the bus's reader, Dispatch's workers for the bus's,
    /// the daemon's, the save's and the change log's queues) all allocate from the one heap, before and after.
    @Test func theDaemonKeepsOneHeapThroughAFloodOfDBusToggles() throws {
        let served = try AppearanceServiceTests.Served()
        let s = served.sandbox
        #expect(try Self.extraHeaps(served.daemon.pid) == 0)
        let before = try s.ctl("get").out
        let flood = try Child("/usr/bin/python3", ["-c", """
            bus, sys = __import__("dbus.bus").bus, __import__("sys")
            b = bus.BusConnection(sys.argv[1])
            for i in range(2000):
                b.call_async(sys.argv[2], sys.argv[3], sys.argv[2], "Toggle", "a{sv}", [{}], None, None)
            b.call_blocking(sys.argv[2], sys.argv[3], sys.argv[2], "Toggle", "a{sv}", [{}], timeout=120)
            print("answered", flush=True)
            """, served.bus.address, AppearanceServiceTests.name, AppearanceServiceTests.path], env: s.env)
        defer { flood.stop(SIGKILL); _ = try? flood.waitForExit() }
        #expect(try flood.waitForLines(1, timeout: 120) == ["answered"], "\(flood.stderr)")
        // 2,001 toggles: the other mode.
        #expect(try s.ctl("get").out == (before == "dark\n" ? "light\n" : "dark\n"))
        #expect(try Self.extraHeaps(served.daemon.pid) == 0)
    }
}
