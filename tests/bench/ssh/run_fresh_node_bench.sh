#!/usr/bin/env bash
# Bootstrap onto a fresh node, over SSH on loopback: a minimal Debian 12 root
# (tests/fresh_node) with tmux added once, untimed, so the figure is the
# bootstrap itself (probe, upload, start, first answer) and not apt. Each
# round boots a pristine copy. Baseline, in the same run and on the same
# node: `ssh root@node true`. Also: the size of what is uploaded (stripped)
# and the agent's idle RSS and threads on the node. Never fails on timing.
#   tests/bench/ssh/run_fresh_node_bench.sh [ROUNDS]   (default 5; root)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
build=${GPUCTL_BUILD_DIR:-$src/build}
rounds=${1:-5}
harness=$src/tests/fresh_node
gpuctl=$build/client/gpuctl
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
[ -x "$gpuctl" ] && [ -x "$build/daemon/gpuctld" ] || { echo "build gpuctl and gpuctld first" >&2; exit 2; }

work=$(mktemp -d /tmp/gpuctl-fresh-bench.XXXXXX)
pidfile=
cleanup() { [ -n "$pidfile" ] && "$harness/stop_node.sh" "$pidfile" >/dev/null 2>&1; rm -rf "$work"; }
trap cleanup EXIT
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config
mkdir -p "$HOME"
unset SSH_AUTH_SOCK
ssh-keygen -q -t ed25519 -N '' -f "$work/key"

# A bookworm root with tmux, made once and kept beside the fresh-root cache.
base=$build/fresh-roots/bookworm-tmux.tar.zst
if [ ! -f "$base" ]; then
  root=$("$harness/make_root.sh" bookworm "$build/fresh-roots" "$work/prep")
  mount --bind /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  chroot "$root" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null && apt-get clean'
  umount "$root/etc/resolv.conf" 2>/dev/null || true
  tar -C "$root" --zstd -cf "$base.part" . && mv "$base.part" "$base"
  rm -rf "$work/prep"
fi

ms() { echo $(( $(date +%s%N) / 1000000 )); }
ssh_opts=(-q -i "$work/key" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes)
port=$((23000 + $$ % 800))
ssh_t=() boot_t=() health_t=()
for r in $(seq "$rounds"); do
  root=$work/node-$r
  mkdir -p "$root" && tar -C "$root" --zstd -xf "$base"
  pidfile=$("$harness/start_node.sh" "$root" "$port" "$work/key.pub")
  "$gpuctl" node add "n$r" --host "root@127.0.0.1:$port" --identity "$work/key" >/dev/null
  t=$(ms); ssh "${ssh_opts[@]}" -p "$port" root@127.0.0.1 true; ssh_t+=($(($(ms) - t)))
  t=$(ms); "$gpuctl" --accept-new-host-key node bootstrap "n$r" >/dev/null 2>"$work/boot.log" || { cat "$work/boot.log"; exit 1; }
  boot_t+=($(($(ms) - t)))
  [ "$r" = 1 ] && sed "s/^/  round 1: /" "$work/boot.log"
  t=$(ms); "$gpuctl" --node "n$r" health >/dev/null; health_t+=($(($(ms) - t)))
  if [ "$r" = 1 ]; then
    sleep 3
    idle=$(ssh "${ssh_opts[@]}" -p "$port" root@127.0.0.1 \
      'grep -E "^(VmRSS|Threads)" /proc/$(cat /run/gpuctl/gpuctld.pid)/status | tr -s " \t" " " | tr "\n" " "')
  fi
  "$harness/stop_node.sh" "$pidfile"; pidfile=
  rm -rf "$root"
  port=$((port + 1))
done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
s=$(median "${ssh_t[@]}") b=$(median "${boot_t[@]}") h=$(median "${health_t[@]}")
size=$(stat -c %s "$build/daemon/gpuctld")
echo "fresh-node bootstrap, $rounds rounds, medians (each round a pristine Debian 12 root):"
echo "  ssh root@node true (baseline)       ${s} ms"
echo "  gpuctl node bootstrap (fresh node)  ${b} ms   ratio $(awk -v a="$b" -v b="$s" 'BEGIN {printf "%.1f", a/b}')x"
echo "  gpuctl --node health                ${h} ms   ratio $(awk -v a="$h" -v b="$s" 'BEGIN {printf "%.1f", a/b}')x"
echo "  uploaded gpuctld (stripped)         $(awk -v s="$size" 'BEGIN {printf "%.1f MiB", s/1048576}')"
echo "  agent idle on the node              $idle"
