#!/usr/bin/env bash
# stop_node.sh PIDFILE
#
# Stops a node started by start_node.sh: SIGKILL to the PID namespace's init
# makes the kernel kill every process in the namespace, and the mount namespace
# (with all the node's mounts) goes with its last process. Removes only the pid
# file; the root copy, its log and the cache stay. Stopping a stopped node is ok.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 PIDFILE" >&2; exit 2; }
pidfile=$1
[[ -f $pidfile ]] || exit 0
pid=$(<"$pidfile")
root=$(cd "$(dirname "$pidfile")" && pwd)/$(basename "$pidfile" .pid)

# Alive and not a zombie: a zombie has died already, its parent just has not
# reaped it yet (our parent, unshare, may have been reparented to an init that
# does not reap).
alive() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*) }; [[ ${s:0:1} != Z ]]; }

if [[ $pid =~ ^[0-9]+$ ]] && alive "$pid"; then
    # Guard against pid reuse: the node's init (sshd) runs chrooted in ROOT.
    if [[ $(readlink "/proc/$pid/root" 2>/dev/null) != "$root" ]]; then
        echo "stop_node.sh: pid $pid is not the node in $root (stale pid file?)" >&2
        rm -f "$pidfile"
        exit 1
    fi
    parent=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    kill -KILL "$pid"
    # Wait for the init and for unshare, its parent: the last holder of the
    # mount namespace.
    for _ in $(seq 100); do
        alive "$pid" || { [[ -n $parent ]] && alive "$parent" && [[ $(cat "/proc/$parent/comm" 2>/dev/null) == unshare ]]; } || break
        sleep 0.1
    done
    if alive "$pid"; then echo "stop_node.sh: pid $pid did not die" >&2; exit 1; fi
fi
rm -f "$pidfile"
