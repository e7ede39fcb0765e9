# Sourced by the tests that boot fresh roots as nodes (fresh_node_test.sh,
# provision_root_test.sh), with $here (this directory) and $build set: a
# scratch $work with its own HOME and SSH key, nodes stopped and $work
# removed at exit, and the helpers fail, step and g. Skips (77) unless root.
. "$here/../skip_policy.sh"  # skip
[ "$(id -u)" = 0 ] || skip "needs root (namespaces, chroot)"
gpuctl=$build/client/gpuctl
work=$(mktemp -d /tmp/gpuctl-fresh.XXXXXX)
pidfiles=()  # of started nodes (start_node.sh), stopped at exit
node_test_cleanup() {
  for p in "${pidfiles[@]}"; do "$here/stop_node.sh" "$p" >/dev/null 2>&1 || true; done
  rm -rf --one-file-system "$work"
}
trap node_test_cleanup EXIT
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config
mkdir -p "$HOME"
ssh-keygen -q -t ed25519 -N '' -f "$work/key"
unset SSH_AUTH_SOCK

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
# Runs gpuctl, echoing the command; its output is kept in $out.
g() { echo "\$ gpuctl $*"; out=$("$gpuctl" "$@" 2>&1) || { echo "$out"; return 1; }; echo "$out"; }
