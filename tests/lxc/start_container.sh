#!/usr/bin/env bash
# start_container.sh NAME [TIMEOUT_S]
# Start container NAME (made by make_container.sh), wait until its systemd has
# finished booting (running, or degraded: the failed units are printed) and
# its sshd answers on the veth address; print that address on stdout, alone.
# Everything else goes to stderr. Exit 1 on timeout (default 60 s).
set -euo pipefail
name=${1:?usage: start_container.sh NAME [TIMEOUT_S]}
timeout=${2:-60}
dir=/var/lib/lxc/$name
[[ -f $dir/gpuctl-configured ]] || { echo "$name: not made; run make_container.sh $name" >&2; exit 1; }
ip=$(sed -n 's#^lxc.net.0.ipv4.address *= *\([^/]*\).*#\1#p' "$dir/config")
deadline=$((SECONDS + timeout))
log=$dir/lxc-start.log   # lxc's own log: why a start failed

if [[ $(lxc-info -n "$name" -sH) != RUNNING ]]; then
  lxc-start -n "$name" -l INFO -o "$log" || { tail -20 "$log" >&2; exit 1; }
fi

# `is-system-running --wait` blocks until boot finishes, but fails at once
# while systemd (or its private socket) is not up yet: so loop around it.
state=
until [[ $state == running || $state == degraded ]]; do
  ((SECONDS < deadline)) || { echo "$name: systemd still '$state' after ${timeout}s" >&2; exit 1; }
  state=$(timeout 10 lxc-attach -n "$name" -- systemctl is-system-running --wait 2>/dev/null) || sleep 0.5
done
echo "$name: systemd $state" >&2
if [[ $state == degraded ]]; then
  lxc-attach -n "$name" -- systemctl --failed --no-legend --plain >&2
fi

# sshd: wait for its banner over the veth, i.e. the host end is addressed
# (lxc.net.0.script.up) and sshd listens.
until timeout 2 bash -c "exec 3<>/dev/tcp/$ip/22 && head -c 4 <&3" 2>/dev/null | grep -q SSH; do
  ((SECONDS < deadline)) || { echo "$name: no sshd at $ip:22 after ${timeout}s" >&2; exit 1; }
  sleep 0.2
done
echo "$ip"
