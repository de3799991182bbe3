"""The chapter's timing: GPU time of complete calls (CUDA-graph replay) and their host cost, three
implementations, the protocol of normkit.bench with three repetitions."""

import torch
import torch.nn.functional as F

from normkit import bench
from rmsnorm.ops import rms_norm
from rmsnorm.reference import rmsnorm_reference

EPS = 1e-6
# (label, M, N, dtype): the chapter's small shape, then an LLM-sized one in both dtypes.
SHAPES = (
    ("128x257_fp32", 128, 257, torch.float32),
    ("4096x4096_fp16", 4096, 4096, torch.float16),
    ("4096x4096_fp32", 4096, 4096, torch.float32),
)
LARGE = {"4096x4096_fp16", "4096x4096_fp32"}
# the fixed-cost fit: one width, rows from 256 to 4096 (the largest the scratch budget allows)
FIT_N, FIT_DTYPE, FIT_M = 4096, torch.float16, (256, 512, 1024, 2048, 4096)
IMPLEMENTATIONS = {
    "reference": rmsnorm_reference,  # the chapter's unfused PyTorch oracle
    "kernel": rms_norm,              # the chapter's Triton kernels
    "torch": lambda x, gamma, eps: F.rms_norm(x, (x.shape[-1],), gamma, eps),  # PyTorch's own
}
SCOPES = ("fwd", "fwdbwd")


# --8<-- [start:timing]
def make_step(norm, scope, m, n, dtype, device="cuda"):
    """Builds fresh inputs; returns one complete call: the forward alone, or
    the forward and torch.autograd.grad (gradients returned, none accumulated)."""
    def make():
        gen = torch.Generator(device=device).manual_seed(0)
        x = torch.randn(m, n, device=device, dtype=dtype, generator=gen)
        gamma = torch.randn(n, device=device, dtype=dtype, generator=gen)
        dy = torch.randn(m, n, device=device, dtype=dtype, generator=gen)
        if scope == "fwd":
            return lambda: norm(x, gamma, EPS)
        xg, gg = x.requires_grad_(), gamma.requires_grad_()
        return lambda: torch.autograd.grad(norm(xg, gg, EPS), (xg, gg), dy)
    return make


def gpu_time(norm, scope, m, n, dtype, protocol=bench.PROTOCOL):
    """One repetition: GPU µs per complete call, from CUDA-graph replay."""
    n_bytes = min_bytes(m, n, dtype)[scope]
    copies = bench.rotating_copies(n_bytes, protocol)
    return bench.gpu_us(make_step(norm, scope, m, n, dtype), copies, protocol)
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


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def run_timing(quick=False, shapes=SHAPES):
    """Every figure of the chapter's timing, each from three repetitions in separate passes."""
    if not torch.cuda.is_available():
        raise RuntimeError("timing needs a CUDA GPU: CUDA events do not exist under the interpreter")
    protocol = bench.QUICK if quick else bench.PROTOCOL
    fit_m = FIT_M[:2] if quick else FIT_M
    shapes = shapes[:1] if quick else shapes
    points = {label: (m, n, dtype) for label, m, n, dtype in shapes}
    points.update({f"{m}x{FIT_N}_fit": (m, FIT_N, FIT_DTYPE) for m in fit_m})
    tasks = {}
    for label, (m, n, dtype) in points.items():
        for scope in SCOPES:
            for name, norm in IMPLEMENTATIONS.items():
                tasks[(label, scope, name)] = (
                    lambda a=(norm, scope, m, n, dtype): gpu_time(*a, protocol=protocol))
    small_label, m, n, dtype = shapes[0]
    for scope in SCOPES:  # what a complete call costs the host, at the small shape
        for name, norm in IMPLEMENTATIONS.items():
            make = make_step(norm, scope, m, n, dtype)
            tasks[(small_label, scope, name, "host")] = lambda make=make: bench.host_us(make, protocol)
    figures = bench.measure_all(tasks, protocol)

    def entry(label, m, n, dtype):
        return {"label": label, "m": m, "n": n, "dtype": _dtype_name(dtype), "large": label in LARGE,
                "min_bytes": min_bytes(m, n, dtype),
                "us": {f"{scope}_{name}": figures[(label, scope, name)]
                       for scope in SCOPES for name in IMPLEMENTATIONS}}

    fit_points = [entry(label, *points[label]) for label in points if label.endswith("_fit")]
    fits = {f"{scope}_{name}": bench.fixed_cost_fit([(p["min_bytes"][scope], p["us"][f"{scope}_{name}"])
                                                     for p in fit_points])
            for scope in SCOPES for name in IMPLEMENTATIONS}
    return {"protocol": bench.protocol_record(protocol),
            "shapes": [entry(label, m, n, dtype) for label, m, n, dtype in shapes],
            "fit": {"n": FIT_N, "dtype": _dtype_name(FIT_DTYPE), "m": list(fit_m), "points": fit_points,
                    "figures": fits},
            "host": {"label": small_label, "us": {f"{scope}_{name}": figures[(small_label, scope, name, "host")]
                                                  for scope in SCOPES for name in IMPLEMENTATIONS}}}


def format_timing(result, copy_gb_per_s=None):
    """One line per shape, scope and implementation: the figure, and the kernel's share of the copy."""
    p = result["protocol"]
    lines = [f"protocol: CUDA-graph replay, {p['warmup_calls']} warm-up replays, median of {p['samples']} "
             f"samples of {p['calls_per_sample']} replays, {p['repeats']} repetitions: median (range)"]
    for s in result["shapes"]:
        for scope in SCOPES:
            for name in IMPLEMENTATIONS:
                f = s["us"][f"{scope}_{name}"]
                line = f"  {s['label']:<15} {scope:<7} {name:<10} {bench.figure_text(f)}"
                if s["large"] and copy_gb_per_s and name == "kernel":
                    gbs = bench.gb_per_s(s["min_bytes"][scope], f["median"] / 1000)
                    line += f"  = {100 * gbs / copy_gb_per_s:.0f} % of copy"
                lines.append(line)
    return "\n".join(lines)
