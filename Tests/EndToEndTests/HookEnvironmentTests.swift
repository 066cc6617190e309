import Testing

/// What a hook is given: the contract's variables as set, none of the daemon's own APPEARANCE_* (as integrations).
@Suite struct HookEnvironmentTests {
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
        defer { d.stop() }
        try waitUntil("the start-up run; stderr: \(d.stderr)") { HookTests.lines(record).count == 1 }
        #expect(HookTests.lines(record) == ["unset unset unset prev= light 0 kept"])
    }
}
