#!/usr/bin/env bash
# real_torch_test.sh BUILD_DIR: gpuctl's venv and torch steps for real, on
# this host: real uv, the package index pip uses given as --torch-index (the
# mirror or proxy form most sites use), this host's Python 3.11 and its CUDA
# toolkit (nvcc). Two torch versions from that index:
#   2.9.1, which the index serves built for CUDA 12.8, and
#   2.11.0, built for CUDA 13.0.
# The one whose CUDA major differs from the local toolkit's is the incident's
# mismatch, for real: the torch step installs it, imports it and fails,
# naming both majors (exit 1). The other imports and is done; a rerun skips it.
# About 7 GB is downloaded once into uv's cache under BUILD_DIR/_cache/uv.
# Exit 77 (ctest SKIP) without nvcc, Python 3.11, uv or the index, or with
# under 20 GB free.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "real_torch_test: SKIP: $*"; exit 77; }
fail() { echo "real_torch_test: FAIL: $*"; exit 1; }
say() { echo "real_torch_test: $*"; }

nvcc=$(command -v nvcc || ls -d /usr/local/cuda-*/bin/nvcc 2>/dev/null | sort -V | tail -n1 || true)
[[ -n $nvcc && -x $nvcc ]] || skip "no CUDA toolkit (nvcc) to match torch to"
toolkit=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1.\2/p')
[[ -n $toolkit ]] || fail "cannot read nvcc's release from: $("$nvcc" --version)"
command -v python3.11 >/dev/null || skip "no Python 3.11 for the venv"
free_kib=$(df -Pk "$build" | awk 'NR == 2 {print $4}')
((free_kib > 20 * 1024 * 1024)) || skip "under 20 GB free under $build for torch and its CUDA libraries"
uv=$(bash "$here/../fresh_node/get_uv.sh" "$build/tools") || exit $?
index=$(python3 -c '
import os, subprocess, sys
url = os.environ.get("PIP_INDEX_URL")
if not url:
    out = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"], capture_output=True, text=True)
    url = out.stdout.strip() if out.returncode == 0 else ""
if not url:
    from pip._internal.models.index import PyPI
    url = PyPI.simple_url
print(url)' 2>/dev/null) || skip "cannot ask pip for its index"

work=$(mktemp -d /tmp/gpuctl-torch.XXXXXX)
agent_pid=
cleanup() {
  [[ -n $agent_pid ]] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/state" "$build/_cache/uv"
PATH="$(dirname "$uv"):$PATH" UV_CACHE_DIR="$build/_cache/uv" "$build/daemon/gpuctld" \
  --listen "unix:$work/gpuctld.sock" --state-dir "$work/state" --tmux-socket "gpuctl-torch-$$" --guard off \
  --no-lock-memory --nvml-library /nonexistent --nvidia-smi /nonexistent --provision-root / 2>"$work/gpuctld.log" &
agent_pid=$!
for _ in $(seq 100); do [[ -S $work/gpuctld.sock ]] && break; sleep 0.1; done
g() { "$build/client/gpuctl" --agent "unix:$work/gpuctld.sock" "$@"; }
venv=$work/venv

say "toolkit CUDA $toolkit ($nvcc); index from pip's configuration"
g provision node --steps venv --venv "$venv" >"$work/venv.out" 2>&1 || { cat "$work/venv.out"; fail "the venv step"; }
grep -q "^version_info = 3\.11\." "$venv/pyvenv.cfg" || fail "the venv is not on this host's Python 3.11"

matched=() mismatched=()
for version in 2.9.1 2.11.0; do
  start=$SECONDS
  code=0
  g provision node --steps torch --venv "$venv" --torch "$version" --torch-index "$index" >"$work/torch-$version.out" 2>&1 || code=$?
  took=$((SECONDS - start))
  # What the index served, from a real import.
  built=$("$venv/bin/python" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>"$work/import.err") \
    || { cat "$work/torch-$version.out" "$work/import.err"; fail "torch $version does not import after the step"; }
  read -r torch_version torch_cuda <<<"$built"
  [[ $torch_version == "$version"* ]] || fail "the step left torch $torch_version, not $version"
  say "torch $version: the index served $torch_version for CUDA $torch_cuda; the step exited $code in ${took} s"
  if [[ ${torch_cuda%%.*} == "${toolkit%%.*}" ]]; then
    [[ $code == 0 ]] || { cat "$work/torch-$version.out"; fail "torch $version matches the toolkit, yet the step failed"; }
    g provision node --steps torch --venv "$venv" --torch "$version" --torch-index "$index" >"$work/rerun.out" 2>&1 \
      || { cat "$work/rerun.out"; fail "the rerun of torch $version"; }
    grep -q "torch *skipped" "$work/rerun.out" || { cat "$work/rerun.out"; fail "the rerun did not skip the torch step"; }
    matched+=("$version")
  else
    [[ $code == 1 ]] || { cat "$work/torch-$version.out"; fail "torch $version for CUDA $torch_cuda with toolkit $toolkit: exit $code, not 1"; }
    grep -q "CUDA $torch_cuda" "$work/torch-$version.out" && grep -q "$toolkit" "$work/torch-$version.out" \
      || { cat "$work/torch-$version.out"; fail "the mismatch message does not name both CUDA versions"; }
    say "the incident's mismatch, for real: $(grep -m1 "CUDA $torch_cuda" "$work/torch-$version.out")"
    mismatched+=("$version")
  fi
done
say "matched the toolkit: ${matched[*]:-none}; mismatched: ${mismatched[*]:-none}"
((${#matched[@]} > 0)) || fail "no torch from the index matched CUDA $toolkit"
say "PASS"
