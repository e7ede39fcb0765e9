#!/usr/bin/env bash
# Installs everything gpuctl needs to build, test and run, from Debian 12's
# own packages (no other registry is used).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libssh-dev libspdlog-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev
  tmux python3 openssh-server procps
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
