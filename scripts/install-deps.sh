#!/usr/bin/env bash
# Installs what gpuctl needs from Debian 12's own packages (no other
# registry is used).
#   bash scripts/install-deps.sh          # build and run (the main command)
#   bash scripts/install-deps.sh --test   # also what the tests drive for real
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libssh-dev libspdlog-dev nlohmann-json3-dev libcli11-dev
  tmux python3 procps
  libssl-dev dpkg-dev   # /metrics: civetweb's TLS; dpkg-source unpacks its Debian sources
)
if [ "${1:-}" = --test ]; then
  packages+=(
    libgtest-dev libgmock-dev
    openssh-server openssh-client   # SSH node tests (a real sshd on loopback)
    openssl                         # the TLS tests make their own CA
    python3-venv                    # the reflection-only client (grpcio from the package index)
    debootstrap zstd                # fresh Debian roots for the fresh-node test
    lxc iproute2 systemd-container  # a real systemd in an LXC container for the unit and the .deb
    lxc-templates rsync distro-info # its debian template and what that template runs (lxc only recommends them)
    curl                            # the tests probe the archive and scrape /metrics
    util-linux                      # setpriv: a second, non-root user
    file                            # the .deb is built and inspected
    prometheus                      # promtool checks /metrics
    clang-16 libclang-rt-16-dev     # ASan/UBSan and libFuzzer (scripts/sanitize.sh); clang 14 lacks source_location
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# prometheus-cpp and civetweb, from Debian's own source packages: compiled into
# gpuctld statically (Debian ships no static archives of them).
bash "$(dirname "$0")/debian-sources.sh"
