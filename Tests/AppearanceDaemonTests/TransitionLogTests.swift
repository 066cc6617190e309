@testable import AppearanceDaemon
import AppearanceCore
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

    /// A flood of automatic changes folds into one entry per minute or so: the user's own entries before it
    /// stay, however long it lasts; a folded entry says how many changes it stands for.
    @Test func aFloodOfAutomaticChangesCannotEvictTheHistory() {
        var log = TransitionLog()
        log.append(.init(time: 0, from: .light, to: .dark, source: .override, cause: "override dark set by appearancectl (pid 1)"))
        log.append(.init(time: 1, from: .dark, to: .light, source: .override, cause: "override light set by appearancectl (pid 2)"))
        var time: Int64 = 100
        for i in 0..<100_000 {
            let to: Mode = i % 2 == 0 ? .dark : .light
            time += i % 50 == 0 ? 3 : 0  // 1,000 a second, hours on end
            log.append(.init(time: time / 1_000 + 100, from: to.opposite, to: to, source: .schedule, cause: "schedule: sunset"))
        }
        let entries = log.ordered
        #expect(entries.prefix(2).map(\.source) == [.override, .override], "\(entries.prefix(3))")
        #expect(entries.count < 20, "\(entries.count) entries")
        let folded = entries.filter { $0.changes > 1 }
        #expect(!folded.isEmpty && folded.allSatisfy { $0.cause.hasPrefix("\($0.changes) automatic changes within a minute; the last: schedule: sunset") })
        #expect(entries.map(\.changes).reduce(0, +) == 100_002)
    }

    /// The user's own changes never fold, and a slow run of automatic ones (a sunrise and a sunset) neither.
    @Test func ownAndSlowChangesAreEntriesOfTheirOwn() {
        var log = TransitionLog()
        for i in 0..<10 { log.append(.init(time: Int64(i), from: .light, to: .dark, source: .override, cause: "set")) }
        for i in 0..<10 { log.append(.init(time: 100 + Int64(i) * 61, from: .light, to: .dark, source: .schedule, cause: "sunset")) }
        #expect(log.ordered.count == 20 && log.ordered.allSatisfy { $0.changes == 1 })
    }
}
