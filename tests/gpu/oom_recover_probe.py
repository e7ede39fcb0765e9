# A training-like job for the OOM recovery check (tests/gpu/run.sh): its GPU
# memory grows with --max-anchors, as the incident's did. At 1024 anchors it
# asks for 1.15x the GPU and dies of a real torch.OutOfMemoryError (not
# caught: its message is what gpuctld reads); at 768 it asks for 0.86x, fits,
# and finishes. One "step" per 1/8 of its memory, then two more holding it.
import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--max-anchors", type=int, default=1024)
args, _ = parser.parse_known_args()
total = torch.cuda.get_device_properties(0).total_memory
want = int(total * 1.15 * args.max_anchors / 1024)
print(f"torch {torch.__version__}, max_anchors={args.max_anchors}, attempt={os.environ.get('GPUCTL_ATTEMPT')}, "
      f"PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')}, asking {want / 2**30:.1f} GiB "
      f"of {total / 2**30:.1f} GiB", flush=True)
keep, chunk = [], want // 8
for step in range(8):
    keep.append(torch.empty(chunk, dtype=torch.uint8, device="cuda:0"))
    print(f"step {step} | loss {2.0 + 1.0 / (step + 1):.3f} | allocated {(step + 1) * chunk / 2**30:.1f} GiB", flush=True)
for step in range(8, 10):
    torch.cuda.synchronize()
    print(f"step {step} | loss {2.0 + 1.0 / (step + 1):.3f} | holding", flush=True)
print("done", flush=True)
