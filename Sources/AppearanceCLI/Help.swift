// The help text of appearancectl.

/// `appearancectl help`: every command and option of `Table`, and nothing else (a test checks both ways).
public let helpText = """
    Usage: appearancectl [--socket PATH] COMMAND [OPTIONS]

    Asks appearanced whether the UI is dark, changes the user's override, and watches for changes.

    Commands:
      get [--json]               print the mode: dark or light (--json: the state object)
      status [--json]            the mode and why, the system value and its source, the override
      set dark|light|system      force a mode, or go back to following the system; prints the mode
      set dark|light --until-next | --for DURATION
                                 force a mode for a while: until the next automatic change (the
                                 schedule's next transition, or the desktop changing its own value),
                                 or for DURATION (90m, 2h, 1h30m, 45s, 1d); survives restarts
      toggle [--until-next | --for DURATION]
                                 flip the mode (for a while); prints the new mode
      get, set, toggle, watch --app ID
                                 the same for one app (a desktop-file or Flatpak id such as kitty or
                                 org.gnome.TextEditor): its own override (set dark|light --app ID; set
                                 system --app ID removes it) comes first for it; $APPEARANCED_APP is the
                                 default --app
      apps [--json]              the app overrides: one "ID<TAB>MODE" line each
      reload                     the daemon reads its config and palette files again (as on SIGHUP);
                                 prints the config file read, or its mistake with the file and line
                                 (exit 65: the previous configuration stays in force)
      log [-n N] [--app ID] [--json]
                                 the changes of the mode and their causes, oldest first, the last
                                 1,000 across restarts; an app's own change shows its id (--app ID:
                                 only this app's own changes; --json: one JSON object per line)
      schedule [--days N] [--json]
                                 what the schedule says now, what hides it (an override, a temporary
                                 one, or the desktop when it ranks first), and its changes over the
                                 next N days (default 7), one line each, by local date
      postpone DURATION|--cancel [--json]
                                 put the next automatic change off (30m, 1h, 1h30m; postpones add up),
                                 or undo that; refused (exit 65) when no automatic change is coming
      skip [--cancel] [--json]   the next automatic change does not happen, the one after it does;
                                 --cancel undoes it
      integrations [list] [--json]
                                 the integrations (programs made to follow the mode: docs/integrations.md):
                                 enabled or not, whether the program is installed, the last run
      integrations enable [--force] NAME...
                                 enable (the mode is applied at once and on every change of it); one
                                 whose program is not installed is refused, unless --force (its files
                                 are prepared); one whose first run fails is left off, saying why
      integrations disable NAME...
                                 disable (what the integration changed in your files is restored)
      watch [--json [--traits] [--palette]] [--exit-on-disconnect]
                                 print the mode, then one line per change, until interrupted
                                 (--traits: also trait changes; --palette: also palette changes;
                                 with --json each line carries what was asked for); follows the
                                 daemon across restarts, or exits 69 with --exit-on-disconnect
      watch [--no-initial] --exec CMD [ARGS...]
                                 run CMD now (not with --no-initial) and after each change, with
                                 APPEARANCE=dark|light and DARKMODE=1|0 in its environment; runs never
                                 overlap (changes during a run give one more run, with the newest mode);
                                 a failing CMD is reported and watching goes on, across daemon restarts
      color TOKEN [--mode dark|light] [--contrast normal|high] [--format hex|rgb|css]
                                 a palette color for the current appearance, or the one given:
                                 hex #262626 (#26262699 translucent), rgb "38 38 38 [0.6]",
                                 css rgb(38 38 38 [/ 0.6])
      asset NAME [--mode …] [--contrast …]
                                 a palette asset's path for the current (or given) appearance
      palette [--format json|css|sh|gtk] [--mode …] [--contrast …]
                                 the whole palette resolved: JSON, CSS custom properties, shell
                                 export lines, or GTK @define-color lines
      palette --preview [--contrast normal|high] [--color=always|never|auto]
                                 both modes side by side as truecolor swatches with names and values
                                 (auto: colors only on a terminal, not with NO_COLOR or TERM=dumb)
      palette import --light LIGHT.plist --dark DARK.plist [-o|--output FILE [--force]]
                                 convert LFLDarkModeKit color plists (key -> RRGGBB or AARRGGBB) to
                                 palette.toml (stdout without -o); keys found in one file only are
                                 reported and kept as that value for both modes
      import-darkman [FILE] [-o|--output FILE [--force|--merge]]
                                 darkman's config.yaml (default: $XDG_CONFIG_HOME/darkman/config.yaml) as
                                 appearanced's config.toml (stdout without -o), saying what has no
                                 equivalent; darkman's dark-mode.d/light-mode.d hooks run as they are;
                                 -o makes missing folders and never replaces a file without --force;
                                 --merge adds to a config that exists what it lacks, refusing conflicts
      completions bash|zsh|fish  print the completion script for the shell (installed by make install
                                 and the Debian package already)
      help [COMMAND]             print this help, or one command's (also COMMAND --help)

    Options:
      --socket PATH              talk to the daemon on PATH (default: $APPEARANCED_SOCKET, else
                                 $XDG_RUNTIME_DIR/appearanced/socket)
      --version                  print the version
      -h, --help                 print this help (after a command: that command's)

    Exit status: 0 ok, 64 usage error, 65 request rejected by the daemon (a config reload refused, or
    a plist import cannot use), 66/73 an import cannot read its input/write its output (73 also when
    the output exists and --force is not given), 69 daemon not reachable, 76 protocol error.

    """

/// `appearancectl help CMD` (and `CMD --help`): the summary, the full help's entries for it and its options
/// from `Table`; nil for a name that is not a command.
public func commandHelp(_ name: String) -> String? {
    guard let spec = Table.command(name) else { return nil }
    var text = "Usage: appearancectl \(name) [OPTIONS]\(spec.operand == .nothing && spec.subcommands.isEmpty ? "" : " …")\n\n"
    text += spec.summary.prefix(1).uppercased() + spec.summary.dropFirst() + ".\n\n"
    for entry in helpEntries() where entry.commands.contains(name) {
        text += entry.lines.joined(separator: "\n") + "\n"
    }
    let own = Table.options.filter { !$0.isGlobal && $0.scopes.contains { $0 == name || $0.hasPrefix(name + " ") } }
    text += "\nOptions:\n"
    for option in own + Table.options.filter(\.isGlobal) {
        let written = "  " + option.names.reversed().joined(separator: ", ") + (option.value.map { " " + $0 } ?? "")
        let pad = written.count < 29 ? String(repeating: " ", count: 29 - written.count) : "\n" + String(repeating: " ", count: 29)
        let scope = option.scopes.filter { $0 != name && $0.hasPrefix(name + " ") }.first.map { " (\($0))" } ?? ""
        text += written + pad + option.summary + scope + "\n"
    }
    text += "\n`appearancectl help` lists every command, and the exit status.\n"
    return text
}

/// The entries of `helpText`'s Commands section, with the commands each documents (`get, set,` …).

private func helpEntries() -> [(commands: [String], lines: [String])] {
    guard let start = helpText.firstRange(of: "Commands:\n"), let end = helpText.firstRange(of: "\nOptions:") else { return [] }
    var entries: [(commands: [String], lines: [String])] = []
    for line in helpText[start.upperBound..<end.lowerBound].split(separator: "\n") {
        if line.hasPrefix("   "), !entries.isEmpty {
            entries[entries.count - 1].lines.append(String(line))
        } else if line.hasPrefix("  ") {
            var commands: [String] = []
            for word in line.dropFirst(2).split(separator: " ") {
                commands.append(String(word.filter { $0 != "," }))
                if !word.hasSuffix(",") { break }
            }
            entries.append((commands, [String(line)]))
        }
    }
    return entries
}
