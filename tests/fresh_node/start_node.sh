#!/usr/bin/env bash
# start_node.sh ROOT PORT PUBKEY_FILE
#
# Boots ROOT (a copy made by make_root.sh ... DEST) as a throwaway "host": its
# own sshd, on 127.0.0.1:PORT only, in new mount, PID, UTS and IPC namespaces.
# The network namespace is the host's. Commands run over ssh see the root's own
# /bin and /lib (its glibc), which is the point: the agent is bootstrapped onto
# a genuinely old or new userland.
#
# Writes ROOT.pid (the host pid of the namespace's init; stop_node.sh takes it)
# and ROOT.log (sshd's log), waits up to 20 s for the port, prints ROOT.pid.
# Every mount is made inside the private mount namespace, so nothing shows in
# the host's mount table and all of it goes when the namespace dies.
# GPUCTL_NODE_CGROUP_RW=1 leaves /sys/fs/cgroup writable (default read-only).
set -euo pipefail

if [[ ${1:-} == --inside ]]; then
    # Here we are pid 1 of the new PID namespace, in a private mount namespace.
    root=$2 port=$3
    mount -t proc -o nosuid,nodev,noexec proc "$root/proc"   # this namespace's pids only
    mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
    # A fresh sysfs has an empty /sys/fs/cgroup; the agent reads cgroups.
    if mountpoint -q /sys/fs/cgroup; then
        mount --rbind /sys/fs/cgroup "$root/sys/fs/cgroup"
        if [[ ${GPUCTL_NODE_CGROUP_RW:-0} != 1 ]]; then
            # A bind's ro flag is per mount: remount each one of the tree.
            findmnt -R -l -n -o TARGET "$root/sys/fs/cgroup" | while read -r m; do
                mount -o remount,bind,ro "$m"
            done
        fi
    fi

    # /dev: a small tmpfs like a container gets, not the host's /dev (its disks,
    # its ptys). A private devpts instance gives the node its own ptys (tmux).
    mount -t tmpfs -o nosuid,mode=0755,size=1m tmpfs "$root/dev"
    for d in null zero full random urandom tty /dev/nvidia*; do
        d=/dev/${d#/dev/}
        [[ -e $d ]] || continue               # nvidia* only on GPU hosts
        if [[ -d $d ]]; then mkdir -p "$root$d"; else touch "$root$d"; fi
        mount --bind "$d" "$root$d"
    done
    mkdir -p "$root/dev/pts" "$root/dev/shm"
    mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts "$root/dev/pts"
    ln -s pts/ptmx "$root/dev/ptmx"
    mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$root/dev/shm"
    ln -s /proc/self/fd "$root/dev/fd"
    ln -s /proc/self/fd/0 "$root/dev/stdin"
    ln -s /proc/self/fd/1 "$root/dev/stdout"
    ln -s /proc/self/fd/2 "$root/dev/stderr"

    mount -t tmpfs -o nosuid,nodev,mode=0755 tmpfs "$root/run"
    mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$root/tmp"
    # sshd refuses to start without its privilege separation dir, and /run is empty now.
    mkdir -p -m 0755 "$root/run/sshd" "$root/run/lock"
    # Same network as the host, so the same resolver (apt inside the node).
    if [[ -f /etc/resolv.conf && ! -L $root/etc/resolv.conf ]]; then
        touch "$root/etc/resolv.conf"
        mount --bind -o ro /etc/resolv.conf "$root/etc/resolv.conf"
    fi
    hostname "$(basename "$root" | tr -c 'a-zA-Z0-9-\n' '-' | cut -c1-63)"

    # chroot execs sshd, so sshd becomes pid 1 (it reaps any child it inherits).
    exec chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /usr/sbin/sshd -D -e \
        -o "ListenAddress=127.0.0.1:$port" \
        -o PermitRootLogin=prohibit-password -o PasswordAuthentication=no \
        -o UsePAM=no -o StrictModes=no
fi

[[ $# -eq 3 ]] || { echo "usage: $0 ROOT PORT PUBKEY_FILE" >&2; exit 2; }
root=$(cd "$1" && pwd) port=$2 pub=$3
[[ $port =~ ^[0-9]+$ && $port -ge 1 && $port -le 65535 ]] || { echo "start_node.sh: bad port $port" >&2; exit 2; }
[[ -x $root/usr/sbin/sshd ]] || { echo "start_node.sh: $root has no /usr/sbin/sshd" >&2; exit 1; }
test_name=start_node.sh
. "$(dirname "$0")/../skip_policy.sh"  # skip
[[ $(id -u) -eq 0 ]] || skip "needs root (namespaces, mounts)"
pidfile=$root.pid log=$root.log

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }
# Ready means an ssh banner, not just a listening socket.
ssh_ready() { (exec 3<>"/dev/tcp/127.0.0.1/$port" && read -r -t 2 line <&3 && [[ $line == SSH-* ]]) 2>/dev/null; }
# Otherwise the wait below would succeed against somebody else's server.
if port_open; then echo "start_node.sh: 127.0.0.1:$port is already in use" >&2; exit 1; fi

self=$(readlink -f "$0")
install -d -m 0700 "$root/root/.ssh"
install -m 0600 "$pub" "$root/root/.ssh/authorized_keys"

# Not setsid: the node stays in the caller's process group, so a ctest timeout
# or ^C that kills the group kills the node too. --kill-child: if unshare dies,
# its child (the init) gets SIGKILL, and with it the whole PID namespace.
unshare --mount --pid --uts --ipc --fork --kill-child --propagation private \
    -- "$self" --inside "$root" "$port" </dev/null >"$log" 2>&1 &
upid=$!

fail() {
    echo "start_node.sh: $*; sshd log $log:" >&2
    tail -n 20 "$log" >&2 || true
    kill -KILL "$upid" 2>/dev/null || true
    rm -f "$pidfile"
    exit 1
}

# The namespace's init is unshare's child. Check its PID namespace: until the
# background job has exec'd unshare, that job's children are other things.
init= myns=$(readlink /proc/self/ns/pid)
for _ in $(seq 50); do
    init=$(cat "/proc/$upid/task/$upid/children" 2>/dev/null | awk '{print $1}') || true
    [[ -n $init && $(readlink "/proc/$init/ns/pid" 2>/dev/null || echo "$myns") != "$myns" ]] && break
    init=
    kill -0 "$upid" 2>/dev/null || fail "the namespace exited at once"
    sleep 0.1
done
[[ -n $init ]] || fail "no init process appeared"
echo "$init" > "$pidfile"

for _ in $(seq 200); do
    ssh_ready && { echo "$pidfile"; exit 0; }
    kill -0 "$init" 2>/dev/null || fail "sshd exited"
    sleep 0.1
done
fail "port $port did not open in 20 s"
