#!/usr/bin/env bash
# Hang detection (--on-hang, --hang-after) and `gpuctl train dump`, on a real
# gpuctld with real tmux and python3 jobs, each against a baseline measured in
# the same run:
#  (a) detection latency: JOBS jobs print a step every 0.1 s, then a last
#      step stamped with its wall-clock time, then sleep; from that stamp to
#      the job's job_hung event (time_unix_ms), against the --hang-after
#      budget: p50/p99 of latency - budget, and latency / budget.
#  (b) the hang watch's (and the rest of the monitor's) CPU per job: gpuctld's
#      utime+stime from /proc/PID/stat over a window with no job, 1 job and
#      IDLE_JOBS idle-but-alive jobs (a step line every 5 s); CPU ms per job
#      per second, and the ratio IDLE_JOBS-jobs / 1-job per job.
#  (c) `gpuctl train dump` of a job of 8 Python processes (a parent and 7
#      multiprocessing children, all sleeping; run with the venv's python so
#      the agent finds py-spy beside it), median of DUMP_RUNS, against
#      `py-spy dump --pid P --nonblocking` on the same 8 pids one after
#      another from the shell. Needs build/_cache/torch-venv (made by
#      tests/multinode/torch_venv.sh) with py-spy in it; skipped without.
# Prints figures and ratios; never fails on timing. About 2.5 minutes.
#
#   tests/bench/run_hang_bench.sh [JOBS]           (default 10 jobs for (a))
#   HANG_BENCH_PARTS=abc         the parts to run (default abc)
#   HANG_BENCH_BUDGET=3          (a): --hang-after, seconds
#   HANG_BENCH_IDLE_JOBS=20      (b): jobs in the loaded window
#   HANG_BENCH_CPU_SECONDS=30    (b): each window's length
#   HANG_BENCH_DUMP_RUNS=3       (c): dumps timed (median)
#   HANG_BENCH_VENV=DIR          (c): the venv with python3 and py-spy (default build/_cache/torch-venv)
#   GPUCTL_BUILD_DIR=DIR         build directory (default: build)
set -euo pipefail
bench_default_runs=10
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
parts=${HANG_BENCH_PARTS:-abc}
budget_s=${HANG_BENCH_BUDGET:-3}
idle_jobs=${HANG_BENCH_IDLE_JOBS:-20}
cpu_seconds=${HANG_BENCH_CPU_SECONDS:-30}
dump_runs=${HANG_BENCH_DUMP_RUNS:-3}
venv=${HANG_BENCH_VENV:-$build/_cache/torch-venv}
for n in "$budget_s" "$idle_jobs" "$cpu_seconds" "$dump_runs"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench: HANG_BENCH_* values are positive integers, got '$n'" >&2; exit 2; }
done
bench_start_agent
g() { "$build/client/gpuctl" --agent "unix:$work/a.sock" "$@"; }
now_ms() { date +%s%3N; }
# The jobs run in their own sessions: killing the tmux server does not end
# them. On any exit, stop those still running before the agent goes.
stop_leftovers() {
  local name
  g -o json train list 2>/dev/null | python3 -c 'import json, sys
for j in json.load(sys.stdin)["jobs"]:
    if j["state"] == "running": print(j["name"])' 2>/dev/null | while read -r name; do
    g train stop "$name" --grace 1s >/dev/null 2>&1 || true
  done
}
trap 'stop_leftovers; bench_cleanup' EXIT

# running_jobs: how many of the agent's jobs are running.
running_jobs() {
  g -o json train list | python3 -c 'import json, sys
print(sum(1 for j in json.load(sys.stdin)["jobs"] if j["state"] == "running"))'
}
# stop_all NAMES...: stops them and waits until no job runs.
stop_all() {
  for name in "$@"; do g train stop "$name" --grace 1s >/dev/null; done
  for _ in $(seq 200); do [[ $(running_jobs) == 0 ]] && return; sleep 0.05; done
  echo "bench: jobs still running after train stop" >&2; exit 1
}
# pct P VALUES...: the nearest-rank P-th percentile.
pct() {
  local p=$1; shift
  printf '%s\n' "$@" | sort -n | awk -v p="$p" '{a[NR]=$1} END {i=int((p*NR+99)/100); if (i<1) i=1; print a[i]}'
}

# ---- (a) detection latency ------------------------------------------------
if [[ $parts == *a* ]]; then
  steps=30
  names=()
  for i in $(seq "$runs"); do
    names+=("h$i")
    g train start --name "h$i" --hang-after "${budget_s}s" -- python3 -u -c "import time
for i in range(1, $steps):
    print(f'step {i} | loss {1.0 / i:.4f}', flush=True)
    time.sleep(0.1)
print(f'step $steps | loss 0.0100 | last_t={time.time():.6f}', flush=True)
time.sleep(3600)" >/dev/null
  done
  # Wait for every job_hung: the budget, a sample interval, the dump.
  deadline=$(( $(now_ms) + (steps / 10 + budget_s + 30) * 1000 ))
  while :; do
    hung=$(g -o json events | python3 -c 'import json, sys
print(sum(1 for l in sys.stdin if l.startswith("{") and json.loads(l)["kind"] == "job_hung"))')
    (( hung >= runs )) && break
    (( $(now_ms) < deadline )) || { echo "bench: only $hung of $runs jobs reported hung; see $work/gpuctld.log" >&2; exit 1; }
    sleep 0.5
  done
  lat=()
  for name in "${names[@]}"; do
    last=$(sed -n 's/.*last_t=\([0-9.]*\).*/\1/p' "$work/state/jobs/$name/output.log" | head -n1)
    [[ -n $last ]] || { echo "bench: no last_t stamp in $name's log" >&2; exit 1; }
    hung_ms=$(g -o json events | python3 -c 'import json, sys
t = [e["time_unix_ms"] for e in map(json.loads, filter(lambda l: l.startswith("{"), sys.stdin))
     if e["kind"] == "job_hung" and e["job"] == sys.argv[1]]
print(t[0])' "$name")
    lat+=("$(python3 -c "print(round($hung_ms - $last * 1000))")")
  done
  budget_ms=$(( budget_s * 1000 ))
  p50=$(pct 50 "${lat[@]}") p99=$(pct 99 "${lat[@]}")
  echo "(a) hang detection, $runs jobs, --hang-after ${budget_s}s: last step printed -> job_hung event"
  printf '    latency p50 %d ms, p99 %d ms (min %d, max %d)\n' "$p50" "$p99" "$(pct 0 "${lat[@]}")" "$(pct 100 "${lat[@]}")"
  printf '    over the budget (latency - %d ms): p50 %+d ms, p99 %+d ms\n' "$budget_ms" $(( p50 - budget_ms )) $(( p99 - budget_ms ))
  printf '    ratio latency / budget: p50 %.2f, p99 %.2f\n' "$(python3 -c "print($p50 / $budget_ms)")" \
    "$(python3 -c "print($p99 / $budget_ms)")"
  stop_all "${names[@]}"
fi

# ---- (b) the monitor's CPU per job ----------------------------------------
if [[ $parts == *b* ]]; then
  hz=$(getconf CLK_TCK)
  # cpu_ticks: gpuctld's utime+stime, and with its waited-for children (cutime+cstime).
  cpu_ticks() { awk '{print $14 + $15, $14 + $15 + $16 + $17}' "/proc/$agent_pid/stat"; }
  # window: gpuctld's CPU ms per second over cpu_seconds: "OWN WITH_CHILDREN".
  window() {
    local a b
    read -r -a a < <(cpu_ticks)
    sleep "$cpu_seconds"
    read -r -a b < <(cpu_ticks)
    python3 -c "print((${b[0]} - ${a[0]}) * 1000 / $hz / $cpu_seconds, (${b[1]} - ${a[1]}) * 1000 / $hz / $cpu_seconds)"
  }
  start_idle() {  # NAME
    g train start --name "$1" -- python3 -u -c 'import itertools, time
for i in itertools.count(1):
    print(f"step {i} | loss {1.0 / i:.4f}", flush=True)
    time.sleep(5)' >/dev/null
  }
  read -r none_own none_all < <(window)
  start_idle idle1
  sleep 3  # python's start-up, the agent's first samples of it
  read -r one_own one_all < <(window)
  names=(idle1)
  for i in $(seq 2 "$idle_jobs"); do start_idle "idle$i"; names+=("idle$i"); done
  sleep 3
  (( $(running_jobs) == idle_jobs )) || { echo "bench: expected $idle_jobs running jobs" >&2; exit 1; }
  read -r many_own many_all < <(window)
  echo "(b) gpuctld CPU (utime+stime), ${cpu_seconds} s windows, idle-but-alive jobs (a step line every 5 s)"
  python3 - "$none_own" "$one_own" "$many_own" "$none_all" "$one_all" "$many_all" "$idle_jobs" <<'EOF'
import sys
none, one, many, none_c, one_c, many_c = map(float, sys.argv[1:7]); n = int(sys.argv[7])
print(f"    no job: {none:.3f} ms/s; 1 job: {one:.3f} ms/s; {n} jobs: {many:.3f} ms/s"
      f" (with waited-for children: {none_c:.3f}, {one_c:.3f}, {many_c:.3f})")
print(f"    per job per second: 1 job {one:.3f} ms, {n} jobs {many / n:.3f} ms;"
      f" ratio {n}-jobs / 1-job per job: {(many / n) / one if one else float('nan'):.2f}")
d1, dn = one - none, (many - none) / n
print(f"    net of the idle agent: 1 job {d1:.3f} ms, {n} jobs {dn:.3f} ms per job per second;"
      f" ratio {dn / d1 if d1 > 0 else float('nan'):.2f}")
EOF
  stop_all "${names[@]}"
fi

# ---- (c) dump 8 processes -------------------------------------------------
if [[ $parts == *c* ]]; then
  if [[ ! -x $venv/bin/py-spy || ! -x $venv/bin/python3 ]]; then
    echo "(c) skipped: no $venv/bin/py-spy (make the venv with tests/multinode/torch_venv.sh, or set HANG_BENCH_VENV)"
  else
    pids_file=$work/dump8.pids
    g train start --name dump8 -- "$venv/bin/python3" -u -c "import multiprocessing as mp, os, time
def child():
    time.sleep(3600)
if __name__ == '__main__':
    children = [mp.Process(target=child) for _ in range(7)]
    for c in children: c.start()
    with open('$pids_file.tmp', 'w') as f: f.write(' '.join(str(p) for p in [os.getpid()] + [c.pid for c in children]))
    os.rename('$pids_file.tmp', '$pids_file')
    print('8 processes up', flush=True)
    time.sleep(3600)" >/dev/null
    for _ in $(seq 200); do [[ -s $pids_file ]] && break; sleep 0.05; done
    read -r -a pids <"$pids_file" || true  # no newline at its end
    (( ${#pids[@]} == 8 )) || { echo "bench: the dump job did not start 8 processes" >&2; exit 1; }
    sleep 1
    agent=() shell=() trip=()
    for _ in $(seq "$dump_runs"); do
      t0=$(date +%s%N)
      for p in "${pids[@]}"; do "$venv/bin/py-spy" dump --pid "$p" --nonblocking >/dev/null; done
      shell+=($(( ($(date +%s%N) - t0) / 1000 )))
      t0=$(date +%s%N)
      g -o json train dump dump8 >"$work/dump.json"
      agent+=($(( ($(date +%s%N) - t0) / 1000 )))
      t0=$(date +%s%N)
      g -o json train status dump8 >/dev/null
      trip+=($(( ($(date +%s%N) - t0) / 1000 )))
    done
    dumped=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print(sum(1 for l in s.splitlines() if "py-spy" in l), len(s.splitlines()))' "$work/dump.json")
    a=$(median "${agent[@]}") s=$(median "${shell[@]}") t=$(median "${trip[@]}")
    echo "(c) dump of a job of 8 Python processes, median of $dump_runs (py-spy $("$venv/bin/py-spy" --version | awk '{print $2}'))"
    printf '    gpuctl train dump: %.1f ms (%s of its processes dumped with py-spy)\n' "$(python3 -c "print($a / 1000)")" \
      "$(awk '{print $1 " of " $2}' <<<"$dumped")"
    printf '    baseline, py-spy dump --nonblocking on the 8 pids in turn: %.1f ms\n' "$(python3 -c "print($s / 1000)")"
    printf '    ratio train dump / baseline: %.2f\n' "$(python3 -c "print($a / $s if $s else float('nan'))")"
    printf '    (for scale: a gpuctl round trip, train status dump8: %.1f ms)\n' "$(python3 -c "print($t / 1000)")"
    stop_all dump8
  fi
fi
