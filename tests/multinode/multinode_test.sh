#!/usr/bin/env bash
# multinode_test.sh BUILD_DIR: a real two-node torchrun job across two
# network namespaces (fleet_lib.sh: each its own sshd and bootstrapped
# agent), torch from the package index pip uses, gloo on CPU. The ranks
# all-reduce every step and check each other's sums.
# 1. gpuctl train start --multinode n1,n2 --wait: both parts succeed; status
#    shows each part, logs interleave with [node] prefixes, rm removes both.
# 2. A second run, one part killed (kill -9 of its torchrun): the other part
#    fails or is stopped, and the supervisor names the node that failed first.
# 3. --on-oom recover: rank 1 dies of a CUDA OOM at anchors 1024; its agent
#    relaunches it at 768 with expandable segments, the supervisor relaunches
#    rank 0 with the same change, and the job succeeds on both nodes.
# 4. --on-hang recover: rank 1 SIGSTOPs itself; the parts are dumped, and
#    all resume from the last complete checkpoint.
# Root; exit 77 to skip (no netns, no uv or index).
set -euo pipefail
test_name=multinode
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../fleet/fleet_lib.sh"
fleet_check
venv=$(bash "$here/torch_venv.sh" "$build") || exit $?
trap fleet_down EXIT
fleet_up 2
say "2 nodes up; torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)')"
has() { grep -qE -- "$2" "$1" || fail "no /$2/ in: $(cat "$1")"; }
o=$fleet_dir/out
start=(train start --multinode n1,n2 --nproc-per-node 1 --rdzv-port 29400 --torchrun "$venv/bin/torchrun"
       --env GLOO_SOCKET_IFNAME=eth0 --env OMP_NUM_THREADS=1)

# 1. Both parts run to the end, checking each other's sums.
rc=0
fleet_gpuctl "${start[@]}" --name ring --wait -- "$here/allreduce_train.py" --steps 15 --interval 0.1 \
  >"$o" 2>&1 || rc=$?
[[ $rc == 0 ]] || fail "the two-node job exited $rc: $(cat "$o"; fleet_gpuctl train logs ring 2>&1 | tail -40)"
has "$o" '^started multi-node job ring: 2 parts on n1,n2, rendezvous 10\.213\.0\.2:29400 id ring-[0-9a-f]{12}'
has "$o" '^multi-node job ring succeeded on every node$'
fleet_gpuctl train status ring >"$o"
has "$o" '^NODE +RANK +NAME +KIND +STATE'
has "$o" '^n1 +0 +ring +train +succeeded'
has "$o" '^n2 +1 +ring +train +succeeded'
fleet_gpuctl -o json train status ring >"$o"
python3 - "$o" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))
parts = job["parts"]
assert [(p["node"], p["rank"], p["state"]) for p in parts] == [("n1", 0, "succeeded"), ("n2", 1, "succeeded")], parts
assert parts[0]["metrics"]["step"] == 14, parts[0]["metrics"]
assert job["rdzv_endpoint"] == "10.213.0.2:29400", job
PY
fleet_gpuctl train logs ring >"$o"
has "$o" '^\[n1\] rank 0 of 2 '
has "$o" '^\[n2\] rank 1 of 2 '
has "$o" '^\[n1\] rank 0: all 15 sums agreed$'
has "$o" '^\[n2\] rank 1: all 15 sums agreed$'
# One part alone: --node.
fleet_gpuctl --node n2 train logs ring >"$o"
has "$o" '^rank 1: all 15 sums agreed$'
fleet_gpuctl train rm ring >"$o"
has "$o" 'removed multi-node job ring from 2 nodes'
rc=0; fleet_gpuctl --node n1 train status ring >/dev/null 2>&1 || rc=$?
[[ $rc == 1 ]] || fail "the part on n1 is still known after rm (exit $rc)"
say "two ranks on two nodes agreed for 15 steps"

# 2. One part dies: the supervisor names its node and stops the other.
fleet_gpuctl "${start[@]}" --name broken --wait --grace 5s -- "$here/allreduce_train.py" --steps 600 \
  --interval 0.1 >"$o" 2>&1 &
waiter=$!
for _ in $(seq 300); do
  fleet_gpuctl --node n2 train logs broken 2>/dev/null | grep -q '^rank 1 of 2' && break
  sleep 0.2
done
pid=$(fleet_gpuctl --node n2 -o json train status broken | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
[[ $pid -gt 0 ]] || fail "no pid for the part on n2"
kill -9 "$pid"   # torchrun on n2, as an OOM killer or a crash would
rc=0; wait "$waiter" || rc=$?
[[ $rc == 1 ]] || fail "--wait exited $rc, not 1, when a part died: $(cat "$o")"
has "$o" 'multi-node job broken failed: part on n2 \(rank 1\) (failed|lost)'
fleet_gpuctl -o json train status broken >"$o.json"
python3 - "$o.json" <<'PY'
import json, sys
parts = json.load(open(sys.argv[1]))["parts"]
states = {p["node"]: p["state"] for p in parts}
assert states["n2"] in ("failed", "lost"), states  # SIGKILL leaves no exit status: lost
assert states["n1"] in ("failed", "stopped"), states   # its all_reduce broke, or the supervisor stopped it
PY
fleet_gpuctl train rm broken >/dev/null
say "a killed part is named and the other stopped"

# 3. An OOM on one node: every part relaunched with the same change.
rc=0
fleet_gpuctl "${start[@]}" --name oom --wait --on-oom recover --anchors 1024 -- "$here/allreduce_train.py" \
  --steps 10 --interval 0.1 --oom-rank 1 --oom-above-anchors 768 >"$o" 2>&1 || rc=$?
[[ $rc == 0 ]] || fail "the OOM job exited $rc: $(cat "$o"; fleet_gpuctl train logs oom 2>&1 | grep -v '^\[n.\]  ' | tail -40)"
has "$o" 'part on n2 \(rank 1\) was relaunched after a CUDA OOM \(anchors 768, alloc conf expandable_segments:True\): relaunching the other parts with the same change'
has "$o" '^multi-node job oom succeeded on every node$'
fleet_gpuctl train logs oom >"$o"
has "$o" '^\[n1\] rank 0 of 2 .*max anchors 768, alloc conf expandable_segments:True'
has "$o" '^\[n2\] rank 1 of 2 .*max anchors 768, alloc conf expandable_segments:True'
has "$o" '^\[n2\] rank 1: all 10 sums agreed$'
fleet_gpuctl -o json --node n2 train status oom >"$o.json"
python3 - "$o.json" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))
assert job["state"] == "succeeded" and job["restart_count"] == 1, job
assert job["anchors"] == 768, job
PY
fleet_gpuctl train rm oom >/dev/null
say "an OOM on one node: every part relaunched with the same change"

# 4. A rank hangs on one node (SIGSTOP at step 12): every part is dumped,
#    and every part resumes from the same last complete checkpoint.
ckpt=$fleet_dir/ckpt
mkdir -p "$ckpt"
rc=0
fleet_gpuctl "${start[@]}" --name hang --wait --on-hang recover --hang-after 4s --start-timeout 120s \
  --checkpoint-dir "$ckpt" --resume-arg '--resume {checkpoint}' -- "$here/../resilience/toy_trainer.py" ddp \
  --steps 30 --interval 0.1 --every 5 --fault-at 12 --stop-rank 1 --ckpt "$ckpt" >"$o" 2>&1 || rc=$?
[[ $rc == 0 ]] || fail "the hung job exited $rc: $(cat "$o"; fleet_gpuctl train logs hang 2>&1 | tail -40)"
has "$o" 'is hung: dumped every part.s stacks'
has "$o" '^multi-node job hang succeeded on every node$'
fleet_gpuctl train logs hang >"$o"
has "$o" '^\[n1\] resumed from .*/checkpoint-10 at step 10$'
has "$o" 'rank 1: done at step 30'
fleet_gpuctl -o json --node n1 train status hang >"$o.n1.json"
fleet_gpuctl -o json --node n2 train status hang >"$o.n2.json"
python3 - "$o.n1.json" "$o.n2.json" <<'PY'
import json, sys
parts = [json.load(open(p)) for p in sys.argv[1:]]
for job in parts:  # each resumed from the same checkpoint, by its agent or with the other
    assert job["state"] == "succeeded" and job["checkpoint"]["resume_from"].endswith("/checkpoint-10"), job["checkpoint"]
# Whichever agent relaunched first kept the lineage (the other part was restarted with it).
assert any(j["attempts"] and j["attempts"][0]["state_reason"].startswith("hung:") for j in parts), \
    [j["attempts"] for j in parts]
PY
fleet_gpuctl train rm hang >/dev/null
say "a hung rank on one node: every part dumped and resumed from checkpoint-10"
say "PASS"
