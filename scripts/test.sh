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
  python3 scripts/test-report.py build/ctest-junit.xml build-fuzz/ctest-junit.xml build-aarch64/ctest-junit.xml || true
}
early= autogroup=/proc/sys/kernel/sched_autogroup_enabled autogroup_was= prefetch=
finish() {
  [ -n "$early" ] && kill -- -"$early" 2>/dev/null
  # A run that failed before the prefetch was waited for: how far it got
  # (a fresh-root test that failed may have been waiting on its root).
  [ -n "$prefetch" ] && cat build/prefetch.log 2>/dev/null
  [ -n "$autogroup_was" ] && echo "$autogroup_was" >"$autogroup"
  report
}
trap finish EXIT
rm -f build/ctest-junit.xml build-fuzz/ctest-junit.xml build-aarch64/ctest-junit.xml
timed install bash scripts/install-deps.sh --test
# The slow tests' downloads (debootstrap roots, torch wheels) go on while the
# compiler has the CPUs, and on into the tests if need be: a test that needs a
# cache still being filled waits on its lock instead of filling it again. At
# a low priority, not the lowest: at nice 19 and idle I/O class the first
# debootstrap root took 980 s beside the compiler (dpkg starved of CPU and
# disk) and the fresh-host tests waited for it.
mkdir -p build
nice -n 10 ionice -c 2 -n 7 bash scripts/prefetch.sh build >build/prefetch.log 2>&1 &
prefetch=$!
# Line tables only (-g1) here, as the sanitized and aarch64 builds: what the
# tests need of debug info, at less compile time than -g.
flags=(-O2 -g1 -DNDEBUG)
timed build bash scripts/build.sh -DGPUCTL_BUILD_TESTS=ON -DGPUCTL_UNITY_TESTS=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="${flags[*]}" -DCMAKE_C_FLAGS_RELWITHDEBINFO="${flags[*]}"
# OS access only in agents/sys, gRPC only at the edges, dependencies down.
bash scripts/check-layers.sh
# The sanitized build, then the aarch64 one, compile while the tests run, on
# the CPU time the tests leave (a third of it, more during the torch and soak
# tests): under SCHED_IDLE a test's process takes the CPU the moment it
# wants it. That holds only with autogroup off: with it, each session's
# processes share one CPU weight, and every job a test starts has a session
# of its own, so the builds took half the CPU from them (the real-nvcc test
# ran twice as long). It is switched off for this run and put back at the
# end; where it cannot be, the builds run after the tests instead. Exit 77
# from the aarch64 step: its arm64 packages are out of step with the amd64
# ones in the archive (an allowed skip).
mkdir -p build-fuzz
early_builds='bash scripts/sanitize.sh build && bash scripts/cross-aarch64.sh build'
autogroup_now=$(cat "$autogroup" 2>/dev/null || echo 0)
if [ "$autogroup_now" = 0 ] || { echo 0 >"$autogroup"; } 2>/dev/null; then
  [ "$autogroup_now" = 0 ] || autogroup_was=$autogroup_now
  set -m  # a process group of its own, to be stopped as one on a failure
  chrt --idle 0 ionice -c 3 bash -c "$early_builds" >build-fuzz/early-builds.log 2>&1 &
  early=$!
  set +m
fi
timed tests bash -c 'cd build && ctest --output-on-failure --output-junit ctest-junit.xml --timeout 300 -j 2'
wait $prefetch || true
prefetch=
cat build/prefetch.log
# What is left of those builds, at full priority now.
early_status=0
if [ -n "$early" ]; then
  for pid in $(pgrep -g "$early"); do chrt --other -p 0 "$pid" 2>/dev/null || true; done
  timed builds-left wait "$early" || early_status=$?
  early=
else
  timed builds-left bash -c "$early_builds" >build-fuzz/early-builds.log 2>&1 || early_status=$?
fi
cat build-fuzz/early-builds.log
if [ $early_status != 0 ] && [ $early_status != 77 ]; then exit $early_status; fi
# The suite again under ASan and UBSan, and the fuzz targets (clang, build-fuzz).
# The fuzz targets 12 s each in CI (20 by default), one per core.
timed sanitize env FUZZ_SECONDS="${FUZZ_SECONDS:-12}" bash scripts/sanitize.sh
# The aarch64 unit tests under qemu-user (the build is done).
if [ $early_status = 77 ]; then
  echo "aarch64: skipped (see above)"
else
  timed aarch64 bash scripts/cross-aarch64.sh
fi
