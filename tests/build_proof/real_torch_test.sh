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
# Then, as root (job cgroups), the ext step builds a real CUDA extension on
# that torch (tests/build_proof/proof_ext: one of flash-attn 2.8.3's kernels
# and a module) with --ext-source, as a governed build job: it imports, and
# the job's figures show its compiles governed with 0 OOM kills.
# About 7 GB is downloaded once into uv's cache under BUILD_DIR/_cache/uv.
# Exit 77 (ctest SKIP) without nvcc, Python 3.11, uv or the index, or with
# under 20 GB free.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
test_name=real_torch_test
source "$here/lib.sh"

nvcc=$(command -v nvcc || ls -d /usr/local/cuda-*/bin/nvcc 2>/dev/null | sort -V | tail -n1 || true)
[[ -n $nvcc && -x $nvcc ]] || skip_allowed gpu "no CUDA toolkit (nvcc) to match torch to"
toolkit=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1.\2/p')
[[ -n $toolkit ]] || fail "cannot read nvcc's release from: $("$nvcc" --version)"
command -v python3.11 >/dev/null || skip "no Python 3.11 for the venv"
free_kib=$(df -Pk "$build" | awk 'NR == 2 {print $4}')
((free_kib > 20 * 1024 * 1024)) || skip_allowed platform "under 20 GB free under $build for torch and its CUDA libraries"
uv=$(bash "$here/../fresh_node/get_uv.sh" "$build/tools") || exit $?
index=$(pip_index)
# pip's index may be a local plain-HTTP proxy; gpuctl refuses one unless told.
insecure=()
[[ $index == http://* ]] && insecure=(--allow-insecure-index)

work=$(mktemp -d /tmp/gpuctl-torch.XXXXXX)
agent_pid=
cleanup() {
  if [[ -n $agent_pid ]]; then
    kill "$agent_pid" 2>/dev/null || true
    wait "$agent_pid" 2>/dev/null || true
  fi
  tmux -L "gpuctl-torch-$$" kill-server 2>/dev/null || true
  bash "$here/../remove_test_cgroups.sh" "gpuctl-torch-$$" || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/state" "$build/_cache/uv"
guard=(--guard off)
[[ $EUID -eq 0 ]] && guard=(--cgroup-parent "/gpuctl-torch-$$")
# UV_DEFAULT_INDEX: the venv step installs py-spy from uv's configured index.
PATH="$(dirname "$uv"):$PATH" UV_CACHE_DIR="$build/_cache/uv" UV_DEFAULT_INDEX="$index" "$build/daemon/gpuctld" \
  --listen "unix:$work/gpuctld.sock" --state-dir "$work/state" --tmux-socket "gpuctl-torch-$$" "${guard[@]}" \
  --no-lock-memory --nvml-library /nonexistent --nvidia-smi /nonexistent --provision-root / 2>"$work/gpuctld.log" &
agent_pid=$!
for _ in $(seq 100); do [[ -S $work/gpuctld.sock ]] && break; sleep 0.1; done
[[ -S $work/gpuctld.sock ]] || { cat "$work/gpuctld.log"; fail "gpuctld did not start"; }
g() { "$build/client/gpuctl" --agent "unix:$work/gpuctld.sock" "$@"; }
venv=$work/venv

say "toolkit CUDA $toolkit ($nvcc); index from pip's configuration"
g provision node --steps venv --venv "$venv" >"$work/venv.out" 2>&1 || { cat "$work/venv.out"; fail "the venv step"; }
grep -q "^version_info = 3\.11\." "$venv/pyvenv.cfg" || fail "the venv is not on this host's Python 3.11"

matched=() mismatched=()
for version in 2.9.1 2.11.0; do
  start=$SECONDS
  code=0
  g provision node --steps torch --venv "$venv" --torch "$version" --torch-index "$index" "${insecure[@]}" >"$work/torch-$version.out" 2>&1 || code=$?
  took=$((SECONDS - start))
  # What the index served, from a real import.
  built=$("$venv/bin/python" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>"$work/import.err") \
    || { cat "$work/torch-$version.out" "$work/import.err"; fail "torch $version does not import after the step"; }
  read -r torch_version torch_cuda <<<"$built"
  [[ $torch_version == "$version"* ]] || fail "the step left torch $torch_version, not $version"
  say "torch $version: the index served $torch_version for CUDA $torch_cuda; the step exited $code in ${took} s"
  if [[ ${torch_cuda%%.*} == "${toolkit%%.*}" ]]; then
    [[ $code == 0 ]] || { cat "$work/torch-$version.out"; fail "torch $version matches the toolkit, yet the step failed"; }
    g provision node --steps torch --venv "$venv" --torch "$version" --torch-index "$index" "${insecure[@]}" >"$work/rerun.out" 2>&1 \
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

[[ $EUID -eq 0 ]] || { say "PASS (the ext step needs root for its job cgroup: not run)"; exit 0; }
# The ext step on the torch that matches: a real CUDA extension, governed.
if [[ ${mismatched[*]:-} == *"$version"* ]]; then
  g provision node --steps torch --venv "$venv" --torch "${matched[0]}" --torch-index "$index" "${insecure[@]}" >/dev/null 2>&1 \
    || fail "reinstalling torch ${matched[0]}"
fi
flash=$(fetch_sdist flash-attn 2.8.3)
cp -r "$here/proof_ext" "$work/proof_ext"
ln -s "$flash" "$work/proof_ext/flash_attn_src"
start=$SECONDS
g provision node --steps ext --ext gpuctl-proof-ext --ext-source "$work/proof_ext" --venv "$venv" \
  >"$work/ext.out" 2>&1 || { cat "$work/ext.out"; tail -n 40 "$work/state/jobs/provision-ext-gpuctl-proof-ext/output.log" 2>/dev/null; fail "the ext step"; }
took=$((SECONDS - start))
"$venv/bin/python" -c 'import gpuctl_proof_ext; assert "hdim32" in gpuctl_proof_ext.kernels()' \
  || fail "the extension the ext step built does not import"
status=$(g -o json train status provision-ext-gpuctl-proof-ext) || fail "gpuctl train status of the ext build failed"
read -r kind state oom done peak < <(python3 -c '
import json, sys
j = json.loads(sys.argv[1]); b = j.get("build") or {}
print(j["kind"], j["state"], b.get("oom_kills", -1), b.get("compiles_done", 0), b.get("peak_bytes", 0))' "$status") \
  || fail "cannot read the ext build's figures from: $status"
say "ext step: built in ${took} s as a $kind job, $state; $done compiles governed, peak $((peak >> 20)) MiB, $oom OOM kills"
[[ $kind == build && $state == succeeded ]] || fail "the ext build job: $status"
((oom == 0)) || fail "the ext build had $oom OOM kills"
((done >= 2)) || fail "the governor saw $done compiles of the extension's kernel and module"
g provision node --steps ext --ext gpuctl-proof-ext --ext-source "$work/proof_ext" --venv "$venv" >"$work/ext-rerun.out" 2>&1 \
  || fail "the ext rerun"
grep -q "ext *skipped" "$work/ext-rerun.out" || { cat "$work/ext-rerun.out"; fail "the ext rerun did not skip"; }
say "PASS"
