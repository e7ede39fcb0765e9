# Allocates 16 GiB blocks on cuda:0 until PyTorch raises torch.OutOfMemoryError.
# The error is deliberately not caught: its traceback and message, as a real
# job prints them, are what gpuctld must recognise (tests/gpu/run.sh).
import torch

print(f"torch {torch.__version__}", flush=True)
keep = []
while True:
    keep.append(torch.empty(16 << 30, dtype=torch.uint8, device="cuda:0"))
    print(f"step {len(keep) - 1} allocated {16 * len(keep)}.0 GiB", flush=True)
