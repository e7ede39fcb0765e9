#!/usr/bin/env bash
# Provisioning a fresh Debian 12 host, for real where this machine can: a
# debootstrap'd bookworm root (minbase, openssh-server, python3) booted as a
# node (tests/fresh_node/start_node.sh) and provisioned from outside.
#   1. A dry run of every step, the agent's probe reading that root: the
#      driver plan a fresh Debian 12 host gets, in order (curl, NVIDIA's
#      keyring, contrib, apt-get update, the running kernel's headers, the
#      580 pinning package, nvidia-open), CUDA 13.1, a venv on the system's
#      Python 3.11 with no download and py-spy in it, torch from cu130.
#      Nothing is changed.
#   2. The venv step for real: real uv makes the venv on the root's own
#      python3 (--python-preference only-system: no Python download),
#      readable by every user, and installs py-spy from the index pip uses
#      (the root's /etc/uv/uv.toml names it, as a site would); a rerun skips it.
#   tests/fresh_node/provision_root_test.sh BUILD_DIR
# Exit 77 (skip) when not root, or the Debian archive or pip's index cannot
# be reached (the root and uv are made once and cached under BUILD_DIR).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
test_name=provision_root_test
source "$here/../build_proof/lib.sh"  # pip_index
# node_test_lib.sh gives this script a scratch HOME; pip's user
# configuration (its index) is in the real one.
real_home=$HOME real_xdg_config=${XDG_CONFIG_HOME:-}
source "$here/node_test_lib.sh"

step "a fresh Debian 12 root with python3, and uv"
code=0
root=$(GPUCTL_ROOT_INCLUDE=python3 "$here/make_root.sh" bookworm "$build/fresh-roots" "$work/bookworm") || code=$?
[ $code = 0 ] || exit $code
uv=$("$here/get_uv.sh" "$build/tools") || exit $?
install -m 0755 "$uv" "$root/usr/local/bin/uv"
# uv reads no pip configuration: point the node's uv at pip's index, as a
# site does, for the py-spy the venv step installs; and at pip's own CA
# bundle where pip has one (a proxy's CA), through the node's system store
# (native-tls: the name every uv since 0.1.18 reads; 0.11 added system-certs).
index=$(HOME=$real_home XDG_CONFIG_HOME=$real_xdg_config pip_index) || exit $?
pip_cert=${PIP_CERT:-$(HOME=$real_home XDG_CONFIG_HOME=$real_xdg_config "$(pip_python)" -m pip config get global.cert 2>/dev/null || true)}
mkdir -p "$root/etc/uv"
{
  if [[ -n $pip_cert && -f $pip_cert ]]; then
    mkdir -p "$root/etc/ssl/certs"
    cp "$pip_cert" "$root/etc/ssl/certs/ca-certificates.crt"
    echo "native-tls = true"  # a top-level key: before the [[index]] table
  fi
  printf '[[index]]\nurl = "%s"\ndefault = true\n' "$index"
} >"$root/etc/uv/uv.toml"
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
  "venv: uv pip install --python /opt/gpuctl/venv/bin/python py-spy"
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

step "the venv for real: uv on the root's own python3, no download; py-spy from pip's index"
if ! g provision node fresh-provision --steps venv; then
  # The index out of the node's reach is the archive's skip; anything else fails.
  if echo "$out" | grep -q "uv pip install .* py-spy" && echo "$out" | grep -q "Failed to fetch"; then
    skip_allowed archive "the node could not fetch py-spy from $index"
  fi
  fail "venv step"
fi
[ -x "$root/opt/gpuctl/venv/bin/python" ] || fail "no venv python"
# The step's own check ran it (`py-spy --version`); hang dumps look here.
[ -x "$root/opt/gpuctl/venv/bin/py-spy" ] || fail "no py-spy in the venv"
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
