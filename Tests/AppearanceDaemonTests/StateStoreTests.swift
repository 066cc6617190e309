import AppearanceCore
import AppearanceProtocol
import Testing
@testable import AppearanceDaemon
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// state.json as a file: what the daemon saves it loads back, at the caps; a file that cannot be used is kept
/// aside; notes name the file (AppearanceFormats' StateFileTests test the codec itself).
struct StateStoreTests {
    /// A distinct valid app id of exactly `length` bytes.
    static func appID(_ n: Int, length: Int = 255) -> String {
        let head = "org.example.app\(n)."
        return head + String(repeating: "x", count: length - head.utf8.count)
    }

    static func read(_ path: String) -> String? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while case let n = fread(&buffer, 1, buffer.count, f), n > 0 { bytes += buffer[..<n] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The largest state the daemon can write: every app override it allows, each id at the longest, and a
    /// temporary override with the latest `until` there is. It reads it back whole.
    @Test func theLargestStateRoundTrips() throws {
        let dir = TemporaryDirectory()
        let store = StateStore(path: dir.path + "/state.json")
        var apps: [String: Mode] = [:]
        for n in 0..<AppID.maxOverrides { apps[Self.appID(n)] = n % 2 == 0 ? .light : .dark }
        let saved = StateStore.Saved(override: .system, temporary: TemporaryOverride(mode: .light, expiry: .at(TemporaryOverride.untilRange.upperBound)),
                                     apps: apps)
        try store.save(saved)
        defer { unlink(store.path) }
        let size = try #require(Self.read(store.path)).utf8.count
        #expect(size > 1_000_000 && size <= StateStore.readLimit / 2, "\(size) bytes")
                #expect(store.load() == .loaded(saved))
    }

    /// 2,300 ids of 20 characters (69 KB, over the old 64 KiB read limit): a restart keeps them all.
    @Test func moreThan64KiBOfAppOverridesRoundTrip() throws {
        let dir = TemporaryDirectory()
        let store = StateStore(path: dir.path + "/state.json")
        var apps: [String: Mode] = [:]
        for n in 0..<2300 { apps[Self.appID(n, length: 20)] = .dark }
        let saved = StateStore.Saved(override: .light, apps: apps)
        try store.save(saved)
        defer { unlink(store.path) }
        #expect(store.load() == .loaded(saved))
    }

    /// `until` that does not fit (2^63, beyond 64 bits, negative, fractional, after the year 9999): the file
    /// is corrupt, reported and moved aside; it used to stop the daemon at every start (a trapping Int64()).
    @Test(arguments: ["9223372036854775808", "18446744073709551616", "-1", "-9223372036854775808", "1.5", "1e9",
                      "253402300800", "9223372036854775807"])
    func untilOutOfRangeDiscardsTheFile(_ until: String) throws {
        let dir = TemporaryDirectory()
        let path = dir.file("state.json", #"{"override":"dark","temporary":{"mode":"dark","until":\#(until)}}"#)
        let result = StateStore(path: path).load()
        guard case .discarded(let problem, let kept) = result else {
            Issue.record("\(until): \(result)")
            return
        }
        #expect(problem.hasPrefix(path), "\(problem)")
        #expect(problem.hasPrefix(path + " is not a valid state file: "), "\(problem)")
        #expect(problem.contains(#""until" \#(until)"#), "\(problem)")
        #expect(problem.contains("0 to 253402300799"), "\(problem)")
        #expect(kept == path + ".corrupt")
        #expect(Self.read(path) == nil)
        if let kept { unlink(kept) }
    }

    /// What the codec leaves out of a file written by hand (StateFileTests.capsApplyOnParse covers which and
    /// why) is said with the file's path, and the file is kept: what was usable in it counts.
    @Test func whatALoadLeavesOutIsSaidWithThePathAndTheFileKept() throws {
        let dir = TemporaryDirectory()
        let members = (0..<(AppID.maxOverrides + 1)).map { #""\#(Self.appID($0, length: 30))":"dark""# } + [#""a b":"light""#]
        let path = dir.file("state.json", #"{"override":"system","apps":{\#(members.joined(separator: ","))}}"#)
        let result = StateStore(path: path).load()
        guard case .loaded(let saved) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(saved.apps.count == AppID.maxOverrides)
        let notes = saved.dropped.joined(separator: "\n")
        #expect(saved.dropped.count == 2, "\(notes)")
        #expect(notes.contains(#""a b": not a valid app id"#) && notes.contains("dropped 1 app overrides over the limit of 4096"), "\(notes)")
        #expect(saved.dropped.allSatisfy { $0.hasPrefix(path + ": ") }, "\(notes)")
        #expect(Self.read(path) != nil)
    }

    @Test func aFileOverTheReadLimitIsDiscarded() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("state.json", #"{"override":"dark"}"# + String(repeating: " ", count: StateStore.readLimit))
        let result = StateStore(path: path).load()
        guard case .discarded(let problem, let kept) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(problem.contains("is not a valid state file: larger than \(StateStore.readLimit) bytes"), "\(problem)")
        if let kept { unlink(kept) }
    }
}
