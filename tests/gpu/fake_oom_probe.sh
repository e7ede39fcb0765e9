#!/usr/bin/env bash
# Stand-in for oom_probe.py on hosts without a GPU, for dry runs of run.sh:
# prints the real capture of the probe on the H200 (stdout and stderr
# together, without the capture's own "exit=1" line) and exits 1 as it did.
#   GPUCTL_GPU_OOM_SCRIPT=$PWD/tests/gpu/fake_oom_probe.sh tests/gpu/run.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
grep -v '^exit=' "$root/../shared/fixtures/gpu-host/oom-default.log"
exit 1
