#!/bin/sh
# appearanced from the shell with socat: one JSON-RPC line out, the reply (and notifications) back.
#   socat.sh get | status | toggle | set dark|light|system | subscribe
# The socket: $APPEARANCED_SOCKET, else $XDG_RUNTIME_DIR/appearanced/socket, else /run/user/$UID/...
# (docs/protocol.md has the full rule). The one-liners, for copying:
#   echo '{"jsonrpc":"2.0","id":1,"method":"get"}' | socat - UNIX-CONNECT:"$S"
#   echo '{"jsonrpc":"2.0","id":1,"method":"set","params":{"override":"dark"}}' | socat - UNIX-CONNECT:"$S"
#   echo '{"jsonrpc":"2.0","id":1,"method":"subscribe"}' | socat -,ignoreeof UNIX-CONNECT:"$S"
# `ignoreeof` keeps the connection open after the request (a subscriber must not half-close); socat exits
# when the daemon closes the connection.
set -eu
S=${APPEARANCED_SOCKET:-${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/appearanced/socket}
case "${1:-}" in
get | status | toggle)
    echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\"}" | socat - UNIX-CONNECT:"$S" ;;
set)
    echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"set\",\"params\":{\"override\":\"${2:?set needs dark, light or system}\"}}" |
        socat - UNIX-CONNECT:"$S" ;;
subscribe)
    echo '{"jsonrpc":"2.0","id":1,"method":"subscribe"}' | exec socat -,ignoreeof UNIX-CONNECT:"$S" ;;
*)
    echo "usage: $0 get | status | toggle | set dark|light|system | subscribe" >&2
    exit 64 ;;
esac
