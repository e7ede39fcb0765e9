#!/usr/bin/env bash
# The test suite under AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer, then every fuzz target for a bounded time
# (scripts/fuzz.sh). One clang build in build-fuzz serves both.
# scripts/test.sh builds it while the main ctest runs (`build`), then runs
# the rest.
#   bash scripts/sanitize.sh [build]     (build: the build step alone)
# FUZZ_SECONDS (default 20) per fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-fuzz
start=$SECONDS

bash scripts/fuzz.sh --configure
# What the tests below run, and the fuzz targets; not the benchmarks.
targets=(gpuctld gpuctl grow_memory fake_nvml integration privileged)
for area in common sys events health train guard provision daemon client; do targets+=("unit_$area"); done
for f in tests/fuzz/*_fuzz.cc; do t=${f##*/}; targets+=("${t%.cc}"); done
cmake --build "$build" -j "$(nproc)" $(printf -- '--target %s ' "${targets[@]}")
built=$SECONDS
[ "${1:-}" = build ] && exit 0

# Every test of our C++ code: unit, integration, privileged, and the fuzz
# targets' regression inputs. Left out, as they need the portable static
# build or check scripts and packaging rather than our code (the main build
# runs them all): fresh_node, provision_fresh_root and SshNodeTest.* (gpuctl
# node bootstrap uploads only a portable gpuctld; fleet_nodes and train_multinode
# bootstrap theirs too), package_deb and deb_systemd (CPack's
# .deb under systemd in LXC), soak (minutes of everything at once, its
# GetHealth p99 bound is for the real build), hang_detection and
# checkpoint_kills (minutes of torch processes; the hang watch and the
# checkpoint relaunch run sanitized in their unit tests, and gpu_faults runs
# here), reflection_client (a Python client from the
# package index; the reflection service is gRPC's own), portable_binaries
# (only in the portable build).
# Reports go to files, and a test that has one fails: the integration tests
# run gpuctld and gpuctl as child processes whose stderr a test may not show.
logs="$PWD/$build/sanitizer-logs" suppressions="$PWD/tests/fuzz/lsan.supp"
rm -rf "$logs" && mkdir -p "$logs"
# An absolute path: some tests run the binaries with a PATH of their own.
symbolizer=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || command -v addr2line || true)
status=0
(cd "$build" &&
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$logs/asan:external_symbolizer_path=$symbolizer" \
  LSAN_OPTIONS="suppressions=$suppressions:print_suppressions=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan:external_symbolizer_path=$symbolizer" \
  ctest --output-on-failure --output-junit ctest-junit.xml --timeout 300 -j "$(nproc)" -L '^(unit|integration|privileged|fuzz)' \
    -E '^(fresh_node|provision_fresh_root|SshNodeTest\..*|package_deb|deb_systemd|reflection_client|portable_binaries|build_governor_real_nvcc|provision_real_torch|fleet_nodes|train_multinode|soak|hang_detection|checkpoint_kills)$') || status=$?
tested=$SECONDS
if compgen -G "$logs/*" >/dev/null; then
  echo "sanitize: reports in $logs:" >&2
  for f in "$logs"/*; do echo "--- $f" >&2; head -n 60 "$f" >&2; done
  status=1
fi
[ $status = 0 ] || { echo "sanitize: the sanitized test run failed" >&2; exit $status; }

bash scripts/fuzz.sh
echo "sanitize: build $((built - start)) s, sanitized tests $((tested - built)) s, fuzzing $((SECONDS - tested)) s"
