import AppearanceCLI
import AppearanceCore
import AppearanceProtocol
import Testing

/// `parse` alone: command lines to what appearancectl runs, and every usage error it reports.
@Suite struct ParseTests {
    static func run(_ line: String, app: String? = nil) throws(UsageError) -> Invocation {
        try parse(line.split(separator: " ").map(String.init), environment: { $0 == "APPEARANCED_APP" ? app : nil })
    }

    static let valid: [(String, Invocation)] = [
        ("get", Invocation(.get(app: nil, json: false))),
        ("get --json", Invocation(.get(app: nil, json: true))),
        ("--json get", Invocation(.get(app: nil, json: true))),
        ("--socket /s get", Invocation(socket: "/s", .get(app: nil, json: false))),
        ("get --socket=/s", Invocation(socket: "/s", .get(app: nil, json: false))),
        ("get --app kitty", Invocation(.get(app: "kitty", json: false))),
        ("get --app=org.gnome.TextEditor", Invocation(.get(app: "org.gnome.TextEditor", json: false))),
        ("status", Invocation(.status(json: false))),
        ("status --json", Invocation(.status(json: true))),
        ("set dark", Invocation(.set(.dark, lifetime: nil, app: nil, json: false))),
        ("set system --json", Invocation(.set(.system, lifetime: nil, app: nil, json: true))),
        ("set light --until-next", Invocation(.set(.light, lifetime: .untilNext, app: nil, json: false))),
        ("set dark --for 1h30m", Invocation(.set(.dark, lifetime: .seconds(5400), app: nil, json: false))),
        ("set dark --for=45s", Invocation(.set(.dark, lifetime: .seconds(45), app: nil, json: false))),
        ("set system --app kitty", Invocation(.set(.system, lifetime: nil, app: "kitty", json: false))),
        ("toggle", Invocation(.toggle(lifetime: nil, app: nil, json: false))),
        ("toggle --for 1d", Invocation(.toggle(lifetime: .seconds(86_400), app: nil, json: false))),
        ("toggle --until-next --json", Invocation(.toggle(lifetime: .untilNext, app: nil, json: true))),
        ("log", Invocation(.log(count: nil, json: false))),
        ("log -n 5 --json", Invocation(.log(count: 5, json: true))),
        ("log --app kitty", Invocation(.log(count: nil, app: "kitty", json: false))),
        ("apps", Invocation(.apps(json: false))),
        ("apps --json", Invocation(.apps(json: true))),
        ("integrations", Invocation(.integrations(enable: [], disable: [], json: false))),
        ("integrations list", Invocation(.integrations(enable: [], disable: [], json: false))),
        ("integrations list --json", Invocation(.integrations(enable: [], disable: [], json: true))),
        ("integrations enable kitty foot", Invocation(.integrations(enable: ["kitty", "foot"], disable: [], json: false))),
        ("integrations enable --force alacritty", Invocation(.integrations(enable: ["alacritty"], disable: [], force: true, json: false))),
        ("integrations disable vim", Invocation(.integrations(enable: [], disable: ["vim"], json: false))),
        ("watch", Invocation(.watch(Watch()))),
        ("watch --json --traits --palette", Invocation(.watch(Watch(json: true, traits: true, palette: true)))),
        ("watch --exit-on-disconnect", Invocation(.watch(Watch(exitOnDisconnect: true)))),
        ("watch --app kitty --json", Invocation(.watch(Watch(app: "kitty", json: true)))),
        ("watch --exec notify-send --urgency low", Invocation(.watchExec(command: ["notify-send", "--urgency", "low"], initial: true, app: nil))),
        ("watch --no-initial --exec true", Invocation(.watchExec(command: ["true"], initial: false, app: nil))),
        ("watch --exec=true", Invocation(.watchExec(command: ["true"], initial: true, app: nil))),
        ("color fill.bg", Invocation(.color(token: "fill.bg", variant: ResolveFor(), format: .hex))),
        ("color fill.bg --mode dark --contrast high --format css",
         Invocation(.color(token: "fill.bg", variant: ResolveFor(mode: .dark, contrast: .high), format: .css))),
        ("asset wallpaper --mode=light", Invocation(.asset(name: "wallpaper", variant: ResolveFor(mode: .light)))),
        ("palette", Invocation(.palette(variant: ResolveFor(), format: .json))),
        ("palette --format gtk --contrast high", Invocation(.palette(variant: ResolveFor(contrast: .high), format: .gtk))),
        ("palette --preview", Invocation(.palettePreview(contrast: nil, color: .auto))),
        ("palette --preview --color=never --contrast high", Invocation(.palettePreview(contrast: .high, color: .never))),
        ("palette --preview --color always", Invocation(.palettePreview(contrast: nil, color: .always))),
        ("palette import --light l.plist --dark d.plist", Invocation(.paletteImport(light: "l.plist", dark: "d.plist", output: nil))),
        ("palette import --light=l --dark=d -o out.toml", Invocation(.paletteImport(light: "l", dark: "d", output: "out.toml"))),
        ("import-darkman", Invocation(.importDarkman(file: nil, output: nil))),
        ("import-darkman conf.yaml --output c.toml", Invocation(.importDarkman(file: "conf.yaml", output: "c.toml"))),
        ("import-darkman -o c.toml --force", Invocation(.importDarkman(file: nil, output: "c.toml", force: true))),
        ("palette import --light=l --dark=d -o out.toml --force", Invocation(.paletteImport(light: "l", dark: "d", output: "out.toml", force: true))),
        ("completions fish", Invocation(.completions(.fish))),
        ("reload", Invocation(.reload)),
        ("--socket /tmp/s reload", Invocation(socket: "/tmp/s", .reload)),
        ("help", Invocation(.help)),
        ("--help", Invocation(.help)),
        ("set --help", Invocation(.commandHelp("set"))),
        ("help set", Invocation(.commandHelp("set"))),
        ("palette import --help", Invocation(.commandHelp("palette"))),
        ("-h", Invocation(.help)),
        ("--version", Invocation(.version)),
        ("get --version", Invocation(.version)),
        ("-- get", Invocation(.get(app: nil, json: false))),
        ("color -- -odd-token", Invocation(.color(token: "-odd-token", variant: ResolveFor(), format: .hex))),
    ]

    @Test(arguments: valid.indices)
    func parsesValidLines(_ i: Int) throws {
        let (line, expected) = Self.valid[i]
        #expect(try Self.run(line) == expected, "\(line)")
    }

    /// APPEARANCED_APP is the default --app of get, set, toggle and watch; --app wins; other commands ignore it.
    @Test func appFromEnvironment() throws {
        #expect(try Self.run("get", app: "kitty") == Invocation(.get(app: "kitty", json: false)))
        #expect(try Self.run("get --app foot", app: "kitty") == Invocation(.get(app: "foot", json: false)))
        #expect(try Self.run("watch --exec true", app: "kitty") == Invocation(.watchExec(command: ["true"], initial: true, app: "kitty")))
        #expect(try Self.run("status", app: "kitty") == Invocation(.status(json: false)))
        #expect(try Self.run("status", app: "bad id") == Invocation(.status(json: false)))
        #expect(throws: UsageError("invalid APPEARANCED_APP \"bad\\u{1b}\" in the environment (1-255 characters of A-Z a-z 0-9 . _ -, not starting with a dot)")) {
            try Self.run("get", app: "bad\u{1b}")
        }
    }

    static let errors: [(String, String)] = [
        ("", "missing command (get, status, set, toggle, reload, log, schedule, postpone, skip, apps, integrations, watch, color, asset, palette, import-darkman, completions)"),
        ("frobnicate", "unknown command \"frobnicate\" (expected get, status, set, toggle, reload, log, schedule, postpone, skip, apps, integrations, watch, color, asset, palette, import-darkman, completions or help)"),
        ("get --bogus", "unknown option \"--bogus\""),
        ("get -x", "unknown option \"-x\""),
        ("get extra", "get: unexpected argument \"extra\""),
        ("status extra", "status: unexpected argument \"extra\""),
        ("--socket", "option --socket needs a value (PATH)"),
        ("get --socket=", "option --socket needs a path (--socket= is empty)"),
        ("--json=yes get", "option --json takes no value"),
        ("set", "set: missing mode (dark, light or system)"),
        ("set blue", "set: invalid mode \"blue\" (expected dark, light or system)"),
        ("set dark x", "set: too many arguments"),
        ("set system --until-next", "set: \"system\" cannot be temporary: it ends every override (drop --until-next/--for)"),
        ("set dark --until-next --for 1h", "set: give --until-next or --for, not both"),
        ("toggle --until-next --for 1h", "toggle: give --until-next or --for, not both"),
        ("set dark --for 90", "invalid --for \"90\" (expected a duration such as 90m, 2h, 1h30m, 45s or 1d, up to 366d)"),
        ("set dark --for 367d", "invalid --for \"367d\" (expected a duration such as 90m, 2h, 1h30m, 45s or 1d, up to 366d)"),
        ("set dark --for 0s", "invalid --for \"0s\" (expected a duration such as 90m, 2h, 1h30m, 45s or 1d, up to 366d)"),
        ("set dark --for", "option --for needs a value (DURATION)"),
        ("set dark --app kitty --for 1h", "set: an app override cannot be temporary (--until-next/--for are for everyone's mode)"),
        ("get --app .hidden", "invalid --app \".hidden\" (1-255 characters of A-Z a-z 0-9 . _ -, not starting with a dot)"),
        ("get --app a/b", "invalid --app \"a/b\" (1-255 characters of A-Z a-z 0-9 . _ -, not starting with a dot)"),
        ("status --app kitty", "--app is not an option of status"),
        ("get --until-next", "--until-next is not an option of get"),
        ("log -n 0", "invalid -n \"0\" (expected a positive whole number)"),
        ("log -n x", "invalid -n \"x\" (expected a positive whole number)"),
        ("get -n 3", "-n is not an option of get"),
        ("palette --json", "palette does not take --json (use --format json)"),
        ("color x --json", "color does not take --json (it prints one value; palette --format json prints them all)"),
        ("import-darkman --json", "import-darkman does not take --json"),
        ("get --exec true", "--exec is an option of watch"),
        ("watch --exec", "option --exec needs a command"),
        ("watch --exec=", "watch: --exec needs a command"),
        ("watch --json --exec true", "watch: --json and --exec do not go together"),
        ("watch --no-initial", "watch: --no-initial goes with --exec"),
        ("get --no-initial", "--no-initial is an option of watch --exec"),
        ("watch --traits", "watch: --traits and --palette go with --json"),
        ("watch --palette --exec true", "watch: --traits and --palette go with --json"),
        ("watch --exit-on-disconnect --exec true", "--exit-on-disconnect is an option of watch and watch --json (watch --exec always reconnects)"),
        ("get --exit-on-disconnect", "--exit-on-disconnect is an option of watch and watch --json (watch --exec always reconnects)"),
        ("watch extra", "watch: unexpected argument \"extra\""),
        ("color", "color: missing token (e.g. fill.bg)"),
        ("color a b", "color: too many arguments"),
        ("color x --format json", "color: invalid --format \"json\" (expected hex, rgb or css)"),
        ("color x --mode dusk", "invalid --mode \"dusk\" (expected dark or light)"),
        ("color x --contrast max", "invalid --contrast \"max\" (expected normal or high)"),
        ("color x --preview", "--preview is not an option of color"),
        ("asset", "asset: missing asset name (e.g. wallpaper)"),
        ("asset x --format hex", "--format is not an option of asset"),
        ("palette --format yaml", "palette: invalid --format \"yaml\" (expected json, css, sh or gtk)"),
        ("palette extra", "palette: unexpected argument \"extra\" (palette import takes --light and --dark)"),
        ("palette --color=always", "palette: --color goes with --preview"),
        ("palette --preview --color=sometimes", "invalid --color \"sometimes\" (expected always, never or auto)"),
        ("palette --preview --mode dark", "palette: --preview shows both modes; it takes only --contrast and --color"),
        ("palette --preview --format css", "palette: --preview shows both modes; it takes only --contrast and --color"),
        ("palette --light l.plist", "--light is not an option of palette"),
        ("palette import --light l", "palette import: needs --light LIGHT.plist and --dark DARK.plist"),
        ("palette import --light l --dark d extra", "palette import: unexpected argument \"extra\""),
        ("palette import --light l --dark d --mode dark", "--mode is not an option of palette import"),
        ("palette -o x", "--output is not an option of palette"),
        ("import-darkman a b", "import-darkman: unexpected argument \"b\""),
        ("import-darkman --light l", "--light is not an option of import-darkman"),
        ("import-darkman --force", "import-darkman: --force goes with -o FILE (it lets the import replace FILE)"),
        ("palette import --light l --dark d --force", "palette import: --force goes with -o FILE (it lets the import replace FILE)"),
        ("get --force", "--force is not an option of get"),
        ("integrations --force", "integrations: --force goes with enable (it enables one whose program is not installed)"),
        ("integrations disable kitty --force", "integrations: --force goes with enable (it enables one whose program is not installed)"),
        ("integrations list kitty", "integrations list: unexpected argument \"kitty\" (it lists them all)"),
        ("integrations start kitty", "integrations: unexpected argument \"start\" (expected list, enable NAME... or disable NAME...)"),
        ("completions", "completions: missing shell (bash, zsh or fish)"),
        ("completions tcsh", "completions: unknown shell \"tcsh\" (expected bash, zsh or fish)"),
        ("completions --json", "completions does not take --json"),
        ("help frobnicate", "help: unknown command \"frobnicate\" (expected get, status, set, toggle, reload, log, schedule, postpone, skip, apps, integrations, watch, color, asset, palette, import-darkman, completions or help)"),
        ("help get set", "help: unexpected argument \"set\" (help takes one command)"),
        ("help --json", "help does not take --json"),
    ]

    @Test(arguments: errors.indices)
    func reportsUsageErrors(_ i: Int) {
        let (line, message) = Self.errors[i]
        #expect(throws: UsageError(message), "\(line)") { try Self.run(line) }
    }

    /// Durations: numbers with units d, h, m, s, each unit at most once and in that order, 1 s to 366 days.
    static let durations: [(String, Int64)] = [
        ("90m", 5400), ("1h30m", 5400), ("1d2h3m4s", 93_784), ("366d", Lifetime.maxSeconds), ("1s", 1), ("45s", 45),
        ("1d", 86_400), ("2h", 7200), ("1d30m", 88_200), ("0h1m", 60), ("01h", 3600), ("365d23h59m60s", Lifetime.maxSeconds),
        ("527040m", Lifetime.maxSeconds), ("31622400s", Lifetime.maxSeconds),
    ]

    @Test(arguments: durations)
    func acceptsDuration(_ text: String, _ seconds: Int64) {
        #expect(parseDuration(text) == seconds, "\(text)")
    }

    /// Refused: a repeated unit, units out of order, a unit without a number, a number without a unit, a sign,
    /// an unknown unit, zero, more than 366 days, and numbers too long for 64 bits.
    @Test(arguments: ["1h1h", "30m1h", "1s1m", "1m1d", "2d1d", "h", "m30", "1x", "", "0m", "0s0m", "0d0h0m0s", "90", "1h30",
                      "+1h", "1h+30m", "-1h", "1h-30m", " 1h", "1h ", "1 h", "1.5h", "\u{FF11}h", "366d1s", "367d",
                      "31622401s", "99999999999999999999d", "99999999999999999999s", "9223372036854775807s",
                      "9223372036854775808s", "106751991167300d", "1hh", "1h30mm", "1H", "1d1"])
    func refusesDuration(_ text: String) {
        #expect(parseDuration(text) == nil, "\(text)")
    }

    /// The command line's error for a refused duration names the value and what is expected.
    @Test func refusedDurationOnTheCommandLine() {
        #expect(throws: UsageError("invalid --for \"1h1h\" (expected a duration such as 90m, 2h, 1h30m, 45s or 1d, up to 366d)")) {
            try Self.run("set dark --for 1h1h")
        }
    }
}
