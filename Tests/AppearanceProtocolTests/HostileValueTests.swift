import AppearanceCore
import Testing
@testable import AppearanceProtocol

/// Values a client or a state file can send that do not fit: refused with an error naming them, never a trap.
struct HostileValueTests {
    func decode(_ s: String) throws(RequestFailure) -> Request { try Request.decode(Array(s.utf8)) }

    /// Every parameter of every method, given as null: a type error naming the parameter and what it takes.
    /// (A null used to mean "absent", so `"app": null` set everyone's mode and `"for": null` a permanent one.)
    static let nullParams: [(method: String, key: String, others: String, expected: String)] = [
        ("get", "app", "", "an app id"),
        ("set", "override", "", #""light", "dark" or "system""#),
        ("set", "until", #""override":"dark","#, #""next""#),
        ("set", "for", #""override":"dark","#, "whole seconds from 1 to 31622400"),
        ("set", "app", #""override":"dark","#, "an app id"),
        ("toggle", "until", "", #""next""#),
        ("toggle", "for", "", "whole seconds from 1 to 31622400"),
        ("toggle", "app", "", "an app id"),
        ("log", "limit", "", "a positive whole number"),
        ("subscribe", "traits", "", "true or false"),
        ("subscribe", "palette", "", "true or false"),
        ("subscribe", "app", "", "an app id"),
        ("resolve", "tokens", "", "a non-empty array of strings"),
        ("resolve", "mode", #""tokens":["a"],"#, #""light" or "dark""#),
        ("resolve", "contrast", #""tokens":["a"],"#, #""normal" or "high""#),
        ("resolve", "app", #""tokens":["a"],"#, "an app id"),
        ("palette", "mode", "", #""light" or "dark""#),
        ("palette", "contrast", "", #""normal" or "high""#),
        ("palette", "app", "", "an app id"),
    ]

    @Test(arguments: nullParams.indices)
    func nullParamIsATypeError(_ i: Int) {
        let (method, key, others, expected) = Self.nullParams[i]
        let line = #"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":{\#(others)"\#(key)":null}}"#
        do {
            let r = try decode(line)
            Issue.record("accepted \(line) as \(r)")
        } catch {
            #expect(error.error.code == ErrorCode.invalidParams.rawValue, "\(line)")
            #expect(error.error.message.hasPrefix(#"\#(method): "\#(key)" is null, expected "#), "\(error.error.message)")
            #expect(error.error.message.contains(expected), "\(error.error.message)")
            #expect(error.id == .int(1))
        }
    }

    /// `"params": null` itself is no params (JSON-RPC lets a client leave params out).
    @Test(arguments: ["get", "toggle", "subscribe", "status", "palette", "log", "apps"])
    func wholeParamsNullIsNoParams(_ method: String) throws {
        let r = try decode(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":null}"#)
        #expect(r.call.method.rawValue == method)
        #expect(r.app == nil)
    }

    /// `until` of a temporary override, in a state object or state file: a whole number of seconds from 1970
    /// to the end of the year 9999, or "next"; anything else is not a temporary override (nil, no trap).
    @Test(arguments: ["9223372036854775808", "9223372036854775807", "18446744073709551616",
                      "99999999999999999999999999", "-1", "-9223372036854775809", "1.5", "1e3", "1.0",
                      "253402300800", #""1000""#, "true", "null"])
    func temporaryUntilOutOfRangeIsRefused(_ until: String) throws {
        let json = try JSON.parse(#"{"mode":"dark","until":\#(until)}"#)
        #expect(TemporaryOverride(json: json) == nil)
        #expect(TemporaryOverride.Expiry(json: json["until"]!) == nil)
    }

    @Test(arguments: [("0", Int64(0)), ("1780000000", 1_780_000_000), ("253402300799", 253_402_300_799)])
    func temporaryUntilInRangeIsRead(_ until: String, _ value: Int64) throws {
        let t = try #require(TemporaryOverride(json: try JSON.parse(#"{"mode":"light","until":\#(until)}"#)))
        #expect(t == TemporaryOverride(mode: .light, expiry: .at(value)))
        #expect(try JSON.parse(t.json.bytes) == t.json)
        #expect(TemporaryOverride(json: t.json) == t)
    }

    /// A log entry's time that does not fit in 64 bits is not an entry (it used to trap).
    @Test(arguments: ["9223372036854775808", "18446744073709551615", "-1", "2.5"])
    func logEntryTimeOutOfRangeIsRefused(_ time: String) throws {
        #expect(LogEntry(json: try JSON.parse(#"{"time":\#(time),"from":null,"to":"dark","source":null,"cause":"x"}"#)) == nil)
    }

    /// A Lifetime or log limit a client builds out of range encodes without trapping; the daemon refuses it.
    @Test func outOfRangeCallsEncodeAndAreRefused() {
        for call in [Call.setTemporary(.dark, .seconds(-5)), .toggleTemporary(.seconds(Int64.min)), .log(limit: -1), .log(limit: Int.min)] {
            let line = Request(id: .int(1), call: call).line
            #expect(throws: RequestFailure.self, "\(call)") { try Request.decode(line.dropLast()) }
        }
    }
}
