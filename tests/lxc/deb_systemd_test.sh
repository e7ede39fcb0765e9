#!/usr/bin/env bash
# The .deb and the systemd unit under a real systemd: a Debian 12 LXC
# container (systemd is its pid 1) reached over a veth into its network
# namespace. Checks: dpkg -i, readiness through sd_notify, the watchdog
# restarting a SIGSTOPped agent, Restart=always after kill -9, a job that
# survives agent restarts (KillMode=process), MemoryMin and OOMScoreAdjust in
# `systemctl show`, systemd-analyze verify, and a clean dpkg -r / -P. Then
# the bootstrap's systemd path (enable --now, MainPID, journal) through the
# container's own sshd.
#   tests/lxc/deb_systemd_test.sh BUILD_DIR DEB
# Exit 77 (skip) when not root, no lxc, or the container cannot be made.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
deb=$2
gpuctl=$build/client/gpuctl
name=${GPUCTL_LXC_TEST_CONTAINER:-gpuctl-deb}
. "$here/test_lib.sh"
[ -f "$deb" ] || fail "no package at $deb"
ip=$(boot_test_container)
trap '"$here/stop_container.sh" "$name" >/dev/null 2>&1 || true' EXIT
key=/var/lib/lxc/$name/ssh_key
ssh_opts=(-i "$key" -o UserKnownHostsFile=/var/lib/lxc/$name/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes)
# -n: never read our stdin (a pipeline feeding grep would lose its input).
ct() { ssh -n "${ssh_opts[@]}" "root@$ip" "$@"; }
show() { ct systemctl show -p "$1" --value gpuctld; }
main_pid() { show MainPID; }
answers() { ct gpuctl health; }

step "clean slate"
clean_slate() {
  ct 'dpkg -P gpuctl >/dev/null 2>&1; systemctl disable --now gpuctld 2>/dev/null; tmux -L gpuctl kill-server 2>/dev/null
      rm -rf /etc/systemd/system/gpuctld.service /usr/local/bin/gpuctld /etc/gpuctl /var/lib/gpuctl /run/gpuctl
      systemctl daemon-reload; true'
}
clean_slate

step "dpkg -i"
scp -q "${ssh_opts[@]}" "$deb" "root@$ip:/tmp/gpuctl.deb"
ct dpkg -i /tmp/gpuctl.deb
ct test -x /usr/bin/gpuctld -a -x /usr/bin/gpuctl -a -f /etc/gpuctl/gpuctld.json -a -d /var/lib/gpuctl
ct systemd-analyze verify /lib/systemd/system/gpuctld.service || fail "systemd-analyze verify"

step "ready through sd_notify (Type=notify: active only after READY=1)"
[ "$(show Type)" = notify ] || fail "Type is $(show Type)"
wait_for 20 sh -c "[ \"\$(ssh ${ssh_opts[*]} root@$ip systemctl show -p ActiveState --value gpuctld)\" = active ]" \
  || fail "gpuctld never became active: $(ct journalctl -u gpuctld -n 20 --no-pager)"
[ "$(show SubState)" = running ] || fail "SubState $(show SubState)"
wait_for 10 answers || fail "gpuctl health inside the container"

step "MemoryMin, OOMScoreAdjust, WatchdogSec, KillMode in force"
[ "$(show MemoryMin)" = 67108864 ] || fail "MemoryMin $(show MemoryMin)"
[ "$(show OOMScoreAdjust)" = -1000 ] || fail "OOMScoreAdjust $(show OOMScoreAdjust)"
[ "$(show WatchdogUSec)" = 10s ] || fail "WatchdogUSec $(show WatchdogUSec)"
[ "$(show KillMode)" = process ] || fail "KillMode $(show KillMode)"
# Applied to the process where the host lets systemd do it (CAP_SYS_RESOURCE).
if (echo -1000 > /proc/self/oom_score_adj) 2>/dev/null; then
  [ "$(ct cat /proc/"$(main_pid)"/oom_score_adj)" = -1000 ] || fail "oom_score_adj of the agent"
else
  echo "note: this host cannot lower oom_score_adj (no CAP_SYS_RESOURCE), so systemd cannot apply OOMScoreAdjust here"
fi

step "a job that survives agent restarts (KillMode=process)"
ct gpuctl train start --name survivor -- sleep 600
job_running() { ct gpuctl -o json train status survivor | grep '"state": *"running"' >/dev/null; }
job_running || fail "the job is not running"

step "Restart=always after kill -9"
pid=$(main_pid)
t0=$SECONDS
ct kill -9 "$pid"
wait_for 15 sh -c "p=\$(ssh ${ssh_opts[*]} root@$ip systemctl show -p MainPID --value gpuctld); [ \"\$p\" != 0 ] && [ \"\$p\" != $pid ]" \
  || fail "not restarted after kill -9"
wait_for 15 answers || fail "the restarted agent does not answer"
echo "restarted after kill -9 in $((SECONDS - t0)) s"
job_running || fail "the job did not survive kill -9 of the agent"

step "the watchdog restarts a SIGSTOPped agent within WatchdogSec"
pid=$(main_pid)
t0=$SECONDS
ct kill -STOP "$pid"
wait_for 25 sh -c "p=\$(ssh ${ssh_opts[*]} root@$ip systemctl show -p MainPID --value gpuctld); [ \"\$p\" != 0 ] && [ \"\$p\" != $pid ]" \
  || fail "the watchdog did not restart the stopped agent"
took=$((SECONDS - t0))
echo "restarted by the watchdog after $took s"
[ $took -le 14 ] || fail "the watchdog took $took s (WatchdogSec=10, RestartSec=1)"
# journald may hold the entry back under load: ask it to write first. grep
# reads it all (not -q): an early exit kills journalctl with SIGPIPE, and
# pipefail then fails the check on a journal that has the line.
journal_says_watchdog() {
  ct journalctl --sync >/dev/null 2>&1 || true
  ct journalctl -u gpuctld --no-pager | grep -i watchdog >/dev/null
}
wait_for 30 journal_says_watchdog ||
  fail "the journal does not mention the watchdog: $(ct journalctl -u gpuctld --no-pager | tail -n 25)"
wait_for 15 answers || fail "the agent does not answer after the watchdog restart"
job_running || fail "the job did not survive the watchdog restart"
ct gpuctl train stop survivor --grace 1s >/dev/null

step "dpkg -r removes it cleanly; -P also the state"
ct dpkg -r gpuctl
ct 'test ! -e /usr/bin/gpuctld && test ! -e /usr/bin/gpuctl && test ! -e /lib/systemd/system/gpuctld.service' \
  || fail "files left after dpkg -r"
ct '! systemctl is-active --quiet gpuctld' || fail "the agent still runs after dpkg -r"
ct dpkg -P gpuctl
ct 'test ! -e /var/lib/gpuctl && test ! -e /etc/gpuctl' || fail "state or config left after dpkg -P"
ct '! dpkg -l gpuctl 2>/dev/null | grep -q ^ii'

step "the bootstrap's systemd path over SSH"
export HOME=$(mktemp -d) XDG_CONFIG_HOME=
trap '"$here/stop_container.sh" "$name" >/dev/null 2>&1 || true; rm -rf "$HOME"' EXIT
unset SSH_AUTH_SOCK
"$gpuctl" node add ct --host "root@$ip" --identity "$key"
"$gpuctl" --accept-new-host-key node bootstrap ct --timeout 60 || fail "bootstrap into the container"
[ "$(show ActiveState)" = active ] || fail "bootstrap did not leave the unit active"
[ "$(ct systemctl is-enabled gpuctld)" = enabled ] || fail "bootstrap did not enable the unit"
"$gpuctl" --node ct health || fail "health through the bootstrap"
out=$("$gpuctl" -o json node bootstrap ct)
echo "$out" | grep -q '"changed":false' || fail "a second bootstrap was not a no-op: $out"
pid=$(main_pid)
echo "$out" | grep -q "\"pid\":$pid," || fail "bootstrap reports a pid that is not the unit's MainPID ($pid): $out"
clean_slate
echo PASS
