#!/usr/bin/env bash
# /metrics with 8 GPUs (fake NVML, eight_h200) and 50 running jobs, against
# GetHealth and ListJobs on the same agent in the same run (metrics_bench.cc).
# Prints figures and ratios; never fails on timing.
#   tests/bench/run_metrics_bench.sh [RUNS] (default 200)
set -euo pipefail
bench_default_runs=200
source "$(dirname "$0")/bench_lib.sh"
cmake --build "$build" --target metrics_bench fake_nvml >/dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
FAKE_NVML_SCENARIO=eight_h200 bench_start_agent --nvml-library "$build/tests/fake_nvml/libnvidia-ml.so.1" \
  --nvidia-smi /nonexistent --metrics-listen "127.0.0.1:$port"
for i in $(seq 50); do
  "$build/client/gpuctl" --agent "unix:$work/a.sock" train start --name "job$i" -- sleep 600 >/dev/null
done
"$build/tests/bench/metrics_bench" --agent "unix:$work/a.sock" --metrics "127.0.0.1:$port" --runs "$runs"
for i in $(seq 50); do "$build/client/gpuctl" --agent "unix:$work/a.sock" train stop "job$i" --grace 0 >/dev/null; done
