import Foundation
import Testing

/// docs/protocol.md against a real daemon: the transcript is replayed byte for byte, and every reply must be
/// what the page shows (up to what differs between runs: instance ids, pid, the system detail, the temp dir).
@Suite struct ProtocolConformanceTests {
    struct Step {
        var connection: String
        var sends: Bool
        var text: String
        var note: String  // the annotation above it
    }

    static func transcript() throws -> (steps: [Step], notes: [String]) {
        let doc = try String(contentsOfFile: Repo.protocolDoc, encoding: .utf8)
        let section = try #require(doc.range(of: "## Transcript"), "docs/protocol.md has no transcript")
        let rest = doc[section.upperBound...]
        let open = try #require(rest.range(of: "```\n"))
        let close = try #require(rest[open.upperBound...].range(of: "```"))
        var steps: [Step] = [], notes: [String] = [], note = ""
        for line in rest[open.upperBound..<close.lowerBound].split(separator: "\n").map(String.init) {
            if line.hasPrefix("# ") { note = String(line.dropFirst(2)); notes.append(note); continue }
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard parts.count == 3, parts[1] == "→" || parts[1] == "←" else { continue }
            steps.append(Step(connection: parts[0], sends: parts[1] == "→", text: parts[2], note: note))
        }
        return (steps, notes)
    }

    /// What may differ between runs, replaced by stable names. Instance ids are numbered in order of appearance.
    final class Normalizer {
        var instances: [String: String] = [:]
        let root: String
        init(root: String) { self.root = root }

        func callAsFunction(_ line: String) -> String {
            var s = line.replacingOccurrences(of: root, with: "$T")
            s = s.replacing(/"pid":[0-9]+/, with: #""pid":0"#)
            s = s.replacing(/"systemDetail":"[^"]*"/, with: #""systemDetail":"…""#)
            s = s.replacing(/"time":[0-9]+/, with: #""time":0"#)
            s = s.replacing(/set by [^"(]+ \(pid [0-9]+\)/, with: "set by CLIENT (pid 0)")
            s = s.replacing(/"instance":"([0-9a-f]{16})"/) { m in
                let id = String(m.1)
                if instances[id] == nil { instances[id] = "I\(instances.count + 1)" }
                return #""instance":"\#(instances[id]!)""#
            }
            return s
        }
    }

    /// A byte count the annotation states ("a 65,656-byte line", "exactly 65,536 bytes").
    static func byteCount(in note: String) throws -> Int {
        let m = try #require(note.firstMatch(of: /([0-9][0-9,]*)[- ]byte/), "no byte count in \"\(note)\"")
        return try #require(Int(m.1.replacingOccurrences(of: ",", with: "")))
    }

    @Test func theTranscriptReplaysByteForByte() throws {
        let (steps, notes) = try Self.transcript()
        #expect(steps.count > 40)
        let s = try Sandbox()
        // No integrations but the environment's own (none): not those a package installed in /usr/share.
        s.env["XDG_DATA_HOME"] = s.root + "/data"
        s.env["XDG_DATA_DIRS"] = s.root + "/data-dirs"
        var d = try s.startDaemon()
        let docSide = Normalizer(root: "$T"), daemonSide = Normalizer(root: s.root)
        var connections: [String: RawClient] = [:]
        var done = Set<String>()
        var errorMessages: [String] = []
        let stateDir = s.root + "/state/appearanced"

        for step in steps {
            // Actions the annotations describe, once each.
            if !done.contains(step.note) {
                done.insert(step.note)
                if step.note.contains("SIGHUP") {
                    try s.write("default-mode = \"dark\"\n", to: s.configFile)
                    kill(d.pid, SIGHUP)
                } else if step.note.contains("The config gets a mistake") {
                    try s.write("default-mode = \"blue\"\n", to: s.configFile)
                } else if step.note.contains("replaced by a plain file") {
                    try FileManager.default.moveItem(atPath: stateDir, toPath: stateDir + ".saved")
                    try s.write("", to: stateDir)
                } else if step.note.contains("SIGTERM, then a new daemon") {
                    try FileManager.default.removeItem(atPath: stateDir)
                    try FileManager.default.moveItem(atPath: stateDir + ".saved", toPath: stateDir)
                    d.stop(SIGTERM)
                    #expect(try d.waitForExit() == 0)
                    d = try s.startDaemon()
                }
            }
            let c: RawClient
            if let existing = connections[step.connection] { c = existing } else {
                c = try RawClient(s.socket)
                connections[step.connection] = c
            }
            if step.sends {
                var bytes = step.text
                if bytes == "(an empty line)" {
                    bytes = ""
                } else if bytes.contains("xxxx…") {
                    let total = try Self.byteCount(in: step.note)
                    let pad = total - (bytes.utf8.count - "xxxx…".utf8.count)
                    bytes = bytes.replacingOccurrences(of: "xxxx…", with: String(repeating: "x", count: pad))
                    #expect(bytes.utf8.count == total)
                } else if bytes.contains("␠") {
                    let total = try Self.byteCount(in: step.note)
                    bytes = String(bytes.prefix { $0 != "␠" })
                    bytes += String(repeating: " ", count: total - bytes.utf8.count)
                    #expect(bytes.utf8.count == total)
                }
                try c.send(bytes + "\n")
            } else if step.text.hasPrefix("(end of file") {
                #expect(try c.line() == nil, "\(step.connection) should have been closed")
            } else {
                let got = try #require(try c.line(), "\(step.connection) got end of file instead of \(step.text)")
                #expect(daemonSide(got) == docSide(step.text), "\(step.connection) after: \(step.note)")
                if let m = got.firstMatch(of: /"error":\{"code":-?[0-9]+,"message":"((?:[^"\\]|\\.)*)"\}/) {
                    errorMessages.append(String(m.1).replacingOccurrences(of: #"\""#, with: #"""#))
                }
            }
        }
        for action in ["SIGHUP", "The config gets a mistake", "replaced by a plain file", "SIGTERM, then a new daemon"] {
            #expect(notes.contains { $0.contains(action) }, "the transcript no longer says \"\(action)\"; update this test")
        }

        // Every method in the table was sent.
        let doc = try String(contentsOfFile: Repo.protocolDoc, encoding: .utf8)
        let methodsSection = try #require(doc.range(of: "## Methods")).upperBound
        let methodsText = String(doc[methodsSection...]).components(separatedBy: "\n## ")[0]
        let methods = methodsText.matches(of: #/\n\| `([a-z]+)` \| /#).map { String($0.1) }
        #expect(Set(methods) == ["get", "set", "toggle", "subscribe", "status", "resolve", "palette", "log", "apps", "reload", "schedule", "integrations", "postpone", "skip"])
        for m in methods {
            #expect(steps.contains { $0.sends && $0.text.contains(#""method":"\#(m)""#) }, "\(m) is never sent")
        }

        // Every example message of the Errors table was received; the three the transcript lacks are sent here.
        let c = try RawClient(s.socket)
        let crammed = #"{"jsonrpc":"2.0","id":1,"method":"get","params":{"# + (0..<17).map { #""p\#($0)":0"# }.joined(separator: ",") + "}}"
        for line in ["42", #"{"jsonrpc":"2.0","id":1,"method":7}"#, crammed] {
            try c.send(line + "\n")
            let got = try #require(try c.line())
            if let m = got.firstMatch(of: /"message":"((?:[^"\\]|\\.)*)"/) {
                errorMessages.append(String(m.1).replacingOccurrences(of: #"\""#, with: #"""#))
            }
        }
        let table = try #require(doc.range(of: "## Errors")).upperBound
        let rows = doc[table...].split(separator: "\n").prefix { !$0.hasPrefix("## ") }.filter { $0.hasPrefix("| -32") }
        #expect(rows.count == 5)
        for row in rows {
            let examples = row.split(separator: "|").last.map { $0.matches(of: #/`([^`]+)`/#).map { String($0.1) } } ?? []
            #expect(!examples.isEmpty, "\(row)")
            for example in examples {
                if example.contains("<") || example.contains("…") {
                    // A template: its fixed parts must appear in one message.
                    let parts = example.split(whereSeparator: { "<>…()".contains($0) }).map { $0.trimmingCharacters(in: .whitespaces) }
                        .filter { $0.count > 3 && !$0.contains("what failed") && !$0.contains("state file") }
                    #expect(errorMessages.contains { m in parts.allSatisfy { m.contains($0) } }, "\(example) never received")
                } else {
                    #expect(errorMessages.contains(example), "\(example) never received; got \(errorMessages)")
                }
            }
        }
    }
}

/// The appearanced(7) example is taken from the transcript above, which the suite replays: each of its
/// messages must be, byte for byte, a line of docs/protocol.md's transcript.
@Suite struct ManPageExampleTests {
    @Test func theProtocolManPageQuotesTheCheckedTranscript() throws {
        let page = try String(contentsOfFile: Repo.root + "/man/appearanced.7.scd", encoding: .utf8)
        let doc = try String(contentsOfFile: Repo.protocolDoc, encoding: .utf8)
        let example = try #require(page.components(separatedBy: "# EXAMPLE").last?.components(separatedBy: "```").dropFirst().first)
        var messages: [String] = []
        for line in example.split(separator: "\n") {
            if line.hasPrefix("     "), !messages.isEmpty {
                messages[messages.count - 1] += line.dropFirst(5)  // a wrapped line goes on
            } else if line.count > 4 {
                messages.append(String(line))
            }
        }
        #expect(messages.count >= 6)
        let transcript = Set(doc.split(separator: "\n").map(String.init))
        for m in messages {
            let unescaped = m.replacingOccurrences(of: #"\\"#, with: #"\"#)  // scdoc writes a backslash as \\
            #expect(transcript.contains(unescaped), "not in docs/protocol.md's transcript: \(unescaped)")
        }
    }
}
