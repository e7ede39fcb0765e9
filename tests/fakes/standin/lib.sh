# Shared by the provisioning stand-ins in tests/fakes/bin (apt-get, dpkg-query,
# apt-mark, dpkg, curl, uv, nvcc and the venv python uv creates). Sourced.
#
# Environment:
#   GPUCTL_STANDIN_LOG    append one line per invocation: "NAME ARGS..."
#   GPUCTL_STANDIN_STATE  a directory holding what is "installed":
#                           pkg/NAME (content: the Debian version), hold/NAME
#                         tests may pre-seed it (a toolkit already installed...)
#   GPUCTL_STANDIN_FAIL   a word: a stand-in that changes the system (apt-get,
#                         dpkg, curl, uv) fails when its arguments contain it;
#                         without it, the word in $GPUCTL_STANDIN_STATE/fail
#                         (so a test can change it under a running agent)
#   GPUCTL_STANDIN_DRIVER_VERSION  the driver the repository offers (590.44.01)
set -u

standin_name=$(basename "$0")
# Without a state directory nothing is installed and nothing is kept.
state=${GPUCTL_STANDIN_STATE:-$(mktemp -d)}
mkdir -p "$state/pkg" "$state/hold"

standin_log() {
  [[ -n ${GPUCTL_STANDIN_LOG:-} ]] && printf '%s\n' "$standin_name $*" >>"$GPUCTL_STANDIN_LOG"
  return 0
}

# standin_maybe_fail ARGS...: a mutating stand-in told to fail does, loudly.
standin_maybe_fail() {
  local word=${GPUCTL_STANDIN_FAIL:-}
  [[ -z $word && -f $state/fail ]] && word=$(<"$state/fail")
  [[ -z $word || " $* " != *"$word"* ]] && return 0
  echo "Reading package lists..."
  echo "Get:1 https://developer.download.nvidia.com/compute/cuda/repos $word [1.2 GB]"
  echo "E: Failed to fetch $word: Connection timed out (stand-in told to fail on '$word')" >&2
  echo "E: Unable to fetch some archives, maybe run apt-get update or try with --fix-missing?" >&2
  exit 100
}

pkg_installed() { [[ -f $state/pkg/$1 ]]; }
pkg_version() { cat "$state/pkg/$1"; }
