#!/usr/bin/env bash
# How long an OOM relaunch takes (--on-oom recover): from the OOM message
# reaching the log to the relaunched run's first line, against a plain
# `gpuctl train start` (command to first line) measured in the same run.
# Target: at most 1 s more than the plain start. Real gpuctld, real tmux,
# examples/train/toy_train.py (--print-times stamps both moments).
# Prints figures and "target met: yes/no"; never fails on timing.
#
#   tests/bench/run_oom_relaunch_bench.sh [RUNS]     (default 10)
#   GPUCTL_BUILD_DIR=DIR  build directory (default: build)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_start_agent
gpuctl=("$build/client/gpuctl" --agent "unix:$work/a.sock")
toy=("python3" "$root/examples/train/toy_train.py" --steps 2 --interval 0 --print-times)

# stamp FILE WORD: the t= of "toy_train: WORD t=..." in FILE, waiting for it.
stamp() {
  for _ in $(seq 400); do
    local t
    t=$(sed -n "s/^toy_train: $2 t=//p" "$1" 2>/dev/null | head -n1)
    [[ -n $t ]] && { echo "$t"; return; }
    sleep 0.025
  done
  echo "bench: no '$2' stamp in $1" >&2; exit 1
}
plain=() relaunch=()
for i in $(seq "$runs"); do
  before=$(python3 -c 'import time; print(f"{time.time():.6f}")')
  "${gpuctl[@]}" train start --name "plain$i" -- "${toy[@]}" >/dev/null
  first=$(stamp "$work/state/jobs/plain$i/output.log" start)
  plain+=("$(python3 -c "print(($first - $before) * 1000)")")

  "${gpuctl[@]}" train start --name "oom$i" --on-oom recover --anchors 1024 -- "${toy[@]}" \
    --simulate-oom-at 0 --oom-above-anchors 768 >/dev/null
  # The first attempt's log is kept as output.log.RUN_ID once the relaunch starts.
  for _ in $(seq 400); do ls "$work/state/jobs/oom$i/"output.log.* >/dev/null 2>&1 && break; sleep 0.025; done
  oom=$(stamp "$(ls "$work/state/jobs/oom$i/"output.log.* | head -n1)" oom)
  again=$(stamp "$work/state/jobs/oom$i/output.log" start)
  relaunch+=("$(python3 -c "print(($again - $oom) * 1000)")")
done
p=$(median "${plain[@]}") r=$(median "${relaunch[@]}")
printf 'plain train start, command to first log line (median of %d): %.0f ms\n' "$runs" "$p"
printf 'OOM line to the relaunched run'"'"'s first log line (median of %d): %.0f ms (%.0f ms more than a plain start)\n' \
  "$runs" "$r" "$(python3 -c "print($r - $p)")"
echo "target <= plain + 1000 ms met: $(python3 -c "print('yes' if $r - $p <= 1000 else 'no')")"
