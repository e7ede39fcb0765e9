"""A small data-parallel training loop on CPU with gloo, for the multi-node
test: each step every rank all-reduces a tensor made from its rank and the
step, and checks the sum against what every rank must have given, so ranks
on different nodes check each other. Prints step/loss lines as a trainer
would. --steps N, --interval S (seconds per step). --max-anchors N (what
gpuctl's --anchors sets); --oom-rank R --oom-above-anchors A: rank R dies
of a (simulated) torch.OutOfMemoryError at step 3 while N > A."""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--max-anchors", type=int, default=1024)
    parser.add_argument("--oom-rank", type=int, default=-1)
    parser.add_argument("--oom-above-anchors", type=int, default=1 << 30)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    print(f"rank {rank} of {world} on {os.environ.get('GPUCTL_MULTINODE_RANK')} "
          f"({os.environ.get('GPUCTL_MULTINODE_ID')}), max anchors {args.max_anchors}, "
          f"alloc conf {os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '-')}", flush=True)
    weight = torch.zeros(4)
    for step in range(args.steps):
        if step == 3 and rank == args.oom_rank and args.max_anchors > args.oom_above_anchors:
            print("Traceback (most recent call last):", flush=True)
            print('  File "allreduce_train.py", line 50, in main', flush=True)
            print(f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {16.0 * args.max_anchors / 1024:.2f} "
                  f"GiB. GPU 0 has a total capacity of 139.80 GiB of which 11.29 GiB is free. (simulated)", flush=True)
            sys.exit(1)
        grad = torch.full((4,), float(rank + 1 + step))
        dist.all_reduce(grad)
        expected = sum(r + 1 + step for r in range(world))
        if not torch.allclose(grad, torch.full((4,), float(expected))):
            print(f"rank {rank}: step {step}: all_reduce gave {grad.tolist()}, want {expected}", flush=True)
            sys.exit(3)
        weight -= 0.01 * grad / world
        loss = float(weight.abs().sum())
        if rank == 0:
            print(f"step {step} loss {loss:.4f}", flush=True)
        time.sleep(args.interval)
    dist.barrier()
    print(f"rank {rank}: all {args.steps} sums agreed", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
