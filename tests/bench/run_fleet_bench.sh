#!/usr/bin/env bash
# `gpuctl --nodes all health` over 16 real nodes (network namespaces, each
# with its own sshd and bootstrapped agent: tests/fleet/fleet_lib.sh) against
# `gpuctl --node n1 health`, one node, in the same run. Target: at most 2x.
# Each call is a whole command: SSH connections, key exchange, tunnel, RPC.
# Here every node's sshd and agent share this machine's CPUs with the client,
# which a real fleet does not: so it also prints the CPU each call takes, all
# told and the client's own, to tell the client's cost from the nodes'.
# Root. Prints medians, the ratio and "target met: yes/no"; never fails on timing.
# GPUCTL_FLEET_SSHD_FLAGS=-r: sshd without its re-exec per connection.
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

busy_ms() { awk '/^cpu / {print int(($2 + $3 + $4 + $7 + $8) * 1000 / '"$(getconf CLK_TCK)"')}' /proc/stat; }
walls=() cpus=() clients=()
measure() {  # measure ARGS...: wall, machine CPU and client CPU (ms) of one run, appended to the arrays
  local start end b0 b1 client
  b0=$(busy_ms); start=$(date +%s%N)
  /usr/bin/time -o "$fleet_dir/time" -f '%U %S' env HOME="$fleet_dir/home" XDG_CONFIG_HOME="$fleet_dir/home/.config" \
    SSH_AUTH_SOCK= "$build/client/gpuctl" "$@" >/dev/null 2>&1
  client=$(tail -n 1 "$fleet_dir/time")
  end=$(date +%s%N); b1=$(busy_ms)
  walls+=($(( (end - start) / 1000000 )))
  cpus+=($(( b1 - b0 )))
  clients+=("$(awk -v u="${client% *}" -v s="${client#* }" 'BEGIN {print int((u + s) * 1000)}')")
}
report() {  # report LABEL: medians of the arrays, then clears them
  printf '%-34s median wall %4d ms, CPU %4d ms (client %3d ms) over %d runs\n' "$1" "$(median "${walls[@]}")" \
    "$(median "${cpus[@]}")" "$(median "${clients[@]}")" "$runs"
  walls=() cpus=() clients=()
}
command -v /usr/bin/time >/dev/null || { echo "fleet_bench: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
fleet_gpuctl --nodes all health >/dev/null   # warm: page cache, sshd's first fork
for ((r = 0; r < runs; r++)); do measure --node n1 health; done
m1=$(median "${walls[@]}")
report "gpuctl --node n1 health:"
for ((r = 0; r < runs; r++)); do measure --nodes all health; done
mall=$(median "${walls[@]}")
report "gpuctl --nodes all health ($nodes):"
ratio=$(awk -v a="$mall" -v b="$m1" 'BEGIN {printf "%.2f", a / b}')
echo "ratio: ${ratio}x the single node (target <= 2x); CPUs here: $(nproc), shared by the client and all $nodes nodes"
awk -v r="$ratio" 'BEGIN {exit !(r <= 2)}' && echo "target met: yes" || echo "target met: no"
