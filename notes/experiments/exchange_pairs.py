"""Issue 39, item 2: the exchange of row sums with two rows a wait, for 16-bit rows.

exchange_shares run 1 (notes/issue-39.md, eighth session) found bf16 rows at 53-63 % of copy
with any number of programs a row, where fp32 rows reach 66-86 with the same kernel: every row
costs one wait for the other programs' sums, and a bf16 row carries half the bytes. Here a
program holds two consecutive rows of its share (a [2, TILE] tile), publishes both rows' partial
sums and adds 1 to the pair's count once, then waits once: half the waits for the same bytes,
with the registers of one fp32 row. The next pair is loaded before the wait, as in
normkit/exchange.py, whose launch (FastNorm.backward_launch, a cooperative grid) runs it.

Timed through the fast ops' backward_rows (the kernel and the sync buffer's size swapped in),
backward alone, % of copy for 3MN bytes, plain calls (median of 10), checked against the
chunked rung's results.

    PYTHONPATH=snippets:notes/experiments python3 notes/experiments/exchange_pairs.py --out x.json
"""

import triton
import triton.language as tl

from exchange_rung import parse, run  # this folder
from normkit import exchange
from normkit.direct_launch import DirectLauncher
from normkit.tiles import load_weight, share_tile


@triton.jit
def load_pair(X, DY, pair, M, cols, ok, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr):
    """A program's share of rows 2 pair and 2 pair + 1 of x and dy (zeros past the last)."""
    rows = pair * 2 + tl.arange(0, 2)
    at = rows.to(tl.int64)[:, None]
    mask = (rows < M)[:, None] & ok[None, :]
    x = tl.load(X + at * STRIDE_X + cols[None, :], mask=mask, other=0.0)
    return x, tl.load(DY + at * STRIDE_DY + cols[None, :], mask=mask, other=0.0)


@triton.jit(do_not_specialize=["M", "rows_per_program"])
def pairs_bwd_kernel(X, DY, DX, W, Stats, Part, M, rows_per_program, Sync,
                     N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
                     S: tl.constexpr, WIDTH: tl.constexpr, TILE: tl.constexpr,
                     CENTRED: tl.constexpr, HAS_W: tl.constexpr,
                     GRAD_X: tl.constexpr, GRAD_W: tl.constexpr, GRAD_B: tl.constexpr):
    # Sync: a pair's S shares of (row 0 sum, row 1 sum, row 0 sum of g, row 1 sum of g), then
    # its count; rows_per_program is the one-row kernel's and unused: pairs are counted here
    pid = tl.program_id(0)
    groups = tl.num_programs(0) // S
    share, group = pid % S, pid // S
    cols, ok = share_tile(share, 0, TILE, WIDTH, N)
    w = load_weight(W, cols, ok, HAS_W)
    dw = tl.zeros([TILE], dtype=tl.float32)
    db = tl.zeros([TILE], dtype=tl.float32)
    n = tl.full([], N, tl.float32)
    two = tl.arange(0, 2)
    slots = tl.arange(0, S)[:, None] * 4 + two[None, :]
    pair = group
    x, dy = load_pair(X, DY, pair, M, cols, ok, STRIDE_X, STRIDE_DY)
    for _ in range(tl.cdiv(tl.cdiv(M, 2), groups)):
        rows = pair * 2 + two
        live = pair * 2 < M
        if CENTRED:
            mean = tl.load(Stats + rows, mask=rows < M, other=0.0)
            rstd = tl.load(Stats + M + rows, mask=rows < M, other=0.0)
        else:
            mean = tl.zeros([2], dtype=tl.float32)
            rstd = tl.load(Stats + rows, mask=rows < M, other=0.0)
        x_hat = tl.where(ok[None, :], (x.to(tl.float32) - mean[:, None]) * rstd[:, None], 0.0)
        dyf = dy.to(tl.float32)
        g = dyf * w[None, :]
        pair_sync = Sync + pair.to(tl.int64) * (4 * S + 1)
        if GRAD_X:
            tl.store(pair_sync + 4 * share + two, tl.sum(x_hat * g, axis=1), mask=live)
            if CENTRED:
                tl.store(pair_sync + 4 * share + 2 + two, tl.sum(g, axis=1), mask=live)
            tl.debug_barrier()
            if live:
                tl.atomic_add(pair_sync + 4 * S, 1.0, sem="release")
        nxt = pair + groups
        x, dy = load_pair(X, DY, nxt, M, cols, ok, STRIDE_X, STRIDE_DY)
        if GRAD_X:
            if live:
                arrived = tl.atomic_add(pair_sync + 4 * S, 0.0, sem="acquire")
                while arrived < S:
                    arrived = tl.atomic_add(pair_sync + 4 * S, 0.0, sem="acquire")
            tl.debug_barrier()
            sums = tl.load(pair_sync + slots, mask=live, other=0.0, volatile=True)
            c1 = tl.math.div_rn(tl.sum(sums, axis=0), n)
            if CENTRED:
                sums_g = tl.load(pair_sync + slots + 2, mask=live, other=0.0, volatile=True)
                c2 = tl.math.div_rn(tl.sum(sums_g, axis=0), n)
                dx = (g - (x_hat * c1[:, None] + c2[:, None])) * rstd[:, None]
            else:
                dx = (g - x_hat * c1[:, None]) * rstd[:, None]
            tl.store(DX + rows.to(tl.int64)[:, None] * N + cols[None, :],
                     dx.to(DX.dtype.element_ty), mask=(rows < M)[:, None] & ok[None, :])
        if GRAD_W:
            dw += tl.sum(dyf * x_hat, axis=0)
        if GRAD_B:
            db += tl.sum(dyf, axis=0)
        pair = nxt
    if GRAD_W:
        tl.store(Part + group * N + cols, dw, mask=ok)
    if GRAD_B:
        tl.store(Part + ((groups if GRAD_W else 0) + group) * N + cols, db, mask=ok)


PAIRS = DirectLauncher(pairs_bwd_kernel)
ONE_ROW = (exchange.backward, exchange.sync_numel)
TWO_ROWS = (PAIRS, lambda M, shares: triton.cdiv(M, 2) * (4 * shares + 1))
VARIANTS = {"one row s4 w8 sm1": (exchange.KIND, 4, 1, 8, 1),
            "pairs s4 w8 sm1": (exchange.KIND, 4, 1, 8, 1),
            "pairs s4 w16 sm1": (exchange.KIND, 4, 1, 16, 1),
            "pairs s8 w8 sm1": (exchange.KIND, 8, 1, 8, 1),
            "pairs s8 w4 sm2": (exchange.KIND, 8, 1, 4, 2),
            "pairs s4 w4 sm2": (exchange.KIND, 4, 1, 4, 2)}


def use(fast, label):
    """Make the op's exchange configuration run the two-rows kernel for a "pairs" label, the
    landed one-row kernel for any other (and after the last, label None)."""
    launcher, numel = TWO_ROWS if label and label.startswith("pairs") else ONE_ROW
    fast.BACKWARD[exchange.KIND] = launcher
    exchange.sync_numel = numel


if __name__ == "__main__":
    run(parse(widths="32768,24576,20480,28672", dtypes="bfloat16"), lambda n: VARIANTS, use)
