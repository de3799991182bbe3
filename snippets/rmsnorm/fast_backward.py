"""The fast RMSNorm's backward kernels, launched by rmsnorm/fast.py: LayerNorm's three
designs (layernorm/fast_backward.py) with one row sum instead of two and no bias, so one
fp32 running sum, dW, a program.
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit.aligned import class_frame, load_edges, store_frame
from normkit.tiles import (
    add_to_running, backward_rows_start, block_of_rows, first_loads, load_rows,
    per_row, row_sum, share_tile, step_loads, share_columns, times_weight)

import triton
import triton.language as tl


# --8<-- [start:fast_backward_kernel]
@triton.jit(do_not_specialize=["M", "rows_per_program"])
def rms_fast_bwd_kernel(
    X, DY, DX,   # (M, N): saved input, upstream gradient (rows STRIDE_X / STRIDE_DY
                 # apart), contiguous gradient out
    W,           # (N,) weight (unread without HAS_W)
    Rstd,        # (M,) fp32 from the forward pass
    Part,        # (programs, N): this program writes row pid
    M, rows_per_program,
    N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ROWS: tl.constexpr,      # rows handled per step of the loop
    PREFETCH: tl.constexpr,  # load the next step's x and dy before computing this one
    HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr,  # wanted by autograd
):
    # w once per program, not per row; the first step's x and dy when prefetching
    cols, col_ok, w, start, end, x, dy = backward_rows_start(
        X, DY, W, M, rows_per_program, N, BLOCK_N, STRIDE_X, STRIDE_DY, ROWS, PREFETCH,
        HAS_W)
    # the fp32 accumulator lives in registers for the whole block of rows
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    while start < end:
        rows, row_ok, mask, rows64, x, dy, x_next, dy_next = step_loads(
            X, DY, x, dy, start, end, cols, col_ok, STRIDE_X, STRIDE_DY, ROWS, PREFETCH)
        rstd = tl.load(Rstd + rows, mask=row_ok, other=0.0)

        dyf = dy.to(tl.float32)
        x_hat = x.to(tl.float32) * rstd[:, None]
        if GRAD_X:
            g = dyf * w[None, :]  # gradient reaching x_hat (w is ones without a weight)
            # correctly rounded: rstd (up to 1/sqrt(eps)) amplifies any ulp
            c = tl.math.div_rn(tl.sum(x_hat * g, axis=1), tl.full([], N, tl.float32))
            dx = (g - x_hat * c[:, None]) * rstd[:, None]
            tl.store(DX + rows64 * N + cols[None, :], dx.to(DX.dtype.element_ty),
                     mask=mask)
        if GRAD_W:
            # masked rows hold zeros: they add nothing
            dw += tl.sum(dyf * x_hat, axis=0)
        x, dy = x_next, dy_next
        start += ROWS

    # Part is fp32, or the final dW in the weight's dtype when one program did
    # all the rows
    if GRAD_W:
        tl.store(Part + tl.program_id(0) * N + cols, dw.to(Part.dtype.element_ty),
                 mask=col_ok)
# --8<-- [end:fast_backward_kernel]


# --8<-- [start:fast_backward_classes_kernel]
@triton.jit(do_not_specialize=["M", "rows_per_program"])
def rms_fast_bwd_classes_kernel(
    X, DY, DX, W, Rstd,  # as rms_fast_bwd_kernel; the three (M, N) tensors'
                         # rows N apart
    Part,        # (programs, N) fp32: this program's dW in row pid
    M, rows_per_program,
    N: tl.constexpr,
    LANES: tl.constexpr,   # the window's lanes in registers: the body
    V: tl.constexpr,       # elements in 16 bytes: V residue classes of rows
    EDGES: tl.constexpr,   # lanes of the edges' tile
    ROWS: tl.constexpr, PREFETCH: tl.constexpr, HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr,
):
    # rows off 16 bytes, by residue class: one frame for all of a program's rows
    # (LayerNorm's classes kernel, layernorm/fast_backward.py, says how)
    c, first, end, X, DY, DX, s, lanes, body, cols_e, edge, w, w_e = class_frame(
        X, DY, DX, W, M, rows_per_program, N, LANES, V, EDGES, HAS_W)
    STEP: tl.constexpr = V * N  # from one row of the class to the next
    start, x, dy = first_loads(X, DY, first, end, lanes, body, STEP, STEP, ROWS,
                               PREFETCH)
    dw = tl.zeros([LANES], dtype=tl.float32)  # dW in the frame until the end
    dw_e = tl.zeros([EDGES], dtype=tl.float32)
    n = tl.full([], N, tl.float32)
    while start < end:
        rows, row_ok, mask, rows64, x, dy, x_next, dy_next = step_loads(
            X, DY, x, dy, start, end, lanes, body, STEP, STEP, ROWS, PREFETCH)
        rstd = per_row(tl.load(Rstd + c + rows * V, mask=row_ok, other=0.0), ROWS)
        x_e, dy_e, mask_e, at_e = load_edges(X, DY, rows64, row_ok, s, cols_e, edge,
                                             STEP)
        xh = x.to(tl.float32) * rstd
        xh_e = x_e * rstd
        dyf = dy.to(tl.float32)
        if GRAD_X:
            g = dyf * w[None, :]
            g_e = dy_e * w_e[None, :]
            r = tl.math.div_rn(row_sum(xh * g, ROWS) + row_sum(xh_e * g_e, ROWS), n)
            dx = (g - xh * r) * rstd
            tl.store(DX + rows64 * STEP + lanes[None, :], dx.to(DX.dtype.element_ty),
                     mask=mask)
            dx_e = (g_e - xh_e * r) * rstd
            tl.store(DX + at_e, dx_e.to(DX.dtype.element_ty), mask=mask_e)
        if GRAD_W:
            dw += tl.sum(dyf * xh, axis=0)
            dw_e += tl.sum(dy_e * xh_e, axis=0)
        x, dy = x_next, dy_next
        start += ROWS

    if GRAD_W:  # back from the frame to the row's columns, once
        store_frame(Part + tl.program_id(0) * N, lanes, s, body, cols_e, edge, dw,
                    dw_e)
# --8<-- [end:fast_backward_classes_kernel]


# --8<-- [start:fast_backward_staged_kernel]
@triton.jit
def rms_bwd_tile(X, DY, rows64, row_ok, cols, ok, rstd, w,
                 STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr):
    """One tile of a step's rows: x_hat, dy, and g = dy * w, the gradient at x_hat."""
    mask = row_ok[:, None] & ok[None, :]
    x = tl.load(X + rows64 * STRIDE_X + cols[None, :], mask=mask, other=0.0)
    dy = tl.load(DY + rows64 * STRIDE_DY + cols[None, :], mask=mask, other=0.0)
    dy = dy.to(tl.float32)
    x_hat = x.to(tl.float32) * rstd
    return x_hat, dy, dy * w[None, :]


@triton.jit
def rms_share_sum(X, DY, rows64, row_ok, rstd, share, w_a, w_b,
                  N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
                  WIDTH: tl.constexpr, TILE: tl.constexpr, REST: tl.constexpr):
    """The row sum over the other share's columns (read for it alone)."""
    cols, ok = share_tile(share, 0, TILE, WIDTH, N)
    x_hat, _, g = rms_bwd_tile(X, DY, rows64, row_ok, cols, ok, rstd, w_a,
                               STRIDE_X, STRIDE_DY)
    s = row_sum(x_hat * g, x_hat.shape[0])
    if REST > 0:
        cols, ok = share_tile(share, TILE, REST, WIDTH, N)
        x_hat, _, g = rms_bwd_tile(X, DY, rows64, row_ok, cols, ok, rstd, w_b,
                                   STRIDE_X, STRIDE_DY)
        s += row_sum(x_hat * g, x_hat.shape[0])
    return s


@triton.jit(do_not_specialize=["M", "rows_per_program"])
def rms_fast_bwd_staged_kernel(
    X, DY, DX, W, Rstd,   # as rms_fast_bwd_kernel
    Part,        # (groups, N) fp32: this group's sums in row `group`
    M, rows_per_program,
    N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
    ROWS: tl.constexpr,    # rows per step
    STAGES: tl.constexpr,  # steps of loads in flight, staged in shared memory
    SPLIT: tl.constexpr,   # programs that share each row: 1, or 2 for the widest rows
    WIDTH: tl.constexpr,   # a share's columns: N / SPLIT in whole SHARE_COLUMNS, so
                           # that shares start aligned (tiles.share_width)
    # a program's share as a power-of-two TILE and a smaller REST tile (0: none), so
    # that registers follow N and not the next power of two
    TILE: tl.constexpr, REST: tl.constexpr,
    HAS_W: tl.constexpr, GRAD_X: tl.constexpr, GRAD_W: tl.constexpr,
    EARLY: tl.constexpr,   # add to dW before the row sum (dy then need not stay in
                           # registers across its barrier), or after dx
):
    # SPLIT programs walk the same rows at the same time; each keeps dW of its own
    # share of the columns, and reads the other share only for the row sum (its
    # sibling has just read it: from L2, not from memory)
    group = tl.program_id(0) // SPLIT
    share = tl.program_id(0) % SPLIT
    cols_a, ok_a, w_a, cols_b, ok_b, w_b = share_columns(share, W, N, WIDTH, TILE,
                                                         REST, HAS_W)
    # fp32 sums of this share's columns
    dw_a = tl.zeros([TILE], dtype=tl.float32)
    if REST > 0:
        dw_b = tl.zeros([REST], dtype=tl.float32)
    if SPLIT == 2:  # the other share's weight, for its row sums
        _, _, wo_a, _, _, wo_b = share_columns(1 - share, W, N, WIDTH, TILE, REST,
                                               HAS_W)
    first, end = block_of_rows(group, rows_per_program, M)
    # tl.range pipelines the loop: the loads of the next STAGES - 1 steps are copied
    # into shared memory while this step computes, so registers hold only one step
    for start in tl.range(first, end, ROWS, num_stages=STAGES):
        rows = start + tl.arange(0, ROWS)
        row_ok = rows < end
        rows64 = rows.to(tl.int64)[:, None]
        rstd = per_row(tl.load(Rstd + rows, mask=row_ok, other=0.0), ROWS)
        xh_a, dy_a, g_a = rms_bwd_tile(X, DY, rows64, row_ok, cols_a, ok_a, rstd, w_a,
                                       STRIDE_X, STRIDE_DY)
        if REST > 0:
            xh_b, dy_b, g_b = rms_bwd_tile(X, DY, rows64, row_ok, cols_b, ok_b, rstd,
                                           w_b, STRIDE_X, STRIDE_DY)
        if GRAD_W and EARLY:
            dw_a += tl.sum(dy_a * xh_a, axis=0)
            if REST > 0:
                dw_b += tl.sum(dy_b * xh_b, axis=0)
        if GRAD_X:
            s = row_sum(xh_a * g_a, ROWS)
            if REST > 0:
                s += row_sum(xh_b * g_b, ROWS)
            if SPLIT == 2:
                # own + other == other + own: the group's programs agree
                s += rms_share_sum(X, DY, rows64, row_ok, rstd, 1 - share, wo_a, wo_b,
                                   N, STRIDE_X, STRIDE_DY, WIDTH, TILE, REST)
            c = tl.math.div_rn(s, tl.full([], N, tl.float32))
            dx = (g_a - xh_a * c) * rstd
            tl.store(DX + rows64 * N + cols_a[None, :], dx.to(DX.dtype.element_ty),
                     mask=row_ok[:, None] & ok_a[None, :])
            if REST > 0:
                dx = (g_b - xh_b * c) * rstd
                tl.store(DX + rows64 * N + cols_b[None, :], dx.to(DX.dtype.element_ty),
                         mask=row_ok[:, None] & ok_b[None, :])
        if GRAD_W and not EARLY:  # masked rows hold zeros: they add nothing
            dw_a += tl.sum(dy_a * xh_a, axis=0)
            if REST > 0:
                dw_b += tl.sum(dy_b * xh_b, axis=0)

    if GRAD_W:
        tl.store(Part + group * N + cols_a, dw_a.to(Part.dtype.element_ty), mask=ok_a)
        if REST > 0:
            tl.store(Part + group * N + cols_b, dw_b.to(Part.dtype.element_ty),
                     mask=ok_b)
# --8<-- [end:fast_backward_staged_kernel]


# --8<-- [start:fast_backward_chunked_kernel]
@triton.jit(do_not_specialize=["M", "rows_per_program"])
def rms_fast_bwd_chunked_kernel(
    X, DY, DX, W, Rstd,   # as rms_fast_bwd_kernel
    Part,          # (programs, N) fp32: row pid is this program's running dW
    M, rows_per_program,
    N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
    CHUNK: tl.constexpr,   # columns per step of the walk along the row
    ROWS: tl.constexpr,    # rows per step
    HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr,
):
    pid = tl.program_id(0)
    first, end = block_of_rows(pid, rows_per_program, M)
    n = tl.full([], N, tl.float32)
    DW_PART = Part + pid * N  # this program's row of Part

    start = first
    while start < end:
        rows = start + tl.arange(0, ROWS)
        row_ok = rows < end
        rows64 = rows.to(tl.int64)[:, None]
        rstd = tl.load(Rstd + rows, mask=row_ok, other=0.0)

        # walk 1: the row sum dx needs, per lane, then across lanes. x and dy come
        # from memory; evict_last keeps them in L2 for walk 2
        s = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
        if GRAD_X:
            for c in range(0, N, CHUNK):
                cols = c + tl.arange(0, CHUNK)
                x, dy = load_rows(X, DY, start, end, cols, cols < N, STRIDE_X,
                                  STRIDE_DY, ROWS, "evict_last")
                s += x.to(tl.float32) * times_weight(dy.to(tl.float32), W, cols,
                                                     cols < N, HAS_W)
        c1 = tl.math.div_rn(tl.sum(s, axis=1) * rstd, n)

        # walk 2: dx, and this step's dW added to the program's running sum. x and dy
        # come from L2 now (evict_first: last use); so does the running sum
        # (programs x N x 4 bytes in all), read and written back by this program alone
        for c in range(0, N, CHUNK):
            cols = c + tl.arange(0, CHUNK)
            col_ok = cols < N
            x, dy = load_rows(X, DY, start, end, cols, col_ok, STRIDE_X, STRIDE_DY,
                              ROWS,
                              "evict_first")
            dyf = dy.to(tl.float32)
            x_hat = x.to(tl.float32) * rstd[:, None]
            if GRAD_X:
                dx = ((times_weight(dyf, W, cols, col_ok, HAS_W) - x_hat * c1[:, None])
                      * rstd[:, None])
                tl.store(DX + rows64 * N + cols[None, :], dx.to(DX.dtype.element_ty),
                         mask=row_ok[:, None] & col_ok[None, :])
            if GRAD_W:
                # the first step has no running sum yet: it writes instead of adding
                add_to_running(DW_PART, cols, col_ok, col_ok & (start > first),
                               tl.sum(dyf * x_hat, axis=0))
        # the next step reads the running sum back, and the thread that loads an
        # element need not be the one that stored it: the barrier orders every store
        # of this step before every load of the next
        tl.debug_barrier()
        start += ROWS
# --8<-- [end:fast_backward_chunked_kernel]
