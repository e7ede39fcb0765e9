#!/usr/bin/env bash
# make_root.sh SUITE CACHE_DIR [DEST]
#
# Makes (once) a minimal Debian root for SUITE (bullseye, bookworm, trixie, ...)
# under CACHE_DIR and prints its path. With DEST, extracts a pristine copy of
# the cached root into DEST and prints DEST instead: a test should always boot
# a copy, never the cache, so one run cannot leak state into the next.
#
# Cache layout:  CACHE_DIR/SUITE          the ready root (renamed in last)
#                CACHE_DIR/SUITE.tar.zst  pristine tarball (.tar.gz without zstd)
#                CACHE_DIR/SUITE.tmp      work dir; a half-made root is never reused
#
# GPUCTL_ROOT_INCLUDE=python3 (comma-separated packages) makes and caches a
# variant with them too, as CACHE_DIR/SUITE-python3 (a host with a system Python).
#
# Mirror: $GPUCTL_DEBIAN_MIRROR, else the Debian main archive from this host's
# apt sources (never hard-coded: CI hosts point at local mirrors or snapshots).
# Exit 77 (ctest SKIP) when not root or the archive cannot be reached.
set -euo pipefail

usage() { echo "usage: $0 SUITE CACHE_DIR [DEST]" >&2; exit 2; }
[[ $# -eq 2 || $# -eq 3 ]] || usage
suite=$1 cache=$2 dest=${3:-}
test_name=make_root.sh
. "$(dirname "${BASH_SOURCE[0]}")/../skip_policy.sh"  # skip, skip_allowed

[[ $(id -u) -eq 0 ]] || skip "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || skip "debootstrap is not installed"

# The URI whose suites include the host's own codename (bookworm), not
# bookworm-security: that one is the main archive, which carries every release.
host_mirror() {
    local codename
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    {
        # deb822: a stanza is a blank-line-separated block of "Key: value" lines.
        { cat /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } | awk -v want="$codename" '
            function flush() { if (uris != "" && types ~ /(^| )deb( |$)/) {
                                   n = split(suites, s, " ")
                                   for (i = 1; i <= n; i++) if (s[i] == want) { split(uris, u, " "); print u[1] } }
                               uris = suites = types = "" }
            /^[ \t]*$/        { flush(); next }
            /^[ \t]*#/        { next }
            tolower($1) == "uris:"   { $1 = ""; uris = $0 }
            tolower($1) == "suites:" { $1 = ""; suites = $0 }
            tolower($1) == "types:"  { $1 = ""; types = $0 }
            END { flush() }'
        # one-line: deb [opts] URL suite comp...
        { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } | awk -v want="$codename" '
            $1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                          if ($(i + 1) == want) print $i }'
    } | head -n1
}
mirror=${GPUCTL_DEBIAN_MIRROR:-$(host_mirror || true)}  # missing files are not an error
[[ -n $mirror ]] || skip_allowed archive "no Debian main archive in /etc/apt sources; set GPUCTL_DEBIAN_MIRROR"
mirror=${mirror%/}

if command -v zstd >/dev/null; then ext=tar.zst; comp=(zstd -q -T0 -3); else ext=tar.gz; comp=(gzip -1); fi
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
extra=${GPUCTL_ROOT_INCLUDE:-}
name=$suite${extra:+-${extra//,/-}}
root=$cache/$name

# One maker per suite at a time; a second caller waits and then reuses.
exec 9>"$cache/$name.lock"
flock 9

make_tarball() {  # $1 = root dir; written aside and renamed so it is all or nothing
    local old
    for old in "$cache/$name".tar.*; do [[ -e $old ]] && rm -f "$old"; done
    tar -C "$1" --numeric-owner --one-file-system -cpf - . | "${comp[@]}" > "$cache/$name.$ext.part"
    mv -f "$cache/$name.$ext.part" "$cache/$name.$ext"
}

if [[ ! -d $root ]]; then
    # Probe first so "no network" is a SKIP, not a failure deep in debootstrap.
    fetch() { if command -v curl >/dev/null; then curl -fsS --max-time 20 -o /dev/null "$1"
              else wget -q -T 20 -O /dev/null "$1"; fi; }
    fetch "$mirror/dists/$suite/Release" 2>/dev/null \
        || skip_allowed archive "cannot reach $mirror/dists/$suite/Release"

    # Debian 12's debootstrap may predate newer suites; they all use the sid
    # script (its own trixie entry is just a symlink to sid).
    script=/usr/share/debootstrap/scripts/$suite
    [[ -e $script ]] || script=/usr/share/debootstrap/scripts/sid

    rm -rf "$root.tmp"
    log=$cache/$name.debootstrap.log
    # Private mount namespace: debootstrap mounts /proc and /sys in the target,
    # and if it dies half way those mounts must not stay on the host.
    if ! unshare --mount --propagation private \
            debootstrap --variant=minbase --include="openssh-server${extra:+,$extra}" \
                "$suite" "$root.tmp" "$mirror" "$script" >"$log" 2>&1; then
        tail -n 20 "$log" >&2
        if grep -qiE 'Failed getting release file|Couldn.t download|Temporary failure in name resolution|Connection refused' "$log"; then
            skip_allowed archive "debootstrap could not download from $mirror (log: $log)"
        fi
        echo "make_root.sh: debootstrap $suite failed (log: $log)" >&2
        exit 1
    fi

    # Host keys: openssh-server's postinst normally makes them, but a root
    # without them makes sshd exit at once, so be sure.
    chroot "$root.tmp" ssh-keygen -A >/dev/null
    # sshd's privilege separation dir; start_node.sh recreates it on its tmpfs /run.
    mkdir -p "$root.tmp/run/sshd"
    # What apt-get clean does (and cloud images ship): ~40 MB of .debs less to
    # tar, untar and wipe on every test run.
    rm -f "$root.tmp"/var/cache/apt/archives/*.deb
    # Tests overwrite the copy's authorized_keys; never ship one in the cache.
    rm -f "$root.tmp/root/.ssh/authorized_keys"
    # Marks the tree as ours: lets a later run wipe DEST without fear.
    echo "$suite" > "$root.tmp/.gpuctl-fresh-root"

    make_tarball "$root.tmp"
    mv "$root.tmp" "$root"
fi

# A root from an older run may lack its tarball (e.g. killed between the two).
tarball=$(ls "$cache/$name".tar.zst "$cache/$name".tar.gz 2>/dev/null | head -n1 || true)
if [[ -z $tarball ]]; then make_tarball "$root"; tarball=$cache/$name.$ext; fi
flock -u 9

if [[ -z $dest ]]; then echo "$root"; exit 0; fi

# Pristine copy. Only wipe DEST if it is empty or one of our own roots.
if [[ -e $dest ]]; then
    if [[ -n $(ls -A "$dest") && ! -f $dest/.gpuctl-fresh-root ]]; then
        echo "make_root.sh: $dest exists and is not a fresh root; refusing to wipe it" >&2
        exit 1
    fi
    rm -rf --one-file-system "$dest"
fi
mkdir -p "$dest"
case $tarball in
    *.zst) zstd -q -d -c "$tarball" ;;
    *)     gzip -d -c "$tarball" ;;
esac | tar -C "$dest" --numeric-owner -xpf -
cd "$dest" && pwd
