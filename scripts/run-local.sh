#!/usr/bin/env bash
# The main job on this machine: install, build, start a local gpuctld (or use
# the one already running), show the host's health, launch the example
# training job in tmux, follow its log, and show its status.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Only what runs here: the agent and the client (no tests, no benchmarks).
GPUCTL_TARGETS="gpuctld gpuctl" bash scripts/build.sh -DGPUCTL_BUILD_TESTS=OFF
gpuctl=build/client/gpuctl
socket=${GPUCTL_SOCKET:-/run/gpuctl/gpuctld.sock}
export GPUCTL_AGENT="unix:$socket"

if "$gpuctl" health >/dev/null 2>&1; then
  echo "== using the gpuctld already serving $GPUCTL_AGENT"
else
  mkdir -p build/demo
  echo "== starting gpuctld on $GPUCTL_AGENT (log: build/demo/gpuctld.log)"
  setsid build/daemon/gpuctld --listen "$GPUCTL_AGENT" >build/demo/gpuctld.log 2>&1 < /dev/null &
  echo $! > build/demo/gpuctld.pid
  for _ in $(seq 1 100); do
    "$gpuctl" health >/dev/null 2>&1 && break
    sleep 0.1
  done
fi

echo "== gpuctl health"
"$gpuctl" health
echo
echo "== gpuctl -o json health"
"$gpuctl" -o json health
echo
echo "== gpuctl health --watch --interval 500ms --count 2"
"$gpuctl" health --watch --interval 500ms --count 2
echo

job=toy-$(date +%H%M%S)
echo "== gpuctl train start --name $job --anchors 768 --alloc-conf expandable_segments:True -- python3 examples/train/toy_train.py"
"$gpuctl" train start --name "$job" --anchors 768 --alloc-conf expandable_segments:True \
  -- python3 "$PWD/examples/train/toy_train.py" --steps 30 --max-anchors 1024
echo
echo "== gpuctl train logs -f $job"
"$gpuctl" train logs -f "$job"
echo
echo "== gpuctl train status $job"
"$gpuctl" train status "$job"
echo
echo "== gpuctl -o json train status $job"
"$gpuctl" -o json train status "$job"
echo
echo "== gpuctl events (what the agent saw: job start and end, guard warnings)"
"$gpuctl" events
echo
echo "== gpuctl probe (what provisioning would start from)"
"$gpuctl" probe
echo
echo "== gpuctl provision node --dry-run (the plan and its exact commands; nothing is changed)"
"$gpuctl" provision node --dry-run || true
echo
if [ -f build/demo/gpuctld.pid ]; then
  echo "gpuctld is left running (pid $(cat build/demo/gpuctld.pid)); stop it with: kill $(cat build/demo/gpuctld.pid)"
fi
