#!/usr/bin/env bash
# real_nvcc_test.sh BUILD_DIR [--bench]: the build governor against the real
# nvcc on flash-attn 2.8.3's own kernel files (its sdist, fetched once from
# pip's index; tests/build_proof/torch_shim stands in for the three PyTorch
# headers they include). The same `make -jN` of N kernels runs twice under
# the same memory limit, below what the N compiles need at once:
#   ungoverned, in a plain memory cgroup: the kernel OOM-kills it, or it sits
#   pinned at the limit, thrashing, for STALL_S (default 60) seconds;
#   under `gpuctl build --mem-budget LIMIT`: every object built, 0 OOM kills.
# --bench adds a serial `make -j1` under the same limit and prints the ratios
# (tests/bench/run_build_proof_bench.sh). Needs root (cgroups), nvcc and make;
# exits 77 (ctest SKIP) without them or without the sources.
# Knobs: GPUCTL_PROOF_FILES (kernel file names), GPUCTL_PROOF_LIMIT (bytes).
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 BUILD_DIR [--bench]" >&2; exit 2; }
build=$(cd "$1" && pwd)
bench=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
test_name=real_nvcc_test
source "$here/lib.sh"

[[ $EUID -eq 0 ]] || skip "needs root: it makes memory cgroups"
nvcc=${GPUCTL_PROOF_NVCC:-$(command -v nvcc || ls -d /usr/local/cuda*/bin/nvcc 2>/dev/null | sort -V | tail -n1 || true)}
[[ -n $nvcc && -x $nvcc ]] || skip_allowed gpu "no nvcc (a CUDA toolkit) on PATH or under /usr/local/cuda*"
command -v make >/dev/null || skip "no make"
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
  cgv=2 cgroot=/sys/fs/cgroup
  grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || skip_allowed platform "cgroup v2 without the memory controller enabled"
elif [[ -d /sys/fs/cgroup/memory ]]; then
  cgv=1 cgroot=/sys/fs/cgroup/memory
else
  skip_allowed platform "no memory cgroup mounted"
fi
src=$(fetch_sdist flash-attn 2.8.3)

# The test: two of the lighter kernels (about 3.1 GiB each at their peak,
# 135 s on one core here) under 5 GiB, which cannot hold both at once
# ungoverned (OOM-killed in about 30 s); governed, the second waits for the
# first (about 300 s in all, one core; the four below took 451 s of both of
# CI's cores). The bench (--bench): four of them under 10 GiB, where one
# at its peak fits beside another in its tail, so the governor's overlap is
# what the makespan measures against make -j1.
if [[ $bench == --bench ]]; then
  default_files="flash_fwd_hdim32_fp16_sm80 flash_fwd_hdim32_bf16_sm80 flash_fwd_hdim64_fp16_sm80 flash_fwd_hdim64_bf16_sm80"
  default_limit=$((10 << 30))
else
  default_files="flash_fwd_hdim32_fp16_sm80 flash_fwd_hdim32_bf16_sm80"
  default_limit=$((5 << 30))
fi
files=(${GPUCTL_PROOF_FILES:-$default_files})
limit=${GPUCTL_PROOF_LIMIT:-$default_limit}
jobs=${#files[@]}

work=$(mktemp -d /tmp/gpuctl-proof.XXXXXX)
agent_pid=
cleanup() {
  if [[ -n $agent_pid ]]; then
    kill "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
  fi
  tmux -L "gpuctl-proof-$$" kill-server 2>/dev/null || true
  for cg in "$cgroot"/gpuctl-proof-*-$$ "$cgroot/gpuctl-proof-$$"/*/ "$cgroot/gpuctl-proof-$$"; do
    [[ -d $cg ]] && rmdir "$cg" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# flash-attn's own nvcc flags (setup.py), for sm_80.
cat >"$work/Makefile" <<MAKE
SRC := $src/csrc/flash_attn/src
FLAGS := -O3 -std=c++17 -I$src/csrc/flash_attn -I\$(SRC) -I$src/csrc/cutlass/include -I$here/torch_shim \\
  -U__CUDA_NO_HALF_OPERATORS__ -U__CUDA_NO_HALF_CONVERSIONS__ -U__CUDA_NO_HALF2_OPERATORS__ \\
  -U__CUDA_NO_BFLOAT16_CONVERSIONS__ --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math \\
  -gencode arch=compute_80,code=sm_80 --threads \$(or \$(NVCC_THREADS),4)
all: $(printf '%s.o ' "${files[@]}")
%.o: \$(SRC)/%.cu
	$nvcc \$(FLAGS) -c \$< -o \$@
MAKE

# run_limited NAME LIMIT_BYTES CMD...: CMD in a memory cgroup of its own with a
# hard limit and no swap; sets r_exit, r_oom, r_wall (s) and r_peak (bytes).
# The limit must be below MemAvailable: the host itself never runs out.
run_limited() {
  local name=$1 cap=$2
  shift 2
  [[ $cap =~ ^[0-9]+$ ]] && ((cap >= 256 << 20)) || fail "run_limited: '$cap' is not a limit of at least 256 MiB"
  local avail
  avail=$(($(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) * 1024))
  ((cap < avail)) || fail "run_limited: limit $cap is not below MemAvailable ($avail)"
  (($# > 0)) || fail "run_limited: no command"
  local cg=$cgroot/gpuctl-proof-$name-$$
  r_exit=0
  mkdir "$cg"
  if [[ $cgv == 1 ]]; then
    echo "$cap" >"$cg/memory.limit_in_bytes"
    [[ -f $cg/memory.memsw.limit_in_bytes ]] && echo "$cap" >"$cg/memory.memsw.limit_in_bytes"
    [[ -f $cg/memory.swappiness ]] && echo 0 >"$cg/memory.swappiness"
  else
    echo "$cap" >"$cg/memory.max"
    [[ -f $cg/memory.swap.max ]] && echo 0 >"$cg/memory.swap.max"
  fi
  local start=$SECONDS watcher=
  bash -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' _ "$cg" "$@" >"$work/$name.log" 2>&1 &
  local pid=$!
  if [[ -n ${STOP_AT_OOM:-} ]]; then
    # The first OOM kill is the measurement: the rest of the build is killed
    # rather than left to finish what survived.
    # Or a stall: pinned at the limit, the compiles can also thrash (the
    # kernel reclaiming and re-reading their program text) for many minutes
    # without an OOM kill. That is the same failure, slower: pinned for
    # STALL_S seconds counts as it, and the group is killed.
    local events=$cg/memory.oom_control usage=$cg/memory.usage_in_bytes
    [[ $cgv == 2 ]] && events=$cg/memory.events usage=$cg/memory.current
    rm -f "$work/$name.stalled"
    (pinned_since=
    while kill -0 "$pid" 2>/dev/null; do
      stop=
      (($(awk '$1 == "oom_kill" {print $2}' "$events") > 0)) && stop=1
      if (($(cat "$usage") >= cap - (64 << 20))); then
        pinned_since=${pinned_since:-$SECONDS}
        if ((SECONDS - pinned_since >= ${STALL_S:-60})); then
          echo "$((SECONDS - pinned_since))" >"$work/$name.stalled"
          stop=1
        fi
      else
        pinned_since=
      fi
      if [[ -n $stop ]]; then
        while read -r victim; do kill -9 "$victim" 2>/dev/null || true; done <"$cg/cgroup.procs"
      fi
      sleep 0.2
    done) &
    watcher=$!
  fi
  { wait "$pid"; } 2>/dev/null || r_exit=$?  # (bash would print "Killed")
  [[ -n $watcher ]] && wait "$watcher"
  r_wall=$((SECONDS - start))
  if [[ $cgv == 1 ]]; then
    r_oom=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.oom_control")
    r_peak=$(cat "$cg/memory.max_usage_in_bytes")
  else
    r_oom=$(awk '$1 == "oom_kill" {print $2}' "$cg/memory.events")
    r_peak=$(cat "$cg/memory.peak" 2>/dev/null || echo 0)
  fi
  r_oom=${r_oom:-0}
  r_stalled=$(cat "$work/$name.stalled" 2>/dev/null || echo 0)
  for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
}

gib() { awk -v b="$1" 'BEGIN {printf "%.1f GiB", b / 1073741824}'; }
say "nvcc $("$nvcc" --version | tail -n1); $jobs kernels of flash-attn 2.8.3; limit $(gib "$limit"); cgroup v$cgv"

# 1. Ungoverned: make -jN in a plain cgroup.
mkdir "$work/obj-ungoverned"
STOP_AT_OOM=1 run_limited ungoverned "$limit" make -C "$work/obj-ungoverned" -f "$work/Makefile" -j "$jobs"
if ((r_oom > 0)); then
  say "ungoverned make -j$jobs: OOM-killed after ${r_wall} s ($r_oom kills, exit $r_exit), peak $(gib "$r_peak")"
elif ((r_stalled > 0)); then
  say "ungoverned make -j$jobs: stalled at the $(gib "$limit") limit for ${r_stalled} s without finishing (thrashing; no OOM kill yet), killed after ${r_wall} s"
else
  fail "the ungoverned build was neither OOM-killed nor stalled at $(gib "$limit"): the limit proves nothing (see $work/ungoverned.log)"
fi

# 2. Governed: the same make under gpuctl build, with the limit as budget.
mkdir -p "$work/state" "$work/obj-governed"
"$build/daemon/gpuctld" --listen "unix:$work/gpuctld.sock" --state-dir "$work/state" --tmux-socket "gpuctl-proof-$$" \
  --cgroup-parent "/gpuctl-proof-$$" --nvml-library /nonexistent --nvidia-smi /nonexistent --no-lock-memory \
  2>"$work/gpuctld.log" &
agent_pid=$!
for _ in $(seq 100); do [[ -S $work/gpuctld.sock ]] && break; sleep 0.1; done
[[ -S $work/gpuctld.sock ]] || { cat "$work/gpuctld.log"; fail "gpuctld did not start"; }
gpuctl=("$build/client/gpuctl" --agent "unix:$work/gpuctld.sock")
start=$SECONDS
g_exit=0
"${gpuctl[@]}" build --name proof --mem-budget "$limit" --archs 8.0 --cwd "$work/obj-governed" --wait -- \
  make -f "$work/Makefile" -j "$jobs" >"$work/governed.log" 2>&1 || g_exit=$?
g_wall=$((SECONDS - start))
status=$("${gpuctl[@]}" -o json train status proof) || fail "gpuctl train status proof failed"
read -r state oom pauses paused_s peak done < <(python3 -c '
import json, sys
j = json.loads(sys.argv[1]); b = j.get("build") or {}
print(j["state"], b.get("oom_kills", 0), b.get("pauses", 0), int(b.get("paused_seconds", 0)), b.get("peak_bytes", 0), b.get("compiles_done", 0))' "$status") \
  || fail "cannot read the build's figures from: $status"
say "governed gpuctl build: $state, $oom OOM kills, ${g_wall} s, peak $(gib "$peak"), $pauses pauses, ${paused_s} compile-s paused, $done compiles"
[[ $g_exit == 0 && $state == succeeded ]] || { tail -n 30 "$work/governed.log" "$work/gpuctld.log"; fail "the governed build did not succeed: $status"; }
((oom == 0)) || fail "the governed build had $oom OOM kills"
for f in "${files[@]}"; do [[ -s $work/obj-governed/$f.o ]] || fail "$f.o was not built"; done
((done >= jobs)) || fail "the governor saw $done compiles, not $jobs"
((pauses > 0)) || fail "the governor never paused: $(gib "$limit") held every compile at once, so this proves nothing"

if [[ $bench == --bench ]]; then
  mkdir "$work/obj-serial"
  run_limited serial "$limit" make -C "$work/obj-serial" -f "$work/Makefile" -j 1
  say "serial make -j1: exit $r_exit, $r_oom OOM kills, ${r_wall} s, peak $(gib "$r_peak")"
  [[ $r_exit == 0 ]] || fail "the serial build failed (see $work/serial.log)"
  awk -v g="$g_wall" -v s="$r_wall" 'BEGIN {printf "real_nvcc_test: governed / serial makespan: %.2f (%d s / %d s)\n", g / s, g, s}'
fi
say "PASS"
