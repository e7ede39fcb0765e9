#!/usr/bin/env bash
# A reflection-only client against a real gpuctld: Python's grpcio with
# grpcio-reflection (from the package index pip is configured for), which
# knows nothing of gpuctl's protos.
#   tests/reflection/run.sh GPUCTLD CACHE_DIR
# Exit 77 (skip) when the packages cannot be installed.
set -euo pipefail
gpuctld=$1
cache=$2
here=$(cd "$(dirname "$0")" && pwd)
test_name=reflection_client
. "$here/../skip_policy.sh"  # skip, skip_allowed
venv=$cache/reflection-venv
python=${PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=$(command -v python3)

if ! "$venv/bin/python" -c 'import grpc_reflection' 2>/dev/null; then
  rm -rf "$venv"
  "$python" -m venv "$venv" || skip "cannot make a venv with $python (python3-venv?)"
  if ! "$venv/bin/pip" install -q grpcio grpcio-reflection protobuf >"$cache/reflection-pip.log" 2>&1; then
    rm -rf "$venv"
    skip_allowed archive "cannot install grpcio and grpcio-reflection: $(tail -n 1 "$cache/reflection-pip.log")"
  fi
fi

work=$(mktemp -d)
agent_pid=
cleanup() {
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
"$gpuctld" --listen "unix:$work/run/gpuctld.sock" --state-dir "$work/state" --guard off --no-lock-memory \
  --nvml-library "$work/no-nvml.so" --nvidia-smi "$work/no-nvidia-smi" 2>"$work/gpuctld.log" &
agent_pid=$!
for _ in $(seq 100); do [ -S "$work/run/gpuctld.sock" ] && break; sleep 0.1; done
[ -S "$work/run/gpuctld.sock" ] || { cat "$work/gpuctld.log"; exit 1; }
"$venv/bin/python" "$here/reflection_client.py" "unix:$work/run/gpuctld.sock"
