#!/usr/bin/env bash
# make_container.sh NAME
# Create, once, a Debian 12 (bookworm) LXC container NAME that boots systemd
# as pid 1, for testing gpuctld's systemd unit and .deb. Reused if it exists
# and was fully configured (marker file below); a half-made one is destroyed
# and made again.
#
# Network: one veth pair, host side HOST_IP/30, container side CT_IP/30, no
# bridge, no NAT, no default route: the host reaches the container's sshd,
# the container reaches nothing else. Packages therefore go in at creation
# time (the template installs them from a chroot, with the host's network).
#
# Env (all optional):
#   GPUCTL_DEBIAN_MIRROR           main archive; default: this host's apt config
#   GPUCTL_DEBIAN_SECURITY_MIRROR  security archive; default: this host's apt config
#   GPUCTL_LXC_HOST_IP             host end of the veth    (default 10.213.0.1)
#   GPUCTL_LXC_IP                  container end           (default 10.213.0.2)
#   GPUCTL_LXC_PACKAGES            extra packages, comma separated
# Writes /var/lib/lxc/NAME/ssh_key (root's key) and known_hosts for tests.
set -euo pipefail
name=${1:?usage: make_container.sh NAME}
dir=/var/lib/lxc/$name
marker=$dir/gpuctl-configured
host_ip=${GPUCTL_LXC_HOST_IP:-10.213.0.1}
ct_ip=${GPUCTL_LXC_IP:-10.213.0.2}
release=bookworm

if [[ -f $marker ]]; then echo "$name: exists, reused"; exit 0; fi
if lxc-info -n "$name" &>/dev/null; then   # left over from a failed run
  lxc-stop -k -n "$name" &>/dev/null || true
  lxc-destroy -n "$name"
fi

# The debian template (lxc-templates) needs rsync (copies its cached rootfs)
# and debian-distro-info (without it, it writes the pre-bullseye
# "bookworm/updates" security suite and apt-get update in the rootfs fails).
# lxc only recommends them; scripts/install-deps.sh --test installs them.
[[ -x /usr/share/lxc/templates/lxc-debian ]] || { echo "no LXC debian template (apt-get install lxc-templates)" >&2; exit 1; }
for tool in rsync debian-distro-info debootstrap; do
  command -v $tool >/dev/null || { echo "no $tool (scripts/install-deps.sh --test installs it)" >&2; exit 1; }
done

# First URI of an enabled apt source for suite $1, from deb822 .sources files
# and one-line .list files; never a hard-coded mirror.
host_mirror() {
  local suite=$1
  {
    shopt -s nullglob
    local f=(/etc/apt/sources.list.d/*.sources)
    ((${#f[@]})) && awk -v s="$suite" '
      function flush() { if (ok && en && deb && uri != "") print uri; ok = deb = 0; en = 1; uri = "" }
      BEGIN { en = 1 }
      /^[ \t]*$/ { flush(); next }
      /^#/ { next }
      tolower($1) == "types:"   { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
      tolower($1) == "uris:"    { uri = $2 }
      tolower($1) == "suites:"  { for (i = 2; i <= NF; i++) if ($i == s) ok = 1 }
      tolower($1) == "enabled:" { if (tolower($2) == "no") en = 0 }
      END { flush() }' "${f[@]}"
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk -v s="$suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                                       if ($(i + 1) == s) print $i }'
  } | head -n1 || true   # none found: empty, the caller decides
}
mirror=${GPUCTL_DEBIAN_MIRROR:-$(host_mirror $release)}
security=${GPUCTL_DEBIAN_SECURITY_MIRROR:-$(host_mirror $release-security)}
# Exit 77 when the archive cannot be reached: the caller's allowed skip.
[[ -n $mirror ]] || { echo "no $release source in /etc/apt; set GPUCTL_DEBIAN_MIRROR" >&2; exit 77; }
curl -fsS --max-time 20 -o /dev/null "$mirror/dists/$release/Release" \
  || { echo "cannot reach $mirror/dists/$release/Release" >&2; exit 77; }
# No security source on the host: reuse the main mirror's host (deb.debian.org
# serves both), the template's own default being a different host.
security=${security:-${mirror%/*}/debian-security}
echo "mirror: $mirror  security: $security"

# The config lxc-create starts from (replaces /etc/lxc/default.conf, whose
# lxcbr0 bridge we do not want). The template appends its includes
# (debian.common.conf -> common.conf: cgroup:mixed proc:mixed sys:mixed
# auto-mounts, device allow-list, seccomp) after these lines.
mkdir -p "$dir"
cat >"$dir/host-net-up" <<EOF
#!/bin/sh
# lxc.net.0.script.up: \$5 is the host end of the veth. Give it the host's
# address so the host reaches $ct_ip from $host_ip, over this link only.
ip addr add $host_ip/30 dev "\$5" && ip link set "\$5" up
EOF
chmod +x "$dir/host-net-up"
conf=$(mktemp)
trap 'rm -f "$conf"' EXIT
cat >"$conf" <<EOF
# veth with no lxc.net.0.link: a bare pair, not attached to any bridge.
lxc.net.0.type = veth
lxc.net.0.flags = up
lxc.net.0.name = eth0
lxc.net.0.ipv4.address = $ct_ip/30
lxc.net.0.script.up = $dir/host-net-up
# This kernel has no AppArmor: say so, rather than rely on lxc quietly
# skipping default.conf's "generated" profile. (Not tested with AppArmor on.)
lxc.apparmor.profile = unconfined
EOF

pkgs=dbus,procps,less${GPUCTL_LXC_PACKAGES:+,$GPUCTL_LXC_PACKAGES}
lxc-create -n "$name" -t debian -f "$conf" -- -r $release \
  --mirror="$mirror" --security-mirror="$security" --packages="$pkgs"

# After the template's includes (lxc.mount.auto lines add up): lxc mounts the
# cgroup v1 hierarchies itself, as the host has them. Without :force lxc
# leaves that to the container's systemd, which mounts "cpu,cpuacct" jointly;
# on a host where cpu and cpuacct are separate hierarchies that mount fails
# quietly and the container has no cpu controller (CPUQuota= does nothing).
echo "lxc.mount.auto = cgroup:mixed:force" >>"$dir/config"

rootfs=$dir/rootfs
# The address is set by lxc before init runs; ifupdown must not touch eth0
# (the template's "inet dhcp" would run dhclient on a link with no DHCP server).
cat >"$rootfs/etc/network/interfaces" <<EOF
auto lo
iface lo inet loopback

# eth0 is configured by lxc (lxc.net.0.ipv4.address = $ct_ip/30)
iface eth0 inet manual
EOF

# Root logs in over ssh with a key made for this container.
ssh-keygen -q -t ed25519 -N '' -C "gpuctl-test@$name" -f "$dir/ssh_key"
install -d -m 700 "$rootfs/root/.ssh"
install -m 600 "$dir/ssh_key.pub" "$rootfs/root/.ssh/authorized_keys"
echo "$ct_ip $(cut -d' ' -f1,2 "$rootfs/etc/ssh/ssh_host_ed25519_key.pub")" >"$dir/known_hosts"

touch "$marker"
echo "$name: created ($ct_ip, key $dir/ssh_key)"
