#!/usr/bin/env bash
# prefetch.sh BUILD_DIR: fills the caches the slow tests would otherwise fill
# themselves, while the compiler has the CPUs. scripts/test.sh runs it in the
# background during the build phase, so the downloads (about 7 GB of torch
# wheels, four debootstrap roots, flash-attn's sources) wait on the network
# instead of holding up the tests phase.
#
# Each cache is the one its test uses, made by the test's own script, so a
# hit is exact and a miss here only means the test fills it later. A failure
# is reported and the next cache is tried: nothing here can fail the run.
set -uo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
mkdir -p "$1"
build=$(cd "$1" && pwd)
tests=$(cd "$(dirname "$0")/../tests" && pwd)
failed=0

fill() {  # NAME COMMAND...: runs one fill and reports how it went
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" >/dev/null || rc=$?
  echo "prefetch: $name: exit $rc after $((SECONDS - start)) s"
  ((rc == 0)) || failed=$((failed + 1))
}

# The roots first: fresh_node, the costliest test that is not run alone,
# starts first in the tests phase (its COST) and boots them.
for suite in bookworm trixie bullseye; do
  fill "$suite root" bash "$tests/fresh_node/make_root.sh" "$suite" "$build/fresh-roots"
done
fill "bookworm root with python3" env GPUCTL_ROOT_INCLUDE=python3 bash "$tests/fresh_node/make_root.sh" bookworm "$build/fresh-roots"
# Then the torch wheels, the largest download.
fill "torch 2.11.0 venv" bash "$tests/multinode/torch_venv.sh" "$build"
# provision_real_torch also installs torch 2.9.1 (the CUDA mismatch): its
# wheels go into the same uv cache through a venv that is then dropped.
fill "torch 2.9.1 wheels" bash -c '
  build=$1 tests=$2 test_name=prefetch
  source "$tests/build_proof/lib.sh"
  command -v python3.11 >/dev/null || exit 0
  uv=$(bash "$tests/fresh_node/get_uv.sh" "$build/tools") && index=$(pip_index) || exit 1
  venv=$(mktemp -d /tmp/gpuctl-prefetch.XXXXXX)
  trap "rm -rf \"$venv\"" EXIT
  UV_CACHE_DIR=$build/_cache/uv "$uv" venv --quiet --python python3.11 "$venv/v" &&
    UV_CACHE_DIR=$build/_cache/uv "$uv" pip install --quiet --python "$venv/v/bin/python" --default-index "$index" torch==2.9.1
' _ "$build" "$tests"
fill "flash-attn 2.8.3 sources" bash -c '
  build=$1 tests=$2 test_name=prefetch
  source "$tests/build_proof/lib.sh"
  fetch_sdist flash-attn 2.8.3' _ "$build" "$tests"
echo "prefetch: done, $failed failed"
