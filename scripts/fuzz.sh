#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan) in
# build-fuzz and runs each for a bounded time from a seed corpus.
#   bash scripts/fuzz.sh [TARGET...]   (default: every *_fuzz target; TARGET as in log_events)
#   bash scripts/fuzz.sh --configure   (only configure build-fuzz; scripts/sanitize.sh uses it)
# FUZZ_SECONDS (default 20) per target. Seeds: tests/fuzz/seeds/TARGET, the
# real captures in ../shared/fixtures that fit the target, and for the
# /proc and cgroup parsers this host's own files. The corpus grows in
# build-fuzz/corpus/TARGET (never in git). Exit 1 when a target crashed,
# leaked, timed out or broke an invariant; the input is printed. Keep it
# in tests/fuzz/regressions/TARGET/ (a ctest then replays it) and add a
# unit test for the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-fuzz
clang=${CLANG:-clang-16}  # Debian 12's clang 14 cannot compile <source_location>

configure() {
  local opt=${FUZZ_OPT:--O0}
  [[ $opt =~ ^-O[0-3sg]$ ]] || { echo "fuzz.sh: FUZZ_OPT must be -O0..-O3, -Os or -Og, not '$opt'" >&2; exit 2; }
  # -O0 -g1 by default (FUZZ_OPT): with ASan, clang takes 2-2.5x as long
  # at -O1 on our files (daemon 57 s against 21 s a batch, the generated
  # gRPC code 21 s against 8.5 s), and this build is CI's largest; what the
  # sanitizers check is the same. FUZZ_OPT=-O1 for a long fuzzing session
  # (faster executions), in a fresh build-fuzz. Line numbers in every report.
  # Not portable: the shipped static link and stripping are no part of what
  # is checked here. Files compiled 8 to a batch, as every build.
  cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER="$clang" -DCMAKE_CXX_COMPILER="${clang/clang/clang++}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt -g1" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt -g1" -DGPUCTL_PORTABLE=OFF -DGPUCTL_WERROR=ON \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
    -DGPUCTL_BUILD_TESTS=ON -DGPUCTL_FUZZ=ON >/dev/null
}
if [ "${1:-}" = --configure ]; then configure; exit 0; fi

targets=("$@")
if [ ${#targets[@]} = 0 ]; then
  for f in tests/fuzz/*_fuzz.cc; do t=${f##*/}; targets+=("${t%_fuzz.cc}"); done
fi
[ -f "$build/build.ninja" ] || configure
cmake --build "$build" -j "$(nproc)" $(printf -- '--target %s_fuzz ' "${targets[@]}")

fixtures="${GPUCTL_FIXTURES_ROOT:-$(cd .. && pwd)/shared/fixtures}"
[ -d "$fixtures" ] || echo "fuzz: no fixtures at $fixtures; seeding from tests/fuzz/seeds only" >&2
# Files from the fixtures, and from this host, that each target reads.
seeds_for() {
  local gpu="$fixtures/gpu-host"
  case "$1" in
    log_events | metrics) echo "$gpu"/oom-*.log ;;
    nvidia_smi_csv) echo "$gpu"/query-*.csv ;;
    proc_files)
      echo /proc/meminfo /proc/pressure/cpu /proc/pressure/memory /proc/pressure/io /proc/self/stat \
        /proc/self/status /proc/self/cgroup /proc/loadavg /proc/uptime /etc/os-release \
        /sys/fs/cgroup/cpuset.cpus.effective ;;
    cgroup_files)
      local cg=/sys/fs/cgroup
      echo $cg/memory.stat $cg/memory.events $cg/memory.pressure $cg/cgroup.procs $cg/cgroup.controllers \
        $cg/memory.max $cg/memory.current $cg/memory/memory.stat $cg/memory/memory.oom_control \
        $cg/memory/memory.limit_in_bytes $cg/memory/memory.usage_in_bytes ;;
  esac
}

symbolizer=$(command -v llvm-symbolizer-16 || command -v llvm-symbolizer || command -v addr2line || true)
# fuzz_one TARGET: one target for FUZZ_SECONDS; a failure is noted in $failed_list.
fuzz_one() {
  local t=$1 corpus="$build/corpus/$1" crashes="$build/crashes/$1" log="$build/fuzz-logs/$1.log" status=0 runs
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  [ -d "tests/fuzz/seeds/$t" ] && cp tests/fuzz/seeds/"$t"/* "$corpus"/
  for f in $(seeds_for "$t"); do
    # Named after the source so reruns overwrite instead of piling up.
    [ -r "$f" ] && head -c 65536 "$f" >"$corpus/seed-$(echo "$f" | tr / _)" 2>/dev/null || true
  done
  [ -d "tests/fuzz/regressions/$t" ] && cp tests/fuzz/regressions/"$t"/* "$corpus"/
  ASAN_OPTIONS="detect_leaks=1:external_symbolizer_path=$symbolizer" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:external_symbolizer_path=$symbolizer" \
    "$build/tests/fuzz/${t}_fuzz" "$corpus" -max_total_time="${FUZZ_SECONDS:-20}" -timeout=10 -rss_limit_mb=2048 \
    -max_len=16384 -print_final_stats=1 -artifact_prefix="$crashes/" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if [ $status = 0 ]; then
    echo "fuzz $t: ok, ${runs:-?} runs, $(grep -o 'cov: [0-9]*' "$log" | tail -1), corpus $(ls "$corpus" | wc -l) files"
  else
    echo "fuzz $t: FAILED (exit $status); log $log" >&2
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*invariant failed|.*runtime error)' "$log" | head -5 >&2 || true
    sed -n 's/.*Test unit written to \(.*\)$/  input: \1/p' "$log" >&2
    echo "$t" >>"$failed_list"
  fi
}
# One target per core at a time: each is single-threaded, so every target
# still gets its full FUZZ_SECONDS, in half the wall time on two cores.
failed_list="$build/fuzz-failed"
rm -f "$failed_list"
running=0
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  if ((++running >= $(nproc))); then wait -n || true; ((running--)) || true; fi
done
wait
failed=()
[ -f "$failed_list" ] && mapfile -t failed <"$failed_list"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]}; keep each input in tests/fuzz/regressions/TARGET/ with a unit test for the fix" >&2
  exit 1
fi
