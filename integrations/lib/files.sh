# What appearanced's integrations change in the user's files: sourced by common.sh, never run. POSIX sh.
#
# ai_edit FILE ROOT TRANSFORM changes FILE through TRANSFORM IN OUT (ai_block_at_end, ai_block_at_top,
# ai_whole_file, or the integration's own), and ai_restore_files undoes it. What restore needs lives in
# APPEARANCE_INTEGRATION_DIR/files/, for each file (KEY: a checksum of its name as given):
#   KEY.path     four lines: the file it resolved to at the last write, its name as given, the folder it must
#                stay in (ROOT: the symlink check) and its comment mark (for the block's markers)
#   KEY.orig     its bytes as the user has them, without the block, or KEY.created: it did not exist
#   KEY.written  what was last written
# Each is written whole or not at all and synced before the user's file changes: a write that fails (a full
# disk) ends the run with nothing of the user's changed. A file whose block is damaged (a marker missing,
# doubled, out of order or edited) is left byte for byte as it is, and the run fails saying so.

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

# ai_lock_folder PATH: waits (with a deadline) for the folder that holds PATH (its nearest existing one), and
# holds it until ai_unlock_folder: two runners, even with different private folders, never edit one file at once.
ai_lock_folder() {
    _ai_lf=$(dirname -- "$1")
    while [ ! -d "$_ai_lf" ] && [ "$_ai_lf" != / ]; do _ai_lf=$(dirname -- "$_ai_lf"); done
    { command exec 8< "$_ai_lf"; } 2>/dev/null || ai_die "$_ai_lf: cannot open it to lock it"
    flock -w "$AI_LOCK_WAIT" 8 || ai_die "$_ai_lf: another run kept it locked for $AI_LOCK_WAIT s: nothing changed"
}
ai_unlock_folder() { exec 8<&-; }

# ai_write_atomic SRC DEST: DEST gets SRC's bytes: a temporary file in DEST's folder, written and synced, then
# renamed over it. DEST's permission bits are kept (a new file gets 0666 less the umask); a symlink is never
# replaced (ai_resolve gives the file it leads to).
ai_write_atomic() {
    [ ! -L "$2" ] || ai_die "$2 is a symlink: not replacing it"
    _ai_dir=$(dirname -- "$2")
    mkdir -p -- "$_ai_dir" || ai_die "$_ai_dir: cannot create it"
    if [ -e "$2" ]; then _ai_perm=$(stat -c %a -- "$2") || ai_die "$2: cannot read its mode"
    else _ai_perm=$(printf '%o' $((0666 & ~$(umask)))); fi
    _ai_tmp=$(mktemp "$_ai_dir/.$(basename -- "$2").appearanced.XXXXXX") || ai_die "$_ai_dir: cannot write a temporary file there"
    if ! _ai_err=$( { cat -- "$1" > "$_ai_tmp" && chmod "$_ai_perm" "$_ai_tmp" && sync -- "$_ai_tmp"; } 2>&1 ); then
        rm -f -- "$_ai_tmp"
        ai_die "$2: cannot write it (${_ai_err##*: }): left as it was"
    fi
    mv -f -- "$_ai_tmp" "$2" || { rm -f -- "$_ai_tmp"; ai_die "$2: cannot replace it"; }
}

# _ai_keep SRC DEST, _ai_keep_text TEXT DEST: a record in the private folder, whole or not at all (written by
# cat, which names what went wrong, then renamed); a write that fails ends the run before anything of the
# user's changes. ai_edit syncs them all at once before it edits the user's file.
_ai_keep() { _ai_save "$2" cat -- "$1"; }
_ai_keep_text() { _ai_save "$2" _ai_text "$1"; }
_ai_text() {
    cat <<EOF
$1
EOF
}
_ai_save() { # DEST CMD…
    _ai_dest=$1
    shift
    if _ai_err=$( { "$@" > "$_ai_dest.tmp" && mv -f -- "$_ai_dest.tmp" "$_ai_dest"; } 2>&1 ); then return 0; fi
    rm -f -- "$_ai_dest.tmp"
    ai_die "cannot write $_ai_dest (${_ai_err##*: }): nothing changed"
}

# _ai_do MESSAGE CMD…: CMD (a transform, a strip) or the end of the run: its own refusal ("NAME: …") as it
# said it, else "MESSAGE (why)".
_ai_do() {
    _ai_msg=$1
    shift
    _ai_err=$("$@" 2>&1 >/dev/null) && return 0
    case ${_ai_err##*"$_ai_nl"} in "$AI_NAME: "*) printf '%s\n' "${_ai_err##*"$_ai_nl"}" >&2; exit 1 ;; esac
    ai_die "$_ai_msg (${_ai_err##*: })"
}
_ai_nl='
'

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

# _ai_scan COMMENT FILE: where the marked block is. _ai_state: none (no marker), ok (one begin marker, then one
# end marker: lines _ai_b to _ai_e; _ai_bom=1 when the begin marker follows a byte order mark on line 1) or
# damaged (_ai_why: a marker missing, doubled, out of order or edited). A marker may end in CR (a CRLF file).
_ai_scan() {
    _ai_state=none _ai_b= _ai_e= _ai_bom=0 _ai_why=
    [ -s "$2" ] || return 0
    _ai_out=$(_AI_B=$(ai_begin "$1") _AI_E=$(ai_end "$1") _AI_N="appearanced $AI_NAME" LC_ALL=C awk '
        BEGIN { b = ENVIRON["_AI_B"]; e = ENVIRON["_AI_E"]; n = ENVIRON["_AI_N"] }
        function damaged(why) { if (!bad) bad = why }
        {
            l = $0; sub(/\r$/, "", l); bom = 0
            if (NR == 1 && substr(l, 1, 3) == "\357\273\277") { l = substr(l, 4); bom = 1 }
            if (l == b) {
                if (nb++) damaged("a second begin marker on line " NR); else { fb = NR; fbom = bom }
            } else if (l == e) {
                if (!nb) damaged("an end marker on line " NR " before the begin marker")
                else if (ne++) damaged("a second end marker on line " NR)
                else fe = NR
            } else if (index(l, n) && (index(l, ">>") || index(l, "<<"))) damaged("line " NR " is an edited marker")
        }
        END {
            if (bad) print "damaged " bad
            else if (!nb) print "none"
            else if (!ne) print "damaged the begin marker on line " fb " has no end marker after it"
            else print "ok " fb " " fe " " fbom
        }' "$2") || ai_die "$2: cannot read it"
    _ai_state=${_ai_out%% *}
    case $_ai_state in
        ok) set -- $_ai_out; _ai_b=$2 _ai_e=$3 _ai_bom=$4 ;;
        damaged) _ai_why=${_ai_out#damaged } ;;
    esac
}

ai_has_block() {
    [ -e "$2" ] && _ai_scan "$1" "$2" && [ "$_ai_state" = ok ]
}

# ai_check_block COMMENT FILE [NAME]: refuses (naming NAME, else FILE) a file whose block is damaged: it is no
# longer clear which lines are appearanced's, so every byte stays as it is until the user mends it.
ai_check_block() {
    _ai_scan "$1" "$2"
    [ "$_ai_state" = damaged ] || return 0
    ai_die "${3:-$2}: appearanced's marked block is damaged ($_ai_why): every byte is left as it is until you mend it: keep '$(ai_begin "$1")' and '$(ai_end "$1")' once each around appearanced's lines, or delete the block's lines"
}

_ai_bom() { [ "$(head -c3 -- "$1" | od -An -tx1 | tr -d ' \n')" = efbbbf ]; }
_ai_put_bom() { if [ "$_ai_bom" = 1 ]; then printf '\357\273\277'; fi; }
_ai_block() { ai_begin "$AI_COMMENT" && cat -- "$AI_BODY" && ai_end "$AI_COMMENT"; }

# ai_strip_block COMMENT IN OUT: IN without the marked block; head and tail keep the other bytes as they are (a
# last line without a newline, a byte order mark in front). Fails on a damaged block or a failed write.
ai_strip_block() {
    _ai_scan "$1" "$2"
    case $_ai_state in
        none) cat -- "$2" > "$3" ;;
        ok) { head -n $((_ai_b - 1)) -- "$2" && _ai_put_bom && tail -n +$((_ai_e + 1)) -- "$2"; } > "$3" ;;
        *) return 2 ;;
    esac
}

# Transforms for ai_edit: IN OUT, failing when OUT cannot be written. AI_COMMENT: the comment mark; AI_BODY: a
# file with the block's lines. At the end: the block replaced where it is, else appended (after a newline the
# file may lack).
ai_block_at_end() {
    _ai_scan "$AI_COMMENT" "$1"
    if [ "$_ai_state" = ok ]; then _ai_replace_block "$1" "$2"; return; fi
    {
        cat -- "$1" \
            && if [ -s "$1" ] && [ "$(tail -c1 -- "$1" | od -An -c | tr -d ' ')" != '\n' ]; then echo; fi \
            && _ai_block
    } > "$2"
}

# At the top (where a setting must come before the file's own sections), after a byte order mark.
ai_block_at_top() {
    _ai_scan "$AI_COMMENT" "$1"
    if [ "$_ai_state" = ok ]; then _ai_replace_block "$1" "$2"; return; fi
    if _ai_bom "$1"; then
        { printf '\357\273\277' && _ai_block && tail -c +4 -- "$1"; } > "$2"
    else
        { _ai_block && cat -- "$1"; } > "$2"
    fi
}

_ai_replace_block() {
    { head -n $((_ai_b - 1)) -- "$1" && _ai_put_bom && _ai_block && tail -n +$((_ai_e + 1)) -- "$1"; } > "$2"
}

# The whole file is the integration's own (an included file): AI_BODY is its content.
ai_whole_file() {
    cat -- "$AI_BODY" > "$2"
}

# ai_edit FILE ROOT TRANSFORM: FILE's new content is TRANSFORM IN OUT of its current one (empty when absent;
# AI_FILE names FILE for its messages). What restore needs is on disk before FILE changes; FILE is written only
# when its content changes. A file whose block is damaged is refused, every byte left alone.
ai_edit() {
    AI_FILE=$1
    _ai_real=$(ai_resolve "$1" "$2") || exit 1
    _ai_k=$(_ai_files)/$(_ai_key "$1")
    _ai_cmt=${AI_COMMENT:-#}
    ai_lock_folder "$_ai_real"
    if [ -e "$_ai_real" ]; then _ai_keep "$_ai_real" "$_ai_k.cur"; else _ai_keep /dev/null "$_ai_k.cur"; fi
    [ "$3" = ai_whole_file ] || ai_check_block "$_ai_cmt" "$_ai_k.cur" "$1"
    # A transform that refuses says why (one line, "NAME: …"); nothing is recorded or written then.
    _ai_do "cannot write $_ai_k.new: nothing changed" "$3" "$_ai_k.cur" "$_ai_k.new"
    if [ "$3" != ai_whole_file ]; then
        _ai_scan "$_ai_cmt" "$_ai_k.new"
        [ "$_ai_state" = ok ] || ai_die "$1: its new content in $_ai_k.new came out without a whole block: nothing changed"
    fi
    # The file as the user has it: at the first change (since enable or restore), when it is somewhere else now
    # (a symlink changed), or when the user edited it since the last write: restore gives that back. A copy that
    # still holds a block (left by an earlier run) is kept without it.
    _ai_was=
    [ ! -e "$_ai_k.path" ] || IFS= read -r _ai_was < "$_ai_k.path" || :
    if [ "$_ai_was" != "$_ai_real" ] || ! cmp -s -- "$_ai_k.cur" "$_ai_k.written"; then
        if [ ! -e "$_ai_real" ]; then
            _ai_keep /dev/null "$_ai_k.created"; rm -f -- "$_ai_k.orig"
        else
            _ai_do "cannot write $_ai_k.strip: nothing changed" ai_strip_block "$_ai_cmt" "$_ai_k.cur" "$_ai_k.strip"
            if [ -n "$_ai_was" ] && [ -e "$_ai_k.created" ] && [ ! -s "$_ai_k.strip" ]; then
                rm -f -- "$_ai_k.orig"
            else
                _ai_keep "$_ai_k.strip" "$_ai_k.orig"; rm -f -- "$_ai_k.created"
            fi
            rm -f -- "$_ai_k.strip"
        fi
    fi
    _ai_keep "$_ai_k.new" "$_ai_k.written"
    _ai_keep_text "$_ai_real$_ai_nl$1$_ai_nl$2$_ai_nl$_ai_cmt" "$_ai_k.path"
    rm -f -- "$_ai_k.comment"
    _ai_err=$(sync -- "$_ai_k".* "${_ai_k%/*}" 2>&1) || ai_die "cannot sync the records in ${_ai_k%/*} (${_ai_err##*: }): nothing changed"
    if ! [ -e "$_ai_real" ] || ! cmp -s -- "$_ai_k.cur" "$_ai_k.new"; then
        ai_write_atomic "$_ai_k.new" "$_ai_real"
    fi
    rm -f -- "$_ai_k.cur" "$_ai_k.new"
    ai_unlock_folder
}

# _ai_restore_one KEY: undoes the edits of one file (run in a subshell: ai_die ends that file alone, and its
# record stays for a later restore).
_ai_restore_one() {
    _ai_k=$1
    _ai_real= _ai_given= _ai_root= _ai_cmt=
    { IFS= read -r _ai_real; IFS= read -r _ai_given; IFS= read -r _ai_root; IFS= read -r _ai_cmt; } < "$_ai_k.path"
    case $_ai_real in /*) ;; *) ai_die "$_ai_k.path does not name a file: its record is damaged; nothing restored from it" ;; esac
    # A record of an earlier version has the resolved name alone (and the comment mark in KEY.comment).
    _ai_given=${_ai_given:-$_ai_real}
    [ -n "$_ai_cmt" ] || [ ! -e "$_ai_k.comment" ] || IFS= read -r _ai_cmt < "$_ai_k.comment" || :
    _ai_cmt=${_ai_cmt:-#}
    if [ ! -e "$_ai_given" ] && [ ! -L "$_ai_given" ]; then
        ai_say "$_ai_given: gone already"
        return 0
    fi
    if [ -n "$_ai_root" ]; then
        _ai_now=$(ai_resolve "$_ai_given" "$_ai_root" 2>&1) \
            || ai_die "${_ai_now#"$AI_NAME: "}: appearanced's marked block stays in it; take it out yourself"
    elif [ -L "$_ai_given" ]; then
        ai_die "$_ai_given is a symlink now: not following it; take appearanced's marked block out of it yourself"
    else
        _ai_now=$_ai_given
    fi
    ai_lock_folder "$_ai_now"
    ai_check_block "$_ai_cmt" "$_ai_now" "$_ai_given"
    if [ "$_ai_now" = "$_ai_real" ] && [ -e "$_ai_k.written" ] && cmp -s -- "$_ai_now" "$_ai_k.written" \
        && { [ -e "$_ai_k.created" ] || [ -e "$_ai_k.orig" ]; }; then
        if [ -e "$_ai_k.created" ]; then
            rm -f -- "$_ai_now" || ai_die "$_ai_now: cannot remove it"
            ai_say "$_ai_given: removed (appearanced created it)"
        else
            ai_write_atomic "$_ai_k.orig" "$_ai_now"
            ai_say "$_ai_given: restored"
        fi
        return 0
    fi
    # Edited since appearanced changed it (or somewhere else now): take out only the marked block.
    _ai_do "cannot write $_ai_k.strip: $_ai_given left as it is" ai_strip_block "$_ai_cmt" "$_ai_now" "$_ai_k.strip"
    if [ -e "$_ai_k.created" ] && [ "$_ai_now" = "$_ai_real" ] && [ ! -s "$_ai_k.strip" ]; then
        rm -f -- "$_ai_now" || ai_die "$_ai_now: cannot remove it"
        ai_say "$_ai_given: removed (appearanced created it)"
    elif ! cmp -s -- "$_ai_now" "$_ai_k.strip"; then
        ai_write_atomic "$_ai_k.strip" "$_ai_now"
        ai_say "$_ai_given: edited since appearanced changed it: only the marked block was taken out"
    else
        ai_say "$_ai_given: edited since appearanced changed it: left as it is"
    fi
    rm -f -- "$_ai_k.strip"
}

# ai_edited FILE: whether this integration changed (or created) FILE and has not restored it since: it keeps a
# record of it. A file without one is the user's own.
ai_edited() {
    [ -e "$(_ai_files)/$(_ai_key "$1").path" ]
}

# ai_restore_file FILE: undoes the edits of FILE alone, as ai_restore_files does, then forgets it; nothing when
# there is no record of it. A file that cannot be restored ends the run, saying why, and keeps its record.
ai_restore_file() {
    _ai_k1=$(_ai_files)/$(_ai_key "$1")
    [ -e "$_ai_k1.path" ] || return 0
    ( _ai_restore_one "$_ai_k1" ) || exit 1
    rm -f -- "$_ai_k1".*
}

# Undoes every ai_edit of this integration, then forgets it. A file that cannot be restored keeps its record,
# and the run fails once the others are done, with one line saying why for each (the last line of the run's
# output, which the daemon shows).
ai_restore_files() {
    _ai_files=$(_ai_files)
    _ai_any= _ai_failed=
    for _ai_p in "$_ai_files"/*.path; do
        [ -e "$_ai_p" ] || continue
        _ai_any=1
        if { _ai_why=$( (_ai_restore_one "${_ai_p%.path}") 2>&1 >&3 3>&-); } 3>&1; then
            rm -f -- "${_ai_p%.path}".*
        else
            _ai_why=${_ai_why##*"$_ai_nl"}
            _ai_failed="${_ai_failed:+$_ai_failed; }${_ai_why#"$AI_NAME: "}"
        fi
    done
    [ -n "$_ai_any" ] || ai_say "no file to restore"
    [ -z "$_ai_failed" ] || ai_die "$_ai_failed"
}
