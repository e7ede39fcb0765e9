#!/usr/bin/env bash
# The build governor on the real nvcc, on demand: flash-attn's kernels under
# one memory limit, ungoverned `make -jN` (OOM-killed), under `gpuctl build`,
# and serial `make -j1`, in the same run; prints the governed / serial
# makespan. Root, nvcc and make needed. About 12 min on 2 cores.
#   tests/bench/run_build_proof_bench.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../build_proof/real_nvcc_test.sh" "${1:-$here/../../build}" --bench
