#!/usr/bin/env bash
# The fresh-node test: gpuctl bootstraps its agent onto minimal Debian roots
# (debootstrap --variant=minbase, nothing but openssh-server), each a "host"
# with its own sshd on loopback, and uses it from outside: node add,
# bootstrap (which must bring tmux itself), health, a job, its logs and
# status, and an agent restart. A Debian 11 root (glibc 2.31) is refused
# before anything is uploaded.
#   tests/fresh_node/fresh_node_test.sh BUILD_DIR [SUITES...]
# Exit 77 (skip) when not root or the Debian archive is unreachable.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
shift
if [ $# -gt 0 ]; then suites=("$@"); else suites=(bookworm trixie); fi
source "$here/node_test_lib.sh"

port_base=$((22000 + $$ % 800))

boot_root() {  # SUITE INDEX -> sets root, pidfile, port
  local suite=$1 index=$2 code=0
  root=$("$here/make_root.sh" "$suite" "$build/fresh-roots" "$work/$suite") || code=$?
  [ $code = 0 ] || { [ $code = 77 ] && echo "SKIP: no $suite root (see above)" >&2; exit $code; }
  port=$((port_base + index))
  pidfile=$("$here/start_node.sh" "$root" "$port" "$work/key.pub")
  pidfiles+=("$pidfile")
  "$gpuctl" node add "fresh-$suite" --host "root@127.0.0.1:$port" --identity "$work/key" >/dev/null
}

index=0
for suite in "${suites[@]}"; do
  index=$((index + 1))
  step "$suite: a fresh root"
  boot_root "$suite" "$index"
  node=fresh-$suite
  [ ! -e "$root/usr/bin/tmux" ] || fail "$suite root already has tmux"
  [ ! -e "$root/usr/local/bin/gpuctld" ] || fail "$suite root already has gpuctld"

  step "$suite: bootstrap"
  g --accept-new-host-key node bootstrap "$node" --timeout 60 || fail "bootstrap on $suite"
  [ -x "$root/usr/bin/tmux" ] || fail "bootstrap did not install tmux on $suite"
  g --node "$node" -o json health || fail "health on $suite"
  echo "$out" | grep -q '"mem_total_bytes"' || fail "health JSON on $suite"

  step "$suite: a job"
  g --node "$node" train start --name hello -- sh -c 'for i in 1 2 3; do echo "step $i loss 0.$i"; sleep 0.3; done' \
    || fail "train start on $suite"
  g --node "$node" train logs -f hello || fail "train logs -f on $suite"
  echo "$out" | grep -q "step 3 loss 0.3" || fail "the job's log on $suite"
  g --node "$node" -o json train status hello || fail "train status on $suite"
  echo "$out" | grep -q '"state": *"succeeded"' || fail "job state on $suite"

  step "$suite: the agent restarted (a job running across it)"
  g --node "$node" train start --name across -- sh -c 'sleep 3; echo done-across' || fail "second job on $suite"
  # Over SSH: the node's /run is its own, and its pids are its PID namespace's.
  ssh -q -i "$work/key" -p "$port" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes \
    root@127.0.0.1 'p=$(cat /run/gpuctl/gpuctld.pid); kill $p; for i in $(seq 50); do kill -0 $p 2>/dev/null || exit 0; sleep 0.1; done; exit 1' \
    || fail "the agent did not stop on $suite"
  g node bootstrap "$node" --timeout 60 || fail "bootstrap after the agent stopped on $suite"
  echo "$out" | grep -q "started" || fail "the agent was not restarted on $suite"
  g --node "$node" train logs -f across || fail "logs across the restart on $suite"
  echo "$out" | grep -q done-across || fail "job across the restart on $suite"
  g --node "$node" -o json train status across || fail "status after the restart on $suite"
  echo "$out" | grep -q '"state": *"succeeded"' || fail "job state after the restart on $suite"

  step "$suite: bootstrap again is a no-op"
  g node bootstrap "$node" || fail "second bootstrap on $suite"
  echo "$out" | grep -q "already running" || fail "second bootstrap was not a no-op on $suite"

  step "$suite: a gpuctld of another build serving the socket is named and replaced"
  # Another build: the same program with a byte appended (another SHA-256).
  cp "$build/daemon/gpuctld" "$work/gpuctld-other" && printf x >> "$work/gpuctld-other"
  other=$(sha256sum < "$work/gpuctld-other" | cut -c1-12)
  g node bootstrap "$node" --gpuctld "$work/gpuctld-other" || fail "bootstrap of another build on $suite"
  g -o json node bootstrap "$node" || fail "bootstrap back to this build on $suite"
  echo "$out" | grep -q "\"replaced_build\":\"$other\"" || fail "the other build was not named as replaced"
  g --node "$node" health >/dev/null || fail "health after the replacement on $suite"
done

step "bullseye: glibc 2.31 is refused before anything is uploaded"
index=$((index + 1))
boot_root bullseye "$index"
if g --accept-new-host-key node bootstrap fresh-bullseye; then fail "bootstrap onto Debian 11 succeeded"; fi
echo "$out" | grep -q "needs glibc 2.34 or newer and the node has glibc 2.31" || fail "the refusal does not name both glibcs"
[ ! -e "$root/usr/local/bin/gpuctld" ] || fail "gpuctld was uploaded to the Debian 11 root"
echo "PASS"
