#!/usr/bin/env bash
# Builds gpuctld, gpuctl and the log streaming benchmark, then runs it: a job
# writes as fast as it can (throughput) and at a steady rate of stamped lines
# (latency) while StreamLogs, `gpuctl train logs -f` and `tail -F` read its
# log. Prints figures, ratios to tail and "target met: yes/no"; it never
# fails on timing.
#
#   tests/bench/run_log_stream_bench.sh [log_stream_bench args...]
#     e.g. --bytes 512MiB   output per throughput run (default 512MiB)
#          --rounds 3       throughput runs per reader, median shown (default 1)
#          --rate 1000 --seconds 10   stamped lines for the latency run
#   GPUCTL_BUILD_DIR=DIR  build directory (default: build)
#   TMPDIR=/dev/shm       agent state and job logs on tmpfs (default /tmp): takes
#                         the disk's writeback out of the writer's speed
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${GPUCTL_BUILD_DIR:-$root/build}

if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -G Ninja
fi
cmake --build "$build" --target log_stream_bench gpuctld gpuctl
exec "$build/tests/bench/log_stream_bench" --gpuctld "$build/daemon/gpuctld" --gpuctl "$build/client/gpuctl" "$@"
