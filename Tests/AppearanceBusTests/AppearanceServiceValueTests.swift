import AppearanceCore
import AppearanceProtocol
import Testing
@testable import AppearanceBus

/// The D-Bus service's conversions between the socket's JSON and D-Bus values, without a bus.
struct AppearanceServiceValueTests {
    @Test func aStateObjectBecomesAnASVWithoutItsNulls() {
        let state = AppearanceState(mode: .dark, system: .unavailable, override: .dark, source: .override, seq: 7, instance: "abc")
        guard case .container(let signature, let entries) = AppearanceService.value(state.json) else { Issue.record("not a container"); return }
        #expect(signature == "a{sv}")
        let keys = entries.compactMap { e -> String? in
            if case .container(_, let kv) = e, case .string(let k)? = kv.first { k } else { nil }
        }
        #expect(keys == ["mode", "darkMode", "system", "override", "source", "seq", "instance", "traits"])  // temporary: null, left out
        #expect(entries.contains(.container(signature: "{sv}", [.string("seq"), .variant(.uint64(7))])))
        #expect(entries.contains(.container(signature: "{sv}", [.string("darkMode"), .variant(.boolean(true))])))
    }

    @Test func optionsOfBasicTypesBecomeTheSocketsParamsAndOthersAreRefused() {
        #expect(AppearanceService.json(.string("next")) == .string("next"))
        #expect(AppearanceService.json(.uint32(60)) == .int(60))
        #expect(AppearanceService.json(.int32(-1)) == .number("-1"))
        #expect(AppearanceService.json(.boolean(true)) == .bool(true))
        #expect(AppearanceService.json(.container(signature: "as", [.string("a")])) == nil)
        #expect(AppearanceService.json(.variant(.string("a"))) == nil)
    }

    @Test func theSocketsErrorsBecomeNamedErrorsWithTheSameMessage() {
        let invalid = AppearanceService.busError(RPCError(.invalidParams, "set: invalid \"for\" 0"))
        #expect(invalid.name == "io.github.appearanced.Appearance1.Error.InvalidParams" && invalid.message == "set: invalid \"for\" 0")
        #expect(AppearanceService.busError(RPCError(.requestFailed, "x")).name == "io.github.appearanced.Appearance1.Error.RequestFailed")
        #expect(AppearanceService.busError(RPCError(.internalError, "x")).name == "io.github.appearanced.Appearance1.Error.Failed")
    }
}
