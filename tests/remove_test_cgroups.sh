#!/usr/bin/env bash
# remove_test_cgroups.sh NAME: removes the cgroup NAME made at a hierarchy's
# root by a test's agent (its --cgroup-parent), with every cgroup beneath
# it, in every hierarchy (v1 controllers and v2). A job's processes leave
# their cgroup a moment after the agent and tmux are killed, and a job's
# wrapper outlives tmux by design: what is still in the tree is killed, and
# the removal retried for up to 5 s; what is still busy then is left and
# named. Left behind, one parent per run piled up on the host.
set -uo pipefail
name=${1:?usage: remove_test_cgroups.sh NAME}
# Only a test's own parent: never '..' or another cgroup of the host.
[[ $name =~ ^gpuctl-[A-Za-z0-9._@-]+$ ]] || { echo "remove_test_cgroups.sh: '$name' is not a test's gpuctl-* cgroup" >&2; exit 2; }
left=()
for _ in $(seq 50); do
  left=()
  for cg in /sys/fs/cgroup/"$name" /sys/fs/cgroup/*/"$name"; do
    [[ -d $cg ]] || continue
    while read -r procs; do
      while read -r pid; do kill -9 "$pid" 2>/dev/null; done <"$procs"
    done < <(find "$cg" -name cgroup.procs 2>/dev/null)
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
    [[ -d $cg ]] && left+=("$cg")
  done
  ((${#left[@]} == 0)) && exit 0
  sleep 0.1
done
echo "remove_test_cgroups.sh: still in use after 5 s: ${left[*]}" >&2
exit 1
