#!/usr/bin/env bash
# Installs dependencies, builds with warnings as errors, and runs every test.
# CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test
bash scripts/build.sh -DGPUCTL_BUILD_TESTS=ON
(cd build && ctest --output-on-failure --timeout 300 -j 2)
# The suite again under ASan and UBSan, and the fuzz targets (clang, build-fuzz).
bash scripts/sanitize.sh
# The aarch64 build and its unit tests under qemu-user.
status=0
bash scripts/cross-aarch64.sh || status=$?
if [ $status = 77 ]; then echo "aarch64: skipped (see above)"; elif [ $status != 0 ]; then exit $status; fi
