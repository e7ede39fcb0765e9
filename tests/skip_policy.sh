# Sourced by the shell tests: when a test may skip (the same rule as
# tests/fakes/skip_policy.h). A skip exits 77, which ctest reports as
# skipped; but under CI=true a skip for want of something
# scripts/install-deps.sh --test installs would leave CI green while the test
# never ran, so there `skip` fails (exit 1). Only `skip_allowed` reasons, what
# no install script can provide, skip under CI too:
#   gpu       a GPU (or its absence), its driver, or NVIDIA's CUDA toolkit
#   archive   the Debian archive or the package index pip uses unreachable
#   platform  the machine itself: cgroup version, swap, kernel features, disk
# Messages name the test: set test_name before sourcing, or the script's name is used.

skip() {
  local who=${test_name:-$(basename "$0")}
  if [[ ${CI:-} == true ]]; then
    echo "$who: FAIL: CI=true: a test may not skip for want of what scripts/install-deps.sh --test installs; it would have skipped: $*" >&2
    exit 1
  fi
  echo "$who: SKIP: $*" >&2
  exit 77
}

skip_allowed() {
  local kind=$1 who=${test_name:-$(basename "$0")}
  shift
  case $kind in
    gpu|archive|platform) ;;
    *) echo "$who: FAIL: skip_allowed: unknown kind '$kind' (gpu, archive, platform)" >&2; exit 1 ;;
  esac
  echo "$who: SKIP: [allowed: $kind] $*" >&2
  exit 77
}
