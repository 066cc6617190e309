# bash completion for appearancectl (hand-written: the CLI parses its arguments by hand).
_appearancectl() {
    local cur prev word command= sub= i
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    case $prev in
        --socket|-o|--output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --light|--dark) COMPREPLY=($(compgen -f -X '!*.plist' -- "$cur") $(compgen -d -- "$cur")); return ;;
        --mode) COMPREPLY=($(compgen -W 'dark light' -- "$cur")); return ;;
        --contrast) COMPREPLY=($(compgen -W 'normal high' -- "$cur")); return ;;
        --for) COMPREPLY=($(compgen -W '30m 1h 2h 8h 1d' -- "$cur")); return ;;
        -n) return ;;
    esac
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        case $word in
            --socket|--mode|--contrast|--format|--light|--dark|-o|--output|--for|-n) ((i++)); continue ;;
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
        local opts='--json --socket --version --help'
        case $command in
            color) opts+=' --mode --contrast --format' ;;
            asset) opts+=' --mode --contrast' ;;
            palette) if [[ $sub == import ]]; then opts+=' --light --dark --output -o'
                     else opts+=' --mode --contrast --format --preview'; fi ;;
            watch) opts+=' --traits --palette --exec --no-initial' ;;
            set|toggle) opts+=' --until-next --for' ;;
            log) opts+=' -n' ;;
        esac
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -z $command ]]; then
        COMPREPLY=($(compgen -W 'get status set toggle log watch color asset palette help' -- "$cur"))
    elif [[ $command == set && $prev == set ]]; then
        COMPREPLY=($(compgen -W 'dark light system' -- "$cur"))
    elif [[ $command == palette && -z $sub ]]; then
        COMPREPLY=($(compgen -W 'import' -- "$cur"))
    fi
}
complete -F _appearancectl appearancectl
