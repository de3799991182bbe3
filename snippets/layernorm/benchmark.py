"""Forward and backward GPU time of the Triton LayerNorm against torch.nn.functional.layer_norm.

    python -m layernorm.benchmark            # the full sweep, printed as a table (CUDA only)
    python -m layernorm.benchmark --quick    # two sizes, to check the pipeline

The sweep is the official Triton tutorial's: M = 4096 rows of fp16, N from 1024 to 16384. Beside
it, the backward's parts, each timed on its own at a few widths (the lock buffer's zeroing, kernel 1
with it, kernel 2, and both kernels without autograd), and the backward at other GROUP_SIZEs.
"""

import argparse
import dataclasses
import sys

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit import bench

import torch
import torch.nn.functional as F
import triton

from layernorm.ops import (REDUCE_BLOCK_M, REDUCE_BLOCK_N, backward_rows, forward_rows, group_size_for,
                           layer_norm, layer_norm_bwd_dwdb_kernel, layer_norm_bwd_dx_kernel, partial_buffers)

M = 4096
DTYPE = torch.float16
EPS = 1e-5
SWEEP_N = [1024 * i for i in range(1, 17)]  # 1024, 2048, ..., 16384
QUICK_M = 256
QUICK_N = [1024, 4096]
PROVIDERS = {"triton": layer_norm, "torch": F.layer_norm}
MODES = ("forward", "backward")
ELEMENTS_MOVED = {"forward": 2, "backward": 3}  # per M * N: read x, write y; read x and dy, write dx
# The backward taken apart: where its time goes, at a width of each GROUP_SIZE branch and at 9216,
# the first width whose block (16384) is mostly padding; and the backward at other GROUP_SIZEs, up to
# one lock per row (GROUP_SIZE = M: no two rows share a lock, the partial buffers as big as dW's rows).
PARTS = ("zeroing", "kernel1", "kernel2", "both")
PART_N = (1024, 4096, 8192, 9216, 16384)
GROUP_N = (4096, 16384)
GROUP_SIZES = (16, 32, 64, 128, 256, 512, 1024, M)
QUICK_PART_N = (1024,)
QUICK_GROUP_SIZES = (32, 64)  # and QUICK_M: one lock per row


def make_inputs(m, n, dtype=DTYPE, device="cuda", seed=0):
    gen = torch.Generator(device=device).manual_seed(seed)
    x = -2.3 + 0.5 * torch.randn((m, n), dtype=dtype, device=device, generator=gen)
    w = torch.rand((n,), dtype=dtype, device=device, generator=gen)
    b = torch.rand((n,), dtype=dtype, device=device, generator=gen)
    dy = 0.1 * torch.randn((m, n), dtype=dtype, device=device, generator=gen)
    # leaves that need gradients, as in training: the forward pass also records the graph
    return x.requires_grad_(), w.requires_grad_(), b.requires_grad_(), dy


# --8<-- [start:timing]
def forward_step(fn, m, n):
    """Builds fresh inputs; returns one forward call on them."""
    def make():
        x, w, b, _ = make_inputs(m, n)
        return lambda: fn(x, (n,), w, b, EPS)
    return make


def backward_step(fn, m, n):
    """Builds fresh inputs and records the forward graph once (not timed);
    returns one backward pass through it."""
    def make():
        x, w, b, dy = make_inputs(m, n)
        y = fn(x, (n,), w, b, EPS)
        # returns the gradients instead of adding them into .grad: no accumulation
        return lambda: torch.autograd.grad(y, (x, w, b), dy, retain_graph=True)
    return make


def time_pass(mode, fn, m, n, protocol=bench.PROTOCOL):
    """One repetition: GPU µs per call of one pass, from CUDA-graph replay."""
    make = forward_step(fn, m, n) if mode == "forward" else backward_step(fn, m, n)
    n_bytes = ELEMENTS_MOVED[mode] * m * n * DTYPE.itemsize
    return bench.gpu_us(make, bench.rotating_copies(n_bytes, protocol), protocol)
# --8<-- [end:timing]


def backward_part(part, m, n, group_size=None):
    """Builds fresh inputs, the forward's statistics and the backward's buffers (not timed); returns
    one call of the part: the lock buffer's zeroing alone, kernel 1 after it (as the wrapper runs
    them), kernel 2 alone, or both kernels and their allocations (backward_rows, without autograd)."""
    def make():
        x, w, b, dy = (t.detach() for t in make_inputs(m, n))
        _, mean, rstd, meta = forward_rows(x, w, b, EPS)
        if part == "both":
            return lambda: backward_rows(dy, x, w, mean, rstd, meta, group_size)
        groups = group_size_for(n) if group_size is None else group_size
        (block, warps), dx = meta, torch.empty_like(x)
        dw_part, db_part = partial_buffers(groups, n, x.device)
        dw, db = torch.empty_like(w), torch.empty_like(b)
        locks = torch.zeros(2 * groups, dtype=torch.int32, device=x.device)

        def kernel1():
            locks.zero_()
            layer_norm_bwd_dx_kernel[(m,)](dx, dy, x, w, dw_part, db_part, mean, rstd, locks, x.stride(0), n,
                                           GROUP_SIZE=groups, BLOCK_SIZE_N=block, num_warps=warps)

        def kernel2():
            layer_norm_bwd_dwdb_kernel[(triton.cdiv(n, REDUCE_BLOCK_N),)](
                dw_part, db_part, dw, db, min(groups, m), n, BLOCK_SIZE_M=REDUCE_BLOCK_M, BLOCK_SIZE_N=REDUCE_BLOCK_N)

        kernel1()  # kernel 2 reads what kernel 1 wrote
        return {"zeroing": locks.zero_, "kernel1": kernel1, "kernel2": kernel2}[part]
    return make


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one run measures: its protocol, its rows and its widths, the widths whose backward is
    taken apart, and the GROUP_SIZEs the backward is timed at."""
    quick: bool
    protocol: bench.Protocol
    M: int
    n_values: tuple
    part_n: tuple
    group_n: tuple
    group_sizes: tuple


FULL = Plan(False, bench.PROTOCOL, M, tuple(SWEEP_N), PART_N, GROUP_N, GROUP_SIZES)
QUICK_PLAN = Plan(True, bench.QUICK, QUICK_M, tuple(QUICK_N), QUICK_PART_N, QUICK_PART_N,  # to check the pipeline
                  QUICK_GROUP_SIZES + (QUICK_M,))


def plan(quick=False):
    return QUICK_PLAN if quick else FULL


def task_keys(p):
    """(mode, provider, N) of every GPU-time figure of the sweep, then (mode, provider, "host") of
    what one call costs the host at the narrowest width (its GPU time included)."""
    return ([(mode, provider, n) for n in p.n_values for mode in MODES for provider in PROVIDERS]
            + [(mode, provider, "host") for mode in MODES for provider in PROVIDERS]
            + [("part", part, n) for n in p.part_n for part in PARTS]
            + [("group", groups, n) for n in p.group_n for groups in p.group_sizes])


def task(p, key):
    """One repetition of the figure of one task key."""
    mode, provider, n = key
    if mode in ("part", "group"):
        part, groups = (provider, None) if mode == "part" else ("both", provider)
        copies = bench.rotating_copies(ELEMENTS_MOVED["backward"] * p.M * n * DTYPE.itemsize, p.protocol)
        return lambda: bench.gpu_us(backward_part(part, p.M, n, groups), copies, p.protocol)
    fn = PROVIDERS[provider]
    if n == "host":
        make = (forward_step if mode == "forward" else backward_step)(fn, p.M, p.n_values[0])
        return lambda: bench.host_us(make, p.protocol)
    return lambda: time_pass(mode, fn, p.M, n, p.protocol)


def assemble(p, figures):
    """The data set from {task key: figure} of a run of plan p, the fixed-cost fits computed from the
    sweep's figures; a JSON-serializable dict. Needs no GPU: the CPU tests assemble synthetic runs."""
    rows = [{"mode": mode, "provider": provider, "N": n, "us": figures[(mode, provider, n)],
             "bytes": ELEMENTS_MOVED[mode] * p.M * n * DTYPE.itemsize}
            for n in p.n_values for mode in MODES for provider in PROVIDERS]
    fits = {f"{mode}/{provider}": bench.fixed_cost_fit([(r["bytes"], r["us"]) for r in rows
                                                         if r["mode"] == mode and r["provider"] == provider])
            for mode in MODES for provider in PROVIDERS}
    return {
        "M": p.M,
        "dtype": str(DTYPE).removeprefix("torch."),
        "eps": EPS,
        "n_values": list(p.n_values),
        "group_size": {str(n): group_size_for(n) for n in p.n_values},
        "elements_moved": ELEMENTS_MOVED,
        "protocol": bench.protocol_record(p.protocol),
        "rows": rows,
        "host": {f"{mode}/{provider}": figures[(mode, provider, "host")] for mode in MODES for provider in PROVIDERS},
        "host_n": p.n_values[0],
        "fits": fits,
        "parts": [{"part": part, "N": n, "group_size": group_size_for(n), "us": figures[("part", part, n)]}
                  for n in p.part_n for part in PARTS],
        "group_sweep": [{"N": n, "group_size": groups, "us": figures[("group", groups, n)]}
                        for n in p.group_n for groups in p.group_sizes],
    }


def measure(quick=False):
    """GPU time of both providers in both passes over the sweep, each a figure of three repetitions;
    the host cost of one call at the narrowest width; the fixed-cost fit; a JSON-serializable dict."""
    if not torch.cuda.is_available():
        raise RuntimeError("the benchmark times CUDA kernels; it needs a CUDA GPU")
    p = plan(quick)
    return assemble(p, bench.measure_all({key: task(p, key) for key in task_keys(p)}, p.protocol))


def format_table(results):
    by_key = {(r["mode"], r["provider"], r["N"]): r for r in results["rows"]}
    lines = [f"M = {results['M']}, {results['dtype']}: GPU µs per call, median of 3 repetitions",
             f"{'mode':>8} {'N':>6} {'triton µs':>10} {'torch µs':>9} {'triton GB/s':>12} {'torch/triton':>13}"]
    for mode in MODES:
        for n in results["n_values"]:
            t, r = by_key[(mode, "triton", n)], by_key[(mode, "torch", n)]
            gbps = t["bytes"] / (t["us"]["median"] * 1e3)
            lines.append(f"{mode:>8} {n:>6} {t['us']['median']:>10.1f} {r['us']['median']:>9.1f} {gbps:>12.0f} "
                         f"{r['us']['median'] / t['us']['median']:>12.2f}x")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="two sizes only")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA GPU: the benchmark times CUDA kernels and cannot run here", file=sys.stderr)
        return 1
    print(format_table(measure(quick=args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
