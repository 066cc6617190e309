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
      log [-n N] [--json]        the recent changes of the mode and their causes, oldest first
                                 (--json: one JSON object per line)
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
      palette import --light LIGHT.plist --dark DARK.plist [-o|--output FILE]
                                 convert LFLDarkModeKit color plists (key -> RRGGBB or AARRGGBB) to
                                 palette.toml (stdout without -o); keys found in one file only are
                                 reported and kept as that value for both modes
      import-darkman [FILE] [-o|--output FILE]
                                 darkman's config.yaml (default: $XDG_CONFIG_HOME/darkman/config.yaml) as
                                 appearanced's config.toml (stdout without -o), saying what has no
                                 equivalent; darkman's dark-mode.d/light-mode.d hooks run as they are
      completions bash|zsh|fish  print the completion script for the shell (installed by make install
                                 and the Debian package already)
      help                       print this help

    Options:
      --socket PATH              talk to the daemon on PATH (default: $APPEARANCED_SOCKET, else
                                 $XDG_RUNTIME_DIR/appearanced/socket)
      --version                  print the version
      -h, --help                 print this help

    Exit status: 0 ok, 64 usage error, 65 request rejected by the daemon (or a plist import cannot
    use), 66/73 palette import cannot read/write a file, 69 daemon not reachable, 76 protocol error.

    """
