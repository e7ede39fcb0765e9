#!/usr/bin/env bash
# metrics_test.sh BUILD_DIR: gpuctld --metrics-listen for real.
# 1. On 127.0.0.1 with two fake-NVML GPUs and a toy training job: /metrics
#    passes `promtool check metrics`, and its figures are those gpuctl -o json
#    gives (host memory, each GPU by uuid, the job's step, loss and state).
# 2. A non-loopback address without TLS refuses to start; with the --tls-*
#    files (a CA made here) the agent, in a network namespace made here,
#    serves HTTPS to a client with a certificate and refuses one without.
# In both, idle connections (8, then 32, held open by an unprivileged user and
# reopened as the agent drops them; for HTTPS they never send a ClientHello)
# neither delay a scrape past 3 s nor stay open long: the agent drops them.
# Exit 77 to skip (no promtool; part 2 also needs root and ip netns).
set -euo pipefail
test_name=metrics
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/skip_policy.sh"  # skip
fail() { echo "$test_name: FAIL: $*" >&2; exit 1; }
say() { echo "$test_name: $*"; }
command -v promtool >/dev/null || skip "no promtool (apt-get install prometheus)"
command -v curl >/dev/null || skip "no curl"
work=$(mktemp -d /tmp/gpuctl-metrics.XXXXXX)
agent_pid=
holder_pid=
ns=
cleanup() {
  local status=$?
  set +e   # a trap: clean up everything that can be, whatever fails
  [[ -n $holder_pid ]] && kill "$holder_pid" 2>/dev/null && wait "$holder_pid" 2>/dev/null
  [[ -n $agent_pid ]] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
  if [[ -n $ns ]]; then
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  fi
  tmux -L "gpuctl-metrics-$$" kill-server 2>/dev/null
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

gpuctl() { "$build/client/gpuctl" --agent "unix:$work/agent.sock" "$@"; }
start_agent() {  # start_agent EXTRA_FLAGS...: waits for the metrics line in the log
  : >"$work/agent.log"
  FAKE_NVML_SCENARIO=two_gpus "$build/daemon/gpuctld" --listen "unix:$work/agent.sock" --state-dir "$work/state" \
    --guard off --no-lock-memory --tmux-socket "gpuctl-metrics-$$" \
    --nvml-library "$build/tests/fake_nvml/libnvidia-ml.so.1" "$@" >"$work/agent.log" 2>&1 &
  agent_pid=$!
  for _ in $(seq 100); do
    grep -q "metrics at " "$work/agent.log" && return 0
    kill -0 "$agent_pid" 2>/dev/null || fail "the agent exited: $(cat "$work/agent.log")"
    sleep 0.1
  done
  fail "no metrics line: $(cat "$work/agent.log")"
}
# idle_check LABEL HOST PORT N CURL_ARGS...: with N idle connections held open
# to HOST:PORT (as nobody where we are root), four scrapes each succeed within
# 3 s, and the agent has dropped at least N idle connections meanwhile.
idle_check() {
  local label=$1 host=$2 port=$3 n=$4 out=$work/idle-$1-$4.txt i t0 took=() line dropped lifetime
  shift 4
  local holder=(python3 - "$host" "$port" "$n")
  [[ $EUID == 0 ]] && holder=(setpriv --reuid=65534 --regid=65534 --clear-groups env PATH=/usr/bin:/bin "${holder[@]}")
  : >"$out"
  "${holder[@]}" <"$src/tests/metrics/idle_connections.py" >>"$out" 2>&1 &
  holder_pid=$!
  for _ in $(seq 50); do
    grep -q '^ready' "$out" && break
    kill -0 "$holder_pid" 2>/dev/null || fail "$label: the idle-connection holder exited: $(cat "$out")"
    sleep 0.1
  done
  grep -q '^ready' "$out" || fail "$label: cannot open $n idle connections: $(cat "$out")"
  for i in 1 2 3 4; do
    t0=$EPOCHREALTIME
    curl -sf --max-time 3 "$@" >"$work/idle-scrape.txt" ||
      fail "$label: scrape $i of 4 failed or took over 3 s with $n idle connections open (scrapes so far: ${took[*]} s)"
    grep -q '^gpuctl_host_memory_total_bytes ' "$work/idle-scrape.txt" || fail "$label: scrape $i has no host memory"
    took+=("$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f", b - a}')")
    sleep 0.5
  done
  kill "$holder_pid"; wait "$holder_pid" 2>/dev/null || true; holder_pid=
  line=$(grep '^dropped ' "$out") || fail "$label: no summary from the holder: $(cat "$out")"
  read -r _ dropped _ lifetime <<<"$line"
  ((dropped >= n)) || fail "$label: the agent dropped only $dropped of $n idle connections in ${#took[@]} scrapes' time"
  say "$label: $n idle connections: scrapes took ${took[*]} s; $dropped idle ones dropped, after at most $lifetime s"
}
metric() {  # metric FILE 'NAME{LABELS}' -> its value
  awk -v key="$2" '$1 == key {print $2}' "$1"
}

# 1. Loopback.
start_agent --metrics-listen 127.0.0.1:0
url=$(grep -o 'http://[^ ]*/metrics' "$work/agent.log")
gpuctl train start --name toy -- python3 "$src/examples/train/toy_train.py" --steps 6 --interval 0.02 >/dev/null
for _ in $(seq 100); do
  state=$(gpuctl -o json train status toy | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
  [[ $state == succeeded || $state == failed ]] && break
  sleep 0.1
done
[[ $state == succeeded ]] || fail "the toy job ended $state"
curl -sf "$url" >"$work/metrics.txt" || fail "cannot scrape $url"
promtool check metrics <"$work/metrics.txt" || fail "promtool refused /metrics: $(cat "$work/metrics.txt")"
gpuctl -o json health >"$work/health.json"
gpuctl -o json train status toy >"$work/job.json"
python3 - "$work/metrics.txt" "$work/health.json" "$work/job.json" <<'PY'
import json, re, sys
samples = {}
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    key, value = line.rsplit(" ", 1)
    samples[key] = float(value)
health = json.load(open(sys.argv[2]))
job = json.load(open(sys.argv[3]))
def check(key, want):
    got = samples.get(key)
    assert got is not None, f"{key} missing; have {sorted(samples)}"
    assert abs(got - want) <= 1e-6 * max(1, abs(want)), f"{key} = {got}, -o json says {want}"
check("gpuctl_host_memory_total_bytes", health["host"]["mem_total_bytes"])
assert len(health["gpus"]) == 2, health["gpus"]
for g in health["gpus"]:
    ids = f'gpu="{g["index"]}",uuid="{g["uuid"]}"'
    check(f"gpuctl_gpu_memory_total_bytes{{{ids}}}", g["memory_total_bytes"])
    check(f"gpuctl_gpu_memory_used_bytes{{{ids}}}", g["memory_used_bytes"])
    check(f"gpuctl_gpu_temperature_celsius{{{ids}}}", g["temperature_c"])
    check(f"gpuctl_gpu_power_watts{{{ids}}}", g["power_draw_w"])
    check(f"gpuctl_gpu_utilization_ratio{{{ids}}}", g["utilization_gpu_pct"] / 100)
    check(f"gpuctl_gpu_healthy{{{ids}}}", 0 if g.get("drained") else 1)
check('gpuctl_job_step{job="toy"}', job["metrics"]["step"])
check('gpuctl_job_loss{job="toy"}', job["metrics"]["loss"])
check('gpuctl_job_throughput{job="toy",unit="%s"}' % job["metrics"]["throughput"]["unit"], job["metrics"]["throughput"]["value"])
check('gpuctl_job_info{job="toy",kind="train",state="%s"}' % job["state"], 1)
check('gpuctl_job_running{job="toy"}', 0)
check('gpuctl_job_restarts_total{job="toy"}', job["restart_count"])
check('gpuctl_job_attempts{job="toy"}', job["attempt"] or len(job["attempts"]) + 1)
check('gpuctl_job_hung{job="toy"}', 0)
assert 'gpuctl_job_seconds_since_progress{job="toy"}' not in samples, "an ended job has no time since progress"
check("gpuctl_guard_kills_total", 0)
assert samples["gpuctl_agent_resident_memory_bytes"] > 1 << 20, samples
assert samples["gpuctl_agent_threads"] >= 4, samples
assert 'gpuctl_guard_reaction_seconds_bucket{le="+Inf"}' in samples, "no reaction histogram"
PY
say "loopback /metrics passes promtool and matches -o json"
port=${url##*:}; port=${port%/metrics}
idle_check http 127.0.0.1 "$port" 8 "$url"
idle_check http 127.0.0.1 "$port" 32 "$url"
kill "$agent_pid"; wait "$agent_pid" 2>/dev/null || true; agent_pid=

# 2. Other addresses: TLS or nothing.
rc=0
"$build/daemon/gpuctld" --listen "unix:$work/agent2.sock" --state-dir "$work/state2" --guard off \
  --no-lock-memory --metrics-listen 0.0.0.0:9400 >"$work/refused.log" 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "a public --metrics-listen without TLS exited $rc, not 2: $(cat "$work/refused.log")"
grep -q "only with mutual TLS" "$work/refused.log" || fail "no reason given: $(cat "$work/refused.log")"
[[ $EUID == 0 ]] && ip netns add "gm$$probe" 2>/dev/null || skip "part 2 needs root and ip netns (part 1 passed)"
ip netns del "gm$$probe"
command -v openssl >/dev/null || skip "no openssl (part 1 passed)"
pki=$work/pki
mkdir -p "$pki"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=gpuctl-test-ca \
  -keyout "$pki/ca.key" -out "$pki/ca.pem" 2>/dev/null
for who in agent client; do
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$who" \
    -keyout "$pki/$who.key" -out "$pki/$who.csr" 2>/dev/null
  printf 'subjectAltName=IP:10.214.0.2\n' >"$pki/$who.ext"
  openssl x509 -req -in "$pki/$who.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial -days 1 \
    -extfile "$pki/$who.ext" -out "$pki/$who.pem" 2>/dev/null
done
ns=gm$$
ip netns add "$ns"
ip link add "gm$$h" type veth peer name eth0 netns "$ns"
ip addr add 10.214.0.1/24 dev "gm$$h"
ip link set "gm$$h" up
ip -n "$ns" addr add 10.214.0.2/24 dev eth0
ip -n "$ns" link set eth0 up
ip -n "$ns" link set lo up
FAKE_NVML_SCENARIO=two_gpus ip netns exec "$ns" "$build/daemon/gpuctld" --listen "unix:$work/agent3.sock" \
  --listen 10.214.0.2:0 --tls-cert "$pki/agent.pem" --tls-key "$pki/agent.key" --tls-client-ca "$pki/ca.pem" \
  --state-dir "$work/state3" --guard off --no-lock-memory --tmux-socket "gpuctl-metrics-$$" \
  --nvml-library "$build/tests/fake_nvml/libnvidia-ml.so.1" \
  --metrics-listen 10.214.0.2:9400 >"$work/agent.log" 2>&1 &
agent_pid=$!
# Up to 30 s: a sanitized agent on a loaded machine starts slowly.
for _ in $(seq 300); do grep -q "metrics at " "$work/agent.log" && break; sleep 0.1; done
grep -q "metrics at https://10.214.0.2:9400/metrics" "$work/agent.log" || fail "no HTTPS metrics: $(cat "$work/agent.log")"
[[ $(stat -c %a "$work/state3/metrics-tls.pem") == 600 ]] || fail "the key file is not 0600"
curl -sf --cacert "$pki/ca.pem" --cert "$pki/client.pem" --key "$pki/client.key" \
  https://10.214.0.2:9400/metrics >"$work/tls.txt" || fail "a client with a certificate could not scrape"
grep -q '^gpuctl_host_memory_total_bytes ' "$work/tls.txt" || fail "no host memory over TLS"
tls_scrape=(--cacert "$pki/ca.pem" --cert "$pki/client.pem" --key "$pki/client.key" https://10.214.0.2:9400/metrics)
idle_check https 10.214.0.2 9400 8 "${tls_scrape[@]}"
idle_check https 10.214.0.2 9400 32 "${tls_scrape[@]}"
if curl -sf --cacert "$pki/ca.pem" https://10.214.0.2:9400/metrics >/dev/null 2>&1; then
  fail "a client without a certificate was served"
fi
if curl -sf http://10.214.0.2:9400/metrics >/dev/null 2>&1; then fail "plain HTTP was served"; fi
ip link del "gm$$h" 2>/dev/null || true
say "PASS"
