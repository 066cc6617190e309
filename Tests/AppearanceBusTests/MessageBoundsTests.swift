@testable import AppearanceBus
import Testing

/// Decoding stops at its bounds: what a peer sends past them is never built.
@Suite struct MessageBoundsTests {
    static func call(_ values: [BusValue]) throws -> Message {
        try #require(Message.methodCall(destination: "org.example.Peer", path: "/org/example", interface: "org.example.I",
                                        method: "M", values: values))
    }

    static func strings(_ n: Int, _ s: String = "org.exampl0") -> BusValue {
        .container(signature: "as", Array(repeating: .string(s), count: n))
    }

    /// The readers that skip decoding (a portal change's names, a read's number) say what the decoder would,
    /// and nil for every other shape, which then goes to the decoder.
    @Test func theShortReadersAgreeWithTheDecoder() throws {
        let keys = ["color-scheme", "contrast"]
        let pair = { (values: [BusValue]) in try Self.call(values).stringPair(first: "org.freedesktop.appearance", secondIn: keys) }
        #expect(try pair([.string("org.freedesktop.appearance"), .string("contrast"), .variant(.uint32(1))]) == 1)
        #expect(try pair([.string("org.freedesktop.appearance"), .string("color-scheme")]) == 0)
        #expect(try pair([.string("org.freedesktop.appearance"), .string("accent-color")]) == nil)
        #expect(try pair([.string("org.gnome.desktop.interface"), .string("color-scheme")]) == nil)
        #expect(try pair([.string("org.freedesktop.appearance")]) == nil)
        #expect(try pair([.objectPath("/org/freedesktop/appearance"), .string("color-scheme")]) == nil)
        #expect(try pair([]) == nil)
        let number = { (values: [BusValue]) in try Self.call(values).variantUInt32() }
        #expect(try number([.variant(.uint32(1))]) == 1)
        #expect(try number([.variant(.variant(.uint32(2)))]) == 2)
        #expect(try number([.variant(.variant(.variant(.variant(.uint32(7)))))]) == 7)
        #expect(try number([.variant(.variant(.variant(.variant(.variant(.uint32(7))))))]) == nil)
        #expect(try number([.variant(.int32(1))]) == nil)
        #expect(try number([.variant(.string("1"))]) == nil)
        #expect(try number([.uint32(1)]) == nil)
        #expect(try number([.variant(.uint32(1)), .variant(.uint32(1))]) == nil)
        #expect(try number([]) == nil)
    }

    @Test func withinTheBoundsEverythingIsDecoded() throws {
        let m = try Self.call([Self.strings(3), .variant(.variant(.uint32(1)))])
        #expect(m.hasSignature("asv") && !m.hasSignature("as"))
        #expect(m.arguments() == [Self.strings(3), .variant(.variant(.uint32(1)))])
        #expect(m.arguments(within: DecodeBounds(depth: 2, values: 7, bytes: 33)) == [Self.strings(3), .variant(.variant(.uint32(1)))])
    }

    @Test func pastAnyBoundNothingIsReturned() throws {
        let m = try Self.call([Self.strings(3)])
        #expect(m.arguments(within: DecodeBounds(depth: 1, values: 3, bytes: 1000)) == nil, "4 values: the array and 3 strings")
        #expect(m.arguments(within: DecodeBounds(depth: 1, values: 4, bytes: 32)) == nil, "33 bytes of text")
        #expect(m.arguments(within: DecodeBounds(depth: 0, values: 4, bytes: 1000)) == nil, "an array is one level")
        let long = try Self.call([.string(String(repeating: "x", count: 100_000))])
        #expect(long.arguments(within: DecodeBounds(depth: 0, values: 1, bytes: 1024)) == nil)
        #expect(long.arguments(limit: 0, within: DecodeBounds(depth: 0, values: 1, bytes: 1024)) == [])
    }

    @Test func oneStringPastItsOwnBoundIsPastTheBounds() throws {
        let m = try Self.call([.string("ab"), .string(String(repeating: "x", count: 1025))])
        #expect(m.arguments(within: DecodeBounds(depth: 0, values: 2, bytes: 2048, stringBytes: 1025)) != nil)
        #expect(m.arguments(within: DecodeBounds(depth: 0, values: 2, bytes: 2048, stringBytes: 1024)) == nil, "1,027 bytes in all, but one string of 1,025")
    }

    @Test func deeplyNestedVariantsArePastTheSmallBounds() throws {
        var value = BusValue.uint32(1)
        for _ in 0..<30 { value = .variant(value) }
        let m = try Self.call([value])
        #expect(m.arguments(within: .small) == nil)
        // Unwrapping removes a few wrappers, not thirty: what is left is still a variant, which no reader takes.
        #expect(value.unwrapped != .uint32(1))
        #expect(BusValue.variant(.variant(.uint32(1))).unwrapped == .uint32(1))
    }
}
