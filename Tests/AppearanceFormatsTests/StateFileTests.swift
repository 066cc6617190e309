import AppearanceCore
import AppearanceFormats
import AppearanceProtocol
import Testing

/// state.json's codec: what `encode` writes `parse` reads back, at the caps; values out of range make an
/// invalid file; what is merely unusable is left out and said.
struct StateFileTests {
    /// A distinct valid app id of exactly `length` bytes.
    static func appID(_ n: Int, length: Int = StateFile.maxAppIDBytes) -> String {
        let head = "org.example.app\(n)."
        return head + String(repeating: "x", count: length - head.utf8.count)
    }

    static func parse(_ text: String) -> Result<StateFile.Saved, StateFile.Invalid> { StateFile.parse(Array(text.utf8)) }

    @Test func theIDLengthCapIsAppIDs() {
        #expect(AppID.isValid(String(repeating: "a", count: StateFile.maxAppIDBytes)))
        #expect(!AppID.isValid(String(repeating: "a", count: StateFile.maxAppIDBytes + 1)))
    }

    @Test func encodeWritesTheKeysInOrderAndTheAppsSorted() {
        #expect(StateFile.encode(StateFile.Saved(override: .dark)) == Array(#"{"override":"dark"}"#.utf8) + [0x0A])
        let saved = StateFile.Saved(override: .system, temporary: TemporaryOverride(mode: .light, expiry: .nextChange),
                                    apps: ["b": .dark, "a": .light], dropped: ["never written"])
        #expect(String(decoding: StateFile.encode(saved), as: UTF8.self)
                == #"{"override":"system","temporary":{"mode":"light","until":"next"},"apps":{"a":"light","b":"dark"}}"# + "\n")
    }

    /// The largest state the daemon can write: every app override it allows, each id at the longest, and a
    /// temporary override with the latest `until` there is. It is at most `largestWritten` and reads back whole.
    @Test func theLargestStateRoundTrips() throws {
        var apps: [String: Mode] = [:]
        for n in 0..<AppID.maxOverrides { apps[Self.appID(n)] = n % 2 == 0 ? .light : .dark }
        let saved = StateFile.Saved(override: .system, temporary: TemporaryOverride(mode: .light, expiry: .at(StateFile.latestUntil)),
                                    apps: apps, nextChange: NextChange(time: StateFile.latestUntil, mode: .light,
                                                                       postponedBy: NextChange.maxPostpone, skipped: false))
        let bytes = StateFile.encode(saved)
        #expect(bytes.count > 1_000_000 && bytes.count <= StateFile.largestWritten, "\(bytes.count) bytes")
        #expect(try StateFile.parse(bytes).get() == saved)
    }

    /// The word on the next change reads back; one the daemon would not write is left out and said.
    @Test func theNextChangeRoundTripsAndABadOneIsDropped() throws {
        let saved = StateFile.Saved(override: .dark, nextChange: NextChange(time: 1_795_000_000, mode: .dark, postponedBy: 1800, skipped: true))
        #expect(String(decoding: StateFile.encode(saved), as: UTF8.self)
                == #"{"override":"dark","next":{"time":1795000000,"mode":"dark","postpone":1800,"skip":true}}"# + "\n")
        #expect(try StateFile.parse(StateFile.encode(saved)).get() == saved)
        for bad in [#"{"time":1,"mode":"grey","postpone":0,"skip":true}"#, #"{"time":1,"mode":"dark","postpone":90000,"skip":false}"#,
                    #"{"time":1,"mode":"dark","postpone":0,"skip":false}"#, #""soon""#] {
            let loaded = try Self.parse(#"{"override":"dark","next":\#(bad)}"#).get()
            #expect(loaded.nextChange == nil && loaded.dropped.first?.hasPrefix(#"dropped "next""#) == true, "\(bad): \(loaded)")
        }
    }

    /// `until` that does not fit (2^63, beyond 64 bits, negative, fractional, after the year 9999): the file is
    /// invalid, with words that follow its path.
    @Test(arguments: ["9223372036854775808", "18446744073709551616", "-1", "-9223372036854775808", "1.5", "1e9",
                      "253402300800", "9223372036854775807"])
    func untilOutOfRangeIsInvalid(_ until: String) throws {
        let result = Self.parse(#"{"override":"dark","temporary":{"mode":"dark","until":\#(until)}}"#)
        guard case .failure(let invalid) = result else {
            Issue.record("\(until): \(result)")
            return
        }
        #expect(invalid.problem.hasPrefix("is not a valid state file: "), "\(invalid.problem)")
        #expect(invalid.problem.contains(#""until" \#(until)"#), "\(invalid.problem)")
        #expect(invalid.problem.contains("0 to 253402300799"), "\(invalid.problem)")
    }

    @Test(arguments: [Int64(0), 1_780_000_000, 253_402_300_799])
    func untilInRangeParses(_ until: Int64) throws {
        let expected = StateFile.Saved(override: .dark, temporary: TemporaryOverride(mode: .light, expiry: .at(until)))
        #expect(try Self.parse(#"{"override":"dark","temporary":{"mode":"light","until":\#(until)}}"#).get() == expected)
    }

    @Test(arguments: [
        ("", "is not a valid state file: not JSON"),
        (#"{"override":"blue"}"#, #"is not a valid state file: "override" is "blue"; expected {"override": "system"|"light"|"dark", …}"#),
        (#"{"apps":{}}"#, #"is not a valid state file: no "override"; expected"#),
        (#"[1]"#, #"is not a valid state file: no "override""#),
    ])
    func invalidFiles(text: String, problem: String) {
        let result = Self.parse(text)
        guard case .failure(let invalid) = result else {
            Issue.record("\(text.debugDescription): \(result)")
            return
        }
        #expect(invalid.problem.hasPrefix(problem), "\(invalid.problem)")
    }

    /// More app overrides than the cap, and ids or modes that are not valid, in a file written by hand: the
    /// valid ones are kept up to the cap in sorted order, and what was left out is said.
    @Test func capsApplyOnParse() throws {
        let count = AppID.maxOverrides + 3
        var members = (0..<count).map { #""\#(Self.appID($0, length: 30))":"dark""# }
        members += [#"".hidden":"dark""#, #""a b":"light""#, #""\#(String(repeating: "z", count: 256))":"dark""#,
                    #""kitty":"blue""#, #""foot":null"#]
        let saved = try Self.parse(#"{"override":"system","apps":{\#(members.joined(separator: ","))}}"#).get()
        let ids = (0..<count).map { Self.appID($0, length: 30) }.sorted()
        #expect(saved.apps.count == AppID.maxOverrides)
        #expect(saved.apps.keys.sorted() == Array(ids.prefix(AppID.maxOverrides)))
        let notes = saved.dropped.joined(separator: "\n")
        #expect(saved.dropped.count == 6, "\(notes)")
        #expect(notes.contains(#""\#(String(repeating: "z", count: 79))…: not a valid app id"#), "\(notes)")
        #expect(notes.contains(#"".hidden": not a valid app id"#), "\(notes)")
        #expect(notes.contains(#""a b": not a valid app id"#), "\(notes)")
        #expect(notes.contains(#""kitty": invalid mode "blue", expected "light" or "dark""#), "\(notes)")
        #expect(notes.contains(#""foot": invalid mode null, expected "light" or "dark""#), "\(notes)")
        #expect(notes.contains("3 app overrides over the limit of 4096"), "\(notes)")
        for id in ids.suffix(3) { #expect(notes.contains(id), "\(id)") }
        #expect(saved.dropped.allSatisfy { $0.hasPrefix("dropped ") }, "\(notes)")
    }

    /// A temporary override that is not readable (unknown mode, until of the wrong type) is dropped and said.
    @Test(arguments: [#"{"mode":"blue","until":"next"}"#, #"{"mode":"dark","until":true}"#, #""soon""#])
    func unreadableTemporaryIsDroppedAndSaid(temporary: String) throws {
        let saved = try Self.parse(#"{"override":"dark","temporary":\#(temporary)}"#).get()
        #expect(saved == StateFile.Saved(override: .dark, dropped: saved.dropped))
        #expect(saved.dropped.count == 1 && saved.dropped[0].contains("temporary override"), "\(saved.dropped)")
    }

    @Test func appsOfTheWrongTypeAreDroppedAndSaid() throws {
        let saved = try Self.parse(#"{"override":"light","apps":["kitty"]}"#).get()
        #expect(saved == StateFile.Saved(override: .light, dropped: saved.dropped))
        #expect(saved.dropped == [#"dropped "apps" ["kitty"]: expected an object of app id → "light"|"dark""#])
    }
}
