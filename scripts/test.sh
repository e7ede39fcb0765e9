#!/usr/bin/env bash
# Installs dependencies, builds with warnings as errors, and runs every test.
# CI runs exactly this (.ci/run). At the end, and on a failure too, it prints
# how long each phase took and every test that skipped, with its reason
# (under CI=true only the reasons tests/skip_policy.sh allows can skip).
set -euo pipefail
cd "$(dirname "$0")/.."
times=()
timed() {  # NAME COMMAND...: runs it, noting its minutes
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  times+=("$name $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s")
  return $rc
}
report() {
  echo "== time per phase: ${times[*]/%/;} total $((SECONDS / 60)) min"
  echo "== skipped tests:"
  python3 scripts/list-skips.py build/ctest-junit.xml build-fuzz/ctest-junit.xml build-aarch64/ctest-junit.xml || true
}
trap report EXIT
rm -f build/ctest-junit.xml build-fuzz/ctest-junit.xml build-aarch64/ctest-junit.xml
timed install bash scripts/install-deps.sh --test
# The slow tests' downloads (debootstrap roots, torch wheels) go on while the
# compiler has the CPUs, at the lowest CPU and disk priority, and on into the
# tests if need be: a test that needs a cache still being filled waits on its
# lock instead of filling it again.
mkdir -p build
nice -n 19 ionice -c 3 bash scripts/prefetch.sh build >build/prefetch.log 2>&1 &
prefetch=$!
timed build bash scripts/build.sh -DGPUCTL_BUILD_TESTS=ON -DGPUCTL_UNITY_TESTS=ON
# OS access only in agents/sys, gRPC only at the edges, dependencies down.
bash scripts/check-layers.sh
timed tests bash -c 'cd build && ctest --output-on-failure --output-junit ctest-junit.xml --timeout 300 -j 2'
wait $prefetch || true
cat build/prefetch.log
# The suite again under ASan and UBSan, and the fuzz targets (clang, build-fuzz).
# The fuzz targets 12 s each in CI (20 by default), one per core.
timed sanitize env FUZZ_SECONDS="${FUZZ_SECONDS:-12}" bash scripts/sanitize.sh
# The aarch64 build and its unit tests under qemu-user. Exit 77: the arm64
# packages are out of step with the amd64 ones in the archive (an allowed skip).
status=0
timed aarch64 bash scripts/cross-aarch64.sh || status=$?
if [ $status = 77 ]; then echo "aarch64: skipped (see above)"; elif [ $status != 0 ]; then exit $status; fi
