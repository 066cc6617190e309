import Foundation
import Testing

/// What `integrations enable` promises: one whose first run fails is left off (what it changed restored, the
/// failure shown), one whose program is not installed is refused with the reason unless `--force`, and the
/// listing says how to get the integrations when there are none.
@Suite struct IntegrationEnableTests {
    /// An integration of the user's own that records its runs and fails `apply` while `fail` exists.
    static func flaky(_ s: Sandbox) throws -> (record: String, fail: String) {
        let record = s.root + "/flaky.record", fail = s.root + "/fail"
        try HookTests.script(s, s.root + "/config/appearanced/integrations/flaky", """
            case "$1" in
            available) echo "found: the flaky one" ;;
            apply) echo "apply $APPEARANCE" >> \(record)
                   [ ! -e \(fail) ] || { echo 'flaky: the program refused' >&2; exit 2; } ;;
            restore) echo restore >> \(record) ;;
            esac
            """)
        return (record, fail)
    }

    @Test(.timeLimit(.minutes(2)))
    func aFailedFirstRunLeavesItOffButALaterFailureDoesNot() throws {
        let s = try Sandbox()
        let (record, fail) = try Self.flaky(s)
        try s.write("", to: fail)
        try s.startDaemon()
        let r = try s.ctl("integrations", "enable", "flaky")
        #expect(r.status == 65, "\(r)")
        #expect(r.out.hasPrefix("flaky: enabling failed; apply light at ")
                && r.out.hasSuffix(": exit status 2: flaky: the program refused; left off (what it changed is restored)\n"), "\(r)")
        #expect(HookTests.lines(record) == ["apply light", "restore"])
        #expect(try String(contentsOfFile: s.root + "/state/appearanced/integrations.json", encoding: .utf8) == #"{"enabled":[]}"# + "\n")
        #expect(try s.ctl("status").out.contains("integrations: none enabled"))
        let listed = try s.ctl("integrations").out
        #expect(listed.contains("flaky: off\n") && listed.contains("exit status 2: flaky: the program refused; left off"), "\(listed)")
        // Not given the mode any more.
        #expect(try s.ctl("set", "dark").status == 0)

        // Mended, it is enabled; a later failure (a switch) keeps it enabled, and status says it failed.
        try FileManager.default.removeItem(atPath: fail)
        let ok = try s.ctl("integrations", "enable", "flaky")
        #expect(ok.status == 0 && ok.out.hasPrefix("flaky: enabled; apply dark at "), "\(ok)")
        try s.write("", to: fail)
        #expect(try s.ctl("set", "light").status == 0)
        try waitUntil("the failed switch; \(HookTests.lines(record))") { HookTests.lines(record).count == 4 }
        try waitUntil("status to say it failed") {
            try s.ctl("status").out.contains("integrations: 1 enabled (flaky): failed: flaky: exit status 2: flaky: the program refused")
        }
        #expect(HookTests.lines(record) == ["apply light", "restore", "apply dark", "apply light"])
    }

    static let shipped = IntegrationConfigTests.shipped
    static let noAlacritty = !["/usr/bin/alacritty", "/usr/local/bin/alacritty", "/bin/alacritty"].contains { FileManager.default.isExecutableFile(atPath: $0) }

    /// The shipped alacritty integration where alacritty is not installed: refused, nothing written; with
    /// --force its files are prepared, and disabling takes them back.
    @Test(.timeLimit(.minutes(2)), .enabled(if: noAlacritty, "alacritty is installed here"))
    func aMissingProgramIsRefusedUnlessForced() throws {
        let s = try Sandbox()
        s.env["APPEARANCED_INTEGRATIONS_DIR"] = Self.shipped
        let dir = s.root + "/config/alacritty"
        try s.startDaemon()
        let refused = try s.ctl("integrations", "enable", "alacritty")
        #expect(refused.status == 65 && refused.out.isEmpty, "\(refused)")
        #expect(refused.err == "appearancectl: integrations enable: alacritty: not installed: alacritty\n"
                + "appearancectl: nothing enabled (--force enables it anyway: its files are prepared for when the program is installed)\n", "\(refused.err)")
        #expect(!FileManager.default.fileExists(atPath: dir))
        #expect(!FileManager.default.fileExists(atPath: s.root + "/state/appearanced/integrations.json"))

        let forced = try s.ctl("integrations", "enable", "--force", "alacritty")
        #expect(forced.status == 0 && forced.out.hasPrefix("alacritty: enabled; apply light at ") && forced.out.hasSuffix(": ok\n"), "\(forced)")
        #expect(FileManager.default.fileExists(atPath: dir + "/alacritty.toml") && FileManager.default.fileExists(atPath: dir + "/appearanced.toml"))
        #expect(try s.ctl("integrations", "disable", "alacritty").status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    /// The shipped wallpaper integration without its images, forced past its missing programs: its first run
    /// fails, so it is left off, and says what to set.
    @Test(.timeLimit(.minutes(2)))
    func theWallpaperWithoutImagesIsLeftOff() throws {
        let s = try Sandbox()
        s.env["APPEARANCED_INTEGRATIONS_DIR"] = Self.shipped
        try s.startDaemon()
        let r = try s.ctl("integrations", "enable", "--force", "wallpaper")
        #expect(r.status == 65 && r.out.contains("wallpaper: enabling failed; apply light at ")
                && r.out.hasSuffix(": exit status 1: wallpaper: no image for light: set light = \"/path/to/image\" in [integrations.wallpaper]; left off (what it changed is restored)\n"), "\(r)")
        #expect(try s.ctl("status").out.contains("integrations: none enabled"))
    }

    /// None found: the listing and an enable say how to get them.
    @Test(.timeLimit(.minutes(1)))
    func noneFoundSaysHowToGetThem() throws {
        let s = try Sandbox.started()
        let list = try s.ctl("integrations", "list")
        #expect(list.status == 0 && list.out.hasPrefix("no integrations found: the shipped ones come with the package, or with `make install PREFIX=~/.local` "
            + "in the source tree; `make run` there runs the daemon with the checkout's integrations/"), "\(list)")
        let enable = try s.ctl("integrations", "enable", "kitty")
        #expect(enable.status == 65 && enable.err.contains("no integration named \"kitty\" (found: none; searched ")
                && enable.err.contains("`make install PREFIX=~/.local`"), "\(enable)")
    }
}
