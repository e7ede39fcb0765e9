#!/usr/bin/env bash
# No-op re-provision: how long `gpuctl provision node` takes on a host where
# every step is already done (target <= 2 s), against two baselines measured
# in the same run: a `gpuctl health` round trip (client start + one RPC), and
# the steps' check commands run directly from this shell (what the checks
# cost without the agent). The stand-ins (tests/fakes/bin) play apt, dpkg, uv
# and the venv's python, so this measures gpuctl's own overhead, not apt's.
# Prints figures and "target met: yes/no"; never fails on timing.
#
#   tests/bench/run_provision_noop_bench.sh [RUNS]     (default 10)
#   GPUCTL_BUILD_DIR=DIR  build directory (default: build)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

# A fresh Ubuntu 24.04 host (no module loaded yet) that has curl.
mkdir -p "$work/root/etc/ssl/certs" "$work/root/usr/bin" "$work/standin"
printf 'ID=ubuntu\nVERSION_ID="24.04"\n' >"$work/root/etc/os-release"
touch "$work/root/usr/bin/curl" "$work/root/etc/ssl/certs/ca-certificates.crt"
export PATH="$root/tests/fakes/bin:$PATH" GPUCTL_STANDIN_STATE="$work/standin"
venv="$work/venv"

bench_start_agent --provision-root "$work/root"
gpuctl=("$build/client/gpuctl" --agent "unix:$work/a.sock")

"${gpuctl[@]}" provision node --venv "$venv" >"$work/first.txt" || { cat "$work/first.txt"; exit 1; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# median_ms CMD...: the median wall time of `runs` runs, in ms.
median_ms() {
  local times=() start
  for _ in $(seq "$runs"); do
    start=$(now_ms)
    "$@" >/dev/null 2>&1
    times+=($(($(now_ms) - start)))
  done
  median "${times[@]}"
}

noop() {
  "${gpuctl[@]}" -o json provision node --venv "$venv" | tail -1 | grep -q '"ok":true'
}
checks_direct() {
  local f='-f=${Package} ${Status} ${Version}\n'
  dpkg-query -W "$f" nvidia-open cuda-keyring; apt-mark showhold
  dpkg-query -W "$f" cuda-toolkit-13-1 cuda-keyring
  "$venv/bin/python" --version; "$venv/bin/py-spy" --version
  dpkg-query -W "$f" 'cuda-toolkit-[0-9]*'
  "$venv/bin/python" -c 'import torch; print(torch.__version__, torch.version.cuda)'
}

noop || { echo "the rerun was not a clean no-op"; exit 1; }
noop_ms=$(median_ms noop)
health_ms=$(median_ms "${gpuctl[@]}" health)
direct_ms=$(median_ms checks_direct)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }'; }

echo "no-op re-provision (driver, cuda, venv, torch; median of $runs): ${noop_ms} ms"
echo "baseline gpuctl health round trip:                        ${health_ms} ms  (ratio $(ratio "$noop_ms" "$health_ms"))"
echo "baseline the checks' commands run directly:               ${direct_ms} ms  (ratio $(ratio "$noop_ms" "$direct_ms"))"
echo "target <= 2000 ms met: $([[ $noop_ms -le 2000 ]] && echo yes || echo no)"
