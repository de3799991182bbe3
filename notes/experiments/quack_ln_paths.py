"""Why QuACK's LayerNorm forward runs at ~7 % of the copy bandwidth at N = 3072, 6144, 12288, 16384
(issue 38; the faster data set, H200 and H100 alike) and at 80-93 % elsewhere.

quack-kernels 0.6.5 picks threads_per_row by width (<= 3072: 32, <= 6144: 64, <= 16384: 128), so
a thread holds N / threads_per_row elements: 96 at 3072, 6144 and 12288, 128 at 16384, 64-80 at the
widths that run fast. The hypothesis (notes/issue-38.md): x, fp32 weight and fp32 bias at 96+
elements a thread do not fit in registers. This times the LayerNorm forward kernel (CUDA events,
median of 20 calls, bf16 x) with the heuristic's config and with variants: twice the threads a row,
no bias, bf16 weight and bias, the weight loaded after the reduction; and the RMSNorm kernel.

    PYTHONPATH=<quack-kernels 0.6.5> python3 notes/experiments/quack_ln_paths.py
"""
import dataclasses
import statistics

import torch
from quack.cute_dsl_utils import torch2cute_dtype_map as T2C
from quack.rmsnorm import _compile_rmsnorm_fwd
from quack.rmsnorm_config import RmsNormFwdConfig

WIDTHS = (2048, 3072, 4096, 6144, 12288, 16384)


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def run(n, is_ln=True, w_dtype=torch.float32, with_bias=True, config=None):
    m = 2**25 // n
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, device="cuda", dtype=w_dtype)
    b = torch.randn(n, device="cuda", dtype=w_dtype) if (with_bias and is_ln) else None
    out, rstd = torch.empty_like(x), torch.empty(m, device="cuda", dtype=torch.float32)
    mean = torch.empty(m, device="cuda", dtype=torch.float32) if is_ln else None
    cute = [T2C[t.dtype] if t is not None else None for t in (x, out, w, b)]
    kernel = _compile_rmsnorm_fwd(cute[0], cute[1], None, cute[2], cute[3], None, n, True, is_ln, is_ln,
                                  False, 0.0, config)
    us = timed(lambda: kernel(x, w, b, None, out, None, rstd, mean, 1e-6))
    return f"{us:8.1f} µs {2 * m * n * 2 / (us * 1e3):6.0f} GB/s"


def variants(n):
    base = RmsNormFwdConfig.from_analytical_heuristic(n, 16, is_layernorm=True)
    wide = dataclasses.replace(base, threads_per_row=2 * base.threads_per_row,
                               num_threads=max(base.num_threads, 2 * base.threads_per_row))
    yield f"LN heuristic {base}", dict()
    yield f"LN threads_per_row x2 ({n // wide.threads_per_row} a thread)", dict(config=wide)
    yield "LN no bias", dict(with_bias=False)
    yield "LN bf16 weight and bias", dict(w_dtype=torch.bfloat16)
    yield "LN weight after the reduction", dict(config=dataclasses.replace(base, delay_w_load=True))
    yield "RMSNorm heuristic", dict(is_ln=False)


for n in WIDTHS:
    print(f"N = {n}: {n // RmsNormFwdConfig.from_analytical_heuristic(n, 16, is_layernorm=True).threads_per_row}"
          " elements a thread", flush=True)
    for name, kwargs in variants(n):
        try:
            print(f"  {run(n, **kwargs)}  {name}", flush=True)
        except Exception as error:  # noqa: BLE001 - a probe: print and go on
            print(f"  failed ({type(error).__name__}: {str(error)[:120]})  {name}", flush=True)
