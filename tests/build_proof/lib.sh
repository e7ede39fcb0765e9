# Shared by the real-world tests (real_nvcc_test.sh, real_torch_test.sh):
# messages, a python3 that has pip, and sources fetched through pip's index.
# The sourcing script sets `test_name` and `build` (BUILD_DIR) first.
# To stderr: they also end the $(...) of a helper below, whose exit status
# the caller's `set -e` passes on (77: ctest's skip).
. "$(dirname "${BASH_SOURCE[0]}")/../skip_policy.sh"  # skip, skip_allowed
fail() { echo "$test_name: FAIL: $*" >&2; exit 1; }
say() { echo "$test_name: $*"; }

# A python3 with pip: the system's, else a venv of it kept under
# BUILD_DIR/tools (a fresh Debian has python3-venv from install-deps.sh,
# whose venvs bring pip, but no python3-pip).
pip_python() {
  command -v python3 >/dev/null || skip "no python3"
  if python3 -m pip --version >/dev/null 2>&1; then echo python3; return; fi
  local venv=$build/tools/pip-venv
  [[ -x $venv/bin/pip ]] || python3 -m venv "$venv" >/dev/null || skip "no pip: neither python3-pip nor python3-venv"
  echo "$venv/bin/python"
}

# fetch_sdist PROJECT VERSION: the unpacked sdist's directory (fetched once
# into BUILD_DIR/_cache), or a skip when the index cannot be reached.
fetch_sdist() {
  local py rc=0 dir
  py=$(pip_python) || exit $?
  dir=$("$py" "$(dirname "${BASH_SOURCE[0]}")/fetch_sdist.py" "$1" "$2" "$build/_cache") || rc=$?
  [[ $rc == 0 ]] || { [[ $rc == 77 ]] && skip_allowed archive "$1 $2's sources could not be fetched"; fail "fetch_sdist.py exited $rc"; }
  echo "$dir"
}

# The package index pip uses, from pip's own configuration.
pip_index() {
  local py
  py=$(pip_python) || exit $?
  "$py" "$(dirname "${BASH_SOURCE[0]}")/fetch_sdist.py" --index || skip_allowed archive "cannot ask pip for its index"
}
