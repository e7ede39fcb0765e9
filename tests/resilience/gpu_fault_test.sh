#!/usr/bin/env bash
# gpu_fault_test.sh BUILD_DIR: failing GPUs on the 8-GPU stand-in (fake NVML,
# eight H200s on bus ids 0000:18:00, 0000:28:00, ...), Xid lines written to
# the agent's --kernel-log FIFO as dmesg prints them:
# 1. Xid 79 on GPU 0: drained (health, gpu_fault), the --num-gpus job on it
#    stopped and relaunched on a healthy GPU (--on-gpu-fault recover), the
#    job on GPU 1 untouched;
# 2. Xid 13 (the application's fault) on GPU 1: published, nothing drained;
# 3. the drain survives an agent restart;
# 4. gpuctl gpu drain 3: a job asking for GPU 3 queues, naming the drain;
#    undrain lets it start;
# 5. NVML's own readings, on the fake's row_remap_pending and gpu_lost
#    scenarios: the GPU is drained, and an undrain is refused while it still
#    reads so (--force overrides).
# Root (job cgroups); exit 77 to skip.
set -euo pipefail
test_name=gpu_fault
build=$(cd "$1" && pwd)
needs_torch=no
source "$(dirname "$0")/resilience_lib.sh"
fifo=$work/kmsg
mkfifo "$fifo"
exec 7<>"$fifo"  # held open: the agent's reader never sees the writer go
export FAKE_NVML_SCENARIO=eight_h200
: >"$work/gpu-processes"  # no processes: every GPU free
export FAKE_NVML_PROCESSES=$work/gpu-processes
agent=(--nvml-library "$build/tests/fake_nvml/libnvidia-ml.so.1" --kernel-log "$fifo")
start_agent "${agent[@]}"
o=$work/out
health_field() { g -o json health | python3 -c "import json,sys; h=json.load(sys.stdin); print($1)"; }

g train start --name placed --num-gpus 1 --on-gpu-fault recover -- sleep 600 >/dev/null
g train start --name pinned --gpus 1 -- sleep 600 >/dev/null
wait_for_state placed running 10
[[ $(job_field placed 'j["gpus"]') == 0 ]] || fail "placed is not on GPU 0: $(job_field placed 'j["gpus"]')"

# 1. GPU 0 falls off the bus.
echo "[ 8123.456789] NVRM: Xid (PCI:0000:18:00): 79, pid=4242, name=python3, GPU has fallen off the bus." >&7
for _ in $(seq 50); do [[ $(health_field 'h["gpus"][0]["drained"]') == True ]] && break; sleep 0.2; done
health_field 'json.dumps(h["gpus"][0]["fault"])' >"$o"
python3 - "$o" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
assert f["xid"] == 79 and f["manual"] is False and f["since_unix_ms"] > 0, f
assert f["reason"].startswith("Xid 79:"), f
PY
wait_for_state placed running 20 2
[[ $(job_field placed 'j["gpus"]') == 2 ]] || fail "the relaunch is not on GPU 2: $(job_field placed 'j["gpus"]')"
job_field placed 'j["attempts"][0]["state_reason"]' >"$o"
has "$o" '^GPU 0 faulted: Xid 79'
[[ $(job_field pinned 'j["state"], j["attempt"]') == "running 1" ]] || fail "pinned was touched"
events_of "" gpu_fault >"$o"
python3 - "$o" <<'PY'
import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
assert len(e) == 1 and e[0]["fields"]["gpu"] == 0 and e[0]["fields"]["xid"] == 79 and e[0]["fields"]["drained"], e
assert e[0]["fields"]["pci_bus_id"] == "0000:18:00" and e[0]["fields"]["class"] == "gpu_fault", e
PY
g health >"$o"
has "$o" '^GPU 0 DRAINED: Xid 79'
say "Xid 79: GPU 0 drained, its job relaunched on GPU 2, the job on GPU 1 untouched"

# 2. The application's fault drains nothing.
echo "[ 8130.000001] NVRM: Xid (PCI:0000:28:00): 13, pid=5151, name=python3, Graphics SM Warp Exception" >&7
for _ in $(seq 50); do [[ $(events_of "" gpu_fault | wc -l) == 2 ]] && break; sleep 0.2; done
events_of "" gpu_fault | tail -1 >"$o"
python3 - "$o" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["fields"]
assert f["xid"] == 13 and f["class"] == "application" and f["drained"] is False and f["pid"] == 5151, f
PY
[[ $(health_field 'h["gpus"][1]["drained"]') == False ]] || fail "Xid 13 drained GPU 1"
say "Xid 13: published as the application's, GPU 1 not drained"

# 3. A restart keeps the drain.
kill "$agent_pid"; wait "$agent_pid" || true
start_agent "${agent[@]}"
[[ $(health_field 'h["gpus"][0]["drained"]') == True ]] || fail "the drain of GPU 0 did not survive a restart"
say "the drain survives an agent restart"

# 4. By hand.
g -o json gpu drain 3 --reason "fan replacement" >"$o"
has "$o" '"drained": ?true'
g train start --name wants3 --gpus 3 -- sleep 600 >/dev/null
wait_for_state wants3 queued 10
job_field wants3 'j["waiting_for"]' >"$o"
has "$o" 'GPU 3 drained \(fan replacement\)'
g gpu undrain 3 >"$o"
has "$o" 'in service'
wait_for_state wants3 running 10
g gpu undrain 0 >/dev/null
[[ $(health_field 'h["gpus"][0]["drained"]') == False ]] || fail "undrain 0 left it drained"
rc=0; g gpu drain 99 >"$o" 2>&1 || rc=$?
[[ $rc == 1 ]] || fail "gpu drain 99 exited $rc: $(cat "$o")"
for name in placed pinned wants3; do g train stop "$name" --grace 1s >/dev/null; done
say "gpu drain 3: a job for GPU 3 queued naming the drain, started on undrain"

# 5. The driver's own fault readings.
kill "$agent_pid"; wait "$agent_pid" || true
rm -f "$work/state/gpu-drains.json"
FAKE_NVML_SCENARIO=row_remap_pending start_agent "${agent[@]}"
for _ in $(seq 50); do [[ $(health_field "h['gpus'][0]['drained']") == True ]] && break; sleep 0.2; done
health_field "h['gpus'][0]['fault']['reason']" >"$o"
has "$o" '^row remap pending'
rc=0; g gpu undrain 0 >"$o" 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "undrain of a GPU whose row remap is still pending exited $rc: $(cat "$o")"
has "$o" 'still reads row remap pending'
g gpu undrain 0 --force >"$o"
has "$o" 'in service'
# A GPU lost before any reading named it: reported, and left out by the queue.
kill "$agent_pid"; wait "$agent_pid" || true
FAKE_NVML_SCENARIO=gpu_lost start_agent "${agent[@]}"
for _ in $(seq 50); do events_of "" gpu_fault | grep -q 'GPU 1 faulted: GPU lost' && break; sleep 0.2; done
events_of "" gpu_fault | grep -q 'GPU 1 faulted: GPU lost' || fail "no gpu_fault for the lost GPU 1: $(events_of "" gpu_fault)"
[[ $(health_field "h['gpus'][1]['lost']") == True ]] || fail "health does not say GPU 1 is lost"
g train start --name wants1 --gpus 1 -- sleep 600 >/dev/null
wait_for_state wants1 queued 10
job_field wants1 'j["waiting_for"]' >"$o"
has "$o" 'GPU 1 drained \(GPU lost'
g train stop wants1 >/dev/null
say "NVML: a pending row remap drains GPU 0 (undrain refused until forced); a lost GPU is reported and left out"
