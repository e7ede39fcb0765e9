#!/usr/bin/env bash
# Stand-in for oom_recover_probe.py on hosts without a GPU (dry runs of
# run.sh): above 768 anchors it prints the real OOM capture of the H200 and
# exits 1, as the real probe does; at 768 or fewer it runs its ten steps.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
anchors=1024
while [[ $# -gt 0 ]]; do
  case $1 in
    --max-anchors) anchors=$2; shift 2 ;;
    --max-anchors=*) anchors=${1#*=}; shift ;;
    *) shift ;;
  esac
done
echo "stand-in, max_anchors=$anchors, attempt=${GPUCTL_ATTEMPT:-}, PYTORCH_CUDA_ALLOC_CONF=${PYTORCH_CUDA_ALLOC_CONF:-}"
last=9
((anchors > 768)) && last=6
for step in $(seq 0 "$last"); do echo "step $step | loss 2.$step | allocated"; sleep 0.05; done
if ((anchors > 768)); then
  grep -v '^exit=' "$root/../shared/fixtures/gpu-host/oom-default.log"
  exit 1
fi
echo done
