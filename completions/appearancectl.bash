# bash completion for appearancectl (hand-written: the CLI parses its arguments by hand).
_appearancectl() {
    local cur prev word command= i
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    if [[ $prev == --socket ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if [[ $word == --socket ]]; then ((i++)); continue; fi
        if [[ $word != -* ]]; then command=$word; break; fi
    done
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--json --socket --version --help' -- "$cur"))
    elif [[ -z $command ]]; then
        COMPREPLY=($(compgen -W 'get status set toggle watch help' -- "$cur"))
    elif [[ $command == set && $prev == set ]]; then
        COMPREPLY=($(compgen -W 'dark light system' -- "$cur"))
    fi
}
complete -F _appearancectl appearancectl
