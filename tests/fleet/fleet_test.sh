#!/usr/bin/env bash
# fleet_test.sh BUILD_DIR: --nodes over three real nodes (network namespaces,
# each with its own sshd and a bootstrapped agent): one table with a NODE
# column, JSON lines with "node", label selection, a node whose sshd is
# stopped (its row holds the error, exit 4), a node that hangs (the per-node
# timeout), and gpuctl top --once in text and JSON. Root; exit 77 to skip.
set -euo pipefail
test_name=fleet
build=$(cd "$1" && pwd)
source "$(dirname "$0")/fleet_lib.sh"
fleet_check
trap fleet_down EXIT
fleet_up 3
say "3 nodes up in $fleet_dir"

expect_code() {  # expect_code CODE OUTFILE gpuctl-args...
  local want=$1 out=$2 rc=0
  shift 2
  fleet_gpuctl "$@" >"$out" 2>"$out.err" || rc=$?
  [[ $rc == "$want" ]] || fail "gpuctl $* exited $rc, not $want: $(cat "$out" "$out.err")"
}
has() { grep -qE -- "$2" "$1" || fail "no /$2/ in: $(cat "$1")"; }
lacks() { ! grep -qE -- "$2" "$1" || fail "/$2/ should not be in: $(cat "$1")"; }
o=$fleet_dir/out

# All reached: one table, a row per node (no GPUs here), exit 0.
expect_code 0 "$o" --nodes all health
has "$o" '^NODE +MEM FREE +PSI 10S +GPU'
for n in n1 n2 n3; do has "$o" "^$n +[0-9.]+ [KMG]iB .* - +no GPUs"; done
expect_code 0 "$o" -o json --nodes all health
[[ $(wc -l <"$o") == 3 ]] || fail "want 3 JSON lines: $(cat "$o")"
python3 - "$o" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert [l["node"] for l in lines] == ["n1", "n2", "n3"], lines
assert all(l["host"]["mem_total_bytes"] > 0 for l in lines), lines
PY

# Labels: role=even is n2 only; the fleet label all three.
expect_code 0 "$o" --nodes @role=even -o json health
[[ $(python3 -c 'import json,sys; print(",".join(json.loads(l)["node"] for l in open(sys.argv[1])))' "$o") == n2 ]] \
  || fail "@role=even selected: $(cat "$o")"
expect_code 2 "$o" --nodes @role=none health
has "$o.err" "no node has the label role=none"
expect_code 2 "$o" --nodes n1,n9 health   # an unknown name: nothing is asked
has "$o.err" "no node named 'n9'"

# A job on n1, seen through the fan-out's train list and train status.
fleet_gpuctl --node n1 train start --name sleeper -- sleep 300 >/dev/null
expect_code 0 "$o" --nodes all train list
has "$o" '^NODE +NAME +KIND +STATE'
has "$o" '^n1 +sleeper +train +running'
has "$o" '^n2 +no jobs'
expect_code 0 "$o" --nodes all train status sleeper
has "$o" '^n1 +sleeper'
has "$o" "^n2 +error: no job named 'sleeper'|^n2 +error: .*sleeper"
expect_code 0 "$o" --nodes all events
has "$o" '^n1 +[0-9T:.+-]+ job_started'
expect_code 0 "$o" -o json --nodes n1,n3 probe
python3 - "$o" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert [l["node"] for l in lines] == ["n1", "n3"], lines
assert all(l["cpus"] > 0 for l in lines), lines
PY

# top --once: the same nodes, GPUs and jobs in one screen; JSON the same.
expect_code 0 "$o" --nodes all top --once
has "$o" '^gpuctl top: 3 nodes$'
has "$o" '^NODE +JOB +STATE +STEP +LOSS +THROUGHPUT +GPU MEM +LAST EVENT'
has "$o" '^n1 +sleeper +running'
expect_code 0 "$o" -o json --nodes all top
python3 - "$o" <<'PY'
import json, sys
top = json.load(open(sys.argv[1]))
nodes = {n["node"]: n for n in top["nodes"]}
assert sorted(nodes) == ["n1", "n2", "n3"], top
assert all(n["reached"] and n["health"]["host"]["cpus"] > 0 for n in nodes.values()), top
assert [j["name"] for j in nodes["n1"]["jobs"]] == ["sleeper"], nodes["n1"]
assert nodes["n2"]["jobs"] == [], nodes["n2"]
PY

# n2's sshd stops: n2 is a row with its error, the others answer, exit 4.
fleet_sshd_stop 2
expect_code 4 "$o" --nodes all health
has "$o" '^n1 +[0-9.]+ [KMG]iB'
has "$o" '^n2 +error: .*(refused|reach|connect)'
has "$o" '^n3 +[0-9.]+ [KMG]iB'
expect_code 4 "$o" -o json --nodes all train list
python3 - "$o" <<'PY'
import json, sys
lines = {l["node"]: l for l in map(json.loads, open(sys.argv[1]))}
assert lines["n2"]["reached"] is False and lines["n2"]["error"], lines["n2"]
assert [j["name"] for j in lines["n1"]["jobs"]] == ["sleeper"], lines["n1"]
assert lines["n3"]["jobs"] == [], lines["n3"]
PY
expect_code 4 "$o" --nodes all top --once
has "$o" '^gpuctl top: 3 nodes, 1 not reached$'
expect_code 0 "$o" --nodes n1,n3 health   # the others alone: all answer

# n3 hangs (its sshd stopped with SIGSTOP: the connection is accepted but
# never answered): --node-timeout bounds it, and n1 still answers.
kill -STOP "$(cat "$fleet_dir/sshd_n3.pid")"
start=$(date +%s)
expect_code 4 "$o" --node-timeout 2s --nodes n1,n3 health
took=$(( $(date +%s) - start ))
kill -CONT "$(cat "$fleet_dir/sshd_n3.pid")"
has "$o" '^n1 +[0-9.]+ [KMG]iB'
has "$o" '^n3 +error: '
(( took <= 8 )) || fail "a hung node took ${took}s with --node-timeout 2s"
say "a hung node answered as an error after ${took}s (--node-timeout 2s)"

# Back up: everything answers again.
fleet_sshd_start 2
expect_code 0 "$o" --nodes all health
fleet_gpuctl --node n1 train stop sleeper >/dev/null
say "PASS"
