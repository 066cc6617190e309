# bash completion for appearancectl, generated from its option table (Sources/AppearanceCLI/Table.swift)
# by `appearancectl completions bash`: `make completions` writes it, do not edit it by hand.
# Words from the running daemon (nothing when none answers within appearancectl's 0.5 s), on the
# line's own --socket if it names one.
_appearancectl_list() {
    appearancectl ${socket:+--socket "$socket"} completions list "$1" </dev/null 2>/dev/null
}
_appearancectl() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} word command= sub= scope i socket=
    # --name=VALUE: bash splits the word at "=".
    if [[ $cur == = ]]; then cur=; fi
    if [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi
    # After --exec, the rest of the line is a command of its own.
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == --exec ]]; then
            if ((COMP_CWORD == i + 1)); then COMPREPLY=($(compgen -c -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
        fi
    done
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case $word in
            --socket|--app|--for|-n|--days|--mode|--contrast|--format|--color|--light|--dark|--output|-o)
                ((i++)); [[ ${COMP_WORDS[i]} == = ]] && ((i++))
                [[ $word == --socket ]] && socket=${COMP_WORDS[i]}
                continue ;;
        esac
        if [[ $word != -* && $word != = ]]; then
            if [[ -z $command ]]; then command=$word; elif [[ -z $sub ]]; then sub=$word; fi
        fi
    done
    scope=$command
    [[ $command == palette && $sub == import ]] && scope='palette import'
    case "$scope:$prev" in
        *:--socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        get:--app|set:--app|toggle:--app|watch:--app|log:--app) COMPREPLY=($(compgen -W "$(_appearancectl_list apps)" -- "$cur")); return ;;
        set:--for|toggle:--for) COMPREPLY=($(compgen -W '30m 1h 2h 8h 1d' -- "$cur")); return ;;
        log:-n) return ;;
        schedule:--days) COMPREPLY=($(compgen -W '1 7 14 31' -- "$cur")); return ;;
        color:--mode|asset:--mode|palette:--mode) COMPREPLY=($(compgen -W 'dark light' -- "$cur")); return ;;
        color:--contrast|asset:--contrast|palette:--contrast) COMPREPLY=($(compgen -W 'normal high' -- "$cur")); return ;;
        color:--format) COMPREPLY=($(compgen -W 'hex rgb css' -- "$cur")); return ;;
        palette:--format) COMPREPLY=($(compgen -W 'json css sh gtk' -- "$cur")); return ;;
        palette:--color) COMPREPLY=($(compgen -W 'always never auto' -- "$cur")); return ;;
        'palette import':--light) COMPREPLY=($(compgen -f -X '!*.plist' -- "$cur") $(compgen -d -- "$cur")); return ;;
        'palette import':--dark) COMPREPLY=($(compgen -f -X '!*.plist' -- "$cur") $(compgen -d -- "$cur")); return ;;
        'palette import':--output|'palette import':-o|import-darkman:--output|import-darkman:-o) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        local opts='--socket --version --help -h'
        case $scope in
            get) opts+=' --json --app' ;;
            status) opts+=' --json' ;;
            set) opts+=' --json --app --until-next --for' ;;
            toggle) opts+=' --json --app --until-next --for' ;;
            log) opts+=' --json --app -n' ;;
            schedule) opts+=' --json --days' ;;
            postpone) opts+=' --json --cancel' ;;
            skip) opts+=' --json --cancel' ;;
            apps) opts+=' --json' ;;
            integrations) opts+=' --json --force' ;;
            watch) opts+=' --json --app --traits --palette --exit-on-disconnect --exec --no-initial' ;;
            color) opts+=' --mode --contrast --format' ;;
            asset) opts+=' --mode --contrast' ;;
            palette) opts+=' --mode --contrast --format --preview --color' ;;
            'palette import') opts+=' --light --dark --output -o --force' ;;
            import-darkman) opts+=' --output -o --force --merge' ;;
        esac
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -z $command ]]; then
        COMPREPLY=($(compgen -W 'get status set toggle reload log schedule postpone skip apps integrations watch color asset palette import-darkman completions help' -- "$cur"))
    elif [[ -z $sub ]]; then
        case $command in
            set) COMPREPLY=($(compgen -W 'dark light system' -- "$cur")) ;;
            postpone) COMPREPLY=($(compgen -W '15m 30m 1h 2h' -- "$cur")) ;;
            integrations) COMPREPLY=($(compgen -W 'list enable disable' -- "$cur")) ;;
            color) COMPREPLY=($(compgen -W "$(_appearancectl_list colors)" -- "$cur")) ;;
            asset) COMPREPLY=($(compgen -W "$(_appearancectl_list assets)" -- "$cur")) ;;
            palette) COMPREPLY=($(compgen -W 'import' -- "$cur")) ;;
            import-darkman) COMPREPLY=($(compgen -f -- "$cur")) ;;
            completions) COMPREPLY=($(compgen -W 'bash zsh fish' -- "$cur")) ;;
            help) COMPREPLY=($(compgen -W 'get status set toggle reload log schedule postpone skip apps integrations watch color asset palette import-darkman completions' -- "$cur")) ;;
        esac
    else
        case "$command $sub" in
            'integrations enable') COMPREPLY=($(compgen -W "$(_appearancectl_list integrations)" -- "$cur")) ;;
            'integrations disable') COMPREPLY=($(compgen -W "$(_appearancectl_list enabled-integrations)" -- "$cur")) ;;
        esac
    fi
}
complete -F _appearancectl appearancectl
