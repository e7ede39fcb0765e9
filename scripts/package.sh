#!/usr/bin/env bash
# Builds the portable gpuctld and gpuctl (static but for glibc, stripped,
# debug info in build/*/gpuctl*.debug) and the .deb. The last line of output
# is the path of the .deb.
#   bash scripts/package.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >&2
if ! dpkg-query -W -f='${Status}' dpkg-dev 2>/dev/null | grep -q "install ok installed"; then
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dpkg-dev file >&2
fi
GPUCTL_TARGETS="gpuctld gpuctl" bash scripts/build.sh -DGPUCTL_PORTABLE=ON >&2
(cd build && cpack -G DEB >&2)
ls -t build/gpuctl_*.deb | head -n 1 | xargs realpath
