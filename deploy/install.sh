#!/usr/bin/env bash
# Installs gpuctld and gpuctl from a build tree and starts the agent.
#   bash deploy/install.sh [BUILD_DIR] [PREFIX]
# With systemd running, the unit is installed, enabled and started; without
# it (containers, CI), the agent is started detached with a pidfile.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
prefix=${2:-/usr/local}
etc=${GPUCTL_ETC:-/etc/gpuctl}

install -D -m 0755 "$build/daemon/gpuctld" "$prefix/bin/gpuctld"
install -D -m 0755 "$build/client/gpuctl" "$prefix/bin/gpuctl"
install -d -m 0755 "$etc"
[ -f "$etc/gpuctld.json" ] || install -m 0644 "$here/gpuctld.json" "$etc/gpuctld.json"

if [ -d /run/systemd/system ]; then
  sed "s|/usr/local/bin/gpuctld|$prefix/bin/gpuctld|; s|/etc/gpuctl/gpuctld.json|$etc/gpuctld.json|" \
    "$here/gpuctld.service" > /etc/systemd/system/gpuctld.service
  systemctl daemon-reload
  systemctl enable gpuctld
  systemctl restart gpuctld
  echo "gpuctld installed and started (systemctl status gpuctld)"
else
  mkdir -p -m 0700 /run/gpuctl
  mkdir -p /var/log
  if [ -f /run/gpuctl/gpuctld.pid ] && kill -0 "$(cat /run/gpuctl/gpuctld.pid)" 2>/dev/null; then
    kill "$(cat /run/gpuctl/gpuctld.pid)"
    sleep 1
  fi
  setsid "$prefix/bin/gpuctld" --config "$etc/gpuctld.json" >>/var/log/gpuctld.log 2>&1 < /dev/null &
  # Made anew with noclobber (O_EXCL): a link planted there is never followed.
  rm -f /run/gpuctl/gpuctld.pid
  (set -C; echo $! > /run/gpuctl/gpuctld.pid)
  echo "gpuctld started without systemd (pid $(cat /run/gpuctl/gpuctld.pid), log /var/log/gpuctld.log)"
fi
