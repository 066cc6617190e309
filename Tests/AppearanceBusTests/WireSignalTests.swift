@testable import AppearanceBus
import Testing

/// Signals written as bytes (Wire.swift) against the same signals built with libdbus's iterators.
@Suite struct WireSignalTests {
    static var cases: [[BusValue]] { [
        [],
        [.string("")],
        [.byte(7), .int16(-3), .byte(1), .double(1.5), .byte(2), .uint64(1 << 40), .int32(-9), .uint16(65535), .boolean(true), .int64(-1)],
        [.byte(1), .container(signature: "a(dd)", [])],
        [.byte(1), .container(signature: "a(dd)", [.container(signature: "(dd)", [.double(0.1), .double(0.2)])])],
        [.byte(1), .container(signature: "at", [])],
        [.byte(1), .container(signature: "ay", [.byte(1), .byte(2), .byte(3)])],
        [.byte(1), .container(signature: "a{sv}", [])],
        [.objectPath("/a/b"), .signature("a{sv}"), .variant(.variant(.uint32(3)))],
        [.string("x"), .variant(.container(signature: "(ddd)", [.double(1), .double(0), .double(0.5)]))],
        [.variant(.container(signature: "av", [.variant(.string("é€😀")), .variant(.int64(5)), .variant(.container(signature: "a{sv}", []))]))],
        [.container(signature: "aas", [.container(signature: "as", []), .container(signature: "as", [.string("q")])])],
        [.byte(3), .container(signature: "a{ss}", [.container(signature: "{ss}", [.string("k"), .string("v")])])],
        [.container(signature: "(ybnqiuxtds)", [.byte(1), .boolean(false), .int16(1), .uint16(2), .int32(3), .uint32(4), .int64(5), .uint64(6), .double(7), .string("s")])],
        [.string(String(repeating: "z", count: 70_000))],
    ] }

    @Test func theSameBytesAsTheIterators() throws {
        for values in Self.cases {
            let wire = try #require(Message.wireSignal(path: "/org/example/Obj", interface: "org.example.I", name: "Sig", values))
            let iter = try #require(Message.iteratorSignal(path: "/org/example/Obj", interface: "org.example.I", name: "Sig", values))
            #expect(wire.marshalled != nil && wire.marshalled == iter.marshalled, "\(values)")
            #expect(wire.marshalled.map { Array($0[8..<12]) } == [0, 0, 0, 0])
            #expect(wire.arguments(within: DecodeBounds(depth: 10, values: 100, bytes: 100_000)) == (values.isEmpty ? [] : iter.arguments(within: DecodeBounds(depth: 10, values: 100, bytes: 100_000))))
        }
    }

    @Test func whatTheIteratorsRefuseIsLeftToThem() throws {
        // A NUL in a string: the iterators cut it there; the writer leaves it to them.
        #expect(Message.wireSignal(path: "/o", interface: "o.I", name: "S", [.string("a\u{0}b")]) == nil)
        #expect(Message.signal(path: "/o", interface: "o.I", name: "S", [.string("a\u{0}b")]) != nil)
        // A bad path: both refuse.
        #expect(Message.wireSignal(path: "/o", interface: "o.I", name: "S", [.objectPath("not a path")]) == nil)
        #expect(Message.wireSignal(path: "no", interface: "o.I", name: "S", []) == nil)
        #expect(Message.wireSignal(path: "/o", interface: "o.I", name: "S", [.unsupported(signature: "h")]) == nil)
        #expect(Message.wireSignal(path: "/o", interface: "o.I", name: "S", [.container(signature: "a{sv}", [.string("not an entry")])]) == nil)
    }
}
