# fish completion for appearancectl (hand-written: the CLI parses its arguments by hand).
set -l commands get status set toggle watch help
complete -c appearancectl -f
complete -c appearancectl -l json -d 'Print the state object'
complete -c appearancectl -l socket -r -F -d 'Talk to the daemon on this socket'
complete -c appearancectl -l version -d 'Print the version'
complete -c appearancectl -s h -l help -d 'Print the help'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a get -d 'Print the mode (dark or light)'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a status -d 'The mode and why'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a set -d 'Force a mode, or follow the system'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a toggle -d 'Flip the mode'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a watch -d 'Print the mode, then each change'
complete -c appearancectl -n "not __fish_seen_subcommand_from $commands" -a help -d 'Print the help'
complete -c appearancectl -n "__fish_seen_subcommand_from set; and not __fish_seen_subcommand_from dark light system" -a "dark light system"
