#!/usr/bin/env bash
# checkpoint_kill_test.sh BUILD_DIR [KILLS]: a real torch trainer saving
# Hugging Face-style checkpoints (three weight files fsynced, then
# trainer_state.json), run with --on-fail recover, is killed with SIGKILL at
# KILLS (default 50) moments: every other one at random, the rest as a save
# begins (seen in its log), so inside a save whatever the host's speed. Every
# relaunch resumes from the newest complete checkpoint (the trainer loads it
# and checks its weights belong to its step: a partial one would fail the
# load or the check), and loses at most one checkpoint interval of steps.
# Root; exit 77 to skip (no uv or index).
set -euo pipefail
test_name=checkpoint_kills
build=$(cd "$1" && pwd)
kills=${2:-50}
source "$(dirname "$0")/resilience_lib.sh"
start_agent
every=10
mkdir -p "$work/ckpt"
g train start --name kills --on-fail recover --checkpoint-dir "$work/ckpt" --resume-arg '--resume {checkpoint}' \
  --max-restarts-without-progress 100 --env OMP_NUM_THREADS=1 -- \
  "$venv/bin/python" "$trainer" checkpoints --steps 1000000 --every "$every" --interval 0.02 --ckpt "$work/ckpt" \
  >/dev/null

# The trainer of attempt N, once it runs: its pid.
trainer_of() {
  local attempt=$1 pid
  for _ in $(seq 300); do
    if [[ $(job_field kills 'j["attempt"], j["state"]' 2>/dev/null) == "$attempt running" ]]; then
      pid=$(pgrep -n -f "toy_trainer.py checkpoints" || true)
      [[ -n $pid ]] && { echo "$pid"; return; }
    fi
    sleep 0.1
  done
  g train status kills >&2 || true
  fail "attempt $attempt never ran"
}

# kill_inside_a_save LOG PID: SIGKILL to PID as soon as LOG shows the step
# line that opens a save (weights first, about 0.1 s of fsynced writes, then
# trainer_state.json). Read from the log, not timed: a busy host makes the
# import of torch alone take longer than any fixed delay.
kill_inside_a_save() {
  python3 - "$1" "$2" "$every" <<'PY'
import os, re, signal, sys, time
log, pid, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
deadline, rest = time.monotonic() + 120, ""
with open(log, errors="replace") as f:
    f.seek(0, os.SEEK_END)  # the next save, not one already in the log
    while time.monotonic() < deadline:
        chunk = f.read()
        if not chunk:
            if not os.path.exists(f"/proc/{pid}"):
                sys.exit(0)  # gone already: the next attempt is aimed again
            time.sleep(0.002)
            continue
        *lines, rest = (rest + chunk).split("\n")
        for line in lines:
            m = re.match(r"step (\d+) \|", line)
            if m and int(m.group(1)) % every == 0:
                os.kill(pid, signal.SIGKILL)
                sys.exit(0)
os.kill(pid, signal.SIGKILL)
PY
}

for attempt in $(seq 1 "$kills"); do
  pid=$(trainer_of "$attempt")
  if ((attempt % 2)); then
    # Anywhere from its start (importing torch) to past a save (one every
    # 10 steps of 0.02 s, each save about 0.1 s).
    sleep "$(python3 -c 'import random; print(round(random.uniform(0.2, 2.0), 2))')"
    kill -9 "$pid" 2>/dev/null || true
  else
    kill_inside_a_save "$(job_field kills 'j["log_path"]')" "$pid"
  fi
done
trainer_of $((kills + 1)) >/dev/null
sleep 1
g train stop kills --grace 2s >/dev/null
g -o json train status kills >"$work/status.json"
python3 - "$work/status.json" "$every" "$kills" <<'PY'
import json, os, re, sys
job, every, kills = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
attempts = job["attempts"] + [{"attempt": job["attempt"], "resumed_from": job["checkpoint"]["resume_from"],
                               "log_path": job["log_path"], "step": job["metrics"].get("step")}]
assert len(attempts) == kills + 1, (len(attempts), kills)
mid_save = 0
for before, after in zip(attempts, attempts[1:]):
    log = open(before["log_path"], errors="replace").read()
    assert "RESUME BAD" not in log and "Traceback" not in log, (before["attempt"], log[-2000:])
    lines = [l for l in log.splitlines() if l.startswith(("step ", "saved "))]
    if lines and re.fullmatch(r"step (\d+) \| .*", lines[-1]) and int(lines[-1].split()[1]) % every == 0:
        mid_save += 1  # killed between a save's first weight file and its trainer_state.json
    resumed = after["resumed_from"]
    ckpt_step = int(re.search(r"checkpoint-(\d+)$", resumed).group(1)) if resumed else 0
    if resumed:
        assert os.path.exists(os.path.join(resumed, "trainer_state.json")), resumed
    last = before.get("step")
    if last is not None:
        assert last - ckpt_step <= every, f"attempt {before['attempt']} reached step {last}; the next resumed from {ckpt_step}"
final = open(job["log_path"], errors="replace").read()
assert "RESUME BAD" not in final and "Traceback" not in final, final[-2000:]
assert mid_save >= 1, "no kill landed inside a save: the test did not test what it says"
print(f"checkpoint_kills: {kills} kills, {mid_save} inside a save; every relaunch resumed from the newest complete "
      f"checkpoint, losing at most {every} steps; last attempt at step {attempts[-1]['step']}")
PY
