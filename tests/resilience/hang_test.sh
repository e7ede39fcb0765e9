#!/usr/bin/env bash
# hang_test.sh BUILD_DIR: hung runs, all real processes (torch from the
# index pip uses, gloo on CPU, py-spy from the same index):
# 1. a single process deadlocked on a lock, printing nothing: job_hung after
#    --start-timeout, a py-spy stack naming the function, failed (--on-hang fail);
# 2. two ranks under torchrun, rank 1 SIGSTOPped: job_hung with lagging rank
#    1 and a Python stack per rank, then (--on-hang recover) stopped and
#    relaunched from the last complete checkpoint, which then succeeds;
# 3. two ranks, rank 1 skips an all_reduce (waits in a barrier): job_hung,
#    a stack per rank, the ranks in different collectives, failed;
# 4. no false alarm for an eval loop of 3 x the budget drawing a tqdm bar, a
#    checkpoint save of 2 x the budget that prints nothing, a slow first step
#    inside the start budget;
# 5. gpuctl train dump NAME on demand.
# Root; exit 77 to skip (no uv or index).
set -euo pipefail
test_name=hang
build=$(cd "$1" && pwd)
source "$(dirname "$0")/resilience_lib.sh"
start_agent
py=$venv/bin/python
o=$work/out

# 4 first, in the background of the others: the runs that must not hang.
g train start --name eval --hang-after 2s -- "$py" "$trainer" eval --steps 5 --quiet-for 6 >/dev/null
mkdir -p "$work/ckpt-save"
g train start --name save --hang-after 2s --checkpoint-dir "$work/ckpt-save" -- \
  "$py" "$trainer" save --steps 5 --quiet-for 4 --ckpt "$work/ckpt-save" >/dev/null
g train start --name slow --start-timeout 6s --hang-after 2s -- "$py" "$trainer" slowstart --steps 5 --quiet-for 3 \
  >/dev/null

# 1. A deadlock.
g train start --name lock --start-timeout 3s --on-hang fail -- "$py" "$trainer" deadlock >/dev/null
wait_for_state lock failed 30
job_field lock 'j["state_reason"]' >"$o"
has "$o" '^hung: no progress for [0-9]+ s \(budget 3 s, --start-timeout; last: started\) \(stacks in .*/jobs/lock/dumps/'
events_of lock job_hung >"$o"
python3 - "$o" <<'PY'
import json, os, sys
events = [json.loads(l) for l in open(sys.argv[1])]
assert len(events) == 1, events
f = events[0]["fields"]
assert f["policy"] == "fail" and f["budget_source"] == "--start-timeout" and f["last_step"] is None, f
py = [p for p in f["processes"] if p["method"] == "py-spy"]
assert py and any("wait_forever_on_a_lock" in p.get("top_frame", "") or "acquire" in p.get("top_frame", "") for p in py), f
dump = f["dump_dir"]
text = "".join(open(os.path.join(dump, n)).read() for n in os.listdir(dump))
assert "wait_forever_on_a_lock (toy_trainer.py:" in text, text[:3000]
assert "kernel stack:" in text and "wchan:" in text, text[:2000]
PY
say "a deadlocked process: hung after its start budget, py-spy stack names the lock, failed"

# 2. A rank SIGSTOPped under torchrun; recovered from the last checkpoint.
ddp=(--env OMP_NUM_THREADS=1 -- "$venv/bin/torchrun" --standalone --nproc-per-node 2 "$trainer" ddp --steps 40
     --interval 0.1 --every 5 --fault-at 12)
g train start --name stopped --hang-after 4s --start-timeout 120s --on-hang recover \
  --checkpoint-dir "$work/ckpt-stop" --resume-arg '--resume {checkpoint}' "${ddp[@]}" --stop-rank 1 \
  --ckpt "$work/ckpt-stop" >/dev/null
wait_for_state stopped succeeded 150 2
events_of stopped job_hung >"$o"
events_of stopped job_relaunched >"$o.relaunch"
python3 - "$o" "$o.relaunch" <<'PY'
import json, sys
hung = [json.loads(l) for l in open(sys.argv[1])]
assert len(hung) == 1, hung
f = hung[0]["fields"]
assert f["lagging_rank"] == 1, f
ranks = {p["rank"]: p for p in f["processes"] if p["rank"] is not None}
assert sorted(ranks) == [0, 1], f["processes"]
assert ranks[1]["state"] == "T", ranks
for r in (0, 1):
    assert ranks[r]["method"] == "py-spy" and ranks[r].get("top_frame"), ranks[r]
assert f["last_step"] is not None and 10 <= f["last_step"] <= 12, f
relaunched = [json.loads(l) for l in open(sys.argv[2])]
assert len(relaunched) == 1, relaunched
r = relaunched[0]["fields"]
assert r["cause"] == "hang" and r["checkpoint"].endswith("/checkpoint-10"), r
PY
g train logs stopped >"$o"
has "$o" '^resumed from .*/checkpoint-10 at step 10$'
has "$o" 'rank 0: done at step 40'
g -o json train status stopped >"$o"
python3 - "$o" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["attempt"] == 2 and j["checkpoint"]["resume_from"].endswith("/checkpoint-10"), j["checkpoint"]
a = j["attempts"][0]
assert a["state"] == "failed" and a["state_reason"].startswith("hung: no progress"), a
assert a["resumed_from"] is None, a
PY
say "a SIGSTOPped rank: lagging rank 1 named, a stack per rank, relaunched from checkpoint-10, succeeded"

# 3. A rank skips an all_reduce.
g train start --name skipped --hang-after 4s --start-timeout 120s --on-hang fail "${ddp[@]}" --skip-rank 1 >/dev/null
wait_for_state skipped failed 90
events_of skipped job_hung >"$o"
python3 - "$o" <<'PY'
import json, sys
f = json.loads(open(sys.argv[1]).readline())["fields"]
ranks = {p["rank"]: p for p in f["processes"] if p["rank"] is not None}
assert sorted(ranks) == [0, 1], f["processes"]
frames = {r: ranks[r].get("top_frame", "") for r in ranks}
assert all(frames.values()), frames
# Each rank waits in its own collective: the dump tells them apart.
dump = f["dump_dir"]
import os
text = {n: open(os.path.join(dump, n)).read() for n in os.listdir(dump)}
r0 = next(t for n, t in text.items() if n.startswith("rank0-"))
r1 = next(t for n, t in text.items() if n.startswith("rank1-"))
assert "all_reduce" in r0 and "barrier" in r1, (r0[-1500:], r1[-1500:])
PY
say "a rank that skipped an all_reduce: hung, rank 0 in all_reduce and rank 1 in barrier in the dump, failed"

# 4. The runs that must not hang have ended by now, each on its own.
for name in eval save slow; do
  wait_for_state "$name" succeeded 30
  events_of "$name" job_hung >"$o"
  [[ ! -s $o ]] || fail "false alarm for $name: $(cat "$o")"
done
say "no false alarm: an eval of 3x the budget, a quiet save of 2x, a slow first step"

# 5. A dump on demand.
g train start --name busy -- "$py" "$trainer" slowstart --quiet-for 60 >/dev/null
wait_for_state busy running 10
sleep 1
g train dump busy >"$o"
has "$o" 'pid [0-9]+ \(S\): py-spy, at '
has "$o" '^stacks of job busy in .*/jobs/busy/dumps/'
dir=$(g -o json train dump busy | python3 -c 'import json,sys; print(json.load(sys.stdin)["dump_dir"])')
grep -q 'slow_start (toy_trainer.py:' "$dir"/*.txt || fail "no Python stack in $dir: $(cat "$dir"/*.txt | head -40)"
g train stop busy --grace 1s >/dev/null
rc=0; g train dump busy >"$o" 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "train dump of an ended job exited $rc, not 2: $(cat "$o")"
say "train dump: a stack per process on demand; an ended job is refused (exit 2)"
