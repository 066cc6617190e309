# Shared by appearanced's integrations: sourced, never run. POSIX sh.
#
# An integration sets AI_NAME, defines ai_describe, ai_available, ai_apply and ai_restore, and ends with
# `ai_main "$@"`. What is here:
#   ai_main            the four verbs; anything else is a usage error (exit 64). apply and restore take the
#                      integration's lock first: one run at a time
#   ai_mode            APPEARANCE, checked: dark or light
#   ai_opt KEY DEF     the user's setting APPEARANCE_OPT_KEY, or DEF
#   ai_die MSG         "NAME: MSG" on stderr, exit 1
#   ai_pids PROG       the user's running PROG processes (same uid and HOME)
#   ai_run SECS CMD…   CMD with a deadline
# and, from files.sh next to it, what changes the user's files:
#   ai_edit F ROOT FN  changes the user's file F (which must resolve inside ROOT) through FN IN OUT,
#                      remembering what restore needs: a copy of F as it was (or that it was absent)
#   ai_block_at_end / ai_block_at_top    FN for ai_edit: the integration's own marked block
#   ai_restore_files   undoes every ai_edit: byte for byte when the file was not edited since
#   ai_restore_file F  the same for F alone; ai_edited F: whether F is one this integration changed
#
# The integration found this file as $_lib (the scripts' lookup: next to it, else in the share folder).

AI_NAME=${AI_NAME:-integration}
# How long a run waits for another one to let go of a lock it needs, in seconds (the daemon's timeout is 30).
AI_LOCK_WAIT=20

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
        apply) ai_mode >/dev/null; ai_state_dir >/dev/null; ai_lock; ai_apply ;;
        restore) ai_state_dir >/dev/null; ai_lock; ai_restore ;;
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

# ai_lock: one run of the integration at a time (the daemon's, a hand run, another instance given the same
# folder): apply and restore hold APPEARANCE_INTEGRATION_DIR/lock (flock) until the script exits, and wait for
# it at most AI_LOCK_WAIT seconds. A program the integration leaves running must not keep descriptor 9 open.
ai_lock() {
    ai_have flock || ai_die "flock (util-linux) is needed to keep two runs apart, and is not installed"
    _ai_lock=$(ai_state_dir)/lock
    { command exec 9>> "$_ai_lock"; } 2>/dev/null || ai_die "$_ai_lock: cannot open it"
    flock -w "$AI_LOCK_WAIT" 9 || ai_die "another run of $AI_NAME kept $_ai_lock for $AI_LOCK_WAIT s: not run"
}

# ai_body CMD [ARGS…]: AI_BODY (the lines a transform puts in the block, or the integration's own file) gets what
# CMD prints. A refusal of CMD (ai_die) ends the run, and so does a write that fails, naming why.
ai_body() {
    _ai_body=$("$@") || exit 1
    _ai_keep_text "$_ai_body" "$AI_BODY"
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

# The user's files: files.sh, next to this file.
if [ -z "${_lib:-}" ] || [ ! -r "${_lib%/*}/files.sh" ]; then
    printf '%s: lib/files.sh is not next to lib/common.sh%s\n' "$AI_NAME" "${_lib:+ ($_lib)}" >&2
    exit 70
fi
. "${_lib%/*}/files.sh"
