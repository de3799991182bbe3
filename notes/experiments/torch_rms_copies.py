"""Why the RMSNorm notebook and chapter disagree on PyTorch's fp32 forward at 4096x4096 on an H100
(tests/test_agreement.py, 2026-12-06: 70.7 µs in the notebook, 65.5 in both builds of the chapter).

Times F.rms_norm's forward (and our kernel's) at 4096x4096 fp32 with the chapter's step, in one
process, with 1, 2 and 4 rotating copies (rotating_copies gives 1 here: 128 MB a call against
2 x 50 MB of L2), then again after a few hundred MB of other allocations (a notebook's state).

    PYTHONPATH=snippets python3 notes/experiments/torch_rms_copies.py
"""
import torch

from normkit import bench
from rmsnorm import timing


def time(name, copies):
    norm = timing.IMPLEMENTATIONS[name]
    runs = [bench.gpu_us(timing.make_step(norm, "fwd", 4096, 4096, torch.float32), copies) for _ in range(3)]
    return f"{name:>6} copies={copies}: " + ", ".join(f"{r:.2f}" for r in runs) + " µs"


print("rotating_copies:", bench.rotating_copies(timing.min_bytes(4096, 4096, torch.float32)["fwd"]))
for copies in (1, 2, 4):
    for name in ("torch", "kernel"):
        print(time(name, copies), flush=True)
keep = [torch.empty(2**20 * k, dtype=torch.uint8, device="cuda") for k in (37, 91, 150)]  # other state
for copies in (1, 2):
    for name in ("torch", "kernel"):
        print("after allocations:", time(name, copies), flush=True)
