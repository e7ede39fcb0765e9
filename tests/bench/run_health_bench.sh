#!/usr/bin/env bash
# Builds gpuctld and the health benchmark, then runs it. Prints figures and
# "target met: yes/no"; it never fails on timing.
#
#   tests/bench/run_health_bench.sh [health_bench args...]
#     e.g. --seconds 10   shorter idle window (default 60)
#          -- FLAGS...    gpuctld flags instead of the no-GPU defaults
#          --             gpuctld's own defaults (real NVML on a GPU host)
#   GPUCTL_BUILD_DIR=DIR  build directory (default: build)
#   MALLOC_ARENA_MAX=2 tests/bench/run_health_bench.sh   the agent inherits env
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${GPUCTL_BUILD_DIR:-$root/build}

if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -G Ninja
fi
cmake --build "$build" --target health_bench gpuctld
exec "$build/tests/bench/health_bench" --gpuctld "$build/daemon/gpuctld" "$@"
