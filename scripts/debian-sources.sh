#!/usr/bin/env bash
# Fetches and unpacks Debian's source packages of prometheus-cpp and civetweb
# into DEST (default .deps/), as DEST/prometheus-cpp and DEST/civetweb.
# gpuctld serves /metrics with them, compiled in statically
# (cmake/prometheus_cpp.cmake): Debian ships them only as shared libraries
# (prometheus-cpp-dev has no .a), and the agent must start on a fresh host.
# The sources are the ones Debian 12's prometheus-cpp-dev is built from, from
# the deb-src twin of this machine's own apt sources (no mirror is named here),
# through a private apt state: the system's apt configuration is untouched.
#   bash scripts/debian-sources.sh [DEST]     (needs dpkg-dev for dpkg-source)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=$(realpath -m "${1:-.deps}")
packages=(prometheus-cpp civetweb)
have_all() {
  local p
  for p in "${packages[@]}"; do [[ -e $dest/$p/.unpacked ]] || return 1; done
}
have_all && exit 0
command -v dpkg-source >/dev/null || { echo "debian-sources.sh: dpkg-source is missing (apt-get install dpkg-dev)" >&2; exit 1; }

apt_dir=$(mktemp -d)
trap 'rm -rf "$apt_dir"' EXIT
mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
: >"$apt_dir/sources.list"
# One-line sources: "deb URI SUITE..." -> "deb-src URI SUITE...".
if [[ -f /etc/apt/sources.list ]]; then
  sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list >>"$apt_dir/sources.list"
fi
for f in /etc/apt/sources.list.d/*.list; do
  [[ -f $f ]] && sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' "$f" >>"$apt_dir/sources.list"
done
# deb822 sources: "Types: deb" -> "Types: deb-src".
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -f $f ]] && sed 's/^Types:.*$/Types: deb-src/' "$f" >"$apt_dir/parts/$(basename "$f")"
done
apt=(apt-get -q -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/parts"
     -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o "APT::Sandbox::User=root")
"${apt[@]}" update >"$apt_dir/update.log" 2>&1 || { cat "$apt_dir/update.log" >&2; exit 1; }

mkdir -p "$dest"
work=$(mktemp -d "$dest/.fetch.XXXXXX")
for p in "${packages[@]}"; do
  [[ -e $dest/$p/.unpacked ]] && continue
  (cd "$work" && "${apt[@]}" source "$p" >"$work/$p.log" 2>&1) || { cat "$work/$p.log" >&2; exit 1; }
  unpacked=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name "$p-*" | head -n 1)
  [[ -n $unpacked ]] || { echo "debian-sources.sh: apt-get source $p unpacked nothing" >&2; exit 1; }
  rm -rf "${dest:?}/$p"
  mv "$unpacked" "$dest/$p"
  sed -n 's/^Version: //p' "$work"/"$p"_*.dsc >"$dest/$p/.unpacked"
  echo "debian-sources.sh: $p $(cat "$dest/$p/.unpacked") in $dest/$p"
done
rm -rf "$work"
