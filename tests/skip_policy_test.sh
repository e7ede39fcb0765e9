#!/usr/bin/env bash
# tests/skip_policy.sh, the shell tests' rule for skips: outside CI `skip`
# exits 77 (ctest: skipped); under CI=true it exits 1; `skip_allowed` exits
# 77 either way, and refuses a kind not on its list.
set -uo pipefail
policy=$(cd "$(dirname "$0")" && pwd)/skip_policy.sh
failures=0
expect() {  # WANT_EXIT WANT_TEXT CI COMMAND
  local want=$1 text=$2 ci=$3 cmd=$4 out rc
  out=$(CI=$ci test_name=probe bash -c ". '$policy'; $cmd; echo not reached" 2>&1); rc=$?
  if [[ $rc != "$want" || $out != *"$text"* ]]; then
    echo "FAIL: CI=$ci $cmd: exit $rc (want $want), said: $out"
    failures=$((failures + 1))
  fi
}
expect 77 "probe: SKIP: no tmux" "" 'skip "no tmux"'
expect 77 "probe: SKIP: no tmux" false 'skip "no tmux"'
expect 1 "CI=true" true 'skip "no tmux"'
expect 77 "probe: SKIP: [allowed: gpu] no nvcc" true 'skip_allowed gpu "no nvcc"'
expect 77 "[allowed: archive]" "" 'skip_allowed archive "cannot reach the mirror"'
expect 1 "unknown kind 'tools'" true 'skip_allowed tools "no tmux"'
((failures == 0)) && echo "skip policy: all cases hold"
exit $((failures > 0))
