"""The fast LayerNorm's backward kernels (layernorm/fast.py launches them): a persistent
grid whose programs each own a contiguous block of rows, with dW and dB in fp32
registers.

- the row design: the whole row in registers, the next step's rows loaded while this one
  computes;
- the staged design: rows staged through shared memory by tl.range's pipeline, and for
  the widest rows two programs sharing a row;
- the chunked design: rows of any width walked twice in column chunks, the second walk
  from L2.
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit.aligned import class_frame, load_edges, store_frame
from normkit.tiles import (add_to_running, backward_rows_start, block_of_rows, first_loads,
                           load_rows, pair_sums, per_row, share_tile, step_loads,
                           share_columns, times_weight)

import triton
import triton.language as tl


# --8<-- [start:fast_backward_kernel]
@triton.jit(do_not_specialize=["M", "rows_per_program"])
def ln_fast_bwd_kernel(
    X, DY, DX,     # (M, N): saved input, upstream gradient (rows STRIDE_X / STRIDE_DY
                   # apart), contiguous gradient out
    W,             # (N,) weight (unread without HAS_W)
    Stats,         # (2, M) fp32 from the forward pass: mean, then rstd
    Part,          # (GRAD_W + GRAD_B, programs, N): this program writes row pid of each
    M, rows_per_program,
    N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ROWS: tl.constexpr,      # rows handled per step of the loop
    PREFETCH: tl.constexpr,  # load the next step's x and dy before computing this one
    HAS_W: tl.constexpr,
    # which gradients autograd wants
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr, GRAD_B: tl.constexpr,
):
    # w once per program, not per row; the first step's x and dy when prefetching
    cols, col_ok, w, start, end, x, dy = backward_rows_start(
        X, DY, W, M, rows_per_program, N, BLOCK_N, STRIDE_X, STRIDE_DY, ROWS, PREFETCH,
        HAS_W)
    # fp32 accumulators in registers: a bf16 running sum would stop growing once it
    # is 256 times larger than what is added to it
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_N], dtype=tl.float32)
    while start < end:
        rows, row_ok, mask, rows64, x, dy, x_next, dy_next = step_loads(
            X, DY, x, dy, start, end, cols, col_ok, STRIDE_X, STRIDE_DY, ROWS, PREFETCH)
        mean = tl.load(Stats + rows, mask=row_ok, other=0.0)
        rstd = tl.load(Stats + M + rows, mask=row_ok, other=0.0)

        xf = x.to(tl.float32)
        dyf = dy.to(tl.float32)
        x_hat = tl.where(mask, (xf - mean[:, None]) * rstd[:, None], 0.0)
        if GRAD_X:
            g = dyf * w[None, :]  # gradient reaching x_hat (w is ones without a weight)
            # rounded division: at N=1, c2 must equal g exactly, or rstd (up to
            # 1/sqrt(eps)) amplifies the ulp
            n = tl.full([], N, tl.float32)
            c1 = tl.math.div_rn(tl.sum(x_hat * g, axis=1), n)
            c2 = tl.math.div_rn(tl.sum(g, axis=1), n)
            dx = (g - (x_hat * c1[:, None] + c2[:, None])) * rstd[:, None]
            tl.store(DX + rows64 * N + cols[None, :], dx.to(DX.dtype.element_ty),
                     mask=mask)
        if GRAD_W:
            # masked rows hold zeros: they add nothing
            dw += tl.sum(dyf * x_hat, axis=0)
        if GRAD_B:
            db += tl.sum(dyf, axis=0)
        x, dy = x_next, dy_next
        start += ROWS

    # one row of partial sums per program and part; Part is fp32, or the final
    # (GRAD_W + GRAD_B, N) output in the parameters' dtype when a single program did
    # all the rows
    pid = tl.program_id(0)
    if GRAD_W:
        tl.store(Part + pid * N + cols, dw.to(Part.dtype.element_ty), mask=col_ok)
    if GRAD_B:
        db_row = Part + ((tl.num_programs(0) if GRAD_W else 0) + pid) * N
        tl.store(db_row + cols, db.to(Part.dtype.element_ty), mask=col_ok)
# --8<-- [end:fast_backward_kernel]


# --8<-- [start:fast_backward_classes_kernel]
@triton.jit(do_not_specialize=["M", "rows_per_program"])
def ln_fast_bwd_classes_kernel(
    X, DY, DX, W, Stats,  # as ln_fast_bwd_kernel; the three (M, N) tensors'
                          # rows N apart
    Part,          # (GRAD_W + GRAD_B, programs, N) fp32: this program's sums in row pid
    M, rows_per_program,
    N: tl.constexpr,
    LANES: tl.constexpr,   # the window's lanes in registers: the body
    V: tl.constexpr,       # elements in 16 bytes: V residue classes of rows
    EDGES: tl.constexpr,   # lanes of the edges' tile
    ROWS: tl.constexpr, PREFETCH: tl.constexpr, HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr, GRAD_B: tl.constexpr,
):
    # rows off 16 bytes: the program owns rows of one class, which all start s lanes
    # into their 16-byte window, so one frame serves them all: the body in 16-byte
    # accesses from the window's aligned start, the few other columns as the edges
    c, first, end, X, DY, DX, s, lanes, body, cols_e, edge, w, w_e = class_frame(
        X, DY, DX, W, M, rows_per_program, N, LANES, V, EDGES, HAS_W)
    STEP: tl.constexpr = V * N  # from one row of the class to the next
    start, x, dy = first_loads(X, DY, first, end, lanes, body, STEP, STEP, ROWS,
                               PREFETCH)
    # the running sums stay in the frame until the end
    dw = tl.zeros([LANES], dtype=tl.float32)
    db = tl.zeros([LANES], dtype=tl.float32)
    dw_e = tl.zeros([EDGES], dtype=tl.float32)
    db_e = tl.zeros([EDGES], dtype=tl.float32)
    n = tl.full([], N, tl.float32)
    while start < end:
        rows, row_ok, mask, rows64, x, dy, x_next, dy_next = step_loads(
            X, DY, x, dy, start, end, lanes, body, STEP, STEP, ROWS, PREFETCH)
        at = c + rows * V  # the rows' own indices
        mean = per_row(tl.load(Stats + at, mask=row_ok, other=0.0), ROWS)
        rstd = per_row(tl.load(Stats + M + at, mask=row_ok, other=0.0), ROWS)
        x_e, dy_e, mask_e, at_e = load_edges(X, DY, rows64, row_ok, s, cols_e, edge,
                                             STEP)
        xh = tl.where(mask, (x.to(tl.float32) - mean) * rstd, 0.0)
        xh_e = tl.where(mask_e, (x_e - mean) * rstd, 0.0)
        dyf = dy.to(tl.float32)
        if GRAD_X:
            g = dyf * w[None, :]
            g_e = dy_e * w_e[None, :]
            s1, s2 = pair_sums(xh * g, g, ROWS)
            t1, t2 = pair_sums(xh_e * g_e, g_e, ROWS)
            c1 = tl.math.div_rn(s1 + t1, n)
            c2 = tl.math.div_rn(s2 + t2, n)
            dx = (g - (xh * c1 + c2)) * rstd
            tl.store(DX + rows64 * STEP + lanes[None, :], dx.to(DX.dtype.element_ty),
                     mask=mask)
            dx_e = (g_e - (xh_e * c1 + c2)) * rstd
            tl.store(DX + at_e, dx_e.to(DX.dtype.element_ty), mask=mask_e)
        if GRAD_W:
            dw += tl.sum(dyf * xh, axis=0)
            dw_e += tl.sum(dy_e * xh_e, axis=0)
        if GRAD_B:
            db += tl.sum(dyf, axis=0)
            db_e += tl.sum(dy_e, axis=0)
        x, dy = x_next, dy_next
        start += ROWS

    pid = tl.program_id(0)
    if GRAD_W:
        store_frame(Part + pid * N, lanes, s, body, cols_e, edge, dw, dw_e)
    if GRAD_B:
        db_row = Part + ((tl.num_programs(0) if GRAD_W else 0) + pid) * N
        store_frame(db_row, lanes, s, body, cols_e, edge, db, db_e)
# --8<-- [end:fast_backward_classes_kernel]


# --8<-- [start:fast_backward_staged_kernel]
@triton.jit
def ln_bwd_tile(X, DY, rows64, row_ok, cols, ok, mean, rstd, w,
                STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr):
    """One tile of a step's rows: x_hat, dy, and g = dy * w, the gradient at x_hat."""
    mask = row_ok[:, None] & ok[None, :]
    x = tl.load(X + rows64 * STRIDE_X + cols[None, :], mask=mask, other=0.0)
    dy = tl.load(DY + rows64 * STRIDE_DY + cols[None, :], mask=mask, other=0.0)
    dy = dy.to(tl.float32)
    x_hat = tl.where(mask, (x.to(tl.float32) - mean) * rstd, 0.0)
    return x_hat, dy, dy * w[None, :]


@triton.jit
def ln_add_grads(dw, db, dy, x_hat, GRAD_W: tl.constexpr, GRAD_B: tl.constexpr):
    """A step's rows added to dW and dB (masked rows hold zeros: they add nothing)."""
    if GRAD_W:
        dw += tl.sum(dy * x_hat, axis=0)
    if GRAD_B:
        db += tl.sum(dy, axis=0)
    return dw, db


@triton.jit
def ln_share_sums(X, DY, rows64, row_ok, mean, rstd, share, w_a, w_b,
                  N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
                  WIDTH: tl.constexpr, TILE: tl.constexpr, REST: tl.constexpr):
    """Both row sums over the other share's columns (read for them alone)."""
    cols, ok = share_tile(share, 0, TILE, WIDTH, N)
    x_hat, _, g = ln_bwd_tile(X, DY, rows64, row_ok, cols, ok, mean, rstd, w_a,
                              STRIDE_X, STRIDE_DY)
    ROWS: tl.constexpr = x_hat.shape[0]
    s1, s2 = pair_sums(x_hat * g, g, ROWS)
    if REST > 0:
        cols, ok = share_tile(share, TILE, REST, WIDTH, N)
        x_hat, _, g = ln_bwd_tile(X, DY, rows64, row_ok, cols, ok, mean, rstd, w_b,
                                  STRIDE_X, STRIDE_DY)
        t1, t2 = pair_sums(x_hat * g, g, ROWS)
        s1 += t1
        s2 += t2
    return s1, s2


@triton.jit(do_not_specialize=["M", "rows_per_program"])
def ln_fast_bwd_staged_kernel(
    X, DY, DX, W, Stats,   # as ln_fast_bwd_kernel
    Part,          # (GRAD_W + GRAD_B, groups, N) fp32: this group's sums in row `group`
    M, rows_per_program,
    N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
    SPLIT: tl.constexpr,   # programs that share each row: 1, or 2 for the widest rows
    WIDTH: tl.constexpr,   # a share's columns: N / SPLIT in whole SHARE_COLUMNS, so
                           # that shares start aligned (tiles.share_width)
    TILE: tl.constexpr,    # a program's share held as a power-of-two tile
    REST: tl.constexpr,    # ... and a second, smaller one for the rest (0: none), so
                           # that registers follow N and not the next power of two
    ROWS: tl.constexpr,    # rows per step
    STAGES: tl.constexpr,  # steps of loads in flight, staged in shared memory
    HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr, GRAD_B: tl.constexpr,
    EARLY: tl.constexpr,   # add to dW and dB before the row sums (dy then need not
                           # stay in registers across their barrier), or after dx
):
    # SPLIT programs walk the same rows at the same time; each keeps dW and dB of its
    # own share of the columns, and reads the other share only for the row sums (its
    # sibling has just read it: from L2, not from memory)
    group = tl.program_id(0) // SPLIT
    groups = tl.num_programs(0) // SPLIT
    share = tl.program_id(0) % SPLIT
    cols_a, ok_a, w_a, cols_b, ok_b, w_b = share_columns(share, W, N, WIDTH, TILE,
                                                         REST, HAS_W)
    # fp32 sums of this share's columns
    dw_a = tl.zeros([TILE], dtype=tl.float32)
    db_a = tl.zeros([TILE], dtype=tl.float32)
    if REST > 0:
        dw_b = tl.zeros([REST], dtype=tl.float32)
        db_b = tl.zeros([REST], dtype=tl.float32)
    if SPLIT == 2:  # the other share's weight, for its row sums
        _, _, wo_a, _, _, wo_b = share_columns(1 - share, W, N, WIDTH, TILE, REST,
                                               HAS_W)
    first, end = block_of_rows(group, rows_per_program, M)
    n = tl.full([], N, tl.float32)
    # tl.range pipelines the loop: the loads of the next STAGES - 1 steps are copied
    # into shared memory while this step computes, so registers hold only one step
    for start in tl.range(first, end, ROWS, num_stages=STAGES):
        rows = start + tl.arange(0, ROWS)
        row_ok = rows < end
        rows64 = rows.to(tl.int64)[:, None]
        mean = per_row(tl.load(Stats + rows, mask=row_ok, other=0.0), ROWS)
        rstd = per_row(tl.load(Stats + M + rows, mask=row_ok, other=0.0), ROWS)
        xh_a, dy_a, g_a = ln_bwd_tile(X, DY, rows64, row_ok, cols_a, ok_a, mean, rstd,
                                      w_a, STRIDE_X, STRIDE_DY)
        if REST > 0:
            xh_b, dy_b, g_b = ln_bwd_tile(X, DY, rows64, row_ok, cols_b, ok_b, mean,
                                          rstd, w_b, STRIDE_X, STRIDE_DY)
        if EARLY:
            dw_a, db_a = ln_add_grads(dw_a, db_a, dy_a, xh_a, GRAD_W, GRAD_B)
            if REST > 0:
                dw_b, db_b = ln_add_grads(dw_b, db_b, dy_b, xh_b, GRAD_W, GRAD_B)
        if GRAD_X:
            s1, s2 = pair_sums(xh_a * g_a, g_a, ROWS)
            if REST > 0:
                t1, t2 = pair_sums(xh_b * g_b, g_b, ROWS)
                s1 += t1
                s2 += t2
            if SPLIT == 2:
                o1, o2 = ln_share_sums(X, DY, rows64, row_ok, mean, rstd, 1 - share,
                                       wo_a, wo_b, N, STRIDE_X, STRIDE_DY,
                                       WIDTH, TILE, REST)
                s1 += o1  # own + other == other + own: the group's programs agree
                s2 += o2
            c1 = tl.math.div_rn(s1, n)
            c2 = tl.math.div_rn(s2, n)
            dx = (g_a - (xh_a * c1 + c2)) * rstd
            tl.store(DX + rows64 * N + cols_a[None, :], dx.to(DX.dtype.element_ty),
                     mask=row_ok[:, None] & ok_a[None, :])
            if REST > 0:
                dx = (g_b - (xh_b * c1 + c2)) * rstd
                tl.store(DX + rows64 * N + cols_b[None, :], dx.to(DX.dtype.element_ty),
                         mask=row_ok[:, None] & ok_b[None, :])
        if not EARLY:
            dw_a, db_a = ln_add_grads(dw_a, db_a, dy_a, xh_a, GRAD_W, GRAD_B)
            if REST > 0:
                dw_b, db_b = ln_add_grads(dw_b, db_b, dy_b, xh_b, GRAD_W, GRAD_B)

    DW_PART = Part + group * N
    DB_PART = Part + ((groups if GRAD_W else 0) + group) * N
    if GRAD_W:
        tl.store(DW_PART + cols_a, dw_a.to(Part.dtype.element_ty), mask=ok_a)
        if REST > 0:
            tl.store(DW_PART + cols_b, dw_b.to(Part.dtype.element_ty), mask=ok_b)
    if GRAD_B:
        tl.store(DB_PART + cols_a, db_a.to(Part.dtype.element_ty), mask=ok_a)
        if REST > 0:
            tl.store(DB_PART + cols_b, db_b.to(Part.dtype.element_ty), mask=ok_b)
# --8<-- [end:fast_backward_staged_kernel]


# --8<-- [start:fast_backward_chunked_kernel]
@triton.jit(do_not_specialize=["M", "rows_per_program"])
def ln_fast_bwd_chunked_kernel(
    X, DY, DX, W, Stats,   # as ln_fast_bwd_kernel
    Part,          # (GRAD_W + GRAD_B, programs, N) fp32: this program's sums in row pid
    M, rows_per_program,
    N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
    CHUNK: tl.constexpr,   # columns per step of the walk along the row
    ROWS: tl.constexpr,    # rows per step
    HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr, GRAD_B: tl.constexpr,
):
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    first, end = block_of_rows(pid, rows_per_program, M)
    n = tl.full([], N, tl.float32)
    DW_PART = Part + pid * N                    # this program's rows of Part
    DB_PART = Part + ((programs if GRAD_W else 0) + pid) * N

    start = first
    while start < end:
        rows = start + tl.arange(0, ROWS)
        row_ok = rows < end
        rows64 = rows.to(tl.int64)[:, None]
        mean = tl.load(Stats + rows, mask=row_ok, other=0.0)
        rstd = tl.load(Stats + M + rows, mask=row_ok, other=0.0)

        # walk 1: the two row sums dx needs, per lane, then across lanes. x and dy
        # come from memory; evict_last keeps them in L2 for walk 2
        s1 = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
        s2 = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
        if GRAD_X:
            for c in range(0, N, CHUNK):
                cols = c + tl.arange(0, CHUNK)
                x, dy = load_rows(X, DY, start, end, cols, cols < N, STRIDE_X,
                                  STRIDE_DY, ROWS, "evict_last")
                mask = row_ok[:, None] & (cols < N)[None, :]
                x_hat = tl.where(
                    mask, (x.to(tl.float32) - mean[:, None]) * rstd[:, None], 0.0)
                g = times_weight(dy.to(tl.float32), W, cols, cols < N, HAS_W)
                s1 += x_hat * g
                s2 += g
        c1 = tl.math.div_rn(tl.sum(s1, axis=1), n)
        c2 = tl.math.div_rn(tl.sum(s2, axis=1), n)

        # walk 2: dx, and this step's dW and dB added to the program's running sums.
        # x and dy come from L2 now (evict_first: last use); so do the running sums
        # (programs x N x 8 bytes in all), read and written back by this program alone
        for c in range(0, N, CHUNK):
            cols = c + tl.arange(0, CHUNK)
            col_ok = cols < N
            x, dy = load_rows(X, DY, start, end, cols, col_ok, STRIDE_X, STRIDE_DY,
                              ROWS,
                              "evict_first")
            mask = row_ok[:, None] & col_ok[None, :]
            dyf = dy.to(tl.float32)
            x_hat = tl.where(mask, (x.to(tl.float32) - mean[:, None]) * rstd[:, None],
                             0.0)
            if GRAD_X:
                g = times_weight(dyf, W, cols, col_ok, HAS_W)
                dx = (g - (x_hat * c1[:, None] + c2[:, None])) * rstd[:, None]
                tl.store(DX + rows64 * N + cols[None, :], dx.to(DX.dtype.element_ty),
                         mask=mask)
            # the first step has no running sums yet: it writes instead of adding
            old = col_ok & (start > first)
            if GRAD_W:
                add_to_running(DW_PART, cols, col_ok, old, tl.sum(dyf * x_hat, axis=0))
            if GRAD_B:
                add_to_running(DB_PART, cols, col_ok, old, tl.sum(dyf, axis=0))
        # the next step reads these running sums back, and the thread that loads an
        # element need not be the one that stored it: the barrier orders every store
        # of this step before every load of the next
        tl.debug_barrier()
        start += ROWS
# --8<-- [end:fast_backward_chunked_kernel]
