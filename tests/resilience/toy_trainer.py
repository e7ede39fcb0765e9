"""A trainer for the resilience tests (hang_test.sh, checkpoint_kill_test.sh),
each mode one way a real run behaves or fails. Plain Python unless the mode
needs torch. Faults happen on attempt 1 only (GPUCTL_ATTEMPT) of a run from
scratch, so a relaunch runs clean.

  deadlock        takes a lock twice: a single process stuck, printing nothing
  ddp             2 ranks under torchrun, gloo on CPU: all_reduce each step,
                  rank 0 prints steps and saves HF-style checkpoints;
                  --stop-rank R --fault-at S: rank R SIGSTOPs itself at step S;
                  --skip-rank R --fault-at S: rank R skips that all_reduce
                  (a barrier instead: the ranks wait in different collectives)
  eval            steps, then an eval loop of --quiet-for seconds that draws a
                  tqdm-style bar (\\r updates), then steps
  save            steps, then a checkpoint save of --quiet-for seconds that
                  prints nothing but writes files under --ckpt, then steps
  slowstart       --quiet-for seconds of silence (loading), then steps
  checkpoints     one process, torch: steps, an HF-style checkpoint every
                  --every steps (weights first, trainer_state.json last, each
                  shard fsynced, slow enough to be killed mid-save); checks
                  the checkpoint it resumes from is whole

--resume PATH (what --resume-arg passes): start after that checkpoint.
"""
import argparse
import json
import os
import signal
import sys
import threading
import time


def attempt():
    return int(os.environ.get("GPUCTL_ATTEMPT", "1"))


def save_hf(ckpt_dir, step, payload, shards=1, pause=0.0):
    path = os.path.join(ckpt_dir, f"checkpoint-{step}")
    os.makedirs(path, exist_ok=True)
    for i in range(shards):
        with open(os.path.join(path, f"model-{i}.bin"), "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        time.sleep(pause)
    with open(os.path.join(path, "trainer_state.json"), "w") as f:
        json.dump({"global_step": step}, f)
        f.flush()
        os.fsync(f.fileno())


def resumed_step(args):
    if not args.resume:
        return 0
    with open(os.path.join(args.resume, "trainer_state.json")) as f:
        step = json.load(f)["global_step"]
    print(f"resumed from {args.resume} at step {step}", flush=True)
    return step


def deadlock(args):
    lock = threading.Lock()
    lock.acquire()

    def wait_forever_on_a_lock():
        lock.acquire()

    wait_forever_on_a_lock()


def plain_steps(first, count, interval):
    for step in range(first, first + count):
        print(f"step {step} | loss {1.0 / (step + 1):.4f}", flush=True)
        time.sleep(interval)
    return first + count


def eval_phase(args):
    step = plain_steps(0, args.steps, args.interval)
    end = time.time() + args.quiet_for
    i = 0
    while time.time() < end:
        i += 1
        sys.stdout.write(f"\rEvaluating: {i}/1000 [00:{i:02d}<00:30, 2.00it/s]")
        sys.stdout.flush()
        time.sleep(0.5)
    print("", flush=True)
    plain_steps(step, args.steps, args.interval)
    print("done", flush=True)


def quiet_save(args):
    step = plain_steps(0, args.steps, args.interval)
    end = time.time() + args.quiet_for
    path = os.path.join(args.ckpt, f"checkpoint-{step}")
    os.makedirs(path, exist_ok=True)
    shard = 0
    while time.time() < end:
        with open(os.path.join(path, f"shard-{shard}.bin"), "wb") as f:
            f.write(b"\0" * 65536)
        shard += 1
        time.sleep(0.4)
    plain_steps(step, args.steps, args.interval)
    print("done", flush=True)


def slow_start(args):
    time.sleep(args.quiet_for)
    plain_steps(0, args.steps, args.interval)
    print("done", flush=True)


def ddp(args):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    first = resumed_step(args) if rank == 0 else 0
    start = torch.tensor([first])
    dist.broadcast(start, 0)
    first = int(start.item())
    print(f"rank {rank} of {dist.get_world_size()}, attempt {attempt()}, from step {first}", flush=True)
    for step in range(first, args.steps):
        # Only a run from scratch: a part a multi-node supervisor restarts
        # with the others is a new job (attempt 1 again), from a checkpoint.
        faulty = attempt() == 1 and not args.resume and step == args.fault_at
        if faulty and rank == args.stop_rank:
            os.kill(os.getpid(), signal.SIGSTOP)
        if faulty and rank == args.skip_rank:
            dist.barrier()  # skipped the all_reduce: now in another collective than the others
        else:
            grad = torch.full((4,), float(rank + step))
            dist.all_reduce(grad)
        if rank == 0:
            print(f"step {step} | loss {1.0 / (step + 1):.4f}", flush=True)
            if args.ckpt and step % args.every == 0 and step > first:
                save_hf(args.ckpt, step, b"w" * 1024)
        time.sleep(args.interval)
    dist.barrier()
    print(f"rank {rank}: done at step {args.steps}", flush=True)
    dist.destroy_process_group()


def checkpoints(args):
    import torch

    step = resumed_step(args)
    if args.resume:
        state = torch.load(os.path.join(args.resume, "model-0.bin"))
        if int(state["step"].item()) != step:
            print(f"RESUME BAD: weights of step {int(state['step'].item())} in a checkpoint of step {step}", flush=True)
            sys.exit(3)
    weights = torch.zeros(1 << 16)
    while step < args.steps:
        step += 1
        weights += 0.001
        print(f"step {step} | loss {float(weights[0]):.4f}", flush=True)
        if step % args.every == 0:
            path = os.path.join(args.ckpt, f"checkpoint-{step}")
            os.makedirs(path, exist_ok=True)
            for i in range(3):
                torch.save({"step": torch.tensor(step), "w": weights}, os.path.join(path, f"model-{i}.bin"))
                with open(os.path.join(path, f"model-{i}.bin"), "rb+") as f:
                    os.fsync(f.fileno())
                time.sleep(args.interval)
            save_hf(args.ckpt, step, b"", shards=0)
            print(f"saved checkpoint-{step}", flush=True)
        time.sleep(args.interval)
    print("done", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--quiet-for", type=float, default=0.0)
    parser.add_argument("--ckpt", default="")
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--fault-at", type=int, default=-1)
    parser.add_argument("--stop-rank", type=int, default=-1)
    parser.add_argument("--skip-rank", type=int, default=-1)
    parser.add_argument("--resume", default="")
    args = parser.parse_args()
    modes = {"deadlock": deadlock, "ddp": ddp, "eval": eval_phase, "save": quiet_save, "slowstart": slow_start,
             "checkpoints": checkpoints}
    modes[args.mode](args)


if __name__ == "__main__":
    main()
