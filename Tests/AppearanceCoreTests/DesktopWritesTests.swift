import AppearanceCore
import Testing

/// Echo by the write queue: a desktop reading is appearanced's own echo only when it matches a write still in
/// flight; anything else is the user's, however soon it comes.
@Suite struct DesktopWritesTests {
    enum Step: CustomStringConvertible {
        /// appearanced writes a value (the id is the write's number, counting from 0).
        case write(SystemScheme)
        /// The write with this number finished: ok, or failed.
        case finished(Int, ok: Bool)
        /// The desktop reports a value; `echo` is what the queue must say of it.
        case reading(SystemScheme, echo: Bool)

        var description: String {
            switch self {
            case .write(let s): "write \(s)"
            case .finished(let n, let ok): "write \(n) \(ok ? "done" : "failed")"
            case .reading(let s, let echo): "read \(s) (\(echo ? "echo" : "user"))"
            }
        }
    }

    static let cases: [(String, [Step])] = [
        ("our write, its echo", [.write(.dark), .finished(0, ok: true), .reading(.dark, echo: true)]),
        ("the echo before the write is reported done", [.write(.dark), .reading(.dark, echo: true), .finished(0, ok: true)]),
        // The issue's case: our write, its echo, a user flip, and a user flip back within seconds.
        ("our write, echo, user flip, user flip back", [
            .write(.dark), .finished(0, ok: true), .reading(.dark, echo: true),
            .reading(.noPreference, echo: false), .reading(.dark, echo: false),
        ]),
        ("a user flip with no write at all", [.reading(.dark, echo: false), .reading(.light, echo: false)]),
        ("two writes in flight, both echoes in order", [
            .write(.dark), .write(.noPreference), .reading(.dark, echo: true), .reading(.noPreference, echo: true),
            .reading(.dark, echo: false),
        ]),
        ("two writes in flight, only the last one's echo (the desktop coalesced them)", [
            .write(.dark), .write(.noPreference), .reading(.noPreference, echo: true), .reading(.dark, echo: false),
        ]),
        ("a failed write has no echo: the same value later is the user's", [
            .write(.dark), .finished(0, ok: false), .reading(.dark, echo: false),
        ]),
        ("a failed write in front of a good one", [
            .write(.dark), .write(.noPreference), .finished(0, ok: false), .reading(.dark, echo: false),
            .reading(.noPreference, echo: true),
        ]),
        // A write that landed without a signal (the desktop already showed it): the next reading that matches no
        // write is the user's, and the finished write is no longer expected, so it cannot swallow a later flip.
        ("a finished write whose echo never came", [
            .write(.dark), .finished(0, ok: true), .reading(.noPreference, echo: false), .reading(.dark, echo: false),
        ]),
        // A write not yet finished stays expected across a user's reading.
        ("a user's reading while a write is still running", [
            .write(.dark), .reading(.light, echo: false), .reading(.dark, echo: true),
        ]),
        ("the same value written twice, two echoes", [
            .write(.dark), .write(.noPreference), .write(.dark), .reading(.dark, echo: true), .reading(.noPreference, echo: true),
            .reading(.dark, echo: true), .reading(.dark, echo: false),
        ]),
    ]

    @Test(arguments: cases) func readingsAreMatchedAgainstTheWritesInFlight(_ name: String, _ steps: [Step]) {
        var w = DesktopWrites()
        var ids: [Int] = []
        for (i, step) in steps.enumerated() {
            switch step {
            case .write(let s): ids.append(w.wrote(s))
            case .finished(let n, let ok): w.finished(ids[n], ok: ok)
            case .reading(let s, let echo):
                let saidEcho = w.reading(s)
                #expect(saidEcho == echo, "\(name): step \(i) \(step)")
            }
        }
    }

    @Test func whatTheDesktopWillShowIsTheLastWriteInFlight() {
        var w = DesktopWrites()
        #expect(w.expected == nil)
        let a = w.wrote(.dark)
        let b = w.wrote(.noPreference)
        #expect(w.expected == .noPreference)
        w.finished(b, ok: false)
        #expect(w.expected == .dark)
        w.finished(a, ok: true)
        #expect(w.expected == .dark)  // done, but its echo has not come yet
        let echo = w.reading(.dark)
        #expect(echo)
        #expect(w.expected == nil)
    }
}
