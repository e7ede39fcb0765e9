#!/usr/bin/env bash
# torch_venv.sh BUILD_DIR: prints a venv with torch (from the index pip is
# configured for; no registry host is named here), made once with real uv
# under BUILD_DIR/_cache/torch-venv, with py-spy (hang dumps read Python
# stacks with it, as the venv step installs it). The wheels stay in uv's cache
# (BUILD_DIR/_cache/uv), which provision_real_torch shares. Exit 77 when uv
# or the index cannot be reached.
set -euo pipefail
build=$(cd "$1" && pwd)
test_name=torch_venv
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../build_proof/lib.sh"
venv=$build/_cache/torch-venv
torch_version=2.11.0
ready() {
  [[ -x $venv/bin/torchrun && -x $venv/bin/py-spy ]] &&
    [[ $("$venv/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null) == "$torch_version" ]]
}
if ready; then echo "$venv"; exit 0; fi
uv=$(bash "$here/../fresh_node/get_uv.sh" "$build/tools") || exit $?
index=$(pip_index) || exit $?
mkdir -p "$build/_cache/uv"
exec 9>"$build/_cache/torch-venv.lock"
flock 9
# Another caller (scripts/prefetch.sh, a parallel test) may have made it while this one waited.
if ready; then echo "$venv"; exit 0; fi
rm -rf "$venv"
export UV_CACHE_DIR=$build/_cache/uv
"$uv" venv --quiet --python "$(command -v python3)" "$venv" >&2 || skip "uv could not make a venv"
"$uv" pip install --quiet --python "$venv/bin/python" --default-index "$index" "torch==$torch_version" numpy py-spy >&2 \
  || skip_allowed archive "torch $torch_version could not be installed from the index"
echo "$venv"
