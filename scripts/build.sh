#!/usr/bin/env bash
# Configures and builds gpuctl into ./build.
#   bash scripts/build.sh [CMAKE_ARGS...]
# $GPUCTL_TARGETS limits what is built (e.g. "gpuctld gpuctl"); default all.
# Warnings are errors everywhere: the target compiler is Debian 12's.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUCTL_WERROR=ON "$@" >/dev/null
targets=()
for t in ${GPUCTL_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
