#!/usr/bin/env bash
# The GPU queue: (1) admission latency, from a GPU freeing (the holding job's
# job_ended event) to the next queued job's job_started, against the time a
# plain `train start` takes to start in the same run (target: at most 500 ms);
# (2) the agent's RSS with 100 queued jobs against the same agent idle
# (target: within 2 MiB). Real gpuctld and tmux, the fake NVML's two GPUs.
# Prints figures and "target met: yes/no"; never fails on timing.
#
#   tests/bench/run_queue_bench.sh [RUNS]     (default 5 admissions)
#   GPUCTL_BUILD_DIR=DIR  build directory (default: build)
set -euo pipefail
bench_default_runs=5
source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
nvml=$build/tests/fake_nvml/libnvidia-ml.so.1
[[ -f $nvml ]] || cmake --build "$build" --target fake_nvml
: >"$work/procs"
FAKE_NVML_PROCESSES=$work/procs bench_start_agent --nvml-library "$nvml"
g() { "$build/client/gpuctl" --agent "unix:$work/a.sock" "$@"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$agent_pid/status"; }
# event_ms KIND JOB: the time of the last KIND event of JOB.
event_ms() {
  g -o json events | python3 -c 'import json, sys
kind, job = sys.argv[1], sys.argv[2]
t = [json.loads(l)["time_unix_ms"] for l in sys.stdin if l.startswith("{") and json.loads(l)["kind"] == kind and json.loads(l)["job"] == job]
print(t[-1] if t else "")' "$1" "$2"
}
wait_state() {  # JOB STATE
  for _ in $(seq 400); do
    [[ $(g -o json train status "$1" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])') == "$2" ]] && return
    sleep 0.025
  done
  echo "bench: $1 never $2" >&2; exit 1
}

# Baseline: a plain start, request to job_started.
plain=()
for i in $(seq "$runs"); do
  before=$(date +%s%3N)
  g train start --name "plain$i" -- true >/dev/null
  wait_state "plain$i" succeeded
  plain+=($(( $(event_ms job_started "plain$i") - before )))
done

# Admission: both GPUs held by one job, one job queued for a GPU; the holder stops.
admission=()
for i in $(seq "$runs"); do
  g train start --name "hold$i" --gpus 0,1 -- sleep 600 >/dev/null
  g train start --name "wait$i" --num-gpus 1 -- sleep 600 >/dev/null
  wait_state "wait$i" queued
  g train stop "hold$i" --grace 1s >/dev/null
  wait_state "wait$i" running
  admission+=($(( $(event_ms job_started "wait$i") - $(event_ms job_ended "hold$i") )))
  g train stop "wait$i" --grace 1s >/dev/null
done

# RSS: idle, then with 100 jobs queued behind a holder.
sleep 1
idle=$(rss_kib)
g train start --name holder --gpus 0,1 -- sleep 600 >/dev/null
for i in $(seq 100); do g train start --name "q$i" --num-gpus 1 -- sleep 600 >/dev/null; done
sleep 2
queued=$(rss_kib)
g train stop holder --grace 1s >/dev/null

p=$(median "${plain[@]}") a=$(median "${admission[@]}")
echo "plain train start, request to job_started (median of $runs): $p ms"
echo "admission, GPU freed (job_ended) to the queued job's job_started (median of $runs): $a ms (all: ${admission[*]})"
echo "target admission <= 500 ms met: $([[ $a -le 500 ]] && echo yes || echo no)"
echo "agent RSS idle: $idle KiB; with 100 queued jobs: $queued KiB ($(( queued - idle )) KiB more)"
echo "target RSS within 2048 KiB of idle met: $([[ $(( queued - idle )) -le 2048 ]] && echo yes || echo no)"
