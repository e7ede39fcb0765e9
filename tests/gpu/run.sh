#!/usr/bin/env bash
# GPU check: gpuctld with the real NVML against nvidia-smi on an NVIDIA host
# (written for the one-H200 test machine: CMake, ninja, python3; no apt, no
# internet).
#
#   tests/gpu/run.sh [BUILD_DIR]
#
# Builds gpuctld and gpuctl in /tmp/gpuctl-gpu-build unless a prebuilt build
# dir is given ($1 or GPUCTL_BUILD_DIR); starts gpuctld on a temp socket; runs
# `gpuctl -o json health`; compares each GPU with nvidia-smi; runs a PyTorch
# job that allocates until CUDA OOM and checks what gpuctl reports about it.
# Outputs and summary.txt (PASS/FAIL/SKIP per check) go to $OUT (default
# /tmp/gpuctl-gpu-out).
# Exit: 0 all passed, 1 a check failed, 2 could not run.
#
# Environment (for dry runs without a GPU):
#   GPUCTL_NVML_LIBRARY  NVML library for gpuctld (default: its own, libnvidia-ml.so.1)
#   NVIDIA_SMI           nvidia-smi to compare with (default: from PATH)
#   GPUCTL_GPU_DRY_RUN=1 stand-ins: compare only the GPUs nvidia-smi lists and
#                        skip the GPU count (the fake NVML has 2 GPUs, the capture 1)
#   GPUCTL_GPU_OOM_SCRIPT=EXECUTABLE  the OOM job runs this instead of
#                        python3 tests/gpu/oom_probe.py (and needs no torch)
#   GPUCTL_GPU_OOM_RECOVER_SCRIPT=EXECUTABLE  the OOM recovery job runs this
#                        instead of python3 tests/gpu/oom_recover_probe.py
#   GPUCTL_GPU_HANG_SCRIPT=EXECUTABLE  the hang job runs this instead of
#                        python3 tests/gpu/hang_probe.py
# Dry run here:
#   GPUCTL_GPU_DRY_RUN=1 FAKE_NVML_SCENARIO=two_gpus \
#   GPUCTL_NVML_LIBRARY=$PWD/build/tests/fake_nvml/libnvidia-ml.so.1 \
#   NVIDIA_SMI=$PWD/tests/fakes/bin/nvidia-smi \
#   GPUCTL_GPU_OOM_SCRIPT=$PWD/tests/gpu/fake_oom_probe.sh \
#   GPUCTL_GPU_OOM_RECOVER_SCRIPT=$PWD/tests/gpu/fake_oom_recover_probe.sh \
#   GPUCTL_GPU_HANG_SCRIPT=$PWD/tests/gpu/fake_hang_probe.sh tests/gpu/run.sh build
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-/tmp/gpuctl-gpu-out}
mkdir -p "$OUT" || exit 2
build=${1:-${GPUCTL_BUILD_DIR:-}}
smi=${NVIDIA_SMI:-nvidia-smi}

die() { echo "run.sh: $*" | tee -a "$OUT/summary.txt" >&2; exit 2; }
: >"$OUT/summary.txt"

# --- build (or take a prebuilt dir) -----------------------------------------
if [[ -z $build ]]; then
  build=/tmp/gpuctl-gpu-build
  for tool in cmake ninja; do command -v $tool >/dev/null || die "$tool not found; pass a prebuilt BUILD_DIR"; done
  echo "building gpuctld and gpuctl in $build (log: $OUT/build.log)"
  if ! cmake -S "$root" -B "$build" -G Ninja -DGPUCTL_BUILD_TESTS=OFF >"$OUT/build.log" 2>&1; then
    missing=$(grep -oE 'provided by "[^"]+"|Could NOT find [A-Za-z0-9_]+' "$OUT/build.log" |
              sed -E 's/provided by "(.*)"/\1/; s/Could NOT find //' | sort -u | paste -sd' ' -)
    die "cmake failed; missing: ${missing:-see $OUT/build.log} (cmake stops at the first missing package;" \
        "gpuctl needs Protobuf, gRPC, spdlog, nlohmann_json, CLI11). Build elsewhere and pass the build dir:" \
        "tests/gpu/run.sh BUILD_DIR (or GPUCTL_BUILD_DIR=BUILD_DIR)"
  fi
  ninja -C "$build" gpuctld gpuctl >>"$OUT/build.log" 2>&1 || die "build failed; see $OUT/build.log"
fi
gpuctld=$build/daemon/gpuctld gpuctl=$build/client/gpuctl
for bin in "$gpuctld" "$gpuctl"; do
  [[ -x $bin ]] || die "no executable $bin; build it (cmake --build BUILD_DIR --target gpuctld gpuctl)"
  if ! "$bin" --version >/dev/null 2>"$OUT/version.err"; then
    libs=$(ldd "$bin" 2>/dev/null | awk '/not found/ {print $1}' | paste -sd' ' -)
    die "$bin does not run${libs:+; shared libraries not found: $libs}; see $OUT/version.err"
  fi
done
command -v "$smi" >/dev/null || die "nvidia-smi not found (set NVIDIA_SMI=PATH)"

# --- start gpuctld on a temp socket -------------------------------------------
tmp=$(mktemp -d /tmp/gpuctl-gpu.XXXXXX) || die "mktemp failed"
agent_pid=""
tmux_socket=gpuctl-gpu-check-$$  # the jobs' tmux server, ours alone
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  if [[ -n $agent_pid ]]; then kill "$agent_pid" 2>/dev/null; wait "$agent_pid" 2>/dev/null; fi
  tmux -L "$tmux_socket" kill-server 2>/dev/null
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$tmux_socket"  # tmux 3.3 leaves it behind
  cp -f "$tmp/gpuctld.log" "$OUT/gpuctld.log" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
address=unix:$tmp/gpuctl.sock
args=(--listen "$address" --state-dir "$tmp/state" --nvidia-smi "$(command -v "$smi")"
      --tmux-socket "$tmux_socket")
[[ -n ${GPUCTL_NVML_LIBRARY:-} ]] && args+=(--nvml-library "$GPUCTL_NVML_LIBRARY")
"$gpuctld" "${args[@]}" >"$tmp/gpuctld.log" 2>&1 &
agent_pid=$!
for _ in $(seq 150); do
  "$gpuctl" --agent "$address" health >/dev/null 2>&1 && break
  kill -0 "$agent_pid" 2>/dev/null || die "gpuctld exited: $(cat "$tmp/gpuctld.log")"
  sleep 0.1
done

# --- capture ------------------------------------------------------------------
"$gpuctl" --agent "$address" -o json health >"$OUT/health.json" 2>"$OUT/health.err" ||
  die "gpuctl -o json health failed: $(cat "$OUT/health.err")"
"$smi" --query-gpu=index,uuid,name,memory.total,temperature.gpu,power.draw \
  --format=csv,noheader,nounits >"$OUT/nvidia-smi.csv" 2>&1 ||
  die "nvidia-smi failed: $(cat "$OUT/nvidia-smi.csv")"

# --- compare --------------------------------------------------------------------
python3 - "$OUT/health.json" "$OUT/nvidia-smi.csv" "${GPUCTL_GPU_DRY_RUN:-0}" >>"$OUT/summary.txt" 2>&1 <<'EOF'
import json, sys
health = json.load(open(sys.argv[1]))
rows = [[c.strip() for c in line.split(",")] for line in open(sys.argv[2]) if line.strip()]
dry_run = sys.argv[3] == "1"
TEMP_TOL_C, POWER_TOL_W = 5, 50
results = []
def check(name, ok, detail):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")
def num(text):  # nvidia-smi prints "[N/A]" for what a GPU cannot report
    try: return float(text)
    except ValueError: return None

if dry_run:
    print("DRY RUN with stand-ins: GPU count not compared; only GPUs nvidia-smi lists are checked")
check("gpu_source", health.get("gpu_source") == "nvml",
      f"{health.get('gpu_source')!r} (want 'nvml'; gpu_error: {health.get('gpu_error', '')!r})")
gpus = {g["index"]: g for g in health.get("gpus", [])}
if not dry_run:
    check("gpu count", len(gpus) == len(rows), f"gpuctl {len(gpus)}, nvidia-smi {len(rows)}")
for index, uuid, name, mem_mib, temp, power in rows:
    g = gpus.get(int(index))
    if g is None:
        check(f"gpu {index}", False, "listed by nvidia-smi, missing from gpuctl"); continue
    check(f"gpu {index} uuid", g["uuid"] == uuid, f"{g['uuid']} vs {uuid}")
    check(f"gpu {index} name", g["name"] == name, f"{g['name']!r} vs {name!r}")
    want = int(mem_mib) * 1048576
    check(f"gpu {index} memory_total_bytes", g["memory_total_bytes"] == want,
          f"{g['memory_total_bytes']} vs {mem_mib} MiB = {want}")
    for key, smi_text, tol, unit in (("temperature_c", temp, TEMP_TOL_C, "C"),
                                     ("power_draw_w", power, POWER_TOL_W, "W")):
        ours, theirs = g[key], num(smi_text)
        if ours is None or theirs is None:
            check(f"gpu {index} {key}", ours is None and theirs is None, f"{ours} vs {smi_text!r}")
        else:
            check(f"gpu {index} {key}", abs(ours - theirs) <= tol,
                  f"{ours} vs {theirs} {unit} (tolerance {tol} {unit})")
print(f"{'PASS' if all(results) else 'FAIL'}: {results.count(True)} of {len(results)} checks passed")
sys.exit(0 if all(results) else 1)
EOF
status=$?

# --- training OOM check ---------------------------------------------------------
# A PyTorch job allocates 16 GiB blocks on GPU 0 until torch.OutOfMemoryError;
# gpuctl must report a cuda_oom event that agrees with NVML, stay up, and
# refuse a bad --alloc-conf before starting anything.
cli() { "$gpuctl" --agent "$address" "$@"; }
result() { echo "$*" >>"$OUT/summary.txt"; if [[ $1 == FAIL ]]; then oom_status=1; fi; }
oom_status=0
python=$(command -v python3)
probe=("$python" "$root/tests/gpu/oom_probe.py")

cli train start --name gpu-oom-badconf --alloc-conf expandable_segments:maybe -- "${probe[@]}" \
  >"$OUT/oom-badconf.txt" 2>&1
rc=$?
if [[ $rc == 2 ]] && ! cli train status gpu-oom-badconf >/dev/null 2>&1; then
  result PASS "bad alloc conf refused: exit 2, no job started ($(head -n 1 "$OUT/oom-badconf.txt"))"
else
  result FAIL "bad alloc conf: exit $rc (want 2, and no job gpu-oom-badconf); see oom-badconf.txt"
fi

if [[ -n ${GPUCTL_GPU_OOM_SCRIPT:-} ]]; then
  probe=("$GPUCTL_GPU_OOM_SCRIPT")
  result "DRY RUN" "training OOM: stand-in $GPUCTL_GPU_OOM_SCRIPT instead of oom_probe.py"
elif ! "$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
    >"$OUT/torch-check.txt" 2>&1; then
  probe=()
  result SKIP "training OOM: no PyTorch with CUDA for $python (see torch-check.txt)"
fi
if ((${#probe[@]})); then
  if cli train start --name gpu-oom --alloc-conf expandable_segments:True -- "${probe[@]}" \
      >"$OUT/oom-start.txt" 2>&1; then
    # Poll the state; once failed, allow a few more polls for the event.
    grace=5
    for _ in $(seq 300); do
      cli -o json train status gpu-oom >"$OUT/oom-job.json" 2>"$OUT/oom-status.err"
      state=$("$python" -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["state"] + ("+oom" if any(e["kind"] == "cuda_oom" for e in j["events"]) else ""))' \
        "$OUT/oom-job.json" 2>/dev/null)
      # The OOM event comes while the job still runs: wait for its end too.
      case $state in
        failed) ((grace-- > 0)) || break ;;
        starting | running | starting+oom | running+oom | "") ;;
        *) break ;;
      esac
      sleep 1
    done
    cli train logs gpu-oom >"$OUT/oom-job.log" 2>&1
    "$python" - "$OUT/oom-job.json" "$OUT/health.json" >>"$OUT/summary.txt" 2>&1 <<'EOF' || oom_status=1
import json, sys
job, health = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ok = []
def check(name, passed, detail):
    ok.append(passed)
    print(f"{'PASS' if passed else 'FAIL'} {name}: {detail}")

check("oom job state", job["state"] == "failed", f"{job['state']!r}, exit {job['exit_code']} (want 'failed')")
ooms = [e for e in job["events"] if e["kind"] == "cuda_oom"]
check("cuda_oom event", bool(ooms), f"events: {[e['kind'] for e in job['events']]}")
if ooms:
    e = ooms[0]
    check("cuda_oom gpu", e.get("gpu") == 0, f"{e.get('gpu')} (want 0)")
    check("cuda_oom tried_bytes", e.get("tried_bytes") == 16 << 30,
          f"{e.get('tried_bytes')} (want 16 GiB = {16 << 30})")
    nvml = next((g["memory_total_bytes"] for g in health.get("gpus", []) if g["index"] == 0), None)
    total = e.get("total_bytes")
    off = abs(total - nvml) / nvml * 100 if total and nvml else None
    check("cuda_oom total_bytes", off is not None and off <= 1,
          f"{total} vs NVML {nvml} for GPU 0 ({'n/a' if off is None else f'{off:.2f} %'}, tolerance 1 %)")
    present = {k: e.get(k) for k in ("free_bytes", "in_use_bytes", "allocated_bytes")}
    check("cuda_oom free/in_use/allocated", None not in present.values(), str(present))
sys.exit(0 if all(ok) else 1)
EOF
  else
    result FAIL "training OOM: gpuctl train start failed: $(cat "$OUT/oom-start.txt")"
  fi
  if cli health >/dev/null 2>&1 && kill -0 "$agent_pid" 2>/dev/null; then
    result PASS "agent still answers after the OOM job"
  else
    result FAIL "agent gone or not answering after the OOM job; see gpuctld.log"
  fi
fi
if ((oom_status != 0 && status == 0)); then status=1; fi

# --- OOM recovery: --on-oom recover on a real CUDA OOM --------------------------
# A job whose memory grows with --max-anchors OOMs for real at 1024; gpuctl
# must relaunch it once with expandable_segments:True and 768 anchors, and
# the relaunch must pass the step where the first attempt died and succeed.
recover_status=0
recover=("$python" "$root/tests/gpu/oom_recover_probe.py")
if [[ -n ${GPUCTL_GPU_OOM_RECOVER_SCRIPT:-} ]]; then
  recover=("$GPUCTL_GPU_OOM_RECOVER_SCRIPT")
  echo "DRY RUN OOM recovery: stand-in $GPUCTL_GPU_OOM_RECOVER_SCRIPT instead of oom_recover_probe.py" >>"$OUT/summary.txt"
elif ! "$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  recover=()
  echo "SKIP OOM recovery: no PyTorch with CUDA for $python" >>"$OUT/summary.txt"
fi
if ((${#recover[@]})); then
  if cli train start --name gpu-oom-recover --on-oom recover --anchors 1024 -- "${recover[@]}" \
      >"$OUT/oom-recover-start.txt" 2>&1; then
    for _ in $(seq 600); do
      cli -o json train status gpu-oom-recover >"$OUT/oom-recover-job.json" 2>/dev/null
      final=$("$python" -c 'import json, sys
j = json.load(open(sys.argv[1]))
ended = j["state"] not in ("starting", "running", "queued")
print("yes" if ended and (j["state"] == "succeeded" or "gave up" in j["state_reason"] or j["attempt"] > 2) else "")' \
        "$OUT/oom-recover-job.json" 2>/dev/null)
      [[ $final == yes ]] && break
      sleep 0.5
    done
    cli -o json events >"$OUT/oom-recover-events.jsonl" 2>&1
    cli train status gpu-oom-recover >"$OUT/oom-recover-status.txt" 2>&1
    cli train logs gpu-oom-recover >"$OUT/oom-recover-job.log" 2>&1
    "$python" - "$OUT/oom-recover-job.json" "$OUT/oom-recover-events.jsonl" "$OUT/oom-recover.json" \
        >>"$OUT/summary.txt" 2>&1 <<'EOF' || recover_status=1
import json, sys
job = json.load(open(sys.argv[1]))
events = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
events = [e for e in events if e.get("job") == "gpu-oom-recover"]
ok = []
def check(name, passed, detail):
    ok.append(passed)
    print(f"{'PASS' if passed else 'FAIL'} {name}: {detail}")
check("oom recovery: final state", job["state"] == "succeeded", f"{job['state']!r} ({job['state_reason']})")
check("oom recovery: one relaunch", job["attempt"] == 2 and len(job["attempts"]) == 1,
      f"attempt {job['attempt']}, {len(job['attempts'])} earlier")
changes = job["attempts"][0]["changes"] if job["attempts"] else []
check("oom recovery: changes", "--max-anchors: 1024 -> 768" in changes, str(changes))
check("oom recovery: anchors now", job["anchors"] == 768, str(job["anchors"]))
kinds = [e["kind"] for e in events]
check("oom recovery: events", "oom_remediation" in kinds and "oom_remediation_held" in kinds, str(kinds))
figures = {"changes": changes, "first_attempt_step": job["attempts"][0]["step"] if job["attempts"] else None}
ended = [e for e in events if e["kind"] == "job_ended"]
started = [e for e in events if e["kind"] == "job_started"]
if ended and len(started) >= 2:
    figures["oom_end_to_relaunch_ms"] = started[1]["time_unix_ms"] - ended[0]["time_unix_ms"]
remediation = next((e for e in events if e["kind"] == "oom_remediation"), None)
if remediation:
    figures["gpus"] = remediation["fields"].get("gpus")
    figures["gpu_memory_peaks"] = remediation["fields"].get("gpu_memory_peaks")
json.dump(figures, open(sys.argv[3], "w"), indent=2)
print(f"figures: {json.dumps(figures)}")
sys.exit(0 if all(ok) else 1)
EOF
  else
    recover_status=1
    echo "FAIL OOM recovery: gpuctl train start failed: $(cat "$OUT/oom-recover-start.txt")" >>"$OUT/summary.txt"
  fi
fi
if ((recover_status != 0 && status == 0)); then status=1; fi

# --- provisioning: the probe sees the real driver and GPUs, and the build ------
# governor sizes a flash-attn build for the GPU present (a dry run: nothing is
# installed).
probe_status=0
cli -o json probe >"$OUT/probe.json" 2>"$OUT/probe.err"
# A venv with torch, so the ext step can check torch against the toolkit: the
# one torch is in when it is in a venv (a venv's --system-site-packages sees
# the base interpreter's packages, not its parent venv's), else a new venv
# that sees the system's. A dry run changes nothing in it.
ext_venv=$("$python" -c 'import sys; print(sys.prefix if sys.prefix != sys.base_prefix else "")' 2>/dev/null)
made_venv=""
if [[ -z $ext_venv ]]; then
  ext_venv=$(mktemp -d /tmp/gpuctl-gpu-venv.XXXXXX) made_venv=$ext_venv
  "$python" -m venv --system-site-packages "$ext_venv" >"$OUT/venv.txt" 2>&1 || true
fi
cli -o json provision node --dry-run --steps ext --ext flash-attn --venv "$ext_venv" \
  >"$OUT/provision-ext-plan.jsonl" 2>"$OUT/provision-ext-plan.err"
[[ -n $made_venv ]] && rm -rf "$made_venv"
if [[ -s $OUT/probe.json && -s $OUT/provision-ext-plan.jsonl ]]; then
  "$smi" --query-gpu=compute_cap,driver_version --format=csv,noheader >"$OUT/nvidia-smi-cc.csv" 2>&1 || true
  python3 - "$OUT/probe.json" "$OUT/nvidia-smi-cc.csv" "$OUT/provision-ext-plan.jsonl" \
      "${GPUCTL_GPU_DRY_RUN:-0}" >>"$OUT/summary.txt" 2>&1 <<'EOF' || probe_status=1
import json, sys
probe = json.load(open(sys.argv[1]))
rows = [[c.strip() for c in line.split(",")] for line in open(sys.argv[2]) if line.count(",") == 1]
plan = [json.loads(line) for line in open(sys.argv[3]) if line.strip()]
dry_run = sys.argv[4] == "1"
ok = []
def check(name, passed, detail):
    ok.append(passed)
    print(f"{'PASS' if passed else 'FAIL'} {name}: {detail}")
if dry_run:
    print(f"DRY RUN probe: {len(probe.get('gpus', []))} GPUs, archs {probe.get('gpu_archs')}, notes {probe.get('notes')}")
else:
    want_archs = sorted({r[0].replace(".", "") for r in rows})
    check("probe gpu_archs", sorted(probe.get("gpu_archs", [])) == want_archs,
          f"{probe.get('gpu_archs')} vs nvidia-smi compute_cap {want_archs}")
    module = probe.get("driver_module") or {}
    want_driver = rows[0][1] if rows else None
    check("probe driver module", module.get("version") == want_driver,
          f"{module} vs nvidia-smi driver {want_driver}")
    check("probe no driver mismatch", probe.get("driver_version_mismatch") is False,
          f"library {probe.get('driver_library_version')}")
ext = [e["step"] for e in plan if "step" in e and e["step"]["step"] == "ext" and e["step"]["phase"] == "planned"]
# The build's own command: the step first installs its build tools, with no env.
envs = [c["env"] for e in ext for c in e.get("commands", []) if "FLASH_ATTN_CUDA_ARCHS" in c.get("env", {})]
archs = envs[0].get("FLASH_ATTN_CUDA_ARCHS") if envs else None
detail = (f"FLASH_ATTN_CUDA_ARCHS={archs}, MAX_JOBS={envs[0].get('MAX_JOBS') if envs else None}; "
          f"notes: {[n for e in ext for n in e.get('notes', [])]}")
if dry_run:
    print(f"DRY RUN ext plan: {detail}")
else:
    check("ext plan archs", archs is not None and sorted(archs.split(";")) == sorted(probe.get("gpu_archs", [])), detail)
sys.exit(0 if all(ok) else 1)
EOF
else
  probe_status=1
  echo "FAIL probe/provision dry run: $(cat "$OUT/probe.err" "$OUT/provision-ext-plan.err" 2>/dev/null | head -n 5)" \
    >>"$OUT/summary.txt"
fi
if ((probe_status != 0 && status == 0)); then status=1; fi
# -------------------------------------------------------------------------------

# --- a real hang: a kernel spinning on GPU 0, no step, no output ----------------
# gpuctl calls it hung after its start budget, says what the GPU showed
# (utilisation, power), dumps its stacks, and stops it (--on-hang fail). The
# NVML fault queries (row remapping, retired pages, lost) read on a real GPU.
hang_status=0
hang_cmd=("$python" "$root/tests/gpu/hang_probe.py")
[[ -n ${GPUCTL_GPU_HANG_SCRIPT:-} ]] && hang_cmd=("$GPUCTL_GPU_HANG_SCRIPT")
if cli train start --name gpu-hang --start-timeout 20s --on-hang fail -- "${hang_cmd[@]}" \
    >"$OUT/hang-start.txt" 2>&1; then
  for _ in $(seq 120); do
    state=$(cli -o json train status gpu-hang 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
    [[ $state != running && $state != starting ]] && break
    sleep 1
  done
  cli -o json train status gpu-hang >"$OUT/hang-status.json" 2>&1
  cli -o json events >"$OUT/hang-events.jsonl" 2>&1
  cli -o json health >"$OUT/health-after-hang.json" 2>&1
  python3 - "$OUT/hang-status.json" "$OUT/hang-events.jsonl" "$OUT/health-after-hang.json" \
      >>"$OUT/summary.txt" 2>&1 <<'EOF' || hang_status=1
import json, os, sys
job = json.load(open(sys.argv[1]))
events = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
health = json.load(open(sys.argv[3]))
hung = [e for e in events if e["kind"] == "job_hung" and e.get("job") == "gpu-hang"]
ok = []
def check(name, passed, detail):
    ok.append(passed)
    print(f"{'PASS' if passed else 'FAIL'} {name}: {detail}")
check("hang detected", len(hung) == 1, f"{len(hung)} job_hung events; state {job['state']}: {job['state_reason']}")
if hung:
    f = hung[0]["fields"]
    check("hang state failed", job["state"] == "failed" and job["state_reason"].startswith("hung:"), job["state_reason"])
    files = os.listdir(f["dump_dir"]) if os.path.isdir(f["dump_dir"]) else []
    check("hang dumped", any(n.endswith(".txt") for n in files), f"{f['dump_dir']}: {files}; "
          f"processes {[(p['pid'], p['method'], p.get('top_frame')) for p in f['processes']]}")
    print(f"INFO hang gpus seen: {f['gpus']}; last progress {f['last_progress']}; {f['seconds_since_progress']} s")
fault_keys = ("row_remap_pending", "row_remap_failure", "retired_pages_pending", "lost")
for g in health.get("gpus", []):
    print(f"INFO gpu {g['index']} fault queries: " + ", ".join(f"{k}={g.get(k)}" for k in fault_keys) +
          f", drained={g.get('drained')}")
    check(f"gpu {g['index']} not drained", g.get("drained") is False, json.dumps(g.get("fault")))
sys.exit(0 if all(ok) else 1)
EOF
else
  hang_status=1
  echo "FAIL hang: gpuctl train start failed: $(cat "$OUT/hang-start.txt")" >>"$OUT/summary.txt"
fi
cli train stop gpu-hang --grace 1s >/dev/null 2>&1
if ((hang_status != 0 && status == 0)); then status=1; fi
# -------------------------------------------------------------------------------

cat "$OUT/summary.txt"
echo "outputs in $OUT"
exit $status
