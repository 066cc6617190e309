import AppearanceFuzzing
import Foundation
import Testing

/// Replays every seed and every input the fuzzer ever crashed on (Fuzz/corpus): each must run clean.
struct CorpusReplayTests {
    static let corpus: [String] = {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/corpus").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted().map { dir + "/" + $0 }
    }()

    @Test func corpusIsThere() {
        #expect(Self.corpus.count >= 10)
    }

    @Test(arguments: corpus)
    func replay(path: String) throws {
        let bytes = try #require(FileManager.default.contents(atPath: path))
        let broken = FuzzHarness.run(Array(bytes))
        #expect(broken.isEmpty, "\(path): \(broken.joined(separator: "; "))")
    }
}
