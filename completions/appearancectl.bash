# bash completion for appearancectl (hand-written; Tests/EndToEndTests/CompletionTests.swift checks it against
# `appearancectl --help`).
_appearancectl() {
    local cur prev word command= sub= i
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    # After --exec, the rest of the line is a command of its own.
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == --exec ]]; then
            if ((COMP_CWORD == i + 1)); then COMPREPLY=($(compgen -c -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
        fi
    done
    case $prev in
        --socket|-o|--output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --light|--dark) COMPREPLY=($(compgen -f -X '!*.plist' -- "$cur") $(compgen -d -- "$cur")); return ;;
        --mode) COMPREPLY=($(compgen -W 'dark light' -- "$cur")); return ;;
        --contrast) COMPREPLY=($(compgen -W 'normal high' -- "$cur")); return ;;
        --for) COMPREPLY=($(compgen -W '30m 1h 2h 8h 1d' -- "$cur")); return ;;
        -n|--app) return ;;
    esac
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case $word in
            --socket|--mode|--contrast|--format|--light|--dark|-o|--output|--for|-n|--app) ((i++)); continue ;;
        esac
        if [[ $word != -* ]]; then
            if [[ -z $command ]]; then command=$word; elif [[ -z $sub ]]; then sub=$word; fi
        fi
    done
    if [[ $prev == --format ]]; then
        case $command in
            color) COMPREPLY=($(compgen -W 'hex rgb css' -- "$cur")) ;;
            *) COMPREPLY=($(compgen -W 'json css sh gtk' -- "$cur")) ;;
        esac
        return
    fi
    if [[ $cur == -* ]]; then
        local opts='--socket --version --help -h'
        case $command in
            status|log|apps) opts+=' --json' ;;
            get) opts+=' --json --app' ;;
            set|toggle) opts+=' --json --until-next --for --app' ;;
            color) opts+=' --mode --contrast --format' ;;
            asset) opts+=' --mode --contrast' ;;
            palette) if [[ $sub == import ]]; then opts+=' --light --dark --output -o'
                     else opts+=' --mode --contrast --format --preview --color=always --color=never --color=auto'; fi ;;
            watch) opts+=' --json --traits --palette --exec --no-initial --exit-on-disconnect --app' ;;
            import-darkman) opts+=' --output -o' ;;
        esac
        [[ $command == log ]] && opts+=' -n'
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -z $command ]]; then
        COMPREPLY=($(compgen -W 'get status set toggle log apps watch color asset palette import-darkman help' -- "$cur"))
    elif [[ $command == set && $prev == set ]]; then
        COMPREPLY=($(compgen -W 'dark light system' -- "$cur"))
    elif [[ $command == import-darkman && -z $sub ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    elif [[ $command == palette && -z $sub ]]; then
        COMPREPLY=($(compgen -W 'import' -- "$cur"))
    fi
}
complete -F _appearancectl appearancectl
