#!/usr/bin/env bash
# --container jobs against a real LXC container (Debian 12, made by
# make_container.sh and shared with deb_systemd_test.sh), driven by a host
# gpuctld through tests/lxc/pct, the pct-compatible wrapper over lxc-attach.
# Checks: stop reaches the command inside the container (it used to stop at
# the host-side lxc-attach), a job that ignores SIGTERM is SIGKILLed inside
# at the deadline, the default working directory is the container's, and a
# link planted by the container's root never leads the agent to a host file.
#   tests/lxc/container_job_test.sh BUILD_DIR
# Exit 77 (skip) when not root, no lxc, or the container cannot be made.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
name=${GPUCTL_LXC_TEST_CONTAINER:-gpuctl-deb}
. "$here/test_lib.sh"
command -v tmux >/dev/null || skip "tmux is not installed"
boot_test_container >/dev/null
rootfs=/var/lib/lxc/$name/rootfs
work=$(mktemp -d)
agent_pid=
cleanup() {
  [ -z "$agent_pid" ] || kill "$agent_pid" 2>/dev/null || true
  tmux -L "gpuctl-ct-test-$$" kill-server 2>/dev/null || true
  lxc-attach -n "$name" -- sh -c "rm -rf /var/lib/gpuctl/jobs/ct-*" >/dev/null 2>&1 || true
  "$here/stop_container.sh" "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
inside() { lxc-attach -n "$name" --clear-env -- "$@"; }

# The wrapper maps every VMID to this one container.
export GPUCTL_LXC_NAME=$name
"$build/daemon/gpuctld" --listen "unix:$work/sock" --state-dir "$work/state" --tmux-socket "gpuctl-ct-test-$$" \
  --pct "$here/pct" --lxc-rootfs "$rootfs" --guard off \
  >"$work/agent.log" 2>&1 &
agent_pid=$!
g() { "$build/client/gpuctl" --agent "unix:$work/sock" "$@"; }
wait_for 20 g health || fail "the agent never answered: $(tail -5 "$work/agent.log")"
jobs_inside=/var/lib/gpuctl/jobs
inner_pid() { cat "$rootfs$jobs_inside/$1/job_pid" 2>/dev/null; }
state() { g train status "$1" -o json | sed -n 's/.*"state": *"\([a-z_]*\)".*/\1/p' | head -1; }

step "stop reaches the command inside the container"
g train start --name ct-sleep --container 900 -- sleep 300 >/dev/null || fail "start failed"
wait_for 20 inner_pid ct-sleep || fail "the wrapper never wrote the command's pid: $(cat "$rootfs$jobs_inside/ct-sleep/output.log")"
pid=$(inner_pid ct-sleep)
inside kill -0 "$pid" || fail "pid $pid is not running inside the container"
g train stop ct-sleep --grace 5s >/dev/null || fail "stop failed"
[ "$(state ct-sleep)" = stopped ] || fail "state after stop: $(state ct-sleep)"
if inside kill -0 "$pid" 2>/dev/null; then fail "sleep (pid $pid in the container) still runs after train stop"; fi

step "a command that ignores SIGTERM is killed inside at the deadline"
g train start --name ct-stubborn --container 900 -- sh -c 'trap "" TERM; while :; do sleep 1; done' >/dev/null
wait_for 20 inner_pid ct-stubborn || fail "no pid for ct-stubborn"
pid=$(inner_pid ct-stubborn)
g train stop ct-stubborn --grace 1s >/dev/null || fail "stop of the stubborn job failed"
[ "$(state ct-stubborn)" = stopped ] || fail "stubborn state after stop: $(state ct-stubborn)"
if inside kill -0 "$pid" 2>/dev/null; then fail "the stubborn job (pid $pid in the container) survived"; fi

step "the working directory defaults to the container's"
g train start --name ct-pwd --container 900 -- pwd >/dev/null
wait_for 20 sh -c "[ \"\$(\"$build/client/gpuctl\" --agent unix:$work/sock train status ct-pwd -o json | grep -c '\"succeeded\"')\" -ge 1 ]" \
  || fail "pwd did not succeed: $(cat "$rootfs$jobs_inside/ct-pwd/output.log")"
grep -qx /root "$rootfs$jobs_inside/ct-pwd/output.log" || fail "cwd: $(cat "$rootfs$jobs_inside/ct-pwd/output.log")"

step "a link planted inside never leads the agent to a host file"
mkdir -p "$work/host"
echo "host file" >"$work/host/exit_status"
inside sh -c "mkdir -p $jobs_inside && ln -sfn '$work/host' $jobs_inside/ct-evil"
g train start --name ct-evil --container 900 -- true >/dev/null 2>&1 || true
sleep 1
[ "$(cat "$work/host/exit_status")" = "host file" ] || fail "a host file was changed through the container's link"
[ ! -e "$work/host/output.log" ] || fail "the agent wrote a log into a host directory"
g train list >/dev/null || fail "the agent stopped answering"

step "container jobs: all checks passed"
