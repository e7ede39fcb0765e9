#!/usr/bin/env bash
# Cross-builds gpuctld, gpuctl and the unit tests for aarch64 and runs the
# unit tests under qemu-user. Exit 77 when the arm64 packages cannot be
# installed (scripts/test.sh then says so and goes on). Uses Debian 12's arm64 multiarch packages,
# which install beside the amd64 ones (same versions, Multi-Arch: same).
#   bash scripts/cross-aarch64.sh [build]  (root; build in build-aarch64;
#                                           build: the packages and build alone)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! dpkg --print-foreign-architectures | grep -qx arm64; then dpkg --add-architecture arm64; fi
packages=(crossbuild-essential-arm64 qemu-user libgrpc++-dev:arm64 libprotobuf-dev:arm64 libssh-dev:arm64
          libspdlog-dev:arm64 libssl-dev:arm64 zlib1g-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  # arm64 and amd64 -dev packages must be the same version to install side
  # by side; when the archive has them out of step, say so and skip.
  mkdir -p build-aarch64
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
           "${missing[@]}"; } >build-aarch64/apt.log 2>&1; then
    echo "SKIP: the arm64 packages cannot be installed beside the amd64 ones:" >&2
    tail -n 5 build-aarch64/apt.log >&2
    exit 77
  fi
fi
# -O2 as shipped, line tables only (-g1), and files compiled 8 to a batch (a
# unity build): this build checks behaviour on arm64; the main build compiles
# every file alone with full debug info.
cmake -S . -B build-aarch64 -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUCTL_WERROR=ON \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DGPUCTL_BUILD_TESTS=ON >/dev/null
targets=(gpuctld gpuctl grow_memory fake_compile)  # the memory hogs: their argument checks are unit tests
for t in unit_common unit_sys unit_events unit_health unit_train unit_guard unit_provision unit_daemon unit_client; do
  targets+=("$t")
done
cmake --build build-aarch64 -j "$(nproc)" $(printf -- '--target %s ' "${targets[@]}")
[ "${1:-}" = build ] && exit 0
file build-aarch64/daemon/gpuctld build-aarch64/client/gpuctl
bash tests/portable/check_binaries.sh 2.34 build-aarch64/daemon/gpuctld build-aarch64/client/gpuctl
cd build-aarch64
ctest --output-on-failure --output-junit ctest-junit.xml -j "$(nproc)" --timeout 120 -L unit
