import AppearanceKit
import Foundation
import Testing
import class TestSupport.FakePortal

// Traits, palette, resolve and the palette commands of appearancectl against the real daemon.
// Golden files live in Golden/; run with APPEARANCED_UPDATE_GOLDEN=1 to rewrite them after a deliberate change.

enum Golden {
    static let dir = Repo.root + "/Tests/EndToEndTests/Golden"
    static let update = ProcessInfo.processInfo.environment["APPEARANCED_UPDATE_GOLDEN"] == "1"

    static func check(_ name: String, _ actual: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = dir + "/" + name
        if update { try actual.write(toFile: path, atomically: true, encoding: .utf8); return }
        let expected = try String(contentsOfFile: path, encoding: .utf8)
        #expect(actual == expected, "\(name) differs from the golden file", sourceLocation: sourceLocation)
    }
}

extension Sandbox {
    var paletteFile: String { root + "/config/appearanced/palette.toml" }

    func installShippedPalette() throws {
        try write(try String(contentsOfFile: Repo.root + "/config/palette.toml", encoding: .utf8), to: paletteFile)
    }

    func ctlOK(_ args: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let r = try run(Bin.ctl, args)
        #expect(r.status == 0, "appearancectl \(args.joined(separator: " ")): \(r.err)", sourceLocation: sourceLocation)
        return r.out
    }
}

extension RawClient {
    func request(_ json: String) throws -> String {
        try send(json + "\n")
        return try #require(try line())
    }
}

@Suite struct PaletteCommandTests {
    /// Every output format, for the shipped palette, in light and in dark at high contrast.
    @Test func everyFormatMatchesItsGoldenFile() throws {
        let s = try Sandbox()
        try s.installShippedPalette()
        try s.startDaemon()
        for format in ["json", "css", "sh", "gtk"] {
            try Golden.check("palette-light.\(format)", try s.ctlOK("palette", "--format", format))
            try Golden.check("palette-dark-high.\(format)", try s.ctlOK("palette", "--format=\(format)", "--mode", "dark", "--contrast", "high"))
        }
        #expect(try s.ctlOK("palette") == (try s.ctlOK("palette", "--format", "json")))
        var colors = ""
        for token in ["fill.bg", "fill.divider", "text.desc", "accent"] {
            for mode in ["light", "dark"] {
                for format in ["hex", "rgb", "css"] {
                    colors += "\(token) \(mode) \(format): " + (try s.ctlOK("color", token, "--mode", mode, "--format", format))
                }
            }
        }
        try Golden.check("colors.txt", colors)
        try Golden.check("preview.ansi", try s.ctlOK("palette", "--preview", "--color=always"))
        try Golden.check("preview-high.ansi", try s.ctlOK("palette", "--preview", "--contrast", "high", "--color=always"))
        // Into a pipe, with NO_COLOR or with TERM=dumb: the same table without escape sequences.
        let plain = try s.ctlOK("palette", "--preview")
        #expect(!plain.contains("\u{1B}") && plain.contains("fill.bg"), "\(plain)")
        s.env["NO_COLOR"] = "1"
        #expect(!(try s.ctlOK("palette", "--preview", "--color=auto")).contains("\u{1B}"))
        #expect(try s.ctlOK("palette", "--preview", "--color=never") == plain)
    }

    @Test func colorAndAssetFollowTheMode() throws {
        let s = try Sandbox()
        try s.installShippedPalette()
        try s.startDaemon()
        #expect(try s.ctlOK("color", "fill.bg") == "#ffffff\n")
        #expect(try s.ctlOK("asset", "wallpaper") == "/usr/share/backgrounds/gnome/adwaita-l.jpg\n")
        _ = try s.ctlOK("set", "dark")
        #expect(try s.ctlOK("color", "fill.bg") == "#262626\n")
        #expect(try s.ctlOK("color", "fill.bg", "--contrast", "high") == "#000000\n")
        #expect(try s.ctlOK("color", "fill.card", "--contrast", "high") == "#3c3c3c\n")  // no dark-high: dark
        #expect(try s.ctlOK("color", "fill.bg", "--mode", "light") == "#ffffff\n")
        #expect(try s.ctlOK("asset", "wallpaper") == "/usr/share/backgrounds/gnome/adwaita-d.jpg\n")
        let status = try s.ctlOK("status")
        #expect(status.contains("palette:     \(s.paletteFile): 9 tokens"), "\(status)")
        #expect(status.contains("traits:      contrast unavailable, reduced motion unavailable, accent unavailable"), "\(status)")
    }

    @Test(arguments: [
        (["color", "nope"], 65, #"resolve: unknown token "nope""#),
        (["asset", "fill.bg"], 65, "is a color"),
        (["color", "wallpaper"], 65, "is an asset"),
        (["color"], 64, "missing token"),
        (["color", "a", "b"], 64, "too many"),
        (["color", "fill.bg", "--format", "cmyk"], 64, "invalid --format"),
        (["color", "fill.bg", "--mode", "dim"], 64, "invalid --mode"),
        (["color", "fill.bg", "--contrast"], 64, "needs a value"),
        (["palette", "--format", "xml"], 64, "invalid --format"),
        (["palette", "--preview", "--mode", "dark"], 64, "--preview shows both modes"),
        (["get", "--mode", "dark"], 64, "--mode is not an option of get"),
        (["palette", "import", "--light", "x.plist"], 64, "needs --light"),
        (["palette", "import", "--mode", "dark"], 64, "--mode is not an option of palette import"),
        (["watch", "--traits"], 64, "go with --json"),
    ] as [([String], Int32, String)])
    func errors(args: [String], status: Int32, message: String) throws {
        let s = try Sandbox()
        try s.installShippedPalette()
        try s.startDaemon()
        let r = try s.run(Bin.ctl, args)
        #expect(r.status == status, "\(args): \(r.err)")
        #expect(r.err.contains(message), "\(args): \(r.err)")
        #expect(r.out.isEmpty)
    }

    @Test func resolveOverTheSocket() throws {
        let s = try Sandbox()
        try s.installShippedPalette()
        try s.startDaemon()
        let c = try RawClient(s.socket)
        #expect(try c.request(#"{"jsonrpc":"2.0","id":1,"method":"resolve","params":{"tokens":["text.desc","wallpaper"],"mode":"dark"}}"#)
            == ##"{"jsonrpc":"2.0","id":1,"result":{"mode":"dark","contrast":"normal","colors":{"text.desc":"#ffffff99"},"assets":{"wallpaper":"/usr/share/backgrounds/gnome/adwaita-d.jpg"}}}"##)
        // An unknown token is an error naming it, never a made-up color; the known ones do not hide it.
        #expect(try c.request(#"{"jsonrpc":"2.0","id":2,"method":"resolve","params":{"tokens":["fill.bg","fill.bgg","txt"]}}"#)
            == #"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"resolve: unknown tokens \"fill.bgg\", \"txt\""}}"#)
        let sub = try c.request(#"{"jsonrpc":"2.0","id":3,"method":"subscribe","params":{"palette":true}}"#)
        #expect(sub.contains(##""palette":{"mode":"light","contrast":"normal","colors":{"fill.bg":"#ffffff""##), "\(sub)")
    }

    @Test func anEmptyPaletteSaysWhy() throws {
        let s = try Sandbox.started()
        let r = try s.run(Bin.ctl, ["color", "fill.bg"])
        #expect(r.status == 65)
        #expect(r.err.contains(#"unknown token "fill.bg" (the palette is empty: "#) && r.err.contains("no such file"), "\(r.err)")
        #expect(try s.ctlOK("palette", "--format", "css") == "/* appearanced palette: light, normal contrast */\n:root {\n}\n")
    }
}

@Suite struct PaletteImportTests {
    @Test func lflBundlesBecomeAPalette() throws {
        let s = try Sandbox()
        let light = Golden.dir + "/lfl-light.plist", dark = Golden.dir + "/lfl-dark.plist"
        s.env["PWD"] = Golden.dir
        let r = try s.run(Bin.ctl, ["palette", "import", "--light", light, "--dark", dark])
        #expect(r.status == 0, "\(r.err)")
        try Golden.check("lfl-import.toml", r.out.replacingOccurrences(of: Golden.dir, with: "GOLDEN"))
        // Keys present in one file only are reported.
        #expect(r.err == "appearancectl: only in \(light) (kept for both modes): PColorLightOnly\n"
                + "appearancectl: only in \(dark) (kept for both modes): PColorDarkOnly\n", "\(r.err)")

        // -o writes the file, and the daemon serves it: AARRGGBB became #RRGGBBAA.
        let out = s.root + "/config/imported.toml"
        #expect(try s.run(Bin.ctl, ["palette", "import", "--light", light, "--dark", dark, "-o", out]).status == 0)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == r.out)
        try s.write("palette = \"\(out)\"\n", to: s.configFile)
        try s.startDaemon()
        #expect(try s.ctlOK("color", "PColorDivider") == "#00000014\n")
        #expect(try s.ctlOK("color", "PColorDivider", "--mode", "dark") == "#ffffff4d\n")
        #expect(try s.ctlOK("color", "PColorDesc", "--mode", "dark", "--format", "css") == "rgb(255 255 255 / 0.6)\n")
        #expect(try s.ctlOK("color", "PColorDarkOnly", "--mode", "light") == "#202020\n")
        #expect(try s.ctlOK("color", "Brand & Logo", "--mode", "dark") == "#78aeed\n")
    }

    @Test(arguments: [
        ("<plist><dict><key>A</key><string>12345</string></dict></plist>", #"bad.plist:1: A: "12345" is not a hex color (RRGGBB or AARRGGBB)"#),
        ("<plist><array/></plist>", "bad.plist:1: expected <dict> inside <plist>"),
        ("<plist><dict>\n<key>A</key>\n<integer>1</integer></dict></plist>", "bad.plist:3: A: expected a <string> value, found <integer>"),
        ("<plist><dict><key>A</key><string>000000</string><key>A</key><string>000000</string></dict></plist>", #"duplicate key "A""#),
    ])
    func badPlistsAreErrorsNamingFileAndLine(text: String, message: String) throws {
        let s = try Sandbox()
        let bad = s.root + "/bad.plist"
        try s.write(text, to: bad)
        let r = try s.run(Bin.ctl, ["palette", "import", "--light", bad, "--dark", Golden.dir + "/lfl-dark.plist"])
        #expect(r.status == 65)
        #expect(r.err.contains(message.replacingOccurrences(of: "bad.plist", with: bad)), "\(r.err)")
        #expect(r.out.isEmpty)
    }
}

@Suite struct TraitsAndPaletteSubscriberTests {
    /// A trait change reaches only subscribers that asked for traits (or whose palette it changes).
    @Test func perSubscriberFiltering() async throws {
        let (s, portal) = try await Sandbox.withFakePortal(.v2, colorScheme: 2, traits: ["--contrast", "0", "--reduced-motion", "0"])
        try s.installShippedPalette()
        try s.startDaemon()
        try waitUntil("the traits read") { try s.ctl("get", "--json").out.contains(#""contrast":"normal""#) }

        let modeOnly = try RawClient(s.socket), traits = try RawClient(s.socket), palette = try RawClient(s.socket)
        #expect(try modeOnly.request(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"#).contains(#""mode":"light""#))
        #expect(try traits.request(#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"traits":true}}"#)
            .contains(#""traits":{"contrast":"normal","reducedMotion":false,"accentColor":null}"#))
        let first = try palette.request(#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"palette":true}}"#)
        #expect(first.contains(##""text.desc":"#26262699""##), "\(first)")

        // Reduced motion: only the traits subscriber hears of it (it changes no color).
        try await portal.send("motion 1")
        let n1 = try #require(try traits.line())
        #expect(n1.contains(#""reducedMotion":true"#) && n1.contains(#""mode":"light""#) && n1.contains(#""previous":"light""#), "\(n1)")
        // High contrast: the traits subscriber, and the palette subscriber, whose colors change.
        try await portal.send("contrast 1")
        #expect(try #require(try traits.line()).contains(#""contrast":"high""#))
        let n2 = try #require(try palette.line())
        #expect(n2.contains(##""contrast":"high","colors":{"fill.bg":"#ffffff""##) && n2.contains(##""text.desc":"#262626d9""##), "\(n2)")
        // The accent: the palette's accent token follows the desktop's.
        try await portal.send("accent 1 0 0")
        #expect(try #require(try traits.line()).contains(##""accentColor":"#ff0000""##))
        #expect(try #require(try palette.line()).contains(##""accent":"#ff0000""##))
        #expect(try s.ctlOK("color", "accent", "--mode", "dark") == "#ff0000\n")
        // A mode change reaches all three; for the mode-only subscriber it is the first notification.
        try await portal.send("set 1")
        let m = try #require(try modeOnly.line())
        #expect(m.contains(#""method":"changed""#) && m.contains(#""mode":"dark""#) && m.contains(#""previous":"light""#), "\(m)")
        #expect(!m.contains(#""palette""#))
        #expect(try #require(try traits.line()).contains(#""mode":"dark""#))
        #expect(try #require(try palette.line()).contains(##""fill.bg":"#000000""##))  // dark-high
        let status = try s.ctlOK("status")
        #expect(status.contains("traits:      contrast high, reduced motion yes, accent #ff0000"), "\(status)")
    }

    /// SIGHUP reloads the palette: `palette` subscribers get the new values; an invalid palette is reported with
    /// file, line and key, and the previous one stays in force.
    @Test func reloadOnSIGHUP() throws {
        let s = try Sandbox()
        try s.installShippedPalette()
        let d = try s.startDaemon()
        let sub = try RawClient(s.socket), plain = try RawClient(s.socket)
        let first = try sub.request(#"{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"palette":true,"traits":true}}"#)
        #expect(first.contains(##""fill.bg":"#ffffff""##))
        _ = try plain.request(#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"#)

        // A changed value: the palette subscriber is told, with the same seq (the state did not change).
        let shipped = try String(contentsOfFile: s.paletteFile, encoding: .utf8)
        try s.write(shipped.replacingOccurrences(of: "light = \"#FFFFFF\"\ndark = \"#262626\"", with: "light = \"#FDFDFD\"\ndark = \"#262626\""),
                    to: s.paletteFile)
        kill(d.pid, SIGHUP)
        let n = try #require(try sub.line())
        #expect(n.contains(#""method":"changed""#) && n.contains(##""fill.bg":"#fdfdfd""##) && n.contains(#""seq":0"#), "\(n)")
        #expect(try s.ctlOK("color", "fill.bg") == "#fdfdfd\n")

        // An invalid palette: an error naming file, line and key; the previous palette stays.
        try s.write("[fill.bg]\nlight = \"#FFFFFF\"\ndark = \"#12345\"\n", to: s.paletteFile)
        kill(d.pid, SIGHUP)
        try d.waitForStderr("\(s.paletteFile):3: fill.bg.dark: invalid color \"#12345\"")
        #expect(d.stderr.contains("keeping the previous palette"))
        #expect(try s.ctlOK("color", "fill.bg") == "#fdfdfd\n")
        #expect(try s.ctlOK("status").contains("not used"))
        // `reload` says so too, and does not claim success.
        let reload = try s.ctl("reload")
        #expect(reload.status == 65 && reload.err.contains("palette \(s.paletteFile): not used, fill.bg.dark: invalid color \"#12345\"")
                && reload.err.hasSuffix("(line 3); keeping the previous palette\n"), "\(reload)")
        try s.write("[fill.bg]\nlight = \"#FFFFFG\"\n", to: s.paletteFile)
        let again = try s.ctl("reload")
        #expect(again.status == 65 && again.err.contains("not used") && again.err.contains("#FFFFFG"), "\(again)")
        #expect(try s.ctlOK("color", "fill.bg") == "#fdfdfd\n")

        // A reload that changes nothing tells nobody: the next line each subscriber reads is the mode change.
        try s.write(shipped.replacingOccurrences(of: "light = \"#FFFFFF\"\ndark = \"#262626\"", with: "light = \"#FDFDFD\"\ndark = \"#262626\""),
                    to: s.paletteFile)
        kill(d.pid, SIGHUP)
        try waitUntil("the fixed palette to be read") { try s.ctlOK("status").contains(": 9 tokens") }
        _ = try s.ctlOK("set", "dark")
        let m = try #require(try sub.line())
        #expect(m.contains(#""mode":"dark""#) && m.contains(##""fill.bg":"#262626""##), "\(m)")
        let p = try #require(try plain.line())
        #expect(p.contains(#""mode":"dark""#) && !p.contains(#""palette""#), "\(p)")
    }

    /// A palette copied into the config folder is used at once, and an edit of it too, without a reload;
    /// the folder may not even exist when the daemon starts.
    @Test func aPaletteCopiedOrEditedIsPickedUpWithoutAReload() throws {
        let s = try Sandbox()
        #expect(!FileManager.default.fileExists(atPath: s.root + "/config/appearanced"))
        let d = try s.startDaemon()
        #expect(try s.ctl("color", "fill.bg").status != 0)
        let watches = Self.inotifyDescriptors(d.pid)
        try s.installShippedPalette()  // makes the folder, then writes the file (atomically: a rename)
        try waitUntil("the copied palette to be used; stderr: \(d.stderr)") { try s.ctl("color", "fill.bg").out == "#ffffff\n" }
        #expect(try s.ctlOK("status").contains("palette.toml: 9 tokens"))
        // The folder's watch gave way to the file's: one watch still, not both.
        #expect(Self.inotifyDescriptors(d.pid) == watches, "\(watches) inotify descriptors before, \(Self.inotifyDescriptors(d.pid)) after")
        let shipped = try String(contentsOfFile: s.paletteFile, encoding: .utf8)
        try s.write(shipped.replacingOccurrences(of: "light = \"#FFFFFF\"", with: "light = \"#FAFAFA\""), to: s.paletteFile)
        try waitUntil("the edited palette to be used") { try s.ctl("color", "fill.bg").out == "#fafafa\n" }
        try d.waitForStderr("palette.toml changed: reading the palette again")
    }

    /// How many inotify descriptors process `pid` holds.
    static func inotifyDescriptors(_ pid: pid_t) -> Int {
        let dir = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/" + $0)) == "anon_inode:inotify" }.count
    }

    @Test func appearanceKitChangesWithPalette() async throws {
        let s = try Sandbox()
        try s.installShippedPalette()
        try s.startDaemon()
        let client = try await AppearanceClient(socketPath: s.socket)
        #expect(try await client.resolve(["fill.bg"], mode: .dark)["fill.bg"] == .color(Color(0x26, 0x26, 0x26)))
        #expect(try await client.palette(contrast: .high)["text.desc"] == .color(Color(0x26, 0x26, 0x26, alpha: 217)))
        await #expect(throws: AppearanceError.self) { try await client.resolve(["nope"]) }
        var seen: [String] = []
        for try await change in client.changes(palette: true) {
            switch change {
            case .initial(let st): seen.append("initial \(st.mode.rawValue)"); _ = try await client.set(.dark)
            case .changed(let st, let previous): seen.append("\(st.mode.rawValue)<-\(previous.rawValue)")
            case .paletteChanged(let p): seen.append("palette \(p["fill.bg"]?.text ?? "-")")
            case .connectionLost, .reconnected: seen.append("\(change)")
            }
            if seen.count == 4 { break }
        }
        #expect(seen == ["initial light", "palette #ffffff", "dark<-light", "palette #262626"])
    }
}
