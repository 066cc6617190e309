import AppearanceCore
import Testing

/// The notice's words: which mode and when, its buttons labelled for people, and the commands for a server that
/// shows no buttons.
@Suite struct NoticeTests {
    static let dark = Notice(time: 1_800_000_000, mode: .dark, when: "19:00", cause: "sunset", postponeBy: 1800)

    @Test func summaryBodyAndButtons() {
        #expect(Self.dark.summary == "Dark mode at 19:00")
        #expect(Self.dark.body(buttons: true) == "The schedule switches to dark at 19:00 (sunset).")
        #expect(Self.dark.actions.map(\.key) == [.postpone, .skip])
        #expect(Self.dark.actions.map(\.label) == ["Postpone 30 minutes", "Skip"])
        var light = Self.dark
        (light.mode, light.when, light.postponeBy) = (.light, "Tue 2026-03-31 07:00", 5400)
        #expect(light.summary == "Light mode at Tue 2026-03-31 07:00")
        #expect(light.body(buttons: false) == "The schedule switches to light at Tue 2026-03-31 07:00 (sunset). "
            + "To put it off: appearancectl postpone 1h30m; to skip it: appearancectl skip.")
    }

    @Test func aRefusalIsSaidAndMakesAnotherNotice() {
        var refused = Self.dark
        refused.refusal = "postpone: that would put dark past the change after it (light at 07:00); skip it instead"
        #expect(refused.body(buttons: true).hasPrefix("Not done: postpone: that would put dark past the change after it (light at 07:00); skip it instead.\n"))
        #expect(refused.key != Self.dark.key)
        var later = Self.dark
        later.when = "Tue 2026-03-31 19:00"  // the same change written from another day: the same notice
        #expect(later.key == Self.dark.key)
    }

    @Test(arguments: [(Int64(1), "1 second"), (45, "45 seconds"), (60, "1 minute"), (1800, "30 minutes"), (3600, "1 hour"),
                      (5400, "1 hour 30 minutes"), (86_400, "1 day"), (90_061, "1 day 1 hour 1 minute 1 second")])
    func words(_ seconds: Int64, _ text: String) {
        #expect(Notice.words(seconds) == text)
    }

    @Test(arguments: [(Int64(300), "5m"), (1800, "30m"), (5400, "1h30m"), (86_400, "24h"), (45, "45s")])
    func durations(_ seconds: Int64, _ text: String) {
        #expect(Notice.duration(seconds) == text)
    }
}
