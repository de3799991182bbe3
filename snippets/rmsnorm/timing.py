"""The timing protocol: complete calls, CUDA events, 20 warm-up calls, median of 50 samples of 20 calls."""

import torch

from normkit import bench
from rmsnorm.ops import rms_norm
from rmsnorm.reference import rmsnorm_reference

# (label, M, N, dtype): the chapter's small shape, then an LLM-sized one in both dtypes.
SHAPES = (
    ("128x257_fp32", 128, 257, torch.float32),
    ("4096x4096_fp16", 4096, 4096, torch.float16),
    ("4096x4096_fp32", 4096, 4096, torch.float32),
)
LARGE = {"4096x4096_fp16", "4096x4096_fp32"}
PROTOCOL = {"warmup_calls": 20, "samples": 50, "calls_per_sample": 20}
QUICK_PROTOCOL = {"warmup_calls": 2, "samples": 3, "calls_per_sample": 2}


# --8<-- [start:timing]
def time_shape(m, n, dtype, protocol=PROTOCOL, device="cuda"):
    gen = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(m, n, device=device, dtype=dtype, generator=gen)
    gamma = torch.randn(n, device=device, dtype=dtype, generator=gen)
    dy = torch.randn(m, n, device=device, dtype=dtype, generator=gen)
    xg, gg = x.clone().requires_grad_(), gamma.clone().requires_grad_()

    def forward_only(norm):
        return lambda: norm(x, gamma)

    # autograd included, gradients returned, nothing accumulated
    def forward_backward(norm):
        return lambda: torch.autograd.grad(norm(xg, gg), (xg, gg), dy)

    ms = {}
    for name, norm in (("reference", rmsnorm_reference), ("kernel", rms_norm)):
        ms[f"fwd_{name}"] = bench.median_call_ms(forward_only(norm), **protocol)
        ms[f"fwdbwd_{name}"] = bench.median_call_ms(forward_backward(norm), **protocol)
    return ms
# --8<-- [end:timing]


# --8<-- [start:bytes]
def min_bytes(m, n, dtype):
    """The bytes any RMSNorm must move: forward reads x and writes y;
    backward reads x and dy, writes dx.

    gamma, r and the kernel's own PARTIAL traffic (write then read,
    2 * M * N * 4 bytes) are not counted, so GB/s computed from these bytes is an
    effective rate, comparable between implementations.
    """
    element = torch.finfo(dtype).bits // 8
    return {"fwd": 2 * m * n * element, "fwdbwd": 5 * m * n * element}
# --8<-- [end:bytes]


def run_timing(quick=False, shapes=SHAPES):
    if not torch.cuda.is_available():
        raise RuntimeError("timing needs a CUDA GPU: CUDA events do not exist under the interpreter")
    protocol = QUICK_PROTOCOL if quick else PROTOCOL
    if quick:
        shapes = shapes[:1]
    results = []
    for label, m, n, dtype in shapes:
        ms = time_shape(m, n, dtype, protocol)
        entry = {"label": label, "m": m, "n": n, "dtype": str(dtype).replace("torch.", ""),
                 "large": label in LARGE, "us": {k: v * 1000 for k, v in ms.items()},
                 "min_bytes": min_bytes(m, n, dtype)}
        results.append(entry)
    return {"protocol": protocol, "shapes": results}


def diff_pct(kernel, reference):
    return 100.0 * (kernel - reference) / reference


def format_timing(result, copy_gb_per_s=None):
    p = result["protocol"]
    lines = [f"protocol: {p['warmup_calls']} warm-up calls, median of {p['samples']} samples "
             f"of {p['calls_per_sample']} calls (CUDA events around complete calls)"]
    for s in result["shapes"]:
        us = s["us"]
        for scope in ("fwd", "fwdbwd"):
            ref, ker = us[f"{scope}_reference"], us[f"{scope}_kernel"]
            line = (f"  {s['label']:<15} {scope:<7} reference {ref:9.2f} us  kernel {ker:9.2f} us  "
                    f"({diff_pct(ker, ref):+.1f} %)")
            if s["large"]:
                gbs = bench.gb_per_s(s["min_bytes"][scope], ker / 1000)
                line += f"  kernel {gbs:7.1f} GB/s"
                if copy_gb_per_s:
                    line += f" = {100 * gbs / copy_gb_per_s:.0f} % of copy"
            lines.append(line)
    return "\n".join(lines)
