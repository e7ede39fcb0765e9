#!/usr/bin/env bash
# scripts/check-layers.sh catches what it says it does: a copy of the tree
# with one violation of each rule planted must fail, naming each planted file
# and line; the copy without them must pass.
#   bash tests/layers/check_layers_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "${1:?usage: check_layers_test.sh SOURCE_DIR}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in agents daemon client common; do cp -r "$src/$d" "$tmp/"; done
check() { bash "$src/scripts/check-layers.sh" "$tmp" >"$tmp/out" 2>&1; }
fail() { echo "FAIL: $*"; cat "$tmp/out"; exit 1; }

check || fail "the copied tree should pass before anything is planted"

plant() {  # FILE TEXT: a file holding TEXT on its line 3
  mkdir -p "$tmp/$(dirname "$1")"
  printf '// planted by check_layers_test.sh\n\n%s\n' "$2" >"$tmp/$1"
}
plant agents/train/planted_os.cc '#include <unistd.h>'
plant agents/guard/planted_clock.cc 'auto t = std::chrono::steady_clock::now();'
plant agents/health/planted_proc.cc 'const char* kPath = "/proc/meminfo";'
plant agents/guard/planted_grpc.cc 'v1::Job job;'
plant agents/train/planted_up.cc '#include "agents/provision/provisioner.h"'
plant client/planted_daemon.cc '#include "daemon/service/agent_service.h"'
plant agents/health/CMakeLists.txt 'target_link_libraries(gpuctl_health PUBLIC spdlog::spdlog_header_only)'
# A comment may name what code may not do; the allowlisted SSH seam may do it.
plant agents/train/planted_comment.cc '// no getenv here: the caller passes the value'
plant client/ssh/planted_seam.cc '#include <unistd.h>'

status=0
check || status=$?
[ "$status" = 1 ] || fail "exit $status with violations planted, want 1"
for want in "agents/train/planted_os.cc:3: os" "agents/guard/planted_clock.cc:3: os" \
            "agents/health/planted_proc.cc:3: os" "agents/guard/planted_grpc.cc:3: grpc" \
            "agents/train/planted_up.cc:3: layer" "client/planted_daemon.cc:3: layer" \
            "agents/health/CMakeLists.txt:3: spdlog"; do
  grep -qF "$want" "$tmp/out" || fail "no '$want' in the report"
done
for unwanted in planted_comment.cc planted_seam.cc; do
  if grep -qF "$unwanted" "$tmp/out"; then fail "$unwanted reported"; fi
done

# An upward link in a CMakeLists.txt.
rm -f "$tmp"/agents/*/planted_* "$tmp"/client/planted_* "$tmp"/client/ssh/planted_*
echo 'target_link_libraries(gpuctl_guard PUBLIC gpuctl_provision)' >>"$tmp/agents/guard/CMakeLists.txt"
status=0
check || status=$?
[ "$status" = 1 ] || fail "exit $status with an upward link, want 1"
grep -qE '^agents/guard/CMakeLists.txt:[0-9]+: layer: links gpuctl_provision' "$tmp/out" || fail "the upward link is not named"
echo "check-layers: every planted violation was caught"
