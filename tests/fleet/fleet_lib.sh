# A fleet of real nodes on this machine, for the fleet test and bench: each
# node is a network namespace made here (ip netns, a veth on a bridge made
# here, 10.213.0.0/24), with its own sshd on its own address, and a real
# gpuctld bootstrapped into it through that sshd (gpuctl node bootstrap
# --prefix), so every call goes client -> SSH -> namespace -> agent.
# The caller sets test_name and build (BUILD_DIR), then calls fleet_up N and
# traps fleet_down. Nothing outside 127.0.0.0/8 and these namespaces is used.

. "$(dirname "${BASH_SOURCE[0]}")/../skip_policy.sh"  # skip
fail() { echo "$test_name: FAIL: $*" >&2; exit 1; }
say() { echo "$test_name: $*"; }

fleet_tag=gf$$                     # interface names: at most 15 characters
fleet_dir=
fleet_size=0

fleet_check() {
  [[ $EUID == 0 ]] || skip "needs root (ip netns, veth, sshd as root)"
  command -v ip >/dev/null || skip "no ip (apt-get install iproute2)"
  [[ -x /usr/sbin/sshd ]] || skip "no sshd (apt-get install openssh-server)"
  ip netns add "${fleet_tag}probe" 2>/dev/null || skip "cannot make network namespaces here"
  ip netns del "${fleet_tag}probe"
  ip link add "${fleet_tag}probe" type bridge 2>/dev/null || skip "cannot make a bridge here"
  ip link del "${fleet_tag}probe"
}

# gpuctl as the test's user: HOME (nodes.json, known_hosts) in the fleet dir.
fleet_gpuctl() {
  HOME=$fleet_dir/home XDG_CONFIG_HOME=$fleet_dir/home/.config SSH_AUTH_SOCK= "$build/client/gpuctl" "$@"
}

fleet_ns() { echo "${fleet_tag}n$1"; }
fleet_addr() { echo "10.213.0.$(( $1 + 1 ))"; }

# fleet_up N: nodes n1..nN, labelled role=even|odd and fleet=test.
fleet_up() {
  fleet_size=$1
  fleet_dir=$(mktemp -d /tmp/gpuctl-fleet.XXXXXX)
  mkdir -p "$fleet_dir/home/.ssh" /run/sshd
  chmod 700 "$fleet_dir/home/.ssh"
  ssh-keygen -q -t ed25519 -N '' -f "$fleet_dir/user_key"
  ssh-keygen -q -t ed25519 -N '' -f "$fleet_dir/host_key"
  ip link add "${fleet_tag}br" type bridge
  ip addr add 10.213.0.1/24 dev "${fleet_tag}br"
  ip link set "${fleet_tag}br" up
  local i
  for ((i = 1; i <= fleet_size; i++)); do fleet_node_up "$i"; done
  for ((i = 1; i <= fleet_size; i++)); do
    local role=odd
    (( i % 2 == 0 )) && role=even
    fleet_gpuctl node add "n$i" --host "root@$(fleet_addr "$i")" --identity "$fleet_dir/user_key" \
      --label "role=$role" --label fleet=test >/dev/null
  done
  # Bootstrap in parallel: each uploads the agent into its node's prefix.
  local pids=()
  for ((i = 1; i <= fleet_size; i++)); do
    fleet_gpuctl --accept-new-host-key node bootstrap "n$i" --prefix "$fleet_dir/n$i" \
      >"$fleet_dir/n$i.bootstrap.log" 2>&1 &
    pids+=($!)
  done
  for ((i = 1; i <= fleet_size; i++)); do
    wait "${pids[$((i - 1))]}" || { cat "$fleet_dir/n$i.bootstrap.log" >&2; fail "bootstrap of n$i failed"; }
  done
}

fleet_node_up() {
  local i=$1 ns addr
  ns=$(fleet_ns "$i")
  addr=$(fleet_addr "$i")
  ip netns add "$ns"
  ip link add "${fleet_tag}v$i" type veth peer name eth0 netns "$ns"
  ip link set "${fleet_tag}v$i" master "${fleet_tag}br" up
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  cat >"$fleet_dir/sshd_n$i" <<CONF
Port 22
ListenAddress $addr
HostKey $fleet_dir/host_key
AuthorizedKeysFile $fleet_dir/user_key.pub
PidFile $fleet_dir/sshd_n$i.pid
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
AllowStreamLocalForwarding yes
Subsystem sftp internal-sftp
CONF
  fleet_sshd_start "$i"
}

fleet_sshd_start() {
  local i=$1
  ip netns exec "$(fleet_ns "$i")" /usr/sbin/sshd ${GPUCTL_FLEET_SSHD_FLAGS:-} -f "$fleet_dir/sshd_n$i" -E "$fleet_dir/sshd_n$i.log"
  local tries=0
  until [[ -s $fleet_dir/sshd_n$i.pid ]]; do
    (( ++tries < 100 )) || fail "sshd of n$i did not start: $(cat "$fleet_dir/sshd_n$i.log")"
    sleep 0.1
  done
}

# Stops n$i's sshd (its agent keeps running): the node cannot be reached.
fleet_sshd_stop() {
  local pid
  pid=$(cat "$fleet_dir/sshd_n$1.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || true
  rm -f "$fleet_dir/sshd_n$1.pid"
}

fleet_down() {
  local status=$?
  set +e   # a trap: clean up everything that can be, whatever fails
  [[ -n $fleet_dir ]] || return 0
  local i pid
  for ((i = 1; i <= fleet_size; i++)); do
    pid=$(cat "$fleet_dir/n$i/run/gpuctld.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
    pid=$(cat "$fleet_dir/sshd_n$i.pid" 2>/dev/null) && kill -CONT "$pid" 2>/dev/null && kill "$pid" 2>/dev/null
    # sshd's sessions (and anything they left) die with the namespace's processes.
    ip netns pids "$(fleet_ns "$i")" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$(fleet_ns "$i")" 2>/dev/null
  done
  ip link del "${fleet_tag}br" 2>/dev/null
  for ((i = 1; i <= fleet_size; i++)); do
    pid=$(cat "$fleet_dir/n$i/run/gpuctld.pid" 2>/dev/null) && kill -9 "$pid" 2>/dev/null
  done
  rm -rf "$fleet_dir"
  return "$status"
}
