"""A hung run on a real GPU, for tests/gpu/run.sh: a kernel that spins
(torch.cuda._sleep) again and again, and no step, no output after the
first line: the GPU busy at low power, the host thread spinning in
synchronize. gpuctl must call it hung after --start-timeout and dump it."""
import torch

torch.cuda.init()
x = torch.ones(1, device="cuda")
print(f"spinning on {torch.cuda.get_device_name(0)}", flush=True)
while True:
    torch.cuda._sleep(2_000_000_000)  # cycles: about a second at H200 clocks
    torch.cuda.synchronize()
