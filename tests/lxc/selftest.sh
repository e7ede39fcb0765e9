#!/usr/bin/env bash
# selftest.sh NAME
# Checks, on a running container NAME, what gpuctld's unit relies on:
# systemd as pid 1, journald, Type=notify with a working watchdog (a pinging
# unit stays up, a silent one is killed), deploy/gpuctld.service verifying
# clean (with a stub binary) and its properties as systemd applies them, the
# cgroup layout, and ssh over the veth. Leaves the container as it found it.
set -uo pipefail
name=${1:?usage: selftest.sh NAME}
dir=/var/lib/lxc/$name root=$dir/rootfs
here=$(cd "$(dirname "$0")" && pwd)
ct() { lxc-attach -n "$name" -- "$@"; }
fails=0
check() { local what=$1; shift; if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fails=$((fails + 1)); fi; }

check "pid 1 is systemd" test "$(ct cat /proc/1/comm)" = systemd
check "journald has a MainPID" test "$(ct systemctl show -p MainPID --value systemd-journald)" -gt 0

unit=$root/etc/systemd/system
cat >"$unit/selftest-notify.service" <<'EOF'
[Service]
Type=notify
NotifyAccess=all
WatchdogSec=2
ExecStart=/bin/sh -c 'systemd-notify --ready; while :; do systemd-notify WATCHDOG=1; sleep 0.5; done'
EOF
# Ready, then silent: the watchdog must kill it.
sed 's/while :; do systemd-notify WATCHDOG=1; sleep 0.5; done/exec sleep infinity/' \
  "$unit/selftest-notify.service" >"$unit/selftest-hang.service"
# deploy/gpuctld.service, run as a copy with a stub binary that notifies like
# the real one, and directories of its own (a real gpuctld may be installed).
printf '#!/bin/sh\nsystemd-notify --ready\nwhile :; do systemd-notify WATCHDOG=1; sleep 2; done\n' \
  >"$root/usr/local/bin/selftest-gpuctld"
chmod +x "$root/usr/local/bin/selftest-gpuctld"
sed 's#^ExecStart=/usr/local/bin/gpuctld#ExecStart=/usr/local/bin/selftest-gpuctld#; s#Directory=gpuctl$#Directory=gpuctl-selftest#' \
  "$here/../../deploy/gpuctld.service" >"$unit/selftest-gpuctld.service"
ct systemctl daemon-reload
ct systemctl start selftest-notify selftest-hang selftest-gpuctld
sleep 4
check "Type=notify unit pinging the watchdog stays active" ct systemctl is-active -q selftest-notify
check "silent unit killed by the watchdog" test "$(ct systemctl show -p Result --value selftest-hang)" = watchdog
check "systemd-analyze verify gpuctld.service" ct systemd-analyze verify /etc/systemd/system/selftest-gpuctld.service
check "gpuctld.service active" ct systemctl is-active -q selftest-gpuctld
echo "     $(ct systemctl show selftest-gpuctld -p MemoryMin -p OOMScoreAdjust -p LimitMEMLOCK -p WatchdogUSec | paste -sd' ')"
pid=$(ct systemctl show -p MainPID --value selftest-gpuctld)
echo "     applied: oom_score_adj=$(ct cat /proc/"$pid"/oom_score_adj)" \
  "memlock=$(ct awk '/locked/ {print $5}' /proc/"$pid"/limits)"
echo "     cgroups: $(ct stat -fc %T /sys/fs/cgroup) at /sys/fs/cgroup," \
  "v2 at unified: $(ct stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)," \
  "v1: $(ct awk '$3 == "cgroup" {sub(".*/", "", $2); printf "%s ", $2}' /proc/self/mounts)"
check "ssh root@veth" ssh -i "$dir/ssh_key" -o UserKnownHostsFile="$dir/known_hosts" -o BatchMode=yes \
  "root@$(sed -n 's#^lxc.net.0.ipv4.address *= *\([^/]*\).*#\1#p' "$dir/config")" true

ct systemctl stop selftest-notify selftest-gpuctld
ct systemctl reset-failed selftest-hang 2>/dev/null
rm -f "$unit"/selftest-{notify,hang,gpuctld}.service
rm -rf "$root/usr/local/bin/selftest-gpuctld" "$root/var/lib/gpuctl-selftest"
ct rm -rf /run/gpuctl-selftest
ct systemctl daemon-reload
exit $((fails > 0))
