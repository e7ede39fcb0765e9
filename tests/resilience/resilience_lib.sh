# Sourced by the resilience tests after `set -euo pipefail`, with test_name
# and build (BUILD_DIR) set: a torch venv with py-spy ($venv; needs_torch=no
# goes without), a scratch
# directory ($work) and a gpuctld on it (start_agent; each job in a memory
# cgroup of its own under $cgroup_parent, as on a real host: a run's
# processes are found, and stopped, wherever they start sessions), cleaned
# up at exit;
# helpers to wait for a job's state and read its events.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../build_proof/lib.sh"
[[ $(id -u) == 0 ]] || skip "needs root (the agent's job cgroups and py-spy's ptrace)"
command -v tmux >/dev/null || skip "no tmux"
if [[ ${needs_torch:-yes} == yes ]]; then venv=$(bash "$here/../multinode/torch_venv.sh" "$build") || exit $?; fi
trainer=$here/toy_trainer.py
work=$(mktemp -d)
agent_pid=""
tmux_socket=gpuctl-$test_name-$$
cgroup_parent=/gpuctl-$test_name-$$
cleanup() {
  [[ -n $agent_pid ]] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
  tmux -L "$tmux_socket" kill-server 2>/dev/null || true
  local cg
  for cg in /sys/fs/cgroup/memory$cgroup_parent/*/ /sys/fs/cgroup/memory$cgroup_parent \
    /sys/fs/cgroup$cgroup_parent/*/ /sys/fs/cgroup$cgroup_parent; do
    [[ -d $cg ]] && rmdir "$cg" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

start_agent() {
  "$build/daemon/gpuctld" --listen "unix:$work/a.sock" --state-dir "$work/state" --cgroup-parent "$cgroup_parent" \
    --no-lock-memory \
    --tmux-socket "$tmux_socket" --nvml-library /nonexistent --nvidia-smi /nonexistent "$@" >"$work/gpuctld.log" 2>&1 &
  agent_pid=$!
  for _ in $(seq 100); do g health >/dev/null 2>&1 && return; sleep 0.05; done
  cat "$work/gpuctld.log" >&2
  fail "gpuctld did not answer"
}

g() { "$build/client/gpuctl" --agent "unix:$work/a.sock" "$@"; }

# job_field NAME PYTHON_EXPR: the expression over the job's JSON (`j`).
job_field() {
  g -o json train status "$1" | python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"
}

# wait_for_state NAME STATE SECONDS [ATTEMPT]: until the job is in STATE
# (at that attempt, if given), or fail showing its status and log.
wait_for_state() {
  local name=$1 want=$2 seconds=$3 attempt=${4:-} state
  for _ in $(seq $((seconds * 5))); do
    state=$(job_field "$name" 'j["state"], j["attempt"]' 2>/dev/null || true)
    if [[ -z $attempt ]]; then [[ ${state%% *} == "$want" ]] && return 0
    else [[ $state == "$want $attempt" ]] && return 0; fi
    sleep 0.2
  done
  g train status "$name" >&2 || true
  g train logs "$name" 2>&1 | tail -30 >&2 || true
  tail -30 "$work/gpuctld.log" >&2
  fail "job $name is not $want${attempt:+ (attempt $attempt)} after ${seconds}s (last: $state)"
}

# events_of NAME KIND: that job's events of that kind (NAME "": no job's),
# one JSON object per line.
events_of() {
  g -o json events | python3 -c "
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if (e.get('job') or '') == sys.argv[1] and e['kind'] == sys.argv[2]:
        print(json.dumps(e))" "$1" "$2"
}

has() { grep -qE -- "$2" "$1" || fail "no /$2/ in $1: $(head -c 3000 "$1")"; }
