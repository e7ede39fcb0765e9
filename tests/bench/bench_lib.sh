# Sourced by the shell benchmarks (tests/bench/run_*_bench.sh) after
# `set -euo pipefail`, with their arguments: the checkout ($root), the build
# ($build: GPUCTL_BUILD_DIR, default build/, with gpuctld and gpuctl built),
# how many runs ($runs: $1, default $bench_default_runs or 10), a scratch
# directory ($work) and a gpuctld started on it (bench_start_agent), both
# cleaned up at exit.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${GPUCTL_BUILD_DIR:-$root/build}
runs=${1:-${bench_default_runs:-10}}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [RUNS] (a positive number, got '$runs')" >&2; exit 2; }
[[ -x $build/daemon/gpuctld && -x $build/client/gpuctl ]] || cmake --build "$build" --target gpuctld gpuctl

work=$(mktemp -d)
agent_pid=""
bench_tmux=bench-$$
bench_cleanup() {
  [[ -n $agent_pid ]] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
  tmux -L "$bench_tmux" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap bench_cleanup EXIT

# bench_start_agent [GPUCTLD_FLAGS...]: gpuctld on $work/a.sock, its own tmux
# server, no guard, no GPUs unless the flags say otherwise; waits until it answers.
bench_start_agent() {
  "$build/daemon/gpuctld" --listen "unix:$work/a.sock" --state-dir "$work/state" --guard off --no-lock-memory \
    --tmux-socket "$bench_tmux" --nvml-library /nonexistent --nvidia-smi /nonexistent "$@" >"$work/gpuctld.log" 2>&1 &
  agent_pid=$!
  for _ in $(seq 100); do "$build/client/gpuctl" --agent "unix:$work/a.sock" health >/dev/null 2>&1 && return; sleep 0.05; done
  echo "bench: gpuctld did not answer; see its log:" >&2
  cat "$work/gpuctld.log" >&2
  exit 1
}

# median VALUES...: the middle value (the upper one of an even count).
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
