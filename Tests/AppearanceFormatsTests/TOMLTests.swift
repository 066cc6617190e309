import AppearanceFormats
import Testing

/// A compact rendering of a parsed document: `{a: 1, b: "x", c: [1, 2.5], d: {e: true}}`.
func render(_ table: TOMLTable) -> String {
    "{" + table.entries.map { "\($0.key): \(render($0.value))" }.joined(separator: ", ") + "}"
}

func render(_ value: TOMLValue) -> String {
    switch value.kind {
    case .string(let s): s.debugDescription
    case .integer(let i): "\(i)"
    case .float(let d): "\(d)"
    case .boolean(let b): "\(b)"
    case .array(let a): "[" + a.map(render).joined(separator: ", ") + "]"
    case .table(let t): render(t)
    }
}

struct TOMLTests {
    static let valid: [(String, String)] = [
        // Comments, blank lines, line endings
        ("", "{}"),
        ("# only a comment\n\n   # another one\n", "{}"),
        ("a = 1", "{a: 1}"),
        ("a = 1 # comment\r\nb = 2\r\n\n", "{a: 1, b: 2}"),
        ("\t a\t=\t1\t\n", "{a: 1}"),
        ("\u{FEFF}a = 1\n", "{a: 1}"),
        ("# café ☕\nname = \"☕ é\" # ☕\n", "{name: \"☕ é\"}"),
        // Keys
        ("bare_key-1 = 1\n\"quoted key\" = 2\n'literal \"key\"' = 3\n\"\" = 4\n1234 = 5\n\"é\\u0041\" = 6",
         "{bare_key-1: 1, quoted key: 2, literal \"key\": 3, : 4, 1234: 5, éA: 6}"),
        ("a.b.c = 1\na . \"d\" . 'e' = 2\nx.y = 3\n", "{a: {b: {c: 1}, d: {e: 2}}, x: {y: 3}}"),
        ("3.14 = 1", "{3: {14: 1}}"),
        // Tables, in document order
        ("[server]\nport = 80\n[server.tls]\non = true\n[client]\n", "{server: {port: 80, tls: {on: true}}, client: {}}"),
        ("top = 0\n[ a . \"b c\" ]\nx = 1\n", "{top: 0, a: {b c: {x: 1}}}"),
        ("[a.b]\nx = 1\n[a]\ny = 2\n", "{a: {b: {x: 1}, y: 2}}"),
        ("[fruit]\napple.color = \"red\"\n[fruit.apple.texture]\nsmooth = true\n",
         "{fruit: {apple: {color: \"red\", texture: {smooth: true}}}}"),
        ("[a]\nb.c = 1\nb.d = 2\n", "{a: {b: {c: 1, d: 2}}}"),
        // Arrays of tables
        ("[[p]]\nn = 1\n[p.sub]\nk = 2\n[[p]]\nn = 3\n[[p.list]]\n[[p.list]]\nz = 0\n",
         "{p: [{n: 1, sub: {k: 2}}, {n: 3, list: [{}, {z: 0}]}]}"),
        ("[a]\n[[a.b]]\n[[a.b]]\n", "{a: {b: [{}, {}]}}"),
        // Basic and literal strings
        (#"s = "q\" b\\ t\t n\n r\r b\b f\f u\u00E9 U\U0001F600""#, #"{s: "q\" b\\ t\t n\n r\r b\u{08} f\u{0C} ué U😀"}"#),
        (#"s = 'C:\path\no "escapes" here'"#, #"{s: "C:\\path\\no \"escapes\" here"}"#),
        ("s = \"\"\ne = ''\n", #"{s: "", e: ""}"#),
        // Multi-line strings
        ("s = \"\"\"\nline 1\n  line 2 \\\n    continued\\\n\n\n  too\nend\"\"\"", #"{s: "line 1\n  line 2 continuedtoo\nend"}"#),
        ("s = \"\"\"one\r\ntwo\"\"\"", #"{s: "one\ntwo"}"#),
        ("s = \"\"\"\"a\" \"\"b\"\" \"\"\"\"\"", #"{s: "\"a\" \"\"b\"\" \"\""}"#),
        ("s = '''\nraw \\n \"x\"\n  'y' '''", #"{s: "raw \\n \"x\"\n  \'y\' "}"#),
        ("s = ''''a''''", #"{s: "\'a\'"}"#),
        ("s = \"\"\"\"\"\"", #"{s: ""}"#),
        // Integers
        ("a = 42\nb = +17\nc = -5\nd = 0\ne = -0\nf = 1_000_000\ng = 0xDEAD_beef\nh = 0o755\ni = 0b1101\n",
         "{a: 42, b: 17, c: -5, d: 0, e: 0, f: 1000000, g: 3735928559, h: 493, i: 13}"),
        ("max = 9223372036854775807\nmin = -9223372036854775808\n", "{max: 9223372036854775807, min: -9223372036854775808}"),
        // Floats
        ("a = 3.14\nb = -0.01\nc = 5e+22\nd = 1E06\ne = -2e-2\nf = 6.626e-34\ng = 9_224.5\nh = 0.0\ni = +1.5\n",
         "{a: 3.14, b: -0.01, c: 5e+22, d: 1000000.0, e: -0.02, f: 6.626e-34, g: 9224.5, h: 0.0, i: 1.5}"),
        ("a = inf\nb = +inf\nc = -inf\nd = nan\ne = -nan\n", "{a: inf, b: inf, c: -inf, d: nan, e: nan}"),
        // Booleans
        ("yes = true\nno = false", "{yes: true, no: false}"),
        // Arrays
        ("a = [1, 2, 3]\nb = []\nc = [ \"x\", 'y', [1.5, true], {k = 1} ]\n",
         "{a: [1, 2, 3], b: [], c: [\"x\", \"y\", [1.5, true], {k: 1}]}"),
        ("a = [\n  1, # one\n  2,\n  # a comment line\n\n]\nb = [ # open\n]\n", "{a: [1, 2], b: []}"),
        ("a = [[1, [2]], [], [\"\"\"\nx\"\"\"]]", #"{a: [[1, [2]], [], ["x"]]}"#),
        // Inline tables
        ("p = { x = 1, y.z = \"w\", q = {}, r = { s = [1] } }\nempty = {}\n",
         "{p: {x: 1, y: {z: \"w\"}, q: {}, r: {s: [1]}}, empty: {}}"),
        ("[[pts]]\nv = {x = 1}\n[[pts]]\nv = {x = 2}\n", "{pts: [{v: {x: 1}}, {v: {x: 2}}]}"),
    ]

    @Test("valid documents", arguments: valid)
    func parsesValid(source: String, expected: String) throws {
        #expect(render(try TOML.parse(source)) == expected)
    }

    static let invalid: [(String, String)] = [
        // Syntax
        ("a = 1\nb", "line 2, column 2: expected '=' after key \"b\", found the end of the file"),
        ("\n\ndefault-mode \"dark\"", "line 3, column 14: expected '=' after key \"default-mode\", found '\"'"),
        ("= 1", "line 1, column 1: expected a key, found '='"),
        ("a.= 1", "line 1, column 3: expected a key, found '='"),
        ("\"\"\"k\"\"\" = 1", "line 1, column 1: a key cannot be a multi-line string"),
        ("a = 1 b = 2", "line 1, column 7: expected the end of the line, found 'b'"),
        ("a = 1\n\n[a", "line 3, column 3: expected ']' to close the table header, found the end of the file"),
        ("[[a]", "line 1, column 5: expected ']]' to close the table header, found the end of the file"),
        ("[[a] ]", "line 1, column 5: expected ']]' to close the table header, found ' '"),
        ("a = 1\r", "line 1, column 6: expected the end of the line, found a control character"),
        ("# bell \u{7}", "line 1, column 8: control characters are not allowed in comments"),
        // Values
        ("a =", "line 1, column 4: expected a value, found the end of the file"),
        ("a = \n", "line 1, column 5: expected a value, found the end of the line"),
        ("mode = dark", "line 1, column 8: expected a value, found \"dark\" (strings must be quoted)"),
        ("a = True", "line 1, column 5: expected a value, found \"True\" (strings must be quoted)"),
        ("a = .5", "line 1, column 5: expected a value, found \".5\""),
        // Strings
        ("a = 1\ns = \"abc", "line 2, column 5: unterminated string"),
        ("s = \"abc\nd\"", "line 1, column 5: unterminated string"),
        ("s = 'abc", "line 1, column 5: unterminated string"),
        ("s = \"\"\"\nabc\n", "line 1, column 5: unterminated string"),
        ("s = '''abc''", "line 1, column 5: unterminated string"),
        (#"s = "a\qb""#, #"line 1, column 8: invalid escape sequence '\q'"#),
        (#"s = "a\u12""#, #"line 1, column 8: invalid escape sequence '\u12"': expected 4 hex digits of a Unicode scalar value"#),
        (#"s = "\uD800""#, #"line 1, column 7: invalid escape sequence '\uD800': expected 4 hex digits of a Unicode scalar value"#),
        (#"s = "\U00110000""#, #"line 1, column 7: invalid escape sequence '\U00110000': expected 8 hex digits of a Unicode scalar value"#),
        ("s = \"a\\\nb\"", "line 1, column 8: a backslash can end a line only in a multi-line string"),
        ("s = \"tab\tok, bell \u{7} not\"", "line 1, column 19: control characters are not allowed in strings; use an escape such as \\t"),
        ("s = \"\"\"a\"\"\"\"\"\"", "line 1, column 15: too many quotes at the end of a multi-line string"),
        // Numbers
        ("a = 01", "line 1, column 5: leading zeros are not allowed in 01"),
        ("a = -0_1", "line 1, column 5: leading zeros are not allowed in -0_1"),
        ("a = 1__0", "line 1, column 5: invalid number \"1__0\""),
        ("a = _1", "line 1, column 5: expected a value, found \"_1\""),
        ("a = 1_", "line 1, column 5: invalid number \"1_\""),
        ("a = 1.", "line 1, column 5: invalid number \"1.\""),
        ("a = 1e", "line 1, column 5: invalid number \"1e\""),
        ("a = 1.e5", "line 1, column 5: invalid number \"1.e5\""),
        ("a = 0x", "line 1, column 5: invalid number \"0x\""),
        ("a = 0xG1", "line 1, column 5: invalid number \"0xG1\""),
        ("a = 0b102", "line 1, column 5: invalid number \"0b102\""),
        ("a = +0x10", "line 1, column 5: a sign is not allowed on \"+0x10\""),
        ("a = 9223372036854775808", "line 1, column 5: integer 9223372036854775808 does not fit in 64 bits"),
        ("a = 0x1_0000_0000_0000_0000", "line 1, column 5: integer 0x1_0000_0000_0000_0000 does not fit in 64 bits"),
        ("a = 1e400", "line 1, column 5: float 1e400 is out of range"),
        ("a = 1-2", "line 1, column 5: invalid number \"1-2\""),
        // Dates and times are refused, never read as something else
        ("d = 1979-05-27", "line 1: dates are not supported"),
        ("x = 1\n\nd = 1979-05-27T07:32:00Z", "line 3: dates are not supported"),
        ("d = 1979-05-27 07:32:00", "line 1: dates are not supported"),
        ("a = [\n1,\n2000-01-01]", "line 3: dates are not supported"),
        ("t = 07:32:00", "line 1: times are not supported"),
        // Arrays and inline tables
        ("a = [1 2]", "line 1, column 8: expected ',' or ']' in the array, found '2'"),
        ("a = [,]", "line 1, column 6: expected a value, found ','"),
        ("a = [1,\n2", "line 1, column 5: unterminated array"),
        ("a = {x = 1,}", "line 1, column 12: expected a key, found '}'"),
        ("a = {x = 1\n}", "line 1, column 11: expected ',' or '}' in the inline table, found the end of the line (an inline table must be on one line)"),
        ("a = {x = 1 y = 2}", "line 1, column 12: expected ',' or '}' in the inline table, found 'y'"),
        // Duplicates and tables defined twice
        ("a = 1\na = 2", "line 2, column 1: \"a\" is already defined as an integer on line 1"),
        ("\"a\" = 1\n'a' = 2", "line 2, column 1: \"a\" is already defined as an integer on line 1"),
        ("a.b = 1\na.b = 2", "line 2, column 1: \"a.b\" is already defined as an integer on line 1"),
        ("a = 1\na.b = 2", "line 2, column 1: \"a\" is already defined as an integer on line 1"),
        ("[t]\nx = 1\n[t]", "line 3, column 1: \"t\" is already defined as a table on line 1"),
        ("[t]\nx = 1\n[s]\n[t]\ny = 2", "line 4, column 1: \"t\" is already defined as a table on line 1"),
        ("[t]\nx = 1\n[t.x]", "line 3, column 1: \"t.x\" is already defined as an integer on line 2"),
        ("[t]\nx.y = 1\n[t.x]", "line 3, column 1: \"t.x\" is already defined as a table on line 2"),
        ("a.b = 1\n[a]", "line 2, column 1: \"a\" is already defined as a table on line 1"),
        ("[a.b]\n[a]\nb.c = 1", "line 3, column 1: \"a.b\" is already defined as a table on line 1"),
        ("[a]\nb = 1\n[a]\n", "line 3, column 1: \"a\" is already defined as a table on line 1"),
        ("a = {b = 1}\na.c = 2", "line 2, column 1: \"a\" is already defined as an inline table on line 1"),
        ("a = {b = 1}\n[a.c]", "line 2, column 1: \"a\" is already defined as an inline table on line 1"),
        ("a = {b = 1}\n[a]", "line 2, column 1: \"a\" is already defined as an inline table on line 1"),
        ("a = {b = {c = 1}, b.d = 2}", "line 1, column 19: \"b\" is already defined as an inline table on line 1"),
        ("a = {b = 1, b = 2}", "line 1, column 13: \"b\" is already defined as an integer on line 1"),
        ("a = [1]\n[[a]]", "line 2, column 1: \"a\" is already defined as an array on line 1"),
        ("a = [{}]\n[a.b]", "line 2, column 1: \"a\" is already defined as an array on line 1"),
        ("[[a]]\n[a]", "line 2, column 1: \"a\" is already defined as an array of tables on line 1"),
        ("[a]\n[[a]]", "line 2, column 1: \"a\" is already defined as a table on line 1"),
        ("[[a]]\nb = 1\n[a.b]", "line 3, column 1: \"a.b\" is already defined as an integer on line 2"),
    ]

    @Test("invalid documents", arguments: invalid)
    func rejectsInvalid(source: String, expected: String) {
        do {
            let document = try TOML.parse(source)
            Issue.record("parsed as \(render(document))")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test("every value remembers its line")
    func lines() throws {
        let document = try TOML.parse("""
            # comment
            a = 1
            s = \"\"\"
            two
            lines\"\"\"
            after = [
              1,
              2,
            ]
            [t]
            x = true

            [[list]]
            [[list]]
            y = { z = 0 }
            """)
        #expect(document["a"]?.line == 2)
        #expect(document["s"]?.line == 3)
        #expect(document["after"]?.line == 6)
        #expect(document["after"]?.array?.map(\.line) == [7, 8])
        #expect(document["t"]?.line == 10)
        #expect(document["t"]?.table?["x"]?.line == 11)
        #expect(document["list"]?.line == 13)
        #expect(document["list"]?.array?.map(\.line) == [13, 14])
        #expect(document["list"]?.array?[1].table?["y"]?.line == 15)
    }

    @Test("implicit tables take the line of their header")
    func implicitTableLine() throws {
        let document = try TOML.parse("[a.b]\n\n[a]\n")
        #expect(document["a"]?.line == 3)
        #expect(document["a"]?.table?["b"]?.line == 1)
    }

    @Test("accessors and type names")
    func accessors() throws {
        let d = try TOML.parse("s = 'x'\ni = 1\nf = 1.5\nb = true\na = [1]\nt = {}\n[h]\n[[l]]")
        #expect(d.keys == ["s", "i", "f", "b", "a", "t", "h", "l"])
        #expect(d["s"]?.string == "x" && d["s"]?.integer == nil)
        #expect(d["i"]?.integer == 1 && d["f"]?.float == 1.5 && d["b"]?.boolean == true)
        #expect(d["a"]?.array?.count == 1 && d["t"]?.table?.isEmpty == true && d["missing"] == nil)
        #expect(d.entries.map(\.value.typeName) ==
            ["a string", "an integer", "a float", "a boolean", "an array", "an inline table", "a table", "an array of tables"])
    }
}

/// Hostile shapes (issue "Hardened against hostile input"): deep nesting and long dotted keys are refused
/// with a clear error instead of overflowing the stack; huge flat inputs parse.
struct TOMLBoundsTests {
    @Test("deep nesting is refused, not a crash", arguments: [
        ("x = " + String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000),
         "line 1, column 69: arrays and inline tables nested deeper than 64 levels"),
        ("x = " + String(repeating: "{a = ", count: 20_000) + "1" + String(repeating: "}", count: 20_000),
         "line 1, column 325: arrays and inline tables nested deeper than 64 levels"),
        (Array(repeating: "a", count: 60_000).joined(separator: ".") + " = 1", "line 1, column 130: a dotted key of more than 64 parts"),
        ("[" + Array(repeating: "t", count: 70).joined(separator: ".") + "]", "line 1, column 131: a dotted key of more than 64 parts"),
    ])
    func deep(text: String, message: String) {
        #expect(throws: (any Error).self) { try TOML.parse(text) }
        do {
            _ = try TOML.parse(text)
        } catch {
            #expect("\(error)" == message)
        }
    }

    @Test func sixtyFourLevelsAreFine() throws {
        let doc = try TOML.parse("x = " + String(repeating: "[", count: 64) + String(repeating: "]", count: 64))
        #expect(doc["x"]?.array != nil)
    }

    @Test func aLongOneLineArrayParses() throws {
        let array = "x = [" + Array(repeating: "100", count: 130_000).joined(separator: ",") + "]"
        #expect(array.utf8.count > 510_000)
        #expect(try TOML.parse(array)["x"]?.array?.count == 130_000)
    }

    @Test func aHugeTableParses() throws {
        let table = "[t]\n" + (0..<52_000).map { "k\($0) = \($0)" }.joined(separator: "\n")
        let t = try TOML.parse(table)["t"]?.table
        #expect(t?.keys.count == 52_000 && t?["k51999"]?.integer == 51_999)
        // Columns are still right at the end of a long line.
        let late = "x = [" + String(repeating: "1,", count: 100_000) + "oops]"
        #expect(throws: (any Error).self) { try TOML.parse(late) }
        do { _ = try TOML.parse(late) } catch { #expect("\(error)".hasPrefix("line 1, column 200006: expected a value")) }
    }
}
