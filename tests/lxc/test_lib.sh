# Shared by the tests that use the test LXC container: messages, the skip
# rules, and boot of the container made by make_container.sh. Sourced.
#   . tests/lxc/test_lib.sh; boot_test_container   (sets $name)
. "$(dirname "${BASH_SOURCE[0]}")/../skip_policy.sh"  # skip
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
wait_for() {  # SECONDS COMMAND...: until COMMAND succeeds
  local until=$((SECONDS + $1)); shift
  while ! "$@" >/dev/null 2>&1; do [ $SECONDS -lt $until ] || return 1; sleep 0.2; done
}
# Makes (once) and starts the Debian 12 test container; prints its address.
# tmux is in the image because the package depends on it and the container
# has no route to an archive (dpkg -i does not fetch dependencies).
boot_test_container() {
  [ "$(id -u)" = 0 ] || skip "needs root (lxc)"
  command -v lxc-create >/dev/null || skip "lxc is not installed"
  export GPUCTL_LXC_PACKAGES=tmux GPUCTL_LXC_HOST_IP=10.213.1.1 GPUCTL_LXC_IP=10.213.1.2
  local made=0
  "$here/make_container.sh" "$name" >&2 || made=$?
  case $made in
    0) ;;
    77) skip_allowed archive "cannot fetch the container's packages (see above)" ;;
    *) skip "cannot make the LXC container $name (see above)" ;;
  esac
  "$here/start_container.sh" "$name" 90 || fail "container $name did not boot"
}
