"""Issue 39, item 1: a variant of LayerNorm's classes backward (layernorm/fast_backward.py) whose row
sums need one reduction, not two. The prototype of issue 21 (notes/fast-kernels.md) lost 14 points
at 4097 to its edges' sums, which cross warps a second time a row.

Here the tile loads every 16-byte group that holds a column of the row, the partial groups at both
ends whole (their other lanes belong to the neighbouring rows, or, past the last row, to the same
16-byte block as its last element), and zeroes the lanes outside the row before anything sums them:
one pair of sums a row, dW and dB in the frame for every column. The edges' tile is left only for
dx's stores, which must not touch the neighbours' columns. The tile must hold the whole window
(LANES = next power of two of N + V - 1).

    PYTHONPATH=snippets python3 notes/experiments/classes_overread.py --out overread.json
"""

import argparse
import json

import torch
import triton
import triton.language as tl

from layernorm import fast as ln
from normkit import aligned, bench
from normkit.aligned import class_block, class_columns, load_edges
from normkit.direct_launch import DirectLauncher
from normkit.tiles import first_loads, load_weight, pair_sums, per_row, step_loads


@triton.jit(do_not_specialize=["M", "rows_per_program"])
def ln_bwd_overread_kernel(
    X, DY, DX, W, Stats, Part, M, rows_per_program,
    N: tl.constexpr, LANES: tl.constexpr, V: tl.constexpr, EDGES: tl.constexpr,
    ROWS: tl.constexpr, PREFETCH: tl.constexpr, HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr, GRAD_B: tl.constexpr,
):
    c, first, end, window, s = class_block(tl.program_id(0), M, rows_per_program, N, V)
    lanes, body, cols_e, edge = class_columns(s, N, LANES, V, EDGES)
    group = (lanes // V) * V
    touch = (group + V > s) & (group < s + N)  # whole groups with a column of the row
    in_row = (lanes >= s) & (lanes < s + N)
    w = load_weight(W, lanes - s, in_row, HAS_W)
    w_e = load_weight(W, cols_e, edge, HAS_W)
    X += window
    DY += window
    DX += window
    STEP: tl.constexpr = V * N
    start, x, dy = first_loads(X, DY, first, end, lanes, touch, STEP, STEP, ROWS, PREFETCH)
    dw = tl.zeros([LANES], dtype=tl.float32)
    db = tl.zeros([LANES], dtype=tl.float32)
    n = tl.full([], N, tl.float32)
    while start < end:
        rows, row_ok, mask, rows64, x, dy, x_next, dy_next = step_loads(
            X, DY, x, dy, start, end, lanes, touch, STEP, STEP, ROWS, PREFETCH)
        at = c + rows * V
        mean = per_row(tl.load(Stats + at, mask=row_ok, other=0.0), ROWS)
        rstd = per_row(tl.load(Stats + M + at, mask=row_ok, other=0.0), ROWS)
        inside = row_ok[:, None] & in_row[None, :]
        xh = tl.where(inside, (x.to(tl.float32) - mean) * rstd, 0.0)
        dyf = tl.where(inside, dy.to(tl.float32), 0.0)
        if GRAD_X:
            g = dyf * w[None, :]
            s1, s2 = pair_sums(xh * g, g, ROWS)
            c1 = tl.math.div_rn(s1, n)
            c2 = tl.math.div_rn(s2, n)
            dx = (g - (xh * c1 + c2)) * rstd
            tl.store(DX + rows64 * STEP + lanes[None, :], dx.to(DX.dtype.element_ty),
                     mask=row_ok[:, None] & body[None, :])
            x_e, dy_e, mask_e, at_e = load_edges(X, DY, rows64, row_ok, s, cols_e, edge, STEP)
            xh_e = (x_e - mean) * rstd
            dx_e = (dy_e * w_e[None, :] - (xh_e * c1 + c2)) * rstd
            tl.store(DX + at_e, dx_e.to(DX.dtype.element_ty), mask=mask_e)
        if GRAD_W:
            dw += tl.sum(dyf * xh, axis=0)
        if GRAD_B:
            db += tl.sum(dyf, axis=0)
        x, dy = x_next, dy_next
        start += ROWS
    pid = tl.program_id(0)
    if GRAD_W:
        tl.store(Part + pid * N + lanes - s, dw, mask=in_row)
    if GRAD_B:
        tl.store(Part + ((tl.num_programs(0) if GRAD_W else 0) + pid) * N + lanes - s, db,
                 mask=in_row)


overread = DirectLauncher(ln_bwd_overread_kernel)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    copy = bench.copy_bandwidth_gb_per_s()["median"]
    results = []
    kernels = {"classes": ln.OP.BACKWARD["classes"], "overread": overread}
    for n in (4097, 4098, 4100, 8193, 8196, 3001):
        m = 2**27 // n
        g = torch.Generator(device="cuda").manual_seed(0)
        x, dy = (torch.randn(m, n, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(2))
        w = torch.rand(n, device="cuda", dtype=torch.bfloat16, generator=g) + 0.5
        b = torch.randn_like(w)
        _, stats = ln.OP.forward_rows(x, w, b, 1e-5)
        base = ln.OP.backward_config(n, 2)
        base = base[-1] if base[0] == "classes" else base  # what runs without the classes
        ref = ln.OP.backward_rows(dy, x, w, stats, config=base)
        lanes = triton.next_power_of_2(n + 7)
        for warps in (lanes // 512, lanes // 256, lanes // 1024):
            if not 1 <= warps <= 32:
                continue
            config = ("classes", lanes, 1, warps, max(1, 16 // warps), lanes <= 8192, 8,
                      aligned.class_edges(n, lanes, 8), base)
            for kind, kernel in kernels.items():
                ln.OP.BACKWARD["classes"] = kernel  # the plan's launcher for "classes"
                cfg = config
                got = ln.OP.backward_rows(dy, x, w, stats, config=cfg)
                err = max((a.float() - r.float()).abs().max().item() for a, r in zip(got, ref))
                ms = bench.median_call_ms(lambda: ln.OP.backward_rows(dy, x, w, stats, config=cfg), 5, 10, 5)
                pct = 100 * bench.gb_per_s(3 * m * n * 2, ms) / copy
                results.append({"N": n, "kind": kind, "warps": warps, "lanes": lanes, "bwd_pct": pct,
                                "max_diff": err})
                print(f"ln N={n} {kind:9s} lanes={lanes} warps={warps:2d} bwd {pct:5.1f}% diff {err:.2g}",
                      flush=True)
        del x, dy, stats
        torch.cuda.empty_cache()
    json.dump({"copy_gb_per_s": copy, "results": results}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
