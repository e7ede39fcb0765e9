#!/usr/bin/env bash
# Memory guard benchmark (see tests/bench/guard/guard_bench.cc). Needs root,
# cgroup v1 memory, no swap; the earlyoom baseline needs `apt-get install -y
# earlyoom` (or pass --no-earlyoom). Extra arguments go to guard_bench.
#   tests/bench/guard/run.sh [BUILD_DIR] [--episodes N] [--rates 1,4] [--no-earlyoom]
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
build="${root}/build"
if [[ $# -gt 0 && "$1" != -* ]]; then build="$1"; shift; fi
cmake --build "$build" --target gpuctld gpuctl grow_memory guard_bench
exec "$build/tests/bench/guard_bench" "$@"
