# fish completion for appearancectl, generated from its option table (Sources/AppearanceCLI/Table.swift)
# by `appearancectl completions fish`: `make completions` writes it, do not edit it by hand.
set -l commands get status set toggle reload log schedule postpone skip apps integrations watch color asset palette import-darkman completions help
complete -c appearancectl -f
# Words from the running daemon (nothing when none answers within appearancectl's 0.5 s), on the
# line's own --socket if it names one.
function __appearancectl_list
    set -l words (commandline -opc)
    set -l socket
    for i in (seq (count $words))
        switch $words[$i]
            case '--socket=*'
                set socket --socket (string replace -- --socket= '' $words[$i])
            case --socket
                test $i -lt (count $words); and set socket --socket $words[(math $i + 1)]
        end
    end
    appearancectl $socket completions list $argv[1] </dev/null 2>/dev/null
end
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a get -d 'print the mode, dark or light'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a status -d 'the mode and why, the system value, traits, palette and override'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a set -d 'force a mode, or follow the system again'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a toggle -d 'flip the mode'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a reload -d 'read the config and palette files again'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a log -d 'the recent changes of the mode and their causes'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a schedule -d 'the schedule\'s next changes, day by day'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a postpone -d 'put the next automatic change off by a duration'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a skip -d 'drop the next automatic change; the one after it happens'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a apps -d 'the app overrides'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a integrations -d 'the integrations, or enable or disable some'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a watch -d 'print the mode, then one line per change'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a color -d 'a palette color for the current or given appearance'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a asset -d 'a palette asset path for the current or given appearance'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a palette -d 'the whole palette, or palette import'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a import-darkman -d 'darkman\'s config.yaml as appearanced\'s config.toml'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a completions -d 'print the completion script for bash, zsh or fish'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a help -d 'print the help, or the help of one command'
complete -c appearancectl -n "__fish_seen_subcommand_from set; and not __fish_seen_subcommand_from dark light system" -a "dark light system"
complete -c appearancectl -n "__fish_seen_subcommand_from postpone; and not __fish_seen_subcommand_from 15m 30m 1h 2h" -a "15m 30m 1h 2h"
complete -c appearancectl -n "__fish_seen_subcommand_from integrations; and not __fish_seen_subcommand_from list enable disable" -a "list enable disable"
complete -c appearancectl -n "__fish_seen_subcommand_from integrations; and __fish_seen_subcommand_from enable" -a "(__appearancectl_list integrations)"
complete -c appearancectl -n "__fish_seen_subcommand_from integrations; and __fish_seen_subcommand_from disable" -a "(__appearancectl_list enabled-integrations)"
complete -c appearancectl -n "__fish_seen_subcommand_from color" -a "(__appearancectl_list colors)"
complete -c appearancectl -n "__fish_seen_subcommand_from asset" -a "(__appearancectl_list assets)"
complete -c appearancectl -n "__fish_seen_subcommand_from palette; and not __fish_seen_subcommand_from import" -a import -d 'convert LFLDarkModeKit color plists to palette.toml'
complete -c appearancectl -n "__fish_seen_subcommand_from import-darkman" -F
complete -c appearancectl -n "__fish_seen_subcommand_from completions; and not __fish_seen_subcommand_from bash zsh fish" -a "bash zsh fish"
complete -c appearancectl -n "__fish_seen_subcommand_from help; and not __fish_seen_subcommand_from get status set toggle reload log schedule postpone skip apps integrations watch color asset palette import-darkman completions" -a "get status set toggle reload log schedule postpone skip apps integrations watch color asset palette import-darkman completions"
complete -c appearancectl -l socket -r -F -d 'talk to the daemon on this socket'
complete -c appearancectl -l version -d 'print the version'
complete -c appearancectl -l help -s h -d 'print the help'
complete -c appearancectl -n "__fish_seen_subcommand_from get status set toggle log schedule postpone skip apps integrations watch" -l json -d 'print JSON'
complete -c appearancectl -n "__fish_seen_subcommand_from get set toggle watch log" -l app -x -a "(__appearancectl_list apps)" -d 'for this app id'
complete -c appearancectl -n "__fish_seen_subcommand_from set toggle" -l until-next -d 'until the next automatic change'
complete -c appearancectl -n "__fish_seen_subcommand_from set toggle" -l for -x -a "30m 1h 2h 8h 1d" -d 'for a duration'
complete -c appearancectl -n "__fish_seen_subcommand_from postpone skip" -l cancel -d 'undo it (the next change as planned)'
complete -c appearancectl -n "__fish_seen_subcommand_from log" -s n -x -d 'the last N changes'
complete -c appearancectl -n "__fish_seen_subcommand_from schedule" -l days -x -a "1 7 14 31" -d 'the next N days, 1 to 31 (default 7)'
complete -c appearancectl -n "__fish_seen_subcommand_from watch" -l traits -d 'also trait changes, with --json'
complete -c appearancectl -n "__fish_seen_subcommand_from watch" -l palette -d 'also palette changes, with --json'
complete -c appearancectl -n "__fish_seen_subcommand_from watch" -l exit-on-disconnect -d 'exit 69 when the daemon goes away'
complete -c appearancectl -n "__fish_seen_subcommand_from watch" -l exec -r -a "(__fish_complete_subcommand --fcs-skip=3)" -d 'run a command on each change'
complete -c appearancectl -n "__fish_seen_subcommand_from watch" -l no-initial -d 'with --exec, skip the first run'
complete -c appearancectl -n "__fish_seen_subcommand_from color asset" -l mode -x -a "dark light" -d 'resolve for this mode'
complete -c appearancectl -n "__fish_seen_subcommand_from palette; and not __fish_seen_subcommand_from import" -l mode -x -a "dark light" -d 'resolve for this mode'
complete -c appearancectl -n "__fish_seen_subcommand_from color asset" -l contrast -x -a "normal high" -d 'resolve for this contrast'
complete -c appearancectl -n "__fish_seen_subcommand_from palette; and not __fish_seen_subcommand_from import" -l contrast -x -a "normal high" -d 'resolve for this contrast'
complete -c appearancectl -n "__fish_seen_subcommand_from color" -l format -x -a "hex rgb css" -d 'color format'
complete -c appearancectl -n "__fish_seen_subcommand_from palette; and not __fish_seen_subcommand_from import" -l format -x -a "json css sh gtk" -d 'palette format'
complete -c appearancectl -n "__fish_seen_subcommand_from palette; and not __fish_seen_subcommand_from import" -l preview -d 'both modes as color swatches'
complete -c appearancectl -n "__fish_seen_subcommand_from palette; and not __fish_seen_subcommand_from import" -l color -x -a "always never auto" -d 'with --preview, swatch colors'
complete -c appearancectl -n "__fish_seen_subcommand_from palette; and __fish_seen_subcommand_from import" -l light -r -F -d 'the light plist'
complete -c appearancectl -n "__fish_seen_subcommand_from palette; and __fish_seen_subcommand_from import" -l dark -r -F -d 'the dark plist'
complete -c appearancectl -n "__fish_seen_subcommand_from import-darkman" -l output -s o -r -F -d 'write to this file'
complete -c appearancectl -n "__fish_seen_subcommand_from palette; and __fish_seen_subcommand_from import" -l output -s o -r -F -d 'write to this file'
complete -c appearancectl -n "__fish_seen_subcommand_from import-darkman" -l force -d 'with -o, replace a file that exists'
complete -c appearancectl -n "__fish_seen_subcommand_from palette; and __fish_seen_subcommand_from import" -l force -d 'with -o, replace a file that exists'
complete -c appearancectl -n "__fish_seen_subcommand_from integrations" -l force -d 'with enable, also one whose program is not installed (its files are prepared)'
complete -c appearancectl -n "__fish_seen_subcommand_from import-darkman" -l merge -d 'with -o, add to a config that exists what it lacks (conflicts refused by name)'
