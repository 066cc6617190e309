#!/usr/bin/env python3
"""Subscribe to appearanced and print each change. Standard library only (socket + json).

    python3 subscribe.py [SOCKET]

Prints "now MODE" for the current state, then "PREVIOUS -> MODE" per change. When the daemon stops, it
says so and exits 1; a client that wants to follow restarts reconnects and subscribes again.
"""
import json
import os
import socket
import stat
import sys


def socket_path():
    """The socket, found by the rule of docs/protocol.md ("The socket")."""
    env = os.environ.get("APPEARANCED_SOCKET")
    if env:
        return env
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "appearanced", "socket")
    uid = os.getuid()
    run = f"/run/user/{uid}"
    try:
        st = os.lstat(run)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == uid:
            return os.path.join(run, "appearanced", "socket")
    except OSError:
        pass
    return f"/tmp/appearanced-{uid}/socket"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else socket_path()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as e:
        sys.exit(f"appearanced is not running: cannot connect to {path} ({e.strerror})")
    sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe"}\n')
    for line in sock.makefile("r", encoding="utf-8"):
        msg = json.loads(line)
        if msg.get("id") == 1:  # the reply: the current state
            if "error" in msg:
                sys.exit(msg["error"]["message"])
            print("now", msg["result"]["mode"], flush=True)
        elif msg.get("method") == "changed":  # ignore any other notification
            p = msg["params"]
            print(p["previous"], "->", p["mode"], flush=True)
    print("appearanced closed the connection", flush=True)
    sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
