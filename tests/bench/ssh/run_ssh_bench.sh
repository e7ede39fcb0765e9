#!/usr/bin/env bash
# Bootstrap over SSH on loopback: the time to put an agent on a fresh node
# (upload, start, first answer), the time of a no-op re-bootstrap (target
# <= 2 s), a no-op re-provision of the node (`gpuctl provision node NAME
# --steps venv` with the venv in place: SSH, the bootstrap check, the probe
# and the step's check; target <= 2 s), and `gpuctl --node NAME health`, each
# against a baseline measured
# in the same run: a plain OpenSSH round trip (`ssh -i KEY HOST true`).
# Prints figures and ratios; never fails on timing. Needs /usr/sbin/sshd
# and root (it runs a private sshd on a free 127.0.0.1 port, keys and
# config in a temp dir, and HOME there too: the real ~/.ssh is untouched).
#
#   tests/bench/ssh/run_ssh_bench.sh [ROUNDS]     (default 5)
#   GPUCTL_BUILD_DIR=DIR  build directory (default: build; the build is not
#                         run here: flock /tmp/gpuctl-build.lock ninja ... gpuctl gpuctld)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
build=${GPUCTL_BUILD_DIR:-$root/build}
rounds=${1:-5}
gpuctl=$build/client/gpuctl
[[ -x $gpuctl && -x $build/daemon/gpuctld ]] || { echo "build gpuctl and gpuctld first" >&2; exit 2; }
[[ -x /usr/sbin/sshd ]] || { echo "skipped: /usr/sbin/sshd is missing" >&2; exit 0; }

work=$(mktemp -d /tmp/gpuctl-ssh-bench-XXXXXX)
sshd_pid=""
cleanup() {
  for pidfile in "$work"/prefix*/run/gpuctld.pid; do
    [[ -f $pidfile ]] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  [[ -n $sshd_pid ]] && kill "$sshd_pid" 2>/dev/null || true
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ssh-keygen -q -t ed25519 -N '' -f "$work/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$work/user_key"
cp "$work/user_key.pub" "$work/authorized_keys"
mkdir -p /run/sshd "$work/home/.ssh"
chmod 700 "$work/home/.ssh"
cat > "$work/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_key
AuthorizedKeysFile $work/authorized_keys
PidFile $work/sshd.pid
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
AllowStreamLocalForwarding yes
Subsystem sftp internal-sftp
CONF
/usr/sbin/sshd -D -e -f "$work/sshd_config" 2>"$work/sshd.log" &
sshd_pid=$!
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done

export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config
unset SSH_AUTH_SOCK
echo '{"guard": false, "lock_memory": false, "nvml_library": "/nonexistent.so", "nvidia_smi": "/nonexistent"}' \
  > "$work/agent.json"

ms() {  # runs "$@" quietly, prints its wall time in ms; fails loudly
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>"$work/last.err" || { echo "failed: $* ($(cat "$work/last.err"))" >&2; exit 1; }
  end=$(date +%s%N)
  echo $(((end - start) / 1000000))
}
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a / b}'; }

ssh_opts=(-o UserKnownHostsFile="$work/home/.ssh/known_hosts" -o StrictHostKeyChecking=accept-new
          -o GlobalKnownHostsFile=/dev/null -o BatchMode=yes -i "$work/user_key" -p "$port")
ssh "${ssh_opts[@]}" root@127.0.0.1 true  # records the host key for both clients

# A venv already in place: the venv step's check finds it done. Its py-spy
# is a stub that answers `--version`, all the check asks (timed here is the
# check, not py-spy).
python3 -m venv --without-pip "$work/venv"
printf '#!/bin/sh\necho "py-spy 0.4.3"\n' >"$work/venv/bin/py-spy"
chmod +x "$work/venv/bin/py-spy"

baseline=() first=() noop=() provision=() health=()
for i in $(seq "$rounds"); do
  baseline+=("$(ms ssh "${ssh_opts[@]}" root@127.0.0.1 true)")
  "$gpuctl" node add "n$i" --host "root@127.0.0.1:$port" --identity "$work/user_key" >/dev/null
  bootstrap=("$gpuctl" node bootstrap "n$i" --prefix "$work/prefix$i" --agent-config "$work/agent.json")
  first+=("$(ms "${bootstrap[@]}")")
  noop+=("$(ms "${bootstrap[@]}")")
  provision+=("$(ms "$gpuctl" provision node "n$i" --steps venv --venv "$work/venv")")
  health+=("$(ms "$gpuctl" --node "n$i" health)")
done

b=$(median "${baseline[@]}")
f=$(median "${first[@]}")
n=$(median "${noop[@]}")
h=$(median "${health[@]}")
p=$(median "${provision[@]}")
size=$(du -m "$build/daemon/gpuctld" | cut -f1)
echo "SSH bootstrap on loopback, median of $rounds (gpuctld ${size} MiB)"
printf '  %-38s %6s ms\n' "baseline: ssh -i KEY root@127.0.0.1 true" "$b"
printf '  %-38s %6s ms  (%sx baseline)\n' "first bootstrap (upload, start, answer)" "$f" "$(ratio "$f" "$b")"
printf '  %-38s %6s ms  (%sx baseline)\n' "no-op re-bootstrap" "$n" "$(ratio "$n" "$b")"
printf '  %-38s %6s ms  (%sx baseline)\n' "no-op provision node NAME (venv done)" "$p" "$(ratio "$p" "$b")"
printf '  %-38s %6s ms  (%sx baseline)\n' "gpuctl --node NAME health" "$h" "$(ratio "$h" "$b")"
echo "  no-op targets <= 2000 ms met: bootstrap $([[ $n -le 2000 ]] && echo yes || echo no)," \
  "provision $([[ $p -le 2000 ]] && echo yes || echo no)"
