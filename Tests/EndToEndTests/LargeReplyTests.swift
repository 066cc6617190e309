import AppearanceKit
import Foundation
import Testing
import TestSupport
import struct AppearanceProtocol.LineFramer
import let AppearanceProtocol.maxLineLength
import let AppearanceProtocol.maxReplyLength

/// Replies longer than a request may be (65,536 bytes) reach every client whole: the app overrides' list,
/// a big palette by `palette` and in a subscription. docs/protocol.md, "Framing".
@Suite(.serialized, .timeLimit(.minutes(10))) struct LargeReplyTests {
    /// 255 bytes, the longest id there is, in the order the daemon lists them.
    static func appID(_ i: Int) -> String {
        let n = String(i)
        return "org.example." + String(repeating: "a", count: 237) + "." + String(repeating: "0", count: 5 - n.count) + n
    }

    /// Makes `count` app overrides over 50 raw connections: each round sends one request on every connection,
    /// then reads the replies, so the daemon's saves cover a round at a time (they are grouped), not one
    /// override each.
    static func makeOverrides(_ s: Sandbox, count: Int) throws {
        let clients = try (0..<50).map { _ in try RawClient(s.socket) }
        for round in stride(from: 0, to: count, by: clients.count) {
            let ids = round..<min(round + clients.count, count)
            for (c, i) in zip(clients, ids) {
                try c.send(#"{"jsonrpc":"2.0","id":\#(i),"method":"set","params":{"override":"\#(mode(i))","app":"\#(appID(i))"}}"# + "\n")
            }
            for (c, i) in zip(clients, ids) {
                let reply = try c.line() ?? "(the daemon closed the connection)"
                try #require(reply.contains(#""id":\#(i),"result""#), "set \(i): \(reply)")
            }
        }
    }

    static func mode(_ i: Int) -> String { i % 3 == 0 ? "light" : "dark" }

    @Test func twoThousandLongAppIDsAreListed() throws {
        let count = 2_000
        let s = try Sandbox.started()
        try Self.makeOverrides(s, count: count)

        let plain = try s.ctl("apps")
        #expect(plain.status == 0, "\(plain.err)")
        #expect(plain.out.utf8.count > maxLineLength)
        let expected = (0..<count).map { "\(Self.appID($0))\t\(Self.mode($0))" }
        let lines = plain.out.split(separator: "\n").map(String.init)
        #expect(lines == expected, "\(lines.count) lines, first \(lines.first ?? "none")")

        let json = try s.ctl("apps", "--json")
        #expect(json.status == 0, "\(json.err)")
        #expect(json.out.split(separator: "\n").map(String.init) == (0..<count).map {
            #"{"app":"\#(Self.appID($0))","override":"\#(Self.mode($0))"}"#
        })
        #expect(try s.ctl("status", "--json").out.contains(#""appOverrides":\#(count)"#))
    }

    /// 3,000 tokens with names like a real design system's: a reply of about 150 KB.
    static func palette(tokens: Int) -> (toml: String, names: [String]) {
        var toml = ""
        var names: [String] = []
        for i in 0..<tokens {
            let name = "surface-container-highest-\(i)"
            names.append("component.\(name)")
            toml += "component.\(name) = { light = \"#\(hex(i))\", dark = \"#\(hex(0xFFFFFF - i))\" }\n"
        }
        return (toml, names)
    }

    static func hex(_ v: Int) -> String {
        let h = String(v, radix: 16)
        return String(repeating: "0", count: 6 - h.count) + h
    }

    @Test func aThreeThousandTokenPaletteIsPrintedWhole() throws {
        let s = try Sandbox()
        let (toml, names) = Self.palette(tokens: 3_000)
        try s.write(toml, to: s.paletteFile)
        try s.startDaemon()

        let json = try s.ctl("palette")
        #expect(json.status == 0, "\(json.err)")
        #expect(json.out.utf8.count > maxLineLength)
        let object = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        let colors = try #require(object?["colors"] as? [String: String], "\(json.out.prefix(200))")
        #expect(colors.count == names.count)
        #expect(names.indices.allSatisfy { colors[names[$0]] == "#" + Self.hex($0) })
        let dark = try s.ctl("palette", "--mode", "dark", "--format", "sh")
        #expect(dark.status == 0, "\(dark.err)")
        #expect(dark.out.split(separator: "\n").filter { $0.hasPrefix("export PALETTE_") }.count == names.count)
        let last = dark.out.split(separator: "\n").first { $0.hasPrefix("export PALETTE_COMPONENT_SURFACE_CONTAINER_HIGHEST_2999=") }
        #expect(last?.contains(Self.hex(0xFFFFFF - 2_999)) == true, "\(dark.out.suffix(200))")
    }

    /// AppearanceKit's subscription reads the big palette in its `subscribe` reply and in a notification.
    @Test func aSubscriptionCarriesTheBigPalette() async throws {
        let s = try Sandbox()
        let (toml, names) = Self.palette(tokens: 3_000)
        try s.write(toml, to: s.paletteFile)
        try s.startDaemon()
        let client = try await AppearanceClient(socketPath: s.socket)
        let log = PaletteLog()
        let task = Task {
            do {
                for try await change in client.changes(palette: true) {
                    if case .paletteChanged(let p) = change { log.add(p) } else if case .connectionLost(let e) = change { log.fail("\(e)") }
                }
            } catch {
                log.fail("\(error)")
            }
        }
        defer { task.cancel() }
        let first = try await TestSupport.waitUntil("the first palette", seen: { log.seen }) { log.palettes.first }
        #expect(first.tokens.map(\.name) == names && first.variant.mode == .light)
        #expect(first[names[2_999]] == .color(Color(parsing: "#" + Self.hex(2_999))!))
        _ = try await client.set(.dark)
        let second = try await TestSupport.waitUntil("the dark palette", seen: { log.seen }) { log.palettes.dropFirst().first }
        #expect(second.tokens.count == names.count && second.variant.mode == .dark)
        #expect(second[names[2_999]] == .color(Color(parsing: "#" + Self.hex(0xFFFFFF - 2_999))!))
        #expect(log.failures.isEmpty, "\(log.failures)")
    }

    /// The limit itself: a client takes a line of exactly `maxReplyLength` bytes and refuses one byte more.
    @Test func theClientsLimitIsMaxReplyLength() throws {
        #expect(maxReplyLength > maxLineLength)
        var f = LineFramer(limit: maxReplyLength)
        f.append([UInt8](repeating: 0x61, count: maxReplyLength) + [0x0A])
        #expect(try f.next()?.count == maxReplyLength)
        f.append([UInt8](repeating: 0x61, count: maxReplyLength + 1))
        #expect(throws: LineFramer.LineTooLong.self) { try f.next() }
    }
}

final class PaletteLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [ResolvedPalette] = []
    private var errors: [String] = []
    func add(_ p: ResolvedPalette) { lock.withLock { items.append(p) } }
    func fail(_ s: String) { lock.withLock { errors.append(s) } }
    var palettes: [ResolvedPalette] { lock.withLock { items } }
    var failures: [String] { lock.withLock { errors } }
    var seen: String { lock.withLock { "\(items.count) palettes, errors: \(errors)" } }
}
