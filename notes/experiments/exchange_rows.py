"""Issue 39, item 2: the backward past what two staged programs hold, by exchanging row sums.

A row's dx needs its sums over all N columns (RMSNorm: sum(x_hat * g); LayerNorm also sum(g)).
The chunked design reads each row twice for them, the staged design holds a row in two programs'
shared memory and reads the other half again. Here S programs share a row, each holding its
share of x and dy in registers: each adds up its share, publishes its partial sums and a count
(one atomic add, release), waits until the row's count reaches S (acquire), and reads the S
partial sums back from L2. x and dy are read once; dW (and dB) stay in registers for the
program's columns over all its rows and are written once. Every program of the grid must be
resident at once (a program waits on the others of its row): the grid is at most one program
an SM a share-group, and a wait gives up after MAX_SPIN tries (the row's dx is then wrong, and
the check below says so) rather than hang.

The next row's share is loaded before the wait (PREFETCH), so the loads of one row overlap the
exchange of the one before. Run 1 (one program an SM): about 60 % of copy with two shares, 40
with four, 25 with eight where shares are small: the exchange's latency sets the pace. Run 2
held ROWS rows a step as 2D tiles, one exchange a step (the kernel of commit ba67caf): slower
everywhere. Run 3: two programs an SM, so that one loads while the other waits. Run 4: the
exchange one row behind (lagged_bwd_kernel: row r + G is loaded and published before the wait
for row r, so a whole row's loads and sums cover the wait; two rows held), every grid launched
cooperatively (the driver refuses a grid that cannot be resident at once).

    PYTHONPATH=snippets python3 notes/experiments/exchange_rows.py --out exchange.json
    TRITON_INTERPRET=1 PYTHONPATH=snippets python3 notes/experiments/exchange_rows_check.py  # no GPU
"""

import argparse
import json
import time

import torch
import triton
import triton.language as tl

from layernorm import fast as ln
from normkit import bench
from rmsnorm import fast as rms
from wide_rows import inputs  # this folder: the random rows and parameters of the wide-rows runs

OPS = {"layernorm": ln, "rmsnorm": rms}
WIDTHS = (20480, 24576, 32768, 16384)
# label: (shares, programs an SM, warps, lagged, PREFETCH). Run 3's best of the one-row kernel,
# launched plainly as in run 3 (its s4 w8 takes 241 registers a thread, one program an SM: the
# sm2 grid ran as two waves of whole groups, which a cooperative launch refuses). Then run 4's
# lagged kernel where ptxas (exchange_rows_check.py --ptxas, N = 32768, bf16) says it fits:
# two shares, and four at 4 warps, spill kilobytes (skipped); s4 w8 and s8 w8 take 255 and 185
# registers, one program an SM (no sm2); s8 w4 255, two an SM. PREFETCH (a third row held) where
# a program fits without it: s8 w8 203 registers, s8 w4 spills 0.5 KB (float32 LayerNorm: 4 KB).
VARIANTS = {
    "s4 sm2 w8 pf": (4, 2, 8, False, True),
    "s8 sm2 w4 pf": (8, 2, 4, False, True),
    "s4 sm1 w8 pf": (4, 1, 8, False, True),
    "lag s4 sm1 w8": (4, 1, 8, True, False),
    "lag s8 sm1 w4": (8, 1, 4, True, False),
    "lag s8 sm2 w4": (8, 2, 4, True, False),
    "lag s8 sm1 w8": (8, 1, 8, True, False),
    "lag s8 sm2 w4 pf": (8, 2, 4, True, True),
    "lag s8 sm1 w8 pf": (8, 1, 8, True, True),
}


@triton.jit
def exchange_bwd_kernel(X, DY, DX, W, Stats, Part, Sums, Count, M,
                        N: tl.constexpr, S: tl.constexpr, WIDTH: tl.constexpr,
                        TILE: tl.constexpr, LN: tl.constexpr, PREFETCH: tl.constexpr,
                        MAX_SPIN: tl.constexpr):
    pid = tl.program_id(0)
    groups = tl.num_programs(0) // S
    share, group = pid % S, pid // S
    cols = share * WIDTH + tl.arange(0, TILE)
    ok = (cols < (share + 1) * WIDTH) & (cols < N)
    w = tl.load(W + cols, mask=ok, other=0.0).to(tl.float32)
    dw = tl.zeros([TILE], dtype=tl.float32)
    db = tl.zeros([TILE], dtype=tl.float32)
    n = tl.full([], N, tl.float32)
    parts = tl.arange(0, S)
    row = group
    x = tl.load(X + row.to(tl.int64) * N + cols, mask=ok & (row < M), other=0.0)
    dy = tl.load(DY + row.to(tl.int64) * N + cols, mask=ok & (row < M), other=0.0)
    while row < M:
        if LN:
            mean = tl.load(Stats + row)
            rstd = tl.load(Stats + M + row)
        else:
            mean = 0.0
            rstd = tl.load(Stats + row)
        xf = x.to(tl.float32)
        dyf = dy.to(tl.float32)
        x_hat = tl.where(ok, (xf - mean) * rstd, 0.0)
        g = dyf * w
        tl.store(Sums + (row * S + share) * 2, tl.sum(x_hat * g, axis=0))
        if LN:
            tl.store(Sums + (row * S + share) * 2 + 1, tl.sum(g, axis=0))
        tl.debug_barrier()  # every thread's stores before the count that publishes them
        tl.atomic_add(Count + row, 1, sem="release")
        nxt = row + groups
        if PREFETCH:  # the next row's share is on its way while this one waits
            x = tl.load(X + nxt.to(tl.int64) * N + cols, mask=ok & (nxt < M), other=0.0)
            dy = tl.load(DY + nxt.to(tl.int64) * N + cols, mask=ok & (nxt < M), other=0.0)
        arrived = tl.atomic_add(Count + row, 0, sem="acquire")
        spin = 0
        while (arrived < S) & (spin < MAX_SPIN):
            arrived = tl.atomic_add(Count + row, 0, sem="acquire")
            spin += 1
        tl.debug_barrier()
        c1 = tl.sum(tl.load(Sums + (row * S + parts) * 2, volatile=True), axis=0) / n
        c2 = 0.0
        if LN:
            c2 = tl.sum(tl.load(Sums + (row * S + parts) * 2 + 1, volatile=True), axis=0) / n
        dx = (g - (x_hat * c1 + c2)) * rstd
        tl.store(DX + row.to(tl.int64) * N + cols, dx.to(DX.dtype.element_ty), mask=ok)
        dw += dyf * x_hat
        db += dyf
        if not PREFETCH:
            x = tl.load(X + nxt.to(tl.int64) * N + cols, mask=ok & (nxt < M), other=0.0)
            dy = tl.load(DY + nxt.to(tl.int64) * N + cols, mask=ok & (nxt < M), other=0.0)
        row = nxt
    tl.store(Part + group * N + cols, dw, mask=ok)
    if LN:
        tl.store(Part + (groups + group) * N + cols, db, mask=ok)


@triton.jit
def _load_share(X, DY, row, M, N: tl.constexpr, cols, ok):
    """A row's share of x and dy as stored (nothing past the last row)."""
    live = ok & (row < M)
    x = tl.load(X + row.to(tl.int64) * N + cols, mask=live, other=0.0)
    dy = tl.load(DY + row.to(tl.int64) * N + cols, mask=live, other=0.0)
    return x, dy


@triton.jit
def _row_stats(Stats, row, M, LN: tl.constexpr):
    """mean (0 for RMSNorm) and rstd of a row; zeros past the last row."""
    if LN:
        mean = tl.load(Stats + row, mask=row < M, other=0.0)
        rstd = tl.load(Stats + M + row, mask=row < M, other=0.0)
    else:
        mean = tl.full([], 0.0, tl.float32)
        rstd = tl.load(Stats + row, mask=row < M, other=0.0)
    return mean, rstd


@triton.jit
def _publish(Sums, Count, row, x, dy, w, mean, rstd, dw, db, ok, share,
             S: tl.constexpr, LN: tl.constexpr):
    """Publish a row's partial sums (sum(x_hat * g), LN: sum(g)) and count them (release);
    dW and dB need no exchange, so they take the row here."""
    dyf = dy.to(tl.float32)
    x_hat = tl.where(ok, (x.to(tl.float32) - mean) * rstd, 0.0)
    g = dyf * w
    tl.store(Sums + (row * S + share) * 2, tl.sum(x_hat * g, axis=0))
    if LN:
        tl.store(Sums + (row * S + share) * 2 + 1, tl.sum(g, axis=0))
    tl.debug_barrier()  # every thread's stores before the count that publishes them
    tl.atomic_add(Count + row, 1, sem="release")
    return dw + dyf * x_hat, db + dyf


@triton.jit
def _finish(DX, Sums, Count, row, x, dy, w, mean, rstd, ok, cols, parts,
            N: tl.constexpr, S: tl.constexpr, LN: tl.constexpr, MAX_SPIN: tl.constexpr):
    """Wait for a row's S partial sums (acquire) and write its dx share; x_hat and g are
    recomputed from x and dy (half the registers held across the wait for 16-bit rows)."""
    arrived = tl.atomic_add(Count + row, 0, sem="acquire")
    spin = 0
    while (arrived < S) & (spin < MAX_SPIN):
        arrived = tl.atomic_add(Count + row, 0, sem="acquire")
        spin += 1
    tl.debug_barrier()
    n = tl.full([], N, tl.float32)
    c1 = tl.sum(tl.load(Sums + (row * S + parts) * 2, volatile=True), axis=0) / n
    c2 = 0.0
    if LN:
        c2 = tl.sum(tl.load(Sums + (row * S + parts) * 2 + 1, volatile=True), axis=0) / n
    x_hat = tl.where(ok, (x.to(tl.float32) - mean) * rstd, 0.0)
    g = dy.to(tl.float32) * w
    dx = (g - (x_hat * c1 + c2)) * rstd
    tl.store(DX + row.to(tl.int64) * N + cols, dx.to(DX.dtype.element_ty), mask=ok)


@triton.jit
def lagged_bwd_kernel(X, DY, DX, W, Stats, Part, Sums, Count, M,
                      N: tl.constexpr, S: tl.constexpr, WIDTH: tl.constexpr,
                      TILE: tl.constexpr, LN: tl.constexpr, PREFETCH: tl.constexpr,
                      MAX_SPIN: tl.constexpr):
    """Run 4: the exchange one row behind. A program's rows are group, group + G, ...; it
    publishes row r + G before it waits for row r, so the wait overlaps a whole row's loads and
    sums. Holds two rows' x and dy (three with PREFETCH: row r + 2G's loads in flight too)."""
    pid = tl.program_id(0)
    groups = tl.num_programs(0) // S
    share, group = pid % S, pid // S
    cols = share * WIDTH + tl.arange(0, TILE)
    ok = (cols < (share + 1) * WIDTH) & (cols < N)
    w = tl.load(W + cols, mask=ok, other=0.0).to(tl.float32)
    dw = tl.zeros([TILE], dtype=tl.float32)
    db = tl.zeros([TILE], dtype=tl.float32)
    parts = tl.arange(0, S)
    # prologue: the first row loaded and published (a group past the last row has none)
    row = group
    x, dy = _load_share(X, DY, row, M, N, cols, ok)
    if PREFETCH:
        x_pf, dy_pf = _load_share(X, DY, row + groups, M, N, cols, ok)
    mean, rstd = _row_stats(Stats, row, M, LN)
    if row < M:
        dw, db = _publish(Sums, Count, row, x, dy, w, mean, rstd, dw, db, ok, share, S, LN)
    # steady loop: publish the next row, then finish this one
    while row + groups < M:
        nxt = row + groups
        if PREFETCH:
            x_nxt, dy_nxt = x_pf, dy_pf
            x_pf, dy_pf = _load_share(X, DY, nxt + groups, M, N, cols, ok)
        else:
            x_nxt, dy_nxt = _load_share(X, DY, nxt, M, N, cols, ok)
        mean_nxt, rstd_nxt = _row_stats(Stats, nxt, M, LN)
        dw, db = _publish(Sums, Count, nxt, x_nxt, dy_nxt, w, mean_nxt, rstd_nxt, dw, db, ok, share, S, LN)
        _finish(DX, Sums, Count, row, x, dy, w, mean, rstd, ok, cols, parts, N, S, LN, MAX_SPIN)
        row, x, dy, mean, rstd = nxt, x_nxt, dy_nxt, mean_nxt, rstd_nxt
    # epilogue: the last row, nothing left to publish behind it
    if row < M:
        _finish(DX, Sums, Count, row, x, dy, w, mean, rstd, ok, cols, parts, N, S, LN, MAX_SPIN)
    tl.store(Part + group * N + cols, dw, mask=ok)
    if LN:
        tl.store(Part + (groups + group) * N + cols, db, mask=ok)


def exchange_backward(op, dy, x, w, stats, shares, warps, prefetch, per_sm=1, max_spin=1 << 14,
                      cooperative=True, lagged=False, groups=None):
    """dx and the (parts, N) parameter gradients, as the fast op's backward_rows returns them.
    per_sm programs an SM (all resident: a program waits on the others of its row); groups
    (row groups of `shares` programs) overrides that, e.g. off the GPU. cooperative: the driver
    refuses a grid that cannot be resident at once (else the spin bound gives a wrong dx).
    lagged: run 4's kernel (the exchange one row behind)."""
    M, N = x.shape
    if groups is None:
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        groups = max(1, min(M, sms * per_sm // shares))
    width = triton.cdiv(N, shares)
    tile = triton.next_power_of_2(width)
    ln_ = op == "layernorm"
    dx = torch.empty_like(x)
    part = torch.empty((2 if ln_ else 1, groups, N), dtype=torch.float32, device=x.device)
    sums = torch.empty((M, shares, 2), dtype=torch.float32, device=x.device)
    count = torch.zeros(M, dtype=torch.int32, device=x.device)
    kernel = lagged_bwd_kernel if lagged else exchange_bwd_kernel
    kernel[(groups * shares,)](
        x, dy, dx, w, stats, part, sums, count, M, N=N, S=shares, WIDTH=width, TILE=tile,
        LN=ln_, PREFETCH=prefetch, MAX_SPIN=max_spin, num_warps=warps,
        launch_cooperative_grid=cooperative)
    return dx, part.sum(1).to(w.dtype)


def difference(a, b):
    """The largest error of dx and of the parameter rows, each relative to its largest value."""
    return max((p.float() - q.float()).abs().max().item() / max(q.float().abs().max().item(), 1e-30)
               for p, q in zip(a, b))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--budget-s", type=float, default=100)
    parser.add_argument("--dtype", choices=("bfloat16", "float32"), default="bfloat16")
    parser.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    parser.add_argument("--variants", default="", help="comma-separated substrings of the labels to time "
                        "(ours, the reference, always)")
    args = parser.parse_args()
    t0, results = time.time(), []
    copy = bench.copy_bandwidth_gb_per_s()["median"]
    dtype = getattr(torch, args.dtype)
    for n in map(int, args.widths.split(",")):
        for op, module in OPS.items():
            if time.time() - t0 > args.budget_s:
                break
            fast = module.OP
            m = 2**27 // n
            x, dy, w, params = inputs(op, n, m, dtype)
            _, stats = fast.forward_rows(x, *params, 1e-5)
            calls = {"ours": lambda: fast.backward_rows(dy, x, w, stats)[:2]}
            for label, (shares, per_sm, warps, lagged, prefetch) in VARIANTS.items():
                if any(part in label for part in args.variants.split(",")):
                    calls[label] = (lambda s=shares, p=per_sm, k=warps, lag=lagged, pf=prefetch: exchange_backward(
                        op, dy, x, w, stats, s, k, pf, p, cooperative=lag, lagged=lag))
            reference = calls["ours"]()
            for label, fn in calls.items():
                if time.time() - t0 > args.budget_s:
                    break
                try:
                    diff = difference(fn(), reference)
                except Exception as e:  # registers or resources
                    print(f"{op[:3]} N={n} {label}: {type(e).__name__} {str(e)[-160:]}", flush=True)
                    continue
                ms = bench.median_call_ms(fn, 3, 10, 5)
                row = {"op": op, "N": n, "dtype": args.dtype, "variant": label, "diff": diff, "ms": ms,
                       "pct": 100 * bench.gb_per_s(3 * m * n * x.element_size(), ms) / copy}
                results.append(row)
                print(f"{op[:3]} N={n:5d} {label:16s} {row['pct']:5.1f}% rel {diff:.2g}", flush=True)
    if args.out:
        json.dump({"device": torch.cuda.get_device_name(), "copy_gb_per_s": copy, "results": results},
                  open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
