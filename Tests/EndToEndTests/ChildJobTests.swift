import Testing

/// What hooks and integrations share (ChildRunner.job): the contract's variables as set, none of the daemon's own
/// APPEARANCE_*; their output logged within the same caps, with what was left out said.
@Suite struct ChildJobTests {
    @Test func aHookInheritsNoStrayAppearanceVariables() throws {
        let s = try Sandbox()
        let record = s.root + "/record"
        // A daemon started from a shell where another tool's variables were exported.
        (s.env["APPEARANCE_APP"], s.env["APPEARANCE_OPT_THEME"], s.env["APPEARANCE_INTEGRATION_DIR"]) = ("stray", "stray", "/stray")
        (s.env["APPEARANCE_PREVIOUS"], s.env["DARKMODE"], s.env["HOOK_KEEPS_THIS"]) = ("stray", "7", "kept")
        try HookTests.script(s, s.root + "/config/appearanced/hooks.d/10-env",
                             "echo \"${APPEARANCE_APP-unset} ${APPEARANCE_OPT_THEME-unset} ${APPEARANCE_INTEGRATION_DIR-unset}"
                                 + " prev=$APPEARANCE_PREVIOUS $APPEARANCE $DARKMODE $HOOK_KEEPS_THIS\" >> \(record)")
        let d = try s.startDaemon()
        try waitUntil("the start-up run; stderr: \(d.stderr)") { HookTests.lines(record).count == 1 }
        #expect(HookTests.lines(record) == ["unset unset unset prev= light 0 kept"])
    }

    @Test func anIntegrationsOutputIsCappedAsAHooksIs() throws {
        let s = try Sandbox()
        try HookTests.script(s, s.root + "/config/appearanced/integrations/bulk", """
            case "$1" in
            apply) seq 1 200; head -c 100000 /dev/zero | tr '\\0' x ;;
            available) echo "found: bulk" ;;
            describe) echo "what: prints a lot" ;;
            esac
            exit 0
            """)
        let d = try s.startDaemon()
        let enabled = try s.ctl("integrations", "enable", "bulk")
        #expect(enabled.status == 0 && enabled.out.hasSuffix(": ok\n"), "\(enabled)")
        try d.waitForStderr("integration bulk: [output past 100 lines or 16 KiB is not logged]")
        try waitUntil("the dropped bytes said; stderr: \(d.stderr.suffix(300))") {
            d.stderr.contains(" bytes of output not logged]")
        }
        #expect(d.stderr.contains("appearanced: integration bulk: 100\n") && !d.stderr.contains("integration bulk: 101\n"), "\(d.stderr.suffix(300))")
    }

    /// `appearancectl integrations` asks each integration `available` and `describe` with the same environment.
    @Test func theListAsksWithoutStrayAppearanceVariables() throws {
        let s = try Sandbox()
        (s.env["APPEARANCE_APP"], s.env["APPEARANCE_OPT_THEME"], s.env["DARKMODE"]) = ("stray", "stray", "7")
        try HookTests.script(s, s.root + "/config/appearanced/integrations/env", """
            case "$1" in
            available) echo "found: ${APPEARANCE_APP-unset} ${APPEARANCE_OPT_THEME-unset} ${DARKMODE-unset}" ;;
            describe) echo "what: ${APPEARANCE_APP-unset}" ;;
            esac
            exit 0
            """)
        _ = try s.startDaemon()
        let listed = try s.ctl("integrations")
        #expect(listed.status == 0 && listed.out.contains("env: off\n  program:  found: unset unset unset\n  changes:  unset"), "\(listed)")
    }
}
