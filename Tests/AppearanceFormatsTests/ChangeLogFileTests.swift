import AppearanceCore
import AppearanceFormats
import AppearanceProtocol
import Testing

/// log.jsonl's codec: what `encode` writes `parse` reads back; the newest thousand are kept; any line that is
/// not an entry makes the file invalid with words naming the line, except a last line cut short; nothing in
/// a file traps.
struct ChangeLogFileTests {
    static func parse(_ text: String) -> Result<ChangeLogFile.Loaded, ChangeLogFile.Invalid> { ChangeLogFile.parse(Array(text.utf8)) }

    static func entry(_ n: Int, app: String? = nil) -> LogEntry {
        LogEntry(time: 1_780_000_000 + Int64(n), from: n % 2 == 0 ? .light : .dark, to: n % 2 == 0 ? .dark : .light,
                 source: .override, cause: "override set by appearancectl (pid \(n))", app: app)
    }

    static func problem(_ text: String) -> String? {
        guard case .failure(let invalid) = parse(text) else { return nil }
        return invalid.problem
    }

    @Test func aLineIsTheEntryAsLogSendsItAndAnAppOnlyWhenThereIsOne() {
        let global = LogEntry(time: 5, from: nil, to: .dark, source: .system, cause: "start: dark")
        #expect(String(decoding: ChangeLogFile.line(global), as: UTF8.self)
                == #"{"time":5,"from":null,"to":"dark","source":"system","cause":"start: dark"}"# + "\n")
        let app = LogEntry(time: 6, from: .dark, to: .light, source: .app, cause: "app override kitty: light,", app: "kitty")
        #expect(String(decoding: ChangeLogFile.line(app), as: UTF8.self)
                == #"{"time":6,"from":"dark","to":"light","source":"app","app":"kitty","cause":"app override kitty: light,"}"# + "\n")
    }

    @Test func whatIsWrittenReadsBack() throws {
        let entries = [LogEntry(time: 0, from: nil, to: .light, source: nil, cause: "")] + (1..<50).map { Self.entry($0, app: $0 % 3 == 0 ? "org.example.App\($0)" : nil) }
        let loaded = try ChangeLogFile.parse(ChangeLogFile.encode(entries)).get()
        #expect(loaded == ChangeLogFile.Loaded(entries: entries, lines: 50, torn: false, needsRewrite: false))
        #expect(try ChangeLogFile.parse([]).get() == ChangeLogFile.Loaded(entries: [], lines: 0, torn: false, needsRewrite: false))
    }

    /// The longest line there is: the latest time, the longest source and app id, the longest cause (as JSON:
    /// each control character takes six bytes). It is exactly `longestLine`, and it reads back.
    @Test func theLongestLineIsTheBoundAndReadsBack() throws {
        let cause = String(repeating: "\u{1}", count: ReplyBounds.logCause / 6) + String(repeating: "c", count: ReplyBounds.logCause % 6)
        let e = LogEntry(time: ChangeLogFile.latestTime, from: .light, to: .light, source: .temporary, cause: cause,
                         app: String(repeating: "a", count: StateFile.maxAppIDBytes))
        let line = ChangeLogFile.line(e)
        #expect(line.count == ChangeLogFile.longestLine)
        #expect(try ChangeLogFile.parse(line).get().entries == [e])
        #expect(ChangeLogFile.largestWritten == ChangeLogFile.rewriteAfter * line.count)
        // A time the file cannot hold is written at its nearest end, so what is written reads back.
        var late = e
        late.time = .max
        #expect(try ChangeLogFile.parse(ChangeLogFile.line(late)).get().entries[0].time == ChangeLogFile.latestTime)
    }

    /// A folded entry's line stands for the line before it; `changes` round-trips.
    @Test func aReplacingLineStandsForTheOneBefore() throws {
        var folded = Self.entry(3)
        folded.changes = 5
        let bytes = ChangeLogFile.line(Self.entry(1)) + ChangeLogFile.line(Self.entry(2)) + ChangeLogFile.line(folded, replacing: true)
        let loaded = try ChangeLogFile.parse(bytes).get()
        #expect(loaded.entries == [Self.entry(1), folded] && loaded.lines == 3)
        #expect(String(decoding: ChangeLogFile.line(folded, replacing: true), as: UTF8.self).hasSuffix(#""changes":5,"replaces":true}"# + "\n"))
        #expect(Self.problem(#"{"time":1,"from":null,"to":"dark","source":null,"cause":"","changes":0}"# + "\n")?.contains("invalid \"changes\" 0") == true)
    }

    @Test func theNewestThousandAreKept() throws {
        let entries = (0..<2_500).map { Self.entry($0) }
        let loaded = try ChangeLogFile.parse(entries.flatMap { ChangeLogFile.line($0) }).get()
        #expect(loaded.entries == Array(entries.suffix(ChangeLogFile.kept)))
        #expect(loaded.lines == 2_500 && loaded.needsRewrite)  // more lines than the daemon lets the file hold
        let written = ChangeLogFile.encode(entries)
        #expect(try ChangeLogFile.parse(written).get() == ChangeLogFile.Loaded(entries: Array(entries.suffix(1_000)), lines: 1_000,
                                                                               torn: false, needsRewrite: false))
        #expect(try !ChangeLogFile.parse(ChangeLogFile.encode(entries.prefix(ChangeLogFile.rewriteAfter))).get().needsRewrite)
    }

    /// A crash or a full disk in the middle of an append leaves a line cut short at the end: it is left out,
    /// the rest is kept, and the file is to be written again.
    @Test func aLastLineCutShortIsLeftOutAndTheRestKept() throws {
        let whole = Array(ChangeLogFile.encode([Self.entry(1), Self.entry(2)]))
        let cut = ChangeLogFile.line(Self.entry(3)).dropLast(20)
        let loaded = try ChangeLogFile.parse(whole + cut).get()
        #expect(loaded == ChangeLogFile.Loaded(entries: [Self.entry(1), Self.entry(2)], lines: 2, torn: true, needsRewrite: true))
        #expect(try ChangeLogFile.parse(Array(#"{"time":1"#.utf8)).get().torn)
    }

    /// A whole last line without its newline is kept; the next append must not run on into it.
    @Test func aLastLineWithoutItsNewlineIsKeptAndTheFileRewritten() throws {
        let loaded = try ChangeLogFile.parse(ChangeLogFile.encode([Self.entry(1), Self.entry(2)]).dropLast()).get()
        #expect(loaded == ChangeLogFile.Loaded(entries: [Self.entry(1), Self.entry(2)], lines: 2, torn: false, needsRewrite: true))
    }

    @Test func fieldsTheDaemonDoesNotWriteAreIgnored() throws {
        let loaded = try Self.parse(#"{"time":7,"to":"dark","cause":"x","later":{"a":[1]},"source":null,"app":null}"# + "\n").get()
        #expect(loaded.entries == [LogEntry(time: 7, from: nil, to: .dark, source: nil, cause: "x")])
    }

    /// Each line that is not an entry makes the file invalid, named by its number and what is wrong with it:
    /// times that do not fit (2^63, negative, fractional, after 9999), modes, sources and app ids that are not
    /// ones, missing fields, invalid UTF-8, a line longer than any the daemon writes, an empty line.
    @Test(arguments: [
        (#"{"time":9223372036854775808,"to":"dark","cause":"x"}"#, #""time" 9223372036854775808 is out of range"#),
        (#"{"time":18446744073709551616,"to":"dark","cause":"x"}"#, "is out of range"),
        (#"{"time":-1,"to":"dark","cause":"x"}"#, #""time" -1 is out of range"#),
        (#"{"time":1.5,"to":"dark","cause":"x"}"#, "is out of range"),
        (#"{"time":1e3,"to":"dark","cause":"x"}"#, "is out of range"),
        (#"{"time":253402300800,"to":"dark","cause":"x"}"#, "0 to 253402300799"),
        (#"{"time":"1","to":"dark","cause":"x"}"#, #"no "time""#),
        (#"{"to":"dark","cause":"x"}"#, #"no "time""#),
        (#"{"time":1,"to":"blue","cause":"x"}"#, #"invalid "to" "blue""#),
        (#"{"time":1,"cause":"x"}"#, #"no "to""#),
        (#"{"time":1,"from":3,"to":"dark","cause":"x"}"#, #"invalid "from" 3"#),
        (#"{"time":1,"to":"dark","source":"moon","cause":"x"}"#, #"invalid "source" "moon""#),
        (#"{"time":1,"to":"dark","app":".hidden","cause":"x"}"#, #"invalid "app" ".hidden""#),
        (#"{"time":1,"to":"dark","app":7,"cause":"x"}"#, #"invalid "app" 7"#),
        (#"{"time":1,"to":"dark"}"#, #"no "cause""#),
        (#"{"time":1,"to":"dark","cause":null}"#, #"no "cause""#),
        (#"[1,2]"#, "not a JSON object"),
        ("garbage", "not JSON"),
        ("", "not JSON"),
    ])
    func aLineThatIsNoEntryMakesTheFileInvalid(_ line: String, _ expected: String) throws {
        let text = String(decoding: ChangeLogFile.line(Self.entry(1)), as: UTF8.self) + line + "\n"
        let problem = try #require(Self.problem(text), "\(line)")
        #expect(problem.hasPrefix("is not a valid change log: line 2: "), "\(problem)")
        #expect(problem.contains(expected), "\(problem)")
    }

    @Test func invalidUTF8InAStringMakesTheFileInvalid() throws {
        let bytes = Array(#"{"time":1,"to":"dark","cause":""#.utf8) + [0xFF, 0xFE] + Array("\"}\n".utf8)
        guard case .failure(let invalid) = ChangeLogFile.parse(bytes) else { Issue.record("parsed"); return }
        #expect(invalid.problem.contains("line 1: not JSON") && invalid.problem.contains("UTF-8"), "\(invalid.problem)")
    }

    @Test func aLineLongerThanAnyTheDaemonWritesMakesTheFileInvalid() throws {
        let huge = #"{"time":1,"to":"dark","cause":""# + String(repeating: "x", count: ChangeLogFile.longestLine) + "\"}\n"
        let problem = try #require(Self.problem(huge))
        #expect(problem.contains("line 1: \(huge.utf8.count) bytes, and appearanced writes \(ChangeLogFile.longestLine) at most"), "\(problem)")
        // A cause longer than `log` replies carry, in a line that is not too long without an app id.
        let long = #"{"time":1,"to":"dark","cause":""# + String(repeating: "x", count: ReplyBounds.logCause + 1) + "\"}\n"
        #expect(try #require(Self.problem(long)).contains("\"cause\" is longer than 4096 bytes"))
    }

    @Test func aFileLargerThanAnyTheDaemonWritesIsInvalid() throws {
        let bytes = [UInt8](repeating: 0x0A, count: ChangeLogFile.largestWritten + 1)
        guard case .failure(let invalid) = ChangeLogFile.parse(bytes) else { Issue.record("parsed"); return }
        #expect(invalid.problem == "is not a valid change log: \(ChangeLogFile.largestWritten + 1) bytes, and appearanced writes 8884000 at most")
    }

    /// Garbage at the end that is not how the daemon's lines begin is not a cut append: the file is invalid.
    @Test func garbageWithoutANewlineIsInvalidNotACutLine() throws {
        let problem = try #require(Self.problem(String(decoding: ChangeLogFile.line(Self.entry(1)), as: UTF8.self) + "\u{0}\u{0}junk"))
        #expect(problem.hasPrefix("is not a valid change log: line 2: not JSON"), "\(problem)")
    }

    /// Bytes of every kind, in every length up to a few lines: the reader answers, never traps.
    @Test func noContentTraps() {
        var g = SplitMix(seed: 42)
        let pieces: [[UInt8]] = [Array(#"{"time":"#.utf8), Array(#""to":"dark""#.utf8), Array(#""cause":"x"}"#.utf8), [0x0A], [0xFF],
                                 Array("9223372036854775808".utf8), [0x2C], Array("\\u0000".utf8), [0x22], [0x7B], [0x7D], [0x00]]
        for _ in 0..<5_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(g.next() % 12) { bytes += pieces[Int(g.next() % UInt64(pieces.count))] }
            _ = ChangeLogFile.parse(bytes)
        }
    }
}

/// A small deterministic generator: the same bytes on every run.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
