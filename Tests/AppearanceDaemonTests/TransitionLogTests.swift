@testable import AppearanceDaemon
import AppearanceProtocol
import Testing

/// The change log keeps its entries within what `log`'s reply is sized for.
@Suite struct TransitionLogTests {
    @Test func aLongCauseIsCutToTheBoundAndSaysSo() {
        var log = TransitionLog()
        let long = String(repeating: "hook x failed: exit 1; ", count: 1_000)
        log.append(.init(time: 1, from: .light, to: .dark, source: .override, cause: long))
        let kept = log.ordered[0].cause
        #expect(kept.hasSuffix("…") && long.hasPrefix(String(kept.dropLast())))
        let encoded = JSON.string(kept).bytes.count - 2
        #expect(encoded <= ReplyBounds.logCause && encoded > ReplyBounds.logCause - 32)
    }

    @Test func controlCharactersCountAsTheyAreEncoded() {
        var log = TransitionLog()
        log.append(.init(time: 1, from: nil, to: .dark, source: nil, cause: String(repeating: "\u{1}", count: 2_000)))
        #expect(JSON.string(log.ordered[0].cause).bytes.count - 2 <= ReplyBounds.logCause)
    }

    @Test func aShortCauseIsKeptAsItIs() {
        var log = TransitionLog()
        log.append(.init(time: 1, from: .light, to: .dark, source: .override, cause: "override dark set by appearancectl (pid 1)"))
        #expect(log.ordered[0].cause == "override dark set by appearancectl (pid 1)")
    }
}
