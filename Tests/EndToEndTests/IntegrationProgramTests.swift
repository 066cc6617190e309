import Foundation
import Testing
import TestSupport

/// Each integration against its real program where Debian ships it and it runs headless here (Neovim, Vim,
/// tmux, Emacs, gsettings with dconf on a private bus, GLib's key files); for the programs that need a
/// display (alacritty here; kitty and foot in IntegrationTerminalTests), their own config reader or check on
/// the files written, and stand-ins on PATH for the signals and commands they would get, or for a newer
/// version than Debian's (Neovim 0.11). The programs are TEST_PKGS (make test installs
/// them): a missing one fails its test rather than skipping it.
@Suite("Integration scripts: the real programs") struct IntegrationProgramTests {
    static let python = "/usr/bin/python3"

    // MARK: Neovim

    @Test
    func neovimFollowsInEveryRunningInstance() throws {
        let rig = try IntegrationRig()
        let none = try rig.run("neovim", "apply", mode: "dark")
        #expect(none.status == 0 && none.out.contains("no Neovim running: nothing to change"), "\(none)")

        // Two servers where Neovim 0.8+ puts them, and one where 0.7 does ($TMPDIR/nvimXXXXXX/0).
        try FileManager.default.createDirectory(atPath: rig.tmp + "/nvimAbc123", withIntermediateDirectories: true)
        let sockets = [rig.runtime + "/nvim.1001.0", rig.runtime + "/nvim.1002.0", rig.tmp + "/nvimAbc123/0"]
        let servers = try sockets.map { socket in
            try Child("/usr/bin/nvim", ["--headless", "--clean", "--listen", socket], env: rig.env)
        }
        defer { servers.forEach(stopAndReap) }
        for socket in sockets {
            try waitUntil("nvim to listen on \(socket)") { FileManager.default.fileExists(atPath: socket) }
        }
        // nvim --remote-expr prints the value on stderr.
        func query(_ socket: String, _ expr: String) throws -> String {
            let r = try rig.program("/usr/bin/nvim", ["--headless", "--clean", "--server", socket, "--remote-expr", expr])
            return (r.out + r.err).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for mode in ["dark", "light"] {
            let r = try rig.run("neovim", "apply", mode: mode,
                                settings: ["dark-colorscheme": "blue", "light-colorscheme": "morning"])
            #expect(r.status == 0, "\(r)")
            for socket in sockets {
                #expect(try query(socket, "&background") == mode, "\(socket)")
                #expect(try query(socket, "g:colors_name") == (mode == "dark" ? "blue" : "morning"), "\(socket)")
            }
        }
        // A colorscheme that does not exist: one line naming the socket and Neovim's own message, without the
        // Lua error and stack trace nvim --remote-expr wraps around it.
        let bad = try rig.run("neovim", "apply", mode: "dark", settings: ["dark-colorscheme": "nosuchscheme"])
        #expect(bad.status == 1, "\(bad)")
        #expect(sockets.contains { bad.errLines == ["neovim: Neovim at \($0) refused 'set background=dark | colorscheme nosuchscheme': "
                                                    + "E185: Cannot find color scheme 'nosuchscheme'"] }, "\(bad)")
        let odd = try rig.run("neovim", "apply", mode: "dark", settings: ["dark-colorscheme": "x') | call system('id"])
        #expect(odd.status == 1 && odd.errLines.count == 1 && odd.err.contains("is not a colorscheme name"), "\(odd)")
    }

    /// A socket left by a Neovim that crashed is skipped; one whose server does not answer does not hang the
    /// integration: each call has a deadline, and the socket is named.
    @Test
    func neovimSkipsAStaleSocketAndNamesAHungOne() throws {
        let rig = try IntegrationRig()
        let stale = rig.runtime + "/nvim.998.0"
        let made = try rig.program(Self.python, ["-c", "import socket; socket.socket(socket.AF_UNIX).bind('\(stale)')"])
        #expect(made.status == 0, "\(made)")
        let r = try rig.run("neovim", "apply", mode: "light")
        #expect(r.status == 0 && r.out.contains("nvim \(stale): nobody answers there"), "\(r)")

        // A server that takes the connection and reads the request, but never answers.
        let hung = rig.runtime + "/nvim.999.0"
        let server = try Child(Self.python, ["-c", """
            import socket
            s = socket.socket(socket.AF_UNIX); s.bind('\(hung)'); s.listen(1)
            print('listening', flush=True)
            c, _ = s.accept()
            while c.recv(65536):
                pass
            """], env: rig.env)
        defer { stopAndReap(server) }
        _ = try server.waitForLines(1)
        let stuck = try rig.run("neovim", "apply", mode: "light")
        #expect(stuck.status == 1, "\(stuck)")
        #expect(stuck.errLines == ["neovim: Neovim did not answer within 2 s at: \(hung)"], "\(stuck)")
    }

    /// Neovim 0.11 and later set their background from their terminal: it is left to them, and only the
    /// colorscheme set is sent. A stand-in nvim that reports 0.11 and is Debian's nvim for everything else (the servers are real).
    static func nvim011(_ rig: IntegrationRig) throws {
        try rig.writeExecutable("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'NVIM v0.11.0'; exit 0; }\nexec /usr/bin/nvim \"$@\"\n",
                                to: rig.root + "/bin/nvim")
    }

    @Test func neovimFrom011LeavesTheBackgroundToIt() throws {
        let rig = try IntegrationRig()
        try Self.nvim011(rig)
        let socket = rig.runtime + "/nvim.1001.0"
        let server = try Child("/usr/bin/nvim", ["--headless", "--clean", "--listen", socket], env: rig.env)
        defer { stopAndReap(server) }
        try waitUntil("nvim to listen on \(socket)") { FileManager.default.fileExists(atPath: socket) }
        func query(_ expr: String) throws -> String {
            let r = try rig.program("/usr/bin/nvim", ["--headless", "--clean", "--server", socket, "--remote-expr", expr])
            return (r.out + r.err).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        _ = try query("execute('set background=light')")

        let available = try rig.run("neovim", "available")
        #expect(available.out.hasPrefix("found: \(rig.root)/bin/nvim (NVIM v0.11.0): Neovim 0.11.0 follows its terminal's light or dark itself"), "\(available)")
        let none = try rig.run("neovim", "apply", mode: "dark")
        #expect(none.status == 0 && none.out == "Neovim 0.11.0 follows its terminal's light or dark itself: nothing to send (no dark-colorscheme set)\n", "\(none)")
        #expect(try query("&background") == "light", "left to Neovim")

        // A colorscheme of the user's is still sent, alone.
        let scheme = try rig.run("neovim", "apply", mode: "dark", settings: ["dark-colorscheme": "blue"])
        #expect(scheme.status == 0 && scheme.out.contains("nvim \(socket): colorscheme blue\n"), "\(scheme)")
        #expect(try query("g:colors_name") == "blue")

        // background = "always": sent as to an older Neovim.
        let always = try rig.run("neovim", "apply", mode: "light", settings: ["background": "always"])
        #expect(always.status == 0 && always.out.contains("set background=light"), "\(always)")
        #expect(try query("&background") == "light")
        let bad = try rig.run("neovim", "apply", mode: "dark", settings: ["background": "never"])
        #expect(bad.status == 1 && bad.errLines == ["neovim: background must be auto or always, not 'never'"], "\(bad)")
    }

    // MARK: Vim

    @Test
    func vimReadsTheScriptAtStart() throws {
        let rig = try IntegrationRig()
        for (mode, scheme) in [("dark", "blue"), ("light", "morning"), ("dark", "blue")] {
            let r = try rig.run("vim", "apply", mode: mode, settings: ["dark-colorscheme": "blue", "light-colorscheme": "morning"])
            #expect(r.status == 0, "\(r)")
            // A new Vim, as the user starts it (plugins loaded, no vimrc here): the script was read.
            let vim = try rig.program("/usr/bin/vim", ["-N", "-u", "NORC", "-i", "NONE", "-es",
                                                      "-c", "put ='bg=' . &background", "-c", "put ='cs=' . g:colors_name",
                                                      "-c", "%p", "-c", "qa!"])
            let lines = vim.out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(lines.contains("bg=\(mode)") && lines.contains("cs=\(scheme)"), "\(vim)")
        }
        #expect(try rig.run("vim", "restore").status == 0)
        #expect(!FileManager.default.fileExists(atPath: rig.home + "/.vim/plugin/appearanced.vim"))
    }

    // MARK: tmux

    @Test
    func tmuxFollowsInEveryServer() throws {
        let rig = try IntegrationRig()
        let none = try rig.run("tmux", "apply", mode: "dark")
        #expect(none.status == 0 && none.out.contains("no tmux server running"), "\(none)")
        try rig.write("set -g status-style bg=black,fg=white\n", to: rig.home + "/dark.tmux")
        try rig.write("set -g status-style bg=white,fg=black\n", to: rig.home + "/light.tmux")
        // Two private servers under TMUX_TMPDIR (the rig's), as tmux -L NAME makes them.
        for server in ["one", "two"] {
            let started = try rig.program("/usr/bin/tmux", ["-L", server, "-f", "/dev/null", "new-session", "-d"])
            #expect(started.status == 0, "\(started)")
        }
        defer {
            for server in ["one", "two"] { _ = try? rig.program("/usr/bin/tmux", ["-L", server, "kill-server"]) }
        }
        for mode in ["dark", "light"] {
            let r = try rig.run("tmux", "apply", mode: mode, settings: ["dark-file": "~/dark.tmux", "light-file": "~/light.tmux"])
            #expect(r.status == 0, "\(r)")
            for server in ["one", "two"] {
                let option = try rig.program("/usr/bin/tmux", ["-L", server, "show", "-gv", "@appearance"])
                #expect(option.out == "\(mode)\n", "\(server): \(option)")
                let style = try rig.program("/usr/bin/tmux", ["-L", server, "show", "-gv", "status-style"])
                #expect(style.out.hasPrefix(mode == "dark" ? "bg=black" : "bg=white"), "\(server): \(style)")
            }
        }
        let missing = try rig.run("tmux", "apply", mode: "dark", settings: ["dark-file": "~/nope.tmux"])
        #expect(missing.status == 1 && missing.errLines == ["tmux: dark file '\(rig.home)/nope.tmux' cannot be read"], "\(missing)")
    }

    // MARK: Emacs

    @Test
    func emacsLoadsTheThemeInARunningServer() throws {
        let rig = try IntegrationRig()
        // Emacs puts its server socket in $XDG_RUNTIME_DIR/emacs/NAME: the rig's own.
        let socket = rig.runtime + "/emacs/appearanced-test"
        let emacs = try Child("/usr/bin/emacs", ["-Q", "--fg-daemon=appearanced-test"], env: rig.env)
        defer { stopAndReap(emacs) }
        try waitUntil("emacs to listen on \(socket); \(emacs.stderr)", timeout: 60) { FileManager.default.fileExists(atPath: socket) }
        func themes() throws -> String {
            try rig.program("/usr/bin/emacsclient", ["-s", socket, "--eval", "custom-enabled-themes"]).out
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for (mode, theme) in [("dark", "modus-vivendi"), ("light", "modus-operandi"), ("dark", "modus-vivendi")] {
            let r = try rig.run("emacs", "apply", mode: mode)
            #expect(r.status == 0, "\(r)")
            #expect(try themes() == "(\(theme))")
        }
        // A theme Emacs does not have: refused in one line, and the current theme stays.
        let bad = try rig.run("emacs", "apply", mode: "light", settings: ["light-theme": "no-such-theme"])
        #expect(bad.status == 1 && bad.errLines.count == 1 && bad.err.contains("could not load theme 'no-such-theme'"), "\(bad)")
        #expect(try themes() == "(modus-vivendi)")
        _ = try? rig.program("/usr/bin/emacsclient", ["-s", socket, "--eval", "(kill-emacs)"])
        _ = try emacs.waitForExit(timeout: 30)
    }

    // MARK: GTK

    /// gsettings through dconf on a private bus (dconf-service activated by it, with a private profile,
    /// writing under the rig's XDG_CONFIG_HOME): the keys change, and restore gives back or resets them.
    @Test
    func gtkSetsGsettingsThroughDconf() async throws {
        let rig = try IntegrationRig()
        // A dconf profile of its own (the machine's could add system databases or locks): the user database
        // alone, under the rig's XDG_CONFIG_HOME.
        try rig.write("user-db:user\n", to: rig.root + "/dconf-profile")
        rig.env["DCONF_PROFILE"] = rig.root + "/dconf-profile"
        let busDirectory = try TemporaryDirectory()
        let bus = try await PrivateBus(in: busDirectory, standardSessionServices: true, environment: rig.env)
        defer { bus.stop() }
        rig.env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        func get(_ key: String) throws -> String {
            try rig.program("/usr/bin/gsettings", ["get", "org.gnome.desktop.interface", key]).out
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        // The user's own icon theme before: restore must give it back.
        #expect(try rig.program("/usr/bin/gsettings", ["set", "org.gnome.desktop.interface", "icon-theme", "Mine"]).status == 0)
        for mode in ["dark", "light", "dark"] {
            let r = try rig.run("gtk", "apply", mode: mode, settings: ["dark-icon-theme": "IconsDark", "light-icon-theme": "IconsLight"])
            #expect(r.status == 0, "\(r)")
            #expect(try get("color-scheme") == (mode == "dark" ? "'prefer-dark'" : "'default'"))
            #expect(try get("gtk-theme") == (mode == "dark" ? "'Adwaita-dark'" : "'Adwaita'"))
            #expect(try get("icon-theme") == (mode == "dark" ? "'IconsDark'" : "'IconsLight'"))
        }
        #expect(!FileManager.default.fileExists(atPath: rig.config + "/gtk-3.0/settings.ini"), "gsettings worked: no settings.ini")
        let r = try rig.run("gtk", "restore")
        #expect(r.status == 0, "\(r)")
        #expect(try get("icon-theme") == "'Mine'")
        let unset = try rig.program("/usr/bin/dconf", ["read", "/org/gnome/desktop/interface/color-scheme"])
        #expect(unset.out.isEmpty, "color-scheme was unset before, and is \(unset.out)")
    }

    /// Without a session bus, settings.ini for GTK 3 and 4, as GLib's key file reader (GTK's) reads it.
    @Test
    func gtkWritesSettingsIniGLibReads() throws {
        let rig = try IntegrationRig()
        try rig.write("[Settings]\ngtk-application-prefer-dark-theme = 0\ngtk-theme-name=Mine\n", to: rig.config + "/gtk-3.0/settings.ini")
        for mode in ["dark", "light"] {
            let r = try rig.run("gtk", "apply", mode: mode, settings: ["light-theme": "Adwaita"])
            #expect(r.status == 0 && r.out.contains("settings.ini"), "\(r)")
            for version in ["gtk-3.0", "gtk-4.0"] {
                let read = try rig.program(Self.python, ["-c", """
                    import sys
                    from gi.repository import GLib
                    k = GLib.KeyFile()
                    k.load_from_file(sys.argv[1], GLib.KeyFileFlags.NONE)
                    print(k.get_boolean('Settings', 'gtk-application-prefer-dark-theme'))
                    try:
                        print(k.get_string('Settings', 'gtk-theme-name'))
                    except GLib.Error:
                        print('-')
                    """, rig.config + "/\(version)/settings.ini"])
                let theme = mode == "light" ? "Adwaita" : (version == "gtk-3.0" ? "Mine" : "-")
                #expect(read.out == "\(mode == "dark" ? "True" : "False")\n\(theme)\n", "\(version) \(mode): \(read)")
            }
        }
    }

    // MARK: alacritty

    /// alacritty.toml (0.13 and later) and alacritty.yml (before) read by TOML and YAML readers: the import
    /// names the colors file, which holds the mode's colors in alacritty's documented keys.
    @Test func alacrittyImportsTheModesColors() throws {
        let rig = try IntegrationRig()
        try rig.write("[font]\nsize = 11\n", to: rig.config + "/alacritty/alacritty.toml")
        for (mode, background) in [("dark", "#1c1c1c"), ("light", "#f8f8f8")] {
            let r = try rig.run("alacritty", "apply", mode: mode)
            #expect(r.status == 0, "\(r)")
            let read = try rig.program(Self.python, ["-c", """
                import sys, tomllib
                main = tomllib.load(open(sys.argv[1], 'rb'))
                imports = main.get('general', main).get('import')
                colors = tomllib.load(open(imports[0], 'rb'))
                print(imports, colors['colors']['primary']['background'], main['font']['size'])
                """, rig.config + "/alacritty/alacritty.toml"])
            #expect(read.out == "['\(rig.config)/alacritty/appearanced.toml'] \(background) 11\n", "\(read)")
        }
        #expect(try rig.run("alacritty", "restore").status == 0)
        #expect(rig.read(rig.config + "/alacritty/alacritty.toml") == "[font]\nsize = 11\n")

        try FileManager.default.removeItem(atPath: rig.config + "/alacritty/alacritty.toml")
        try rig.write("font:\n  size: 11\n", to: rig.config + "/alacritty/alacritty.yml")
        let r = try rig.run("alacritty", "apply", mode: "dark")
        #expect(r.status == 0, "\(r)")
        let read = try rig.program(Self.python, ["-c", """
            import sys, yaml
            main = yaml.safe_load(open(sys.argv[1]))
            colors = yaml.safe_load(open(main['import'][0]))
            print(main['import'], colors['colors']['primary']['background'], main['font']['size'])
            """, rig.config + "/alacritty/alacritty.yml"])
        #expect(read.out == "['\(rig.config)/alacritty/appearanced.yml'] #1c1c1c 11\n", "\(read)")
    }

    // MARK: VS Code

    /// settings.json stays JSON with comments that VS Code's reader takes (comments and trailing commas
    /// allowed): read here with the comments taken out, the theme is the mode's.
    @Test func vscodeSettingsHoldTheModesTheme() throws {
        let rig = try IntegrationRig()
        let path = rig.config + "/Code/User/settings.json"
        try rig.write("{\n  // mine\n  \"editor.fontSize\": 13,\n  \"url\": \"http://x//y\", /* c */\n}\n", to: path)
        for (mode, theme) in [("dark", "Night \"Owl\""), ("light", "Default Light Modern")] {
            let r = try rig.run("vscode", "apply", mode: mode, settings: ["dark-theme": "Night \"Owl\""])
            #expect(r.status == 0, "\(r)")
            let read = try rig.program(Self.python, ["-c", #"""
                import json, re, sys
                t = open(sys.argv[1]).read()
                # JSON with comments, as VS Code reads it: strings kept, comments and trailing commas dropped.
                t = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or '', t, flags=re.S)
                t = re.sub(r',(\s*[}\]])', r'\1', t)
                d = json.loads(t)
                print(d['workbench.colorTheme'], d['editor.fontSize'], d['url'])
                """#, path])
            #expect(read.out == "\(theme) 13 http://x//y\n", "\(read)")
        }
    }

    // MARK: wallpaper

    /// swaybg (a stand-in: it needs a compositor) gets the mode's image, in its own session so it outlives
    /// the daemon's process group; the next switch starts the new one and ends the one before.
    @Test func wallpaperStartsSwaybgDetached() throws {
        let rig = try IntegrationRig()
        let log = rig.root + "/swaybg.log"
        let swaybg = rig.root + "/bin/swaybg"
        try rig.writeExecutable("""
            #!/bin/sh
            echo "$$ $*" >> \(log)
            trap 'echo "$$ TERM" >> \(log); kill $s 2>/dev/null; exit 0' TERM
            while :; do sleep 60 & s=$!; wait $s; done

            """, to: swaybg)
        try rig.write("dark", to: rig.home + "/dark.png")
        try rig.write("light", to: rig.home + "/light.png")
        let settings = ["dark": "~/dark.png", "light": "~/light.png"]
        let env = ["WAYLAND_DISPLAY": "wayland-test", "SWAYSOCK": ""]
        defer {
            for line in rig.read(log)?.split(separator: "\n") ?? [] {
                if let pid = Int32(line.split(separator: " ")[0]) { kill(pid, SIGTERM) }
            }
        }
        let r1 = try rig.run("wallpaper", "apply", mode: "dark", settings: settings, env: env)
        #expect(r1.status == 0, "\(r1)")
        try waitUntil("swaybg to start") { rig.read(log)?.contains("-i \(rig.home)/dark.png -m fill") == true }
        let first = try #require(Int32(rig.read(log)?.split(separator: " ").first ?? ""))
        // Its own session: setsid made it the leader.
        #expect(getsid(first) == first, "swaybg \(first) is in session \(getsid(first))")

        let r2 = try rig.run("wallpaper", "apply", mode: "light", settings: settings, env: env)
        #expect(r2.status == 0, "\(r2)")
        try waitUntil("the second swaybg, and the first one ended; log: \(rig.read(log) ?? "")") {
            let text = rig.read(log) ?? ""
            return text.contains("-i \(rig.home)/light.png -m fill") && text.contains("\(first) TERM")
        }
        let missing = try rig.run("wallpaper", "apply", mode: "dark", settings: ["light": "~/light.png"], env: env)
        #expect(missing.status == 1 && missing.errLines == ["wallpaper: no image for dark: set dark = \"/path/to/image\" in [integrations.wallpaper]"], "\(missing)")
    }
}
