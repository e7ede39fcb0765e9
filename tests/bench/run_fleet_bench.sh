#!/usr/bin/env bash
# `gpuctl --nodes all health` over 16 real nodes (network namespaces, each
# with its own sshd and bootstrapped agent: tests/fleet/fleet_lib.sh) against
# `gpuctl --node n1 health`, one node, in the same run. Target: at most 2x.
# Each call is a whole command: SSH connections, key exchange, tunnel, RPC.
# Root. Prints medians, the ratio and "target met: yes/no"; never fails on timing.
#   tests/bench/run_fleet_bench.sh [RUNS] (default 10)   GPUCTL_FLEET_NODES=N (default 16)
set -euo pipefail
bench_default_runs=10
source "$(dirname "$0")/bench_lib.sh"
test_name=fleet_bench
source "$root/tests/fleet/fleet_lib.sh"
fleet_check
nodes=${GPUCTL_FLEET_NODES:-16}
trap 'fleet_down; bench_cleanup' EXIT
fleet_up "$nodes"

ms() {  # ms COMMAND...: wall milliseconds of one run (it must succeed)
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null || { echo "fleet_bench: $* failed" >&2; exit 1; }
  end=$(date +%s%N)
  echo $(( (end - start) / 1000000 ))
}
fleet_gpuctl --nodes all health >/dev/null   # warm: page cache, sshd's first fork
one=() all=()
for ((r = 0; r < runs; r++)); do
  one+=("$(ms fleet_gpuctl --node n1 health)")
  all+=("$(ms fleet_gpuctl --nodes all health)")
done
m1=$(median "${one[@]}")
mall=$(median "${all[@]}")
ratio=$(awk -v a="$mall" -v b="$m1" 'BEGIN {printf "%.2f", a / b}')
echo "gpuctl --node n1 health:       median ${m1} ms over $runs runs"
echo "gpuctl --nodes all health ($nodes): median ${mall} ms over $runs runs"
echo "ratio: ${ratio}x the single node (target <= 2x)"
awk -v r="$ratio" 'BEGIN {exit !(r <= 2)}' && echo "target met: yes" || echo "target met: no"
