#!/usr/bin/env bash
# Provisioning a fresh Debian 12 host, for real where this machine can: a
# debootstrap'd bookworm root (minbase, openssh-server, python3) booted as a
# node (tests/fresh_node/start_node.sh) and provisioned from outside.
#   1. A dry run of every step, the agent's probe reading that root: the
#      driver plan a fresh Debian 12 host gets, in order (curl, NVIDIA's
#      keyring, contrib, apt-get update, the running kernel's headers, the
#      580 pinning package, nvidia-open), CUDA 13.1, a venv on the system's
#      Python 3.11 with no download, torch from cu130. Nothing is changed.
#   2. The venv step for real: real uv makes the venv on the root's own
#      python3 (--python-preference only-system: no network), readable by
#      every user; a rerun skips it.
#   tests/fresh_node/provision_root_test.sh BUILD_DIR
# Exit 77 (skip) when not root, or the Debian archive or pip's index cannot
# be reached (the root and uv are made once and cached under BUILD_DIR).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
source "$here/node_test_lib.sh"

step "a fresh Debian 12 root with python3, and uv"
code=0
root=$(GPUCTL_ROOT_INCLUDE=python3 "$here/make_root.sh" bookworm "$build/fresh-roots" "$work/bookworm") || code=$?
[ $code = 0 ] || exit $code
uv=$("$here/get_uv.sh" "$build/tools") || exit $?
install -m 0755 "$uv" "$root/usr/local/bin/uv"
port=$((23000 + $$ % 800))
pidfile=$("$here/start_node.sh" "$root" "$port" "$work/key.pub")
pidfiles+=("$pidfile")
"$gpuctl" node add fresh-provision --host "root@127.0.0.1:$port" --identity "$work/key" >/dev/null
g --accept-new-host-key node bootstrap fresh-provision --timeout 60 || fail "bootstrap"

# The node shares this machine's kernel (and its Secure Boot state).
flags=()
sb=$(ls /sys/firmware/efi/efivars/SecureBoot-* 2>/dev/null | head -n1 || true)
if [ -n "$sb" ] && [ "$(od -An -tu1 -j4 -N1 "$sb" | tr -d ' ')" = 1 ]; then flags+=(--secure-boot-enrolled); fi

step "dry run: the plan for a fresh Debian 12 host"
g -o json provision node fresh-provision --dry-run "${flags[@]}" || fail "dry run"
# One line per planned command, "STEP: ARGV...", in plan order (a dry run
# shows a command once: the second apt-get update is not repeated).
plan=$(echo "$out" | python3 -c '
import json, sys
for line in sys.stdin:
    if not line.startswith("{"):
        continue  # bootstrap progress on stderr
    event = json.loads(line)
    step = event.get("step")
    if step and step.get("phase") == "planned":
        for command in step.get("commands", []):
            print(step["step"] + ": " + " ".join(command["argv"]))
')
echo "$plan"
release=$(uname -r)
expected=(
  "driver: apt-get update"
  "driver: apt-get install -y curl ca-certificates"
  "driver: curl -fsSL --retry 3 -o /var/lib/gpuctl/provision/cuda-keyring_1.1-1_all.deb https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb"
  "driver: dpkg -i /var/lib/gpuctl/provision/cuda-keyring_1.1-1_all.deb"
  "driver: write /etc/apt/sources.list.d/gpuctl-contrib.list"
  "driver: apt-get install -y linux-headers-$release"
  "driver: apt-get install -y nvidia-driver-pinning-580"
  "driver: apt-get install -y nvidia-open"
  "cuda: apt-get install -y cuda-toolkit-13-1"
  "venv: uv venv /opt/gpuctl/venv --python 3.11 --python-preference only-system"
  "torch: uv pip install --python /opt/gpuctl/venv/bin/python torch==2.10.0 --index-url https://download.pytorch.org/whl/cu130"
)
last=-1
for line in "${expected[@]}"; do
  at=$(echo "$plan" | grep -nxF -- "$line" | head -n1 | cut -d: -f1 || true)
  [ -n "$at" ] || fail "not planned: $line"
  [ "$at" -gt "$last" ] || fail "out of order: $line"
  last=$at
done
[ ! -e "$root/etc/apt/sources.list.d/gpuctl-contrib.list" ] || fail "the dry run wrote the contrib list"
[ ! -e "$root/opt/gpuctl/venv" ] || fail "the dry run made the venv"

step "the venv for real: uv on the root's own python3, no download"
g provision node fresh-provision --steps venv || fail "venv step"
[ -x "$root/opt/gpuctl/venv/bin/python" ] || fail "no venv python"
grep -q "^version_info = 3\.11\." "$root/opt/gpuctl/venv/pyvenv.cfg" || fail "the venv is not on Debian 12's Python 3.11"
[ ! -e "$root/opt/gpuctl/python" ] || fail "uv downloaded a Python though the system's fits"
# Readable by the users who run jobs, not only root.
[ "$(stat -c %a "$root/opt/gpuctl/venv")" = 755 ] || fail "the venv is not 0755"
ssh -q -i "$work/key" -p "$port" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes \
  root@127.0.0.1 'setpriv --reuid=65534 --regid=65534 --clear-groups /opt/gpuctl/venv/bin/python -c "import sys; print(sys.prefix)"' \
  | grep -qx /opt/gpuctl/venv || fail "nobody cannot run the venv's python"
g provision node fresh-provision --steps venv || fail "venv rerun"
echo "$out" | grep -q "venv .*skipped" || fail "the rerun did not skip the venv"
echo "PASS"
