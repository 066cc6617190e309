import AppearanceCore
import Testing

/// The pauses between attempts to reach the daemon again, for `changes()` and `appearancectl watch`.
@Suite struct BackoffTests {
    @Test func fiftyMillisecondsDoublingToTwoSeconds() {
        var b = Backoff.client
        let pauses = (0..<9).map { _ in b.next() }
        #expect(pauses == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0])
    }

    /// After a success the next pause is the first again, whatever came before.
    @Test(arguments: [0, 1, 3, 7, 20])
    func aResetStartsOver(failures: Int) {
        var b = Backoff.client
        for _ in 0..<failures { _ = b.next() }
        b.reset()
        #expect(b.next() == 0.05)
        #expect(b.next() == 0.1)
    }

    @Test func theBoundsAreTheDocumentedOnes() {
        #expect(Backoff.client.first == 0.05 && Backoff.client.longest == 2.0)
    }
}
