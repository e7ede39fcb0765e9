#!/usr/bin/env bash
# stop_container.sh NAME [destroy]
# Stop container NAME: a clean systemd shutdown (SIGRTMIN+3 to its init, which
# is what lxc-stop sends to systemd), killed after 30 s. With "destroy", also
# delete it (rootfs, ssh key, config); the debootstrap cache in
# /var/cache/lxc/debian stays, so the next make_container.sh is faster.
set -euo pipefail
name=${1:?usage: stop_container.sh NAME [destroy]}
lxc-info -n "$name" &>/dev/null || { echo "$name: no such container" >&2; exit 0; }
if [[ $(lxc-info -n "$name" -sH) != STOPPED ]]; then
  lxc-stop -n "$name" -t 30
fi
if [[ ${2:-} == destroy ]]; then
  lxc-destroy -n "$name"
fi
