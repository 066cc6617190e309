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
