"""Host cost of one plain call of the fast ops against eager PyTorch, for one tree of snippets/
(issue 39, item 4: the one host layer and its plan cache, before and after).

At N = 4096 bf16 and M = 1, 8, 64, 512: a `no_grad` forward, and a forward+backward under autograd
(torch.autograd.grad over x, weight and bias), each the fastest of 300 synchronized calls after 20
warm-up calls, 5 repetitions of that, printed as JSON lines. Run once per tree, in its own process
(both trees name their packages the same):

    PYTHONPATH=<tree>/snippets python3 notes/experiments/host_before_after.py <label> [ops...]
"""
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

from layernorm.fast import layer_norm_fast
from rmsnorm.fast import rms_norm_fast

N, DTYPE, CALLS, WARMUP, REPEATS = 4096, torch.bfloat16, 300, 20, 5
OPS = {
    "layernorm": {"fast": lambda x, w, b: layer_norm_fast(x, (N,), w, b),
                  "eager": lambda x, w, b: F.layer_norm(x, (N,), w, b)},
    "rmsnorm": {"fast": lambda x, w, b: rms_norm_fast(x, (N,), w, 1e-6),
                "eager": lambda x, w, b: F.rms_norm(x, (N,), w, 1e-6)},
}


def fastest_us(step):
    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(CALLS):
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return 1e6 * best


def steps(fn, M):
    x = torch.randn(M, N, device="cuda", dtype=DTYPE, requires_grad=True)
    w = torch.randn(N, device="cuda", dtype=DTYPE, requires_grad=True)
    b = torch.randn(N, device="cuda", dtype=DTYPE, requires_grad=True)
    dy = torch.randn(M, N, device="cuda", dtype=DTYPE)
    xd, wd, bd = x.detach(), w.detach(), b.detach()

    def fwd():
        with torch.no_grad():
            fn(xd, wd, bd)

    def fwd_bwd():  # RMSNorm has no bias: it is not an input of its graph
        torch.autograd.grad(fn(x, w, b), (x, w, b), dy, allow_unused=True)

    return {"fwd": fwd, "fwd+bwd": fwd_bwd}


for op, providers in OPS.items():
    if len(sys.argv) > 2 and op not in sys.argv[2:]:
        continue
    for M in (1, 8, 64, 512):
        for provider, fn in providers.items():
            for mode, step in steps(fn, M).items():
                runs = [fastest_us(step) for _ in range(REPEATS)]
                print(json.dumps({"tree": sys.argv[1], "op": op, "M": M, "N": N, "provider": provider,
                                  "mode": mode, "median_us": round(statistics.median(runs), 1),
                                  "runs_us": [round(r, 1) for r in runs]}), flush=True)
