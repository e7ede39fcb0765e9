#!/usr/bin/env bash
# rules_test.sh BUILD_DIR: the alert rules and the Grafana dashboard against
# what gpuctld really exports.
# 1. promtool check rules deploy/prometheus/gpuctl-rules.yml, and promtool
#    test rules on gpuctl-rules.test.yml (each alert firing and not).
# 2. A real gpuctld (fake NVML, eight_h200) with a toy training job running
#    and GPU 3 drained by hand: its /metrics passes promtool, GPU 3 alone
#    reads gpuctl_gpu_healthy 0, the rules fire GpuctlGpuDrained for it on
#    that very scrape, and every metric and label named in the rules, in the
#    rules test's input series and in every query of
#    deploy/grafana/gpuctl.json is in it (check_metric_names.py).
# 3. The check bites: a dashboard with a misspelled metric, and rules with a
#    misspelled one, are refused.
# Exit 77 to skip (no promtool or curl; under CI=true that fails instead).
set -euo pipefail
test_name=metrics_rules
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
. "$src/tests/skip_policy.sh"  # skip
fail() { echo "$test_name: FAIL: $*" >&2; exit 1; }
say() { echo "$test_name: $*"; }
command -v promtool >/dev/null || skip "no promtool (apt-get install prometheus)"
command -v curl >/dev/null || skip "no curl"
rules=$src/deploy/prometheus/gpuctl-rules.yml
rules_test=$src/deploy/prometheus/gpuctl-rules.test.yml
dashboard=$src/deploy/grafana/gpuctl.json
check=(python3 "$src/tests/metrics/check_metric_names.py")
work=$(mktemp -d /tmp/gpuctl-rules.XXXXXX)
agent_pid=
cleanup() {
  local status=$?
  set +e
  [[ -n $agent_pid ]] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
  tmux -L "gpuctl-rules-$$" kill-server 2>/dev/null
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# 1. promtool.
promtool check rules "$rules" >"$work/check.txt" 2>&1 || fail "promtool check rules: $(cat "$work/check.txt")"
# promtool test rules reads rule_files relative to the test file.
promtool test rules "$rules_test" >"$work/test.txt" 2>&1 || fail "promtool test rules: $(cat "$work/test.txt")"
say "promtool: rules valid, $(grep -c '^ *- alert:' "$rules") alerts pass their tests"

# 2. A real scrape.
gpuctl() { "$build/client/gpuctl" --agent "unix:$work/agent.sock" "$@"; }
FAKE_NVML_SCENARIO=eight_h200 "$build/daemon/gpuctld" --listen "unix:$work/agent.sock" --state-dir "$work/state" \
  --guard off --no-lock-memory --tmux-socket "gpuctl-rules-$$" \
  --nvml-library "$build/tests/fake_nvml/libnvidia-ml.so.1" --nvidia-smi /nonexistent \
  --metrics-listen 127.0.0.1:0 >"$work/agent.log" 2>&1 &
agent_pid=$!
for _ in $(seq 100); do
  grep -q "metrics at " "$work/agent.log" && break
  kill -0 "$agent_pid" 2>/dev/null || fail "the agent exited: $(cat "$work/agent.log")"
  sleep 0.1
done
url=$(grep -o 'http://[^ ]*/metrics' "$work/agent.log") || fail "no metrics line: $(cat "$work/agent.log")"
gpuctl gpu drain 3 --reason "rules test" >/dev/null || fail "cannot drain GPU 3 by hand"
# Running long enough to be scraped while it runs: step, throughput and
# progress are only exported for a job that has them.
gpuctl train start --name toy -- python3 "$src/examples/train/toy_train.py" --steps 100000 --interval 0.05 >/dev/null
for _ in $(seq 100); do
  curl -sf "$url" >"$work/metrics.txt" || fail "cannot scrape $url"
  grep -q '^gpuctl_job_throughput{job="toy"' "$work/metrics.txt" &&
    grep -q '^gpuctl_job_seconds_since_progress{job="toy"}' "$work/metrics.txt" && break
  sleep 0.1
done
grep -q '^gpuctl_job_running{job="toy"} 1' "$work/metrics.txt" || fail "the toy job is not running: $(grep toy "$work/metrics.txt")"
gpuctl train stop toy --grace 0 >/dev/null || true
promtool check metrics <"$work/metrics.txt" || fail "promtool refused /metrics"
[[ $(grep -c '^gpuctl_gpu_healthy{.*} 1$' "$work/metrics.txt") == 7 ]] &&
  grep -q '^gpuctl_gpu_healthy{gpu="3",uuid="[^"]*"} 0$' "$work/metrics.txt" ||
  fail "GPU 3 drained: not 7 GPUs healthy and GPU 3 not: $(grep '^gpuctl_gpu_healthy' "$work/metrics.txt")"
# The alerts on this very scrape, stored as gpuctl-rules.yml's scrape config
# stores it: GPU 3 drained fires GpuctlGpuDrained (and nothing else does);
# the toy job is not hung.
python3 - "$work/metrics.txt" "$rules" >"$work/scrape.test.yml" <<'PY'
import json, re, sys
scrape, rules = sys.argv[1:]
series, uuid3 = [], None
for line in open(scrape):
    m = re.match(r'(gpuctl_gpu_healthy|gpuctl_job_hung)\{(.*)\} (\S+)$', line.strip())
    if not m:
        continue
    name, labels, value = m.groups()
    target = 'instance="gpu-a:9400"' + ("" if name == "gpuctl_job_hung" else ',job="gpuctl"')
    series.append({"series": f"{name}{{{labels},{target}}}", "values": " ".join([value] * 5)})
    if name == "gpuctl_gpu_healthy" and 'gpu="3"' in labels:
        uuid3 = re.search(r'uuid="([^"]*)"', labels).group(1)
# The annotations as the rule's templates render them for GPU 3.
block = open(rules).read().split("- alert: GpuctlGpuDrained", 1)[1].split("- alert:", 1)[0]
labels3 = {"gpu": "3", "uuid": uuid3, "instance": "gpu-a:9400", "job": "gpuctl"}
annotations = {k: re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels3[m.group(1)], json.loads(v))
               for k, v in re.findall(r'^\s+(summary|description): (".*")$', block, re.M)}
test = {"rule_files": [rules], "evaluation_interval": "1m", "tests": [{
    "interval": "1m", "input_series": series,
    "alert_rule_test": [
        {"eval_time": "3m", "alertname": "GpuctlGpuDrained", "exp_alerts": [{"exp_labels": {
            "severity": "critical", "job": "gpuctl", "instance": "gpu-a:9400", "gpu": "3", "uuid": uuid3},
            "exp_annotations": annotations}]},
        {"eval_time": "3m", "alertname": "GpuctlJobHung", "exp_alerts": []},
    ]}]}
print(json.dumps(test, indent=1))  # JSON is YAML
PY
promtool test rules "$work/scrape.test.yml" >"$work/scrape-test.txt" 2>&1 ||
  fail "the rules on a real scrape (GPU 3 drained): $(cat "$work/scrape-test.txt")"
say "the rules on a real scrape: GPU 3 drained fires GpuctlGpuDrained, the running job is not hung"
"${check[@]}" "$work/metrics.txt" "$rules" "$rules_test" "$dashboard" >"$work/names.txt" 2>&1 ||
  fail "names that gpuctld does not export:
$(cat "$work/names.txt")"
say "$(cat "$work/names.txt")"

# 3. The check refuses what it should.
sed 's/gpuctl_gpu_utilization_ratio/gpuctl_gpu_utilisation_ratio/' "$dashboard" >"$work/bad.json"
cmp -s "$dashboard" "$work/bad.json" && fail "the dashboard has no gpuctl_gpu_utilization_ratio to misspell"
if "${check[@]}" "$work/metrics.txt" "$rules" "$rules_test" "$work/bad.json" >"$work/bad.txt" 2>&1; then
  fail "a dashboard naming gpuctl_gpu_utilisation_ratio passed"
fi
grep -q "gpuctl_gpu_utilisation_ratio is not in the scrape" "$work/bad.txt" || fail "not named: $(cat "$work/bad.txt")"
sed 's/gpuctl_job_hung == 1/gpuctl_jobs_hung == 1/' "$rules" >"$work/bad.yml"
cmp -s "$rules" "$work/bad.yml" && fail "the rules have no gpuctl_job_hung == 1 to misspell"
if "${check[@]}" "$work/metrics.txt" "$work/bad.yml" "$rules_test" "$dashboard" >"$work/bad.txt" 2>&1; then
  fail "rules naming gpuctl_jobs_hung passed"
fi
grep -q "gpuctl_jobs_hung is not in the scrape" "$work/bad.txt" || fail "not named: $(cat "$work/bad.txt")"
say "PASS"
