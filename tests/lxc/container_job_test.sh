#!/usr/bin/env bash
# --container jobs against a real LXC container (Debian 12, made by
# make_container.sh and shared with deb_systemd_test.sh), driven by a host
# gpuctld through tests/lxc/pct, the pct-compatible wrapper over lxc-attach.
# Checks: stop reaches the command inside the container (it used to stop at
# the host-side lxc-attach), a job that ignores SIGTERM is SIGKILLed inside
# at the deadline, the default working directory is the container's, and a
# link planted by the container's root never leads the agent to a host file,
# and a build in the container is governed in a cgroup beneath the container's.
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
  if [ -n "$agent_pid" ]; then
    kill "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
  fi
  tmux -L "gpuctl-ct-test-$$" kill-server 2>/dev/null || true
  bash "$here/../remove_test_cgroups.sh" "gpuctl-ct-test-$$" || true
  lxc-attach -n "$name" -- sh -c "rm -rf /var/lib/gpuctl/jobs/ct-* /opt/gpuctl-ct-build" >/dev/null 2>&1 || true
  "$here/stop_container.sh" "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
inside() { lxc-attach -n "$name" --clear-env -- "$@"; }

# The wrapper maps every VMID to this one container.
export GPUCTL_LXC_NAME=$name
"$build/daemon/gpuctld" --listen "unix:$work/sock" --state-dir "$work/state" --tmux-socket "gpuctl-ct-test-$$" \
  --pct "$here/pct" --lxc-rootfs "$rootfs" --guard on --cgroup-parent "/gpuctl-ct-test-$$" \
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

step "a build in the container is governed in a cgroup beneath the container's"
# Six compiles of 300 MiB each (tests/privileged/fake_compile, named cc so the
# governor takes it for a compiler) in a 1 GiB budget: at most three fit at
# their peak at once. fake_compile itself refuses to run outside a memory
# cgroup with a hard limit, as it sees its cgroups from inside.
ct_build=/opt/gpuctl-ct-build
rm -rf "$rootfs$ct_build" && mkdir -p "$rootfs$ct_build/bin" "$rootfs$ct_build/src"
cp "$build/tests/fake_compile" "$rootfs$ct_build/bin/cc"
g build --name ct-build --container 900 --cwd "$ct_build/src" --mem-budget 1GiB \
  --env "PATH=$ct_build/bin:/usr/bin:/bin" --env "FAKE_COMPILE_LOG=$ct_build/compiles.log" \
  -- sh -c 'for i in 1 2 3 4 5 6; do cc 300 2 o$i.o o$i.c & done; wait' >/dev/null || fail "build start failed"
# The agent places it beneath the container's own cgroup, as the host names it.
build_cgroup() { find /sys/fs/cgroup -maxdepth 5 -type d -name 'gpuctl-ct-build@*' 2>/dev/null | head -n1; }
cg=
for _ in $(seq 200); do cg=$(build_cgroup); [ -n "$cg" ] && break; sleep 0.1; done
[ -n "$cg" ] || fail "no cgroup gpuctl-ct-build@* under /sys/fs/cgroup: $(cat "$rootfs$jobs_inside/ct-build/output.log"; tail -5 "$work/agent.log")"
case $cg in
  */lxc.payload.$name/gpuctl-ct-build@* | */lxc/$name/gpuctl-ct-build@*) ;;
  *) fail "the build's cgroup $cg is not beneath container $name's" ;;
esac
wait_for 90 sh -c "\"$build/client/gpuctl\" --agent unix:$work/sock train status ct-build -o json | grep -q '\"state\": *\"\(succeeded\|failed\)\"'" \
  || fail "the build did not end: $(g train status ct-build)"
job=$(g train status ct-build -o json)
echo "$job" | grep -q '"state": *"succeeded"' || fail "the build did not succeed: $job $(cat "$rootfs$jobs_inside/ct-build/output.log")"
for i in 1 2 3 4 5 6; do [ -f "$rootfs$ct_build/src/o$i.o" ] || fail "o$i.o was not built"; done
echo "$job" | python3 -c '
import json, sys
b = json.load(sys.stdin)["build"]
assert b["budget_bytes"] <= 1 << 30, b
assert b["oom_kills"] == 0, b
print("governed: budget %d MiB, %d pauses, 0 OOM kills" % (b["budget_bytes"] >> 20, b["pauses"]))' \
  || fail "the build's figures: $job"
# Never more than three at their peak at once ("peak T" up, "end T" down).
most=$(sort -k2 -n "$rootfs$ct_build/compiles.log" | awk '$1 == "peak" {n++} $1 == "end" {n--} n > m {m = n} END {print m + 0}')
[ "$most" -ge 1 ] && [ "$most" -le 3 ] || fail "$most compiles were at their 300 MiB peak at once in a 1 GiB budget"
echo "at most $most compiles at their peak at once"

step "container jobs: all checks passed"
