#!/usr/bin/env bash
# get_uv.sh CACHE_DIR: prints the path of a uv binary, fetched once into
# CACHE_DIR with pip (so from the index pip is configured for: no registry
# host is named here) and kept there. uv's wheel carries one static-ish
# program (glibc 2.17 and later), which runs in any Debian root.
# Exit 77 (ctest SKIP) when pip or its index cannot be reached.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 CACHE_DIR" >&2; exit 2; }
cache=$1
test_name=get_uv.sh
. "$(dirname "${BASH_SOURCE[0]}")/../skip_policy.sh"  # skip, skip_allowed
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
if [[ -x $cache/uv ]]; then echo "$cache/uv"; exit 0; fi

exec 9>"$cache/uv.lock"
flock 9
if [[ ! -x $cache/uv ]]; then
  # Debian's python3 has no pip without python3-pip; a venv brings its own.
  command -v python3 >/dev/null || skip "no python3 to run pip"
  if python3 -m pip --version >/dev/null 2>&1; then
    pip=(python3 -m pip)
  else
    [[ -x $cache/pip-venv/bin/pip ]] || python3 -m venv "$cache/pip-venv" >/dev/null \
      || skip "no pip: neither python3-pip nor python3-venv"
    pip=("$cache/pip-venv/bin/pip")
  fi
  rm -rf "$cache/uv-wheel"
  timeout 300 "${pip[@]}" download --quiet --no-deps --only-binary=:all: -d "$cache/uv-wheel" uv \
    || skip_allowed archive "pip could not download uv"
  wheel=$(ls "$cache"/uv-wheel/uv-*.whl | head -n1)
  # The program is the wheel's only script: uv-VERSION.data/scripts/uv.
  python3 - "$wheel" "$cache/uv.part" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    name = next(n for n in wheel.namelist() if n.endswith(".data/scripts/uv"))
    with wheel.open(name) as src, open(sys.argv[2], "wb") as dst:
        dst.write(src.read())
PY
  chmod 0755 "$cache/uv.part"
  "$cache/uv.part" --version >/dev/null || { echo "get_uv.sh: the downloaded uv does not run" >&2; exit 1; }
  mv -f "$cache/uv.part" "$cache/uv"
  rm -rf "$cache/uv-wheel"
fi
echo "$cache/uv"
