#!/usr/bin/env python3
"""A toy training loop for trying gpuctl without a GPU.

It prints what a real run prints (step, loss, tokens/s), echoes the
--max-anchors it was given and PYTORCH_CUDA_ALLOC_CONF, and can end the way a
real run ends when a GPU runs out of memory (--simulate-oom-at), with the
message PyTorch prints, so gpuctl's OOM detection can be seen end to end.
"""
import argparse
import math
import os
import random
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=40, help="training steps to run")
    parser.add_argument("--interval", type=float, default=0.1, help="seconds per step")
    parser.add_argument("--max-anchors", type=int, default=1024, help="anchors per batch (memory grows with it)")
    parser.add_argument("--simulate-oom-at", type=int, default=-1,
                        help="at this step, die of a (simulated) torch.OutOfMemoryError")
    parser.add_argument("--oom-above-anchors", type=int, default=-1,
                        help="with --simulate-oom-at: only when --max-anchors is above this (memory grows with it)")
    parser.add_argument("--oom-gpus", default="0",
                        help="the GPUs (torchrun ranks) that run out of memory, e.g. 5,7")
    parser.add_argument("--fragmented", action="store_true",
                        help="the OOM shows fragmentation (reserved but unallocated memory), and does not happen "
                             "with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
    parser.add_argument("--exceptions", type=int, default=0,
                        help="print this many handled exceptions (a traceback each) before the first step, as a "
                             "long, noisy run does")
    parser.add_argument("--exception-bytes", type=int, default=200,
                        help="with --exceptions: about how long each exception's line is")
    parser.add_argument("--print-times", action="store_true",
                        help="print the wall clock at start and just before the OOM (benchmarks)")
    args, extra = parser.parse_known_args()
    if args.print_times:
        print(f"toy_train: start t={time.time():.6f}", flush=True)

    print(f"toy_train: max_anchors={args.max_anchors}", flush=True)
    print(f"toy_train: PYTORCH_CUDA_ALLOC_CONF={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')}", flush=True)
    print(f"toy_train: job={os.environ.get('GPUCTL_JOB', '')} anchors={os.environ.get('GPUCTL_ANCHORS', '')} "
          f"attempt={os.environ.get('GPUCTL_ATTEMPT', '')} extra={' '.join(extra)}", flush=True)
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    expandable = "expandable_segments:True" in conf
    oom_at = args.simulate_oom_at
    if args.oom_above_anchors >= 0 and args.max_anchors <= args.oom_above_anchors:
        oom_at = -1  # small enough to fit
    if args.fragmented and expandable:
        oom_at = -1  # expandable segments fixed the fragmentation
    for n in range(args.exceptions):
        detail = ("x" * max(0, args.exception_bytes - 40))
        print("Traceback (most recent call last):", flush=False)
        print('  File "toy_train.py", line 7, in <module>', flush=False)
        print(f"ValueError: handled exception {n} {detail}", flush=True)
    rng = random.Random(0)
    for step in range(args.steps):
        if step == oom_at:
            tried = 16.0 * args.max_anchors / 1024
            idle = "20.00 GiB" if args.fragmented else "0 bytes"
            gpus = [int(g) for g in args.oom_gpus.split(",")]
            if args.print_times:
                print(f"toy_train: oom t={time.time():.6f}", flush=True)
            for gpu in gpus:
                # torchrun prefixes each rank's lines; one process alone does not.
                prefix = f"[rank{gpu}]:" if len(gpus) > 1 or gpu != 0 else ""
                print(f"{prefix}Traceback (most recent call last):", flush=True)
                print(f'{prefix}  File "toy_train.py", line 42, in <module>', flush=True)
                print(f"{prefix}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                      f"{tried:.2f} GiB. GPU {gpu} has a total capacity of 139.80 GiB of which 11.29 GiB is free. "
                      "Including non-PyTorch memory, this process has 128.51 GiB memory in use. Of the allocated "
                      f"memory 128.00 GiB is allocated by PyTorch, and {idle} is reserved by PyTorch but "
                      "unallocated. (simulated by toy_train.py)", flush=True)
            return 1
        loss = 2.0 + 8.0 * math.exp(-step / 15.0) + rng.uniform(-0.05, 0.05)
        ktok = 13.8 * (768 / args.max_anchors) ** 0.1 + rng.uniform(-0.3, 0.3)
        print(f"step {step} | loss {loss:.3f} | {ktok:.1f} Ktok/s", flush=True)
        time.sleep(args.interval)
    print("toy_train: done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
