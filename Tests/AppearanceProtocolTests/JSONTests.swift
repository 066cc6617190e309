import Testing
@testable import AppearanceProtocol

struct JSONTests {
    @Test(arguments: [
        #"null"#, #"true"#, #"false"#, #"0"#, #"-12"#, #"3.25e-2"#, #""a\"b""#, #"[]"#, #"{}"#,
        #"[1,"x",{"k":[null]}]"#, #"{"a":1,"b":{"c":"d"}}"#, #""\u00e9\ud83d\ude00""#,
    ])
    func roundTrips(text: String) throws {
        let v = try JSON.parse(text)
        #expect(try JSON.parse(v.bytes) == v)
    }

    @Test func numbersKeepTheirText() throws {
        #expect(try JSON.parse("12345678901234567890") == .number("12345678901234567890"))
        #expect(try JSON.parse("[ 1.50 ]").bytes == Array("[1.50]".utf8))
    }

    @Test func escapesAreWrittenSafely() throws {
        let s = JSON.string("a\"b\\c\nd\u{1}é")
        #expect(s.text == #""a\"b\\c\nd\u0001é""#)
        #expect(try JSON.parse(s.bytes) == s)
        // A string with nothing to escape is copied whole; one escape anywhere takes the careful path.
        #expect(JSON.string("plain é ✓ ~").text == "\"plain é ✓ ~\"")
        #expect(JSON.string("x\u{1f}").text == #""x\u001f""#)
        #expect(JSON.string("\"").text == #""\"""#)
        #expect(JSON.string("é\\").text == #""é\\""#)
    }

    @Test(arguments: [
        ("", "unexpected end of input"), ("{", "expected a string key"), (#"{"a"}"#, "expected ':'"),
        (#"{"a":1,}"#, "expected a string key"), ("[1,]", "unexpected character"), ("01", "unexpected data"),
        ("1.", "invalid number"), ("-", "invalid number"), ("tru", "invalid literal"), (#""abc"#, "unterminated string"),
        ("\"a\u{1}\"", "control character"), (#""\x""#, "invalid escape"), (#""\ud800""#, "unpaired surrogate"),
        (#"{"a":1,"a":2}"#, "duplicate key"), ("[1] 2", "unexpected data"),
    ])
    func rejects(text: String, message: String) {
        #expect {
            try JSON.parse(text)
        } throws: { error in
            (error as? JSONError)?.message.contains(message) == true
        }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONError.self) { try JSON.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test func depthIsBounded() throws {
        let ok = String(repeating: "[", count: JSON.maxDepth - 1) + String(repeating: "]", count: JSON.maxDepth - 1)
        _ = try JSON.parse(ok)
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONError.self) { try JSON.parse(deep) }
    }

    /// Duplicate keys are refused in small objects (a look back) and large ones (a hash set from 16 keys on),
    /// wherever the repeat is.
    @Test(arguments: [1, 2, 15, 16, 17, 40])
    func duplicateKeysAtEverySize(count: Int) throws {
        let keys = (0..<count).map { "\"k\($0)\":\($0)" }
        #expect(try JSON.parse("{" + keys.joined(separator: ",") + "}")["k\(count - 1)"]?.intValue == count - 1)
        for repeated in Set([0, count / 2, count - 1]) {
            let text = "{" + keys.joined(separator: ",") + ",\"k\(repeated)\":0}"
            #expect(throws: JSONError.self, "\(count) keys, k\(repeated) again") { try JSON.parse(text) }
        }
    }
}
