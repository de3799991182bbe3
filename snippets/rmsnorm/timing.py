"""The chapter's timing: GPU time of complete calls (CUDA-graph replay) and their host cost, three
implementations, the protocol of normkit.bench with three repetitions."""

import dataclasses

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


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one timing run measures: its protocol, its shapes (the host cost at the first) and the
    fit's rows."""
    quick: bool
    protocol: bench.Protocol
    shapes: tuple
    fit_m: tuple


FULL = Plan(False, bench.PROTOCOL, SHAPES, FIT_M)
QUICK_PLAN = Plan(True, bench.QUICK, SHAPES[:1], FIT_M[:2])


def plan(quick=False):
    return QUICK_PLAN if quick else FULL


def points(p):
    """{label: (M, N, dtype)} of every shape timed: the plan's shapes, then the fit's."""
    found = {label: (m, n, dtype) for label, m, n, dtype in p.shapes}
    return found | {f"{m}x{FIT_N}_fit": (m, FIT_N, FIT_DTYPE) for m in p.fit_m}


def task_keys(p):
    """(label, scope, implementation) of every GPU-time figure, then (label, scope, implementation,
    "host") of what a complete call costs the host at the plan's first shape."""
    small_label = p.shapes[0][0]
    return ([(label, scope, name) for label in points(p) for scope in SCOPES for name in IMPLEMENTATIONS]
            + [(small_label, scope, name, "host") for scope in SCOPES for name in IMPLEMENTATIONS])


def task(p, key):
    """One repetition of the figure of one task key."""
    label, scope, name = key[:3]
    norm, (m, n, dtype) = IMPLEMENTATIONS[name], points(p)[label]
    if key[3:] == ("host",):
        make = make_step(norm, scope, m, n, dtype)
        return lambda: bench.host_us(make, p.protocol)
    return lambda: gpu_time(norm, scope, m, n, dtype, protocol=p.protocol)


def assemble(p, figures):
    """The timing's data from {task key: figure} of a run of plan p, the fixed-cost fits computed from
    the fit's figures. Needs no GPU: the CPU tests assemble synthetic runs."""
    shapes = points(p)

    def entry(label):
        m, n, dtype = shapes[label]
        return {"label": label, "m": m, "n": n, "dtype": _dtype_name(dtype), "large": label in LARGE,
                "min_bytes": min_bytes(m, n, dtype),
                "us": {f"{scope}_{name}": figures[(label, scope, name)]
                       for scope in SCOPES for name in IMPLEMENTATIONS}}

    fit_points = [entry(label) for label in shapes if label.endswith("_fit")]
    fits = {f"{scope}_{name}": bench.fixed_cost_fit([(point["min_bytes"][scope], point["us"][f"{scope}_{name}"])
                                                     for point in fit_points])
            for scope in SCOPES for name in IMPLEMENTATIONS}
    small_label = p.shapes[0][0]
    return {"protocol": bench.protocol_record(p.protocol),
            "shapes": [entry(label) for label, *_ in p.shapes],
            "fit": {"n": FIT_N, "dtype": _dtype_name(FIT_DTYPE), "m": list(p.fit_m), "points": fit_points,
                    "figures": fits},
            "host": {"label": small_label, "us": {f"{scope}_{name}": figures[(small_label, scope, name, "host")]
                                                  for scope in SCOPES for name in IMPLEMENTATIONS}}}


def run_timing(quick=False):
    """Every figure of the chapter's timing, each from three repetitions in separate passes."""
    if not torch.cuda.is_available():
        raise RuntimeError("timing needs a CUDA GPU: CUDA events do not exist under the interpreter")
    p = plan(quick)
    return assemble(p, bench.measure_all({key: task(p, key) for key in task_keys(p)}, p.protocol))


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
