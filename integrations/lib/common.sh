# Shared by appearanced's integrations: sourced, never run. POSIX sh.
#
# An integration sets AI_NAME, defines ai_describe, ai_available, ai_apply and ai_restore, and ends with
# `ai_main "$@"`. What is here:
#   ai_main            the four verbs; anything else is a usage error (exit 64)
#   ai_mode            APPEARANCE, checked: dark or light
#   ai_opt KEY DEF     the user's setting APPEARANCE_OPT_KEY, or DEF
#   ai_die MSG         "NAME: MSG" on stderr, exit 1
#   ai_edit F ROOT FN  changes the user's file F (which must resolve inside ROOT) through FN IN OUT,
#                      remembering what restore needs: a copy of F as it was (or that it was absent)
#   ai_block_at_end / ai_block_at_top    FN for ai_edit: the integration's own marked block
#   ai_restore_files   undoes every ai_edit: byte for byte when the file was not edited since
#   ai_pids PROG       the user's running PROG processes (same uid and HOME)
#   ai_run SECS CMD…   CMD with a deadline
#
# What restore needs lives in APPEARANCE_INTEGRATION_DIR/files/: for each file changed, KEY.path (its
# name), KEY.orig (its bytes before) or KEY.created (it did not exist), KEY.written (what was last written).

AI_NAME=${AI_NAME:-integration}

ai_die() {
    printf '%s: %s\n' "$AI_NAME" "$*" >&2
    exit 1
}

ai_say() {
    printf '%s\n' "$*"
}

ai_usage() {
    printf 'usage: %s apply|restore|available|describe\n' "$AI_NAME" >&2
    exit 64
}

ai_main() {
    [ $# -eq 1 ] || ai_usage
    case $1 in
        apply) ai_mode >/dev/null; ai_state_dir >/dev/null; ai_apply ;;
        restore) ai_state_dir >/dev/null; ai_restore ;;
        available) ai_available ;;
        describe) ai_describe ;;
        *) ai_usage ;;
    esac
}

# The mode to show: APPEARANCE, else DARKMODE (1|0).
ai_mode() {
    case ${APPEARANCE:-} in
        dark | light) printf '%s\n' "$APPEARANCE" ;;
        '')
            case ${DARKMODE:-} in
                1) echo dark ;;
                0) echo light ;;
                *) ai_die "APPEARANCE is not set (it must be dark or light)" ;;
            esac ;;
        *) ai_die "APPEARANCE must be dark or light, not '$APPEARANCE'" ;;
    esac
}

ai_state_dir() {
    d=${APPEARANCE_INTEGRATION_DIR:-}
    [ -n "$d" ] || ai_die "APPEARANCE_INTEGRATION_DIR is not set"
    [ -d "$d" ] && [ -w "$d" ] || ai_die "APPEARANCE_INTEGRATION_DIR '$d' is not a writable directory"
    printf '%s\n' "$d"
}

# ai_opt KEY DEFAULT: KEY as in the environment (DARK_THEME for `dark-theme`).
ai_opt() {
    case $1 in *[!A-Z0-9_]* | '') ai_die "bad setting name '$1'" ;; esac
    eval "_ai_v=\${APPEARANCE_OPT_$1-}"
    if [ -n "$_ai_v" ]; then printf '%s\n' "$_ai_v"; else printf '%s\n' "${2-}"; fi
}

# ai_opt_mode KEY_SUFFIX DEFAULT_DARK DEFAULT_LIGHT: DARK_KEY or LIGHT_KEY for the mode.
ai_opt_mode() {
    if [ "$(ai_mode)" = dark ]; then ai_opt "DARK_$1" "$2"; else ai_opt "LIGHT_$1" "$3"; fi
}

ai_config_home() {
    printf '%s\n' "${XDG_CONFIG_HOME:-$HOME/.config}"
}

# ~/x → $HOME/x (settings are often written with a tilde).
ai_expand() {
    case $1 in
        '~') printf '%s\n' "$HOME" ;;
        '~/'*) printf '%s/%s\n' "$HOME" "${1#\~/}" ;;
        *) printf '%s\n' "$1" ;;
    esac
}

# ai_run SECONDS CMD ARGS…: CMD, killed after SECONDS (then SIGKILL a second later).
ai_run() {
    _ai_secs=$1
    shift
    if command -v timeout >/dev/null 2>&1; then
        timeout -k 1 "$_ai_secs" "$@"
    else
        "$@"
    fi
}

ai_have() {
    command -v "$1" >/dev/null 2>&1
}

# ai_version_at_least HAVE WANT: dotted versions, numerically.
ai_version_at_least() {
    [ "$(printf '%s\n%s\n' "$2" "$1" | sort -t. -k1,1n -k2,2n -k3,3n | head -n1)" = "$2" ]
}

# The user's running PROG processes: same uid, and the same HOME when their environment can be read
# (a program of this user started for another HOME, as in a test, is not this user's session's).
# Processes whose command line is this script's own are left out: an integration may bear its program's name.
ai_pids() {
    ai_have pgrep || return 0
    _ai_self=$(tr '\0' ' ' < "/proc/$$/cmdline" 2>/dev/null)
    for _ai_pid in $(pgrep -u "$(id -u)" -x "$1" 2>/dev/null); do
        [ "$(tr '\0' ' ' < "/proc/$_ai_pid/cmdline" 2>/dev/null)" != "$_ai_self" ] || continue
        if [ -r "/proc/$_ai_pid/environ" ]; then
            _ai_home=$(tr '\0' '\n' < "/proc/$_ai_pid/environ" 2>/dev/null | sed -n 's/^HOME=//p' | head -n1)
            [ -z "$_ai_home" ] || [ "$_ai_home" = "$HOME" ] || continue
        fi
        printf '%s\n' "$_ai_pid"
    done
}

# ai_resolve FILE ROOT: FILE's real path, or refuses when it (or a symlink on the way) leads out of ROOT.
ai_resolve() {
    _ai_root=$(readlink -f -- "$2" 2>/dev/null) || _ai_root=$2
    if [ -e "$1" ] || [ -L "$1" ]; then
        _ai_real=$(readlink -f -- "$1" 2>/dev/null) || ai_die "$1: cannot resolve it (a dangling symlink?)"
    else
        # Not there yet: its nearest existing folder, resolved, and the rest of the path (nothing is created
        # before the check).
        _ai_rest=$(basename -- "$1")
        _ai_up=$(dirname -- "$1")
        while [ ! -e "$_ai_up" ] && [ "$_ai_up" != / ] && [ "$_ai_up" != . ]; do
            _ai_rest=$(basename -- "$_ai_up")/$_ai_rest
            _ai_up=$(dirname -- "$_ai_up")
        done
        _ai_real=$(readlink -f -- "$_ai_up")/$_ai_rest
    fi
    case $_ai_real in
        "$_ai_root"/*) ;;
        *)
            if [ -L "$1" ]; then
                ai_die "$1 is a symlink to $_ai_real, outside $2: not following it"
            else
                ai_die "$1 resolves to $_ai_real, outside $2: not changing it"
            fi ;;
    esac
    if [ -e "$_ai_real" ] && [ ! -f "$_ai_real" ]; then
        ai_die "$1 is not a regular file"
    fi
    printf '%s\n' "$_ai_real"
}

# ai_write_atomic SRC DEST: DEST gets SRC's bytes (a temporary file in DEST's folder, renamed over it),
# keeping DEST's permissions.
ai_write_atomic() {
    _ai_dir=$(dirname -- "$2")
    mkdir -p -- "$_ai_dir" || ai_die "$_ai_dir: cannot create it"
    _ai_tmp=$(mktemp "$_ai_dir/.$(basename -- "$2").appearanced.XXXXXX") || ai_die "$_ai_dir: cannot write a temporary file there"
    if ! cat -- "$1" > "$_ai_tmp"; then rm -f -- "$_ai_tmp"; ai_die "$_ai_tmp: cannot write it"; fi
    if [ -e "$2" ]; then
        chmod "$(stat -c %a -- "$2")" "$_ai_tmp" 2>/dev/null || true
    else
        chmod "$(printf '%o' $((0666 & ~$(umask))))" "$_ai_tmp" 2>/dev/null || true
    fi
    mv -f -- "$_ai_tmp" "$2" || { rm -f -- "$_ai_tmp"; ai_die "$2: cannot replace it"; }
}

_ai_key() {
    printf '%s' "$1" | cksum | cut -d' ' -f1
}

_ai_files() {
    _ai_f=$(ai_state_dir)/files
    mkdir -p -- "$_ai_f" || ai_die "$_ai_f: cannot create it"
    printf '%s\n' "$_ai_f"
}

# The marked block's lines, for COMMENT (the file's comment mark).
ai_begin() { printf '%s >>> appearanced %s >>>\n' "$1" "$AI_NAME"; }
ai_end() { printf '%s <<< appearanced %s <<<\n' "$1" "$AI_NAME"; }

# The line numbers of the marked block in FILE (its first begin marker, the first end marker after it).
_ai_block_lines() { # COMMENT FILE
    _ai_b=$(grep -n -x -F -- "$(ai_begin "$1")" "$2" | head -n1 | cut -d: -f1)
    [ -n "$_ai_b" ] || return 1
    _ai_e=$(tail -n +"$_ai_b" -- "$2" | grep -n -x -F -- "$(ai_end "$1")" | head -n1 | cut -d: -f1)
    [ -n "$_ai_e" ] || return 1
    _ai_e=$((_ai_b + _ai_e - 1))
}

# ai_strip_block COMMENT IN OUT: IN without the marked block. head and tail keep the other bytes as they are
# (a last line without a newline too).
ai_strip_block() {
    if ! _ai_block_lines "$1" "$2"; then cat -- "$2" > "$3"; return; fi
    { head -n $((_ai_b - 1)) -- "$2"; tail -n +$((_ai_e + 1)) -- "$2"; } > "$3"
}

ai_has_block() {
    [ -e "$2" ] && _ai_block_lines "$1" "$2"
}

# Transforms for ai_edit. AI_COMMENT: the comment mark; AI_BODY: a file with the block's lines.
# At the end: the block replaced where it is, else appended (after a newline the file may lack).
ai_block_at_end() {
    if ai_has_block "$AI_COMMENT" "$1"; then
        _ai_replace_block "$1" "$2"
    else
        cat -- "$1" > "$2"
        if [ -s "$1" ] && [ "$(tail -c1 -- "$1" | od -An -c | tr -d ' ')" != '\n' ]; then echo >> "$2"; fi
        { ai_begin "$AI_COMMENT"; cat -- "$AI_BODY"; ai_end "$AI_COMMENT"; } >> "$2"
    fi
}

# At the top (where a setting must come before the file's own sections).
ai_block_at_top() {
    if ai_has_block "$AI_COMMENT" "$1"; then
        _ai_replace_block "$1" "$2"
    else
        { ai_begin "$AI_COMMENT"; cat -- "$AI_BODY"; ai_end "$AI_COMMENT"; cat -- "$1"; } > "$2"
    fi
}

_ai_replace_block() {
    _ai_block_lines "$AI_COMMENT" "$1" || return 1
    {
        head -n $((_ai_b - 1)) -- "$1"
        ai_begin "$AI_COMMENT"; cat -- "$AI_BODY"; ai_end "$AI_COMMENT"
        tail -n +$((_ai_e + 1)) -- "$1"
    } > "$2"
}

# The whole file is the integration's own (an included file): AI_BODY is its content.
ai_whole_file() {
    cat -- "$AI_BODY" > "$2"
}

# ai_edit FILE ROOT TRANSFORM: FILE's new content is TRANSFORM IN OUT of its current one (empty when
# absent; AI_FILE names FILE for its messages). Written only when it changes; what restore needs is kept
# first.
ai_edit() {
    _ai_file=$1
    _ai_real=$(ai_resolve "$1" "$2") || exit 1
    _ai_files=$(_ai_files)
    _ai_k=$_ai_files/$(_ai_key "$_ai_real")
    _ai_cur=$_ai_k.cur
    _ai_new=$_ai_k.new
    if [ -e "$_ai_real" ]; then cat -- "$_ai_real" > "$_ai_cur" || ai_die "$1: cannot read it"; else : > "$_ai_cur"; fi
    # A transform that refuses says why on stderr; nothing is recorded or written then.
    AI_FILE=$1
    "$3" "$_ai_cur" "$_ai_new" || { rm -f -- "$_ai_cur" "$_ai_new"; exit 1; }
    if [ ! -e "$_ai_k.path" ]; then
        # First change since enable (or since restore): remember the file as the user has it.
        if [ -e "$_ai_real" ]; then cp -- "$_ai_cur" "$_ai_k.orig"; rm -f -- "$_ai_k.created"
        else : > "$_ai_k.created"; rm -f -- "$_ai_k.orig"; fi
    elif ! cmp -s -- "$_ai_cur" "$_ai_k.written"; then
        # Edited since the last write: the user's version (without the block) is what restore gives back.
        if [ -e "$_ai_real" ]; then
            ai_strip_block "${AI_COMMENT:-#}" "$_ai_cur" "$_ai_k.orig"
            if [ -e "$_ai_k.created" ] && [ -s "$_ai_k.orig" ]; then rm -f -- "$_ai_k.created"; fi
            [ -e "$_ai_k.created" ] && rm -f -- "$_ai_k.orig"
        else
            : > "$_ai_k.created"; rm -f -- "$_ai_k.orig"
        fi
    fi
    printf '%s\n' "$_ai_real" > "$_ai_k.path"
    printf '%s\n' "${AI_COMMENT:-}" > "$_ai_k.comment"
    if ! [ -e "$_ai_real" ] || ! cmp -s -- "$_ai_cur" "$_ai_new"; then
        ai_write_atomic "$_ai_new" "$_ai_real"
    fi
    mv -f -- "$_ai_new" "$_ai_k.written"
    rm -f -- "$_ai_cur"
}

# Undoes every ai_edit of this integration, then forgets them.
ai_restore_files() {
    _ai_files=$(_ai_files)
    _ai_any=
    for _ai_p in "$_ai_files"/*.path; do
        [ -e "$_ai_p" ] || continue
        _ai_any=1
        _ai_k=${_ai_p%.path}
        _ai_real=$(cat -- "$_ai_p")
        _ai_cmt=$(cat -- "$_ai_k.comment" 2>/dev/null)
        if [ ! -e "$_ai_real" ]; then
            ai_say "$_ai_real: gone already"
        elif cmp -s -- "$_ai_real" "$_ai_k.written"; then
            if [ -e "$_ai_k.created" ]; then
                rm -f -- "$_ai_real" && ai_say "$_ai_real: removed (appearanced created it)"
            else
                ai_write_atomic "$_ai_k.orig" "$_ai_real" && ai_say "$_ai_real: restored"
            fi
        else
            # The user edited it since: take out only the marked block.
            ai_strip_block "${_ai_cmt:-#}" "$_ai_real" "$_ai_k.strip"
            if [ -e "$_ai_k.created" ] && [ ! -s "$_ai_k.strip" ]; then
                rm -f -- "$_ai_real" && ai_say "$_ai_real: removed (appearanced created it)"
            elif ! cmp -s -- "$_ai_real" "$_ai_k.strip"; then
                ai_write_atomic "$_ai_k.strip" "$_ai_real"
                ai_say "$_ai_real: edited since appearanced changed it: only the marked block was taken out"
            else
                ai_say "$_ai_real: edited since appearanced changed it: left as it is"
            fi
            rm -f -- "$_ai_k.strip"
        fi
        rm -f -- "$_ai_k.path" "$_ai_k.orig" "$_ai_k.created" "$_ai_k.written" "$_ai_k.comment"
    done
    [ -n "$_ai_any" ] || ai_say "no file to restore"
}
