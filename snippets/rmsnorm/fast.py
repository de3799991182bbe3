"""A fast RMSNorm for Hopper: the chapter's "Going faster" kernels, in one file.

y = x * rsqrt(mean(x^2) + eps) * weight, over the last dimension.

What changes against the teaching kernels (rmsnorm/ops.py):

- forward: short rows are packed ROWS to a program, warps per row tuned on an H200.
  Rows that fill the registers badly (wide ones, or widths far from a power of two) are
  walked in column chunks instead: the second walk reads the row again from the L2 cache.
- backward: the teaching dx kernel writes one fp32 partial per element (M x N x 4 bytes,
  more than x itself); here a persistent grid of about (SMs x a small factor) programs
  each owns a contiguous block of rows, computes dx row by row and keeps its share of
  dW in fp32 registers. The partial buffer shrinks to (programs x N) fp32, summed by one
  small kernel at the end, and the next row's loads are in flight while this row computes.

N is a compile-time constant: each width gets its own compiled kernels, as torch.compile does
for a static shape. Launch configurations come from tables a tuning run on an H200 wrote for
every width (snippets/faster/tune.py); the compiled kernels are launched directly
(normkit.direct_launch).

A drop-in for F.rms_norm (same signature): what it accepts, rms_norm_fast accepts, with the
same result dtype (the input's). Any normalized_shape of trailing dimensions, any leading
dimensions, empty batches, no weight, a weight of another float dtype than the input (fp32
weights with bf16 activations); eps=None is the input dtype's machine epsilon, as in PyTorch.
Rows wider than the tuned range take the chunked design; rows a constant stride apart (a slice
of wider rows) are read in place. float64, and tensors on a device the kernels do not run on,
are computed by F.rms_norm itself. What PyTorch refuses is refused with a ContractError that
names the problem, before any launch. Offsets are 64-bit: more than 2**31 elements are fine.

For torch.compile the two steps are PyTorch operators (torch.ops.normkernels.rms_norm_fwd and
_bwd, with fake functions and an autograd formula): no graph breaks. RMSNormFast is
torch.nn.RMSNorm with this forward.
"""

import functools
import json
from pathlib import Path
from typing import Optional

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit import aligned, dropin
from normkit.aligned import body_of, edges_of, row_window
from normkit.direct_launch import DirectLauncher
from normkit.launch import ContractError
from normkit.runtime import INTERPRETED
from normkit.tiles import (SHARE_COLUMNS, forward_entry_config, load_weight, per_row, row_sum,
                           share_tile, staged_config)

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable

__all__ = ["ContractError", "RMSNormFast", "RMSNormFastFunction", "rms_norm_fast", "MAX_N"]

MAX_N = 16384  # the tuned range; wider rows take the chunked design (WIDE)


# --8<-- [start:fast_forward_kernel]
@triton.jit(do_not_specialize=["M"])  # one compilation per width N, for every M
def rms_fast_fwd_kernel(
    X, Y,        # (M, N) input, rows STRIDE elements apart, and contiguous output
    W,           # (N,) weight (any float dtype; unread without HAS_W)
    Rstd,        # (M,) fp32, saved for the backward pass
    M, eps,
    N: tl.constexpr,        # known when compiling: masks and index math fold away
    STRIDE: tl.constexpr,   # x's row stride: N when contiguous, more for a slice
    BLOCK_N: tl.constexpr,  # next power of two >= N: the whole row in registers
    ROWS: tl.constexpr,     # rows per program: short rows packed to move enough bytes
    HAS_W: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    mask = row_ok[:, None] & col_ok[None, :]
    rows64 = rows.to(tl.int64)[:, None]  # int64: M * N may pass 2**31

    x = tl.load(X + rows64 * STRIDE + cols[None, :], mask=mask, other=0.0)
    x = x.to(tl.float32)

    # masked lanes hold 0: they add nothing
    rstd = tl.rsqrt(tl.sum(x * x, axis=1) / N + eps)
    y = x * rstd[:, None]
    if HAS_W:
        y *= tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(Y + rows64 * N + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Rstd + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_kernel]


# --8<-- [start:fast_forward_aligned_kernel]
@triton.jit(do_not_specialize=["M"])
def rms_fast_fwd_aligned_kernel(
    X, Y,          # (M, N) contiguous input and output, rows off 16 bytes
    W_AT,          # (V, LANES): row s, the weight for a row s lanes in
    W,             # (N,) weight, read at the edges
    Rstd, M, eps,
    N: tl.constexpr,
    LANES: tl.constexpr,   # a row's window (normkit.aligned): N + V - 1 lanes or more
    V: tl.constexpr,       # elements in 16 bytes
    ROWS: tl.constexpr,
    HAS_W: tl.constexpr,
):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    base, s = row_window(rows, N, V)
    lanes = tl.arange(0, LANES)[None, :]
    body = body_of(lanes, s, row_ok, N, V)
    cols_e, edge = edges_of(s, row_ok, N, V, 2 * V, 0)
    x = tl.load(X + base + lanes, mask=body, other=0.0).to(tl.float32)
    x_e = tl.load(X + base + s + cols_e, mask=edge, other=0.0).to(tl.float32)

    rstd = tl.rsqrt((tl.sum(x * x, axis=1) + tl.sum(x_e * x_e, axis=1)) / N + eps)
    y = x * rstd[:, None]
    y_e = x_e * rstd[:, None]
    if HAS_W:
        y *= tl.load(W_AT + s * LANES + lanes, mask=body, other=0.0).to(tl.float32)
        y_e *= tl.load(W + cols_e, mask=edge, other=0.0).to(tl.float32)
    tl.store(Y + base + lanes, y.to(Y.dtype.element_ty), mask=body)
    tl.store(Y + base + s + cols_e, y_e.to(Y.dtype.element_ty), mask=edge)
    tl.store(Rstd + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_aligned_kernel]


# --8<-- [start:fast_forward_chunked_kernel]
@triton.jit(do_not_specialize=["M"])
def rms_fast_fwd_chunked_kernel(
    X, Y, W, Rstd, M, eps,      # as rms_fast_fwd_kernel
    N: tl.constexpr, STRIDE: tl.constexpr,
    CHUNK: tl.constexpr,        # columns per step of the walk along the row
    ROWS: tl.constexpr,
    HAS_W: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    rows64 = rows.to(tl.int64)[:, None]  # int64: M * N may pass 2**31

    # walk 1: the sum of squares, each lane its own, from memory; evict_last keeps
    # the row in L2 for walk 2
    squares = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
    for start in range(0, N, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        mask = row_ok[:, None] & (cols < N)[None, :]
        x = tl.load(X + rows64 * STRIDE + cols[None, :], mask=mask, other=0.0,
                    eviction_policy="evict_last").to(tl.float32)
        squares += x * x
    rstd = tl.rsqrt(tl.sum(squares, axis=1) / N + eps)

    # walk 2: scale. The row was just read: these loads hit the L2 cache, not memory
    for start in range(0, N, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        col_ok = cols < N
        mask = row_ok[:, None] & col_ok[None, :]
        x = tl.load(X + rows64 * STRIDE + cols[None, :], mask=mask, other=0.0,
                    eviction_policy="evict_first").to(tl.float32)
        y = x * rstd[:, None]
        if HAS_W:
            y *= tl.load(W + cols, mask=col_ok, other=0.0,
                         eviction_policy="evict_last").to(tl.float32)[None, :]
        tl.store(Y + rows64 * N + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Rstd + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_chunked_kernel]


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
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    if HAS_W:  # once per program, not per row
        w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)

    # this program's contiguous block of rows
    first = pid * rows_per_program
    end = tl.minimum(first + rows_per_program, M)

    # the fp32 accumulator lives in registers for the whole block of rows
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)

    start = first
    if PREFETCH:
        # the first step's rows
        head = (start + tl.arange(0, ROWS)).to(tl.int64)[:, None]
        head_mask = (head < end) & col_ok[None, :]
        x = tl.load(X + head * STRIDE_X + cols[None, :], mask=head_mask, other=0.0)
        dy = tl.load(DY + head * STRIDE_DY + cols[None, :], mask=head_mask, other=0.0)
    while start < end:
        rows = start + tl.arange(0, ROWS)
        row_ok = rows < end
        mask = row_ok[:, None] & col_ok[None, :]
        rows64 = rows.to(tl.int64)[:, None]
        if PREFETCH:
            # the next step's loads go out now and arrive while this step computes
            nxt = rows64 + ROWS
            nxt_mask = (nxt < end) & col_ok[None, :]
            x_next = tl.load(X + nxt * STRIDE_X + cols[None, :], mask=nxt_mask,
                             other=0.0)
            dy_next = tl.load(DY + nxt * STRIDE_DY + cols[None, :], mask=nxt_mask,
                              other=0.0)
        else:
            x = tl.load(X + rows64 * STRIDE_X + cols[None, :], mask=mask, other=0.0)
            dy = tl.load(DY + rows64 * STRIDE_DY + cols[None, :], mask=mask, other=0.0)
        rstd = tl.load(Rstd + rows, mask=row_ok, other=0.0)

        dyf = dy.to(tl.float32)
        x_hat = x.to(tl.float32) * rstd[:, None]
        if GRAD_X:
            g = dyf * w[None, :] if HAS_W else dyf    # gradient reaching x_hat
            # correctly rounded: rstd (up to 1/sqrt(eps)) amplifies any ulp
            c = tl.math.div_rn(tl.sum(x_hat * g, axis=1), tl.full([], N, tl.float32))
            dx = (g - x_hat * c[:, None]) * rstd[:, None]
            tl.store(DX + rows64 * N + cols[None, :], dx.to(DX.dtype.element_ty),
                     mask=mask)
        if GRAD_W:
            # masked rows hold zeros: they add nothing
            dw += tl.sum(dyf * x_hat, axis=0)
        if PREFETCH:
            x = x_next
            dy = dy_next
        start += ROWS

    # Part is fp32, or the final dW in the weight's dtype when one program did
    # all the rows
    if GRAD_W:
        tl.store(Part + pid * N + cols, dw.to(Part.dtype.element_ty), mask=col_ok)
# --8<-- [end:fast_backward_kernel]


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
    SPLIT: tl.constexpr,   # programs that share each row: 1, or 2 for the widest rows
    TILE: tl.constexpr,    # a program's N / SPLIT columns held as a power-of-two tile
    REST: tl.constexpr,    # ... and a second, smaller one for the rest (0: none), so
                           # that registers follow N and not the next power of two
    ROWS: tl.constexpr,    # rows per step
    STAGES: tl.constexpr,  # steps of loads in flight, staged in shared memory
    HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr,
    EARLY: tl.constexpr,   # add to dW before the row sum (dy then need not stay in
                           # registers across its barrier), or after dx
):
    # SPLIT programs walk the same rows at the same time; each keeps dW of its own
    # share of the columns, and reads the other share only for the row sum (its
    # sibling has just read it: from L2, not from memory)
    group = tl.program_id(0) // SPLIT
    share = tl.program_id(0) % SPLIT
    # tiles.share_width: N / SPLIT in whole SHARE_COLUMNS, so that shares start aligned
    SHARE: tl.constexpr = SPLIT * SHARE_COLUMNS
    WIDTH: tl.constexpr = (N + SHARE - 1) // SHARE * SHARE_COLUMNS
    cols_a, ok_a = share_tile(share, 0, TILE, WIDTH, N)
    w_a = load_weight(W, cols_a, ok_a, HAS_W)
    dw_a = tl.zeros([TILE], dtype=tl.float32)
    if REST > 0:
        cols_b, ok_b = share_tile(share, TILE, REST, WIDTH, N)
        w_b = load_weight(W, cols_b, ok_b, HAS_W)
        dw_b = tl.zeros([REST], dtype=tl.float32)
    if SPLIT == 2:
        o_a, o_ok_a = share_tile(1 - share, 0, TILE, WIDTH, N)
        wo_a = load_weight(W, o_a, o_ok_a, HAS_W)
        wo_b = wo_a  # the second tile's, when there is one
        if REST > 0:
            o_b, o_ok_b = share_tile(1 - share, TILE, REST, WIDTH, N)
            wo_b = load_weight(W, o_b, o_ok_b, HAS_W)

    first = group * rows_per_program
    end = tl.minimum(first + rows_per_program, M)
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
    first = pid * rows_per_program
    end = tl.minimum(first + rows_per_program, M)
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
                mask = row_ok[:, None] & (cols < N)[None, :]
                x = tl.load(X + rows64 * STRIDE_X + cols[None, :], mask=mask, other=0.0,
                            eviction_policy="evict_last")
                dy = tl.load(DY + rows64 * STRIDE_DY + cols[None, :], mask=mask,
                             other=0.0, eviction_policy="evict_last")
                g = dy.to(tl.float32)
                if HAS_W:
                    g *= tl.load(W + cols, mask=cols < N, other=0.0,
                                 eviction_policy="evict_last").to(tl.float32)[None, :]
                s += x.to(tl.float32) * g
        c1 = tl.math.div_rn(tl.sum(s, axis=1) * rstd, n)

        # walk 2: dx, and this step's dW added to the program's running sum. x and dy
        # come from L2 now (evict_first: last use); so does the running sum
        # (programs x N x 4 bytes in all), read and written back by this program alone
        for c in range(0, N, CHUNK):
            cols = c + tl.arange(0, CHUNK)
            col_ok = cols < N
            mask = row_ok[:, None] & col_ok[None, :]
            x = tl.load(X + rows64 * STRIDE_X + cols[None, :], mask=mask, other=0.0,
                        eviction_policy="evict_first")
            dy = tl.load(DY + rows64 * STRIDE_DY + cols[None, :], mask=mask, other=0.0,
                         eviction_policy="evict_first")
            dyf = dy.to(tl.float32)
            x_hat = x.to(tl.float32) * rstd[:, None]
            if GRAD_X:
                g = dyf
                if HAS_W:
                    g *= tl.load(W + cols, mask=col_ok, other=0.0,
                                 eviction_policy="evict_last").to(tl.float32)[None, :]
                dx = (g - x_hat * c1[:, None]) * rstd[:, None]
                tl.store(DX + rows64 * N + cols[None, :], dx.to(DX.dtype.element_ty),
                         mask=mask)
            if GRAD_W:
                # the first step has no running sum yet: it writes instead of adding
                old = col_ok & (start > first)
                dw = tl.load(DW_PART + cols, mask=old, other=0.0,
                             eviction_policy="evict_last")
                tl.store(DW_PART + cols, dw + tl.sum(dyf * x_hat, axis=0), mask=col_ok)
        # the next step reads the running sum back, and the thread that loads an
        # element need not be the one that stored it: the barrier orders every store
        # of this step before every load of the next
        tl.debug_barrier()
        start += ROWS
# --8<-- [end:fast_backward_chunked_kernel]


# --8<-- [start:fast_reduce_kernel]
@triton.jit
def sum_partials_kernel(
    Part,    # (P, N) fp32 partial rows of dW
    Out,     # (N,) in the weight's dtype
    P, N,
    BLOCK_P: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    p = 0
    while p < P:
        r = p + tl.arange(0, BLOCK_P)
        mask = (r < P)[:, None] & (cols < N)[None, :]
        acc += tl.load(Part + r[:, None] * N + cols[None, :], mask=mask, other=0.0)
        p += BLOCK_P
    # round once, at the very end, to the weight's dtype
    tl.store(Out + cols, tl.sum(acc, axis=0).to(Out.dtype.element_ty), mask=cols < N)
# --8<-- [end:fast_reduce_kernel]


# --8<-- [start:fast_configs]
@functools.lru_cache(maxsize=None)
def sm_count(device_index):
    if INTERPRETED:
        # the interpreter runs programs one by one: a few are enough to test the sums
        return 4
    return torch.cuda.get_device_properties(device_index).multi_processor_count


# Written by the tuning run (python -m faster.tune, notes/fast-kernels.md): for
# every N that is a multiple of the table's step up to MAX_N, the fastest launch
# configuration measured on an H200: one table for 16-bit inputs (tuned in bf16,
# used for fp16 too) and one for fp32.
# forward:  ["row", ROWS, num_warps]          or ["chunked", CHUNK, ROWS, num_warps]
# backward: ["row", ROWS, num_warps, programs per SM, PREFETCH]
#           or ["staged", ROWS, num_warps, programs per SM, SPLIT, STAGES, TILES, EARLY]
#           or ["chunked", CHUNK, ROWS, num_warps, programs per SM]
TUNED = {2: Path(__file__).with_name("fast_tuned.json"),
         4: Path(__file__).with_name("fast_tuned_fp32.json")}


@functools.lru_cache(maxsize=None)
def tuned_table(element_size):
    """The table for this element size (the 16-bit one when there is none), or None."""
    path = TUNED.get(element_size)
    if path is None or not path.exists():
        path = TUNED[2]
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    table = {key: {int(n): tuple(c) for n, c in data[key].items()}
             for key in ("forward", "backward")}
    table["step"] = data["step"]
    # the fastest configuration of each backward design the tuning run timed (the pages
    # compare them; the kernels use "backward")
    designs = data.get("backward_designs", {})
    table["backward_designs"] = {int(n): {d: tuple(c) for d, c in by_design.items()}
                                 for n, by_design in designs.items()}
    return table


def table_entry(kind, n_cols, element_size):
    """The tuned entry of the next multiple of the table's step at or above N
    (its rows are at least as wide)."""
    table = tuned_table(element_size)
    if table is None:
        return None
    return table[kind].get(triton.cdiv(n_cols, table["step"]) * table["step"])


# past the tables' widest row: walked in chunks (the chunked kernels take any N,
# their tiles do not grow with it)
WIDE = {"forward": ("chunked", 4096, 1, 16), "backward": ("chunked", 4096, 1, 16, 1)}


@functools.lru_cache(maxsize=None)
def forward_config(n_cols, element_size):
    """("row", BLOCK_N, ROWS, num_warps), ("chunked", CHUNK, ROWS, num_warps) or, for
    rows that do not start on 16 bytes, ("aligned", LANES, ROWS, num_warps, the table's
    configuration) for the forward."""
    block_n = triton.next_power_of_2(n_cols)
    entry = table_entry("forward", n_cols, element_size)
    if entry is not None:
        return aligned.window_config(forward_entry_config(entry, n_cols), n_cols,
                                     element_size, MAX_N)
    if n_cols > MAX_N:
        return WIDE["forward"]
    # no table yet: the whole row in registers, at least 2048 elements per program
    rows = max(1, 2048 // block_n)
    # about 2 KiB of x per warp
    num_warps = min(max(rows * block_n * element_size // 2048, 1), 16)
    return "row", block_n, rows, num_warps


def backward_entry_config(entry, n_cols):
    """A backward table entry as a configuration, with what follows from N filled in."""
    if entry[0] == "staged":
        return staged_config(n_cols, *entry[1:])
    if entry[0] == "row":
        return ("row", triton.next_power_of_2(n_cols), *entry[1:])
    return tuple(entry)


@functools.lru_cache(maxsize=None)
def backward_config(n_cols, element_size):
    """("row", BLOCK_N, ROWS, num_warps, programs_per_sm, PREFETCH),
    ("staged", TILE, ROWS, num_warps, programs_per_sm, SPLIT, STAGES, REST, EARLY) or
    ("chunked", CHUNK, ROWS, num_warps, programs_per_sm) for the backward; rows of odd
    N take the row design (normkit.aligned.narrow_backward_config)."""
    block_n = triton.next_power_of_2(n_cols)
    entry = table_entry("backward", n_cols, element_size)
    if entry is not None:
        return (aligned.narrow_backward_config(n_cols, element_size)
                or backward_entry_config(entry, n_cols))
    if n_cols > MAX_N:
        return WIDE["backward"]
    rows = max(1, 1024 // block_n)
    # the backward holds fp32 rows
    num_warps = min(max(rows * block_n * 4 // 2048, 1), 16)
    return "row", block_n, rows, num_warps, 2, block_n * element_size < 32768
# --8<-- [end:fast_configs]


def check_inputs(x, normalized_shape, weight, eps):
    """What F.rms_norm checks, checked before anything is allocated or launched: a
    ContractError names the problem. Returns normalized_shape as a tuple."""
    op = "rms_norm_fast"
    shape = dropin.normalized_shape_of(x, normalized_shape, op)
    dropin.check_parameter("weight", weight, x, shape, op)  # any float dtype, as PyTorch (normkit.contract)
    if eps is not None:
        dropin.check_eps(eps, op)
    return shape


# --8<-- [start:fast_direct_launch]
# kernel[grid](...) binds and specializes every argument on every call; these launch the
# compiled kernel directly once it exists (normkit/direct_launch.py)
fwd_row = DirectLauncher(rms_fast_fwd_kernel)
fwd_aligned = DirectLauncher(rms_fast_fwd_aligned_kernel)
fwd_chunked = DirectLauncher(rms_fast_fwd_chunked_kernel)
bwd_row = DirectLauncher(rms_fast_bwd_kernel)
bwd_staged = DirectLauncher(rms_fast_bwd_staged_kernel)
bwd_chunked = DirectLauncher(rms_fast_bwd_chunked_kernel)
sum_partials = DirectLauncher(sum_partials_kernel)
# --8<-- [end:fast_direct_launch]


# --8<-- [start:fast_forward_launch]
def forward_blocks(config, N):
    """The forward kernel's tile size: the row's (BLOCK_N) or the walk's chunk."""
    kind, block = config[:2]
    return {"BLOCK_N" if kind == "row" else "CHUNK": block}


def forward_rows(x2d, weight, eps, config=None, shape=None):
    """y (contiguous, in x's dtype) and the fp32 rstd, for (M, N) rows with contiguous
    columns (normkit.dropin.rows_view). weight: (N,) or None.

    y has `shape` when given (the caller's input shape: no view to pay for afterwards);
    config overrides forward_config(...) for tuning."""
    M, N = x2d.shape
    y = x2d.new_empty(shape or (M, N))
    rstd = torch.empty(M, dtype=torch.float32, device=x2d.device)
    if y.numel() == 0:  # an empty batch, or rows of no columns: nothing to launch
        return y, rstd
    config = aligned.chosen(config or forward_config(N, x2d.element_size()), x2d,
                            default=config is None)
    kind, block, rows, num_warps = config[:4]
    # an absent weight: any pointer stands in, the kernel never reads it
    w = x2d if weight is None else weight
    if kind == "aligned":
        v = aligned.vector(x2d.element_size())
        w_at = aligned.shifted_params(weight, block, v)
        fwd_aligned[(triton.cdiv(M, rows),)](
            x2d, y, x2d if w_at is None else w_at, w, rstd, M, eps, N=N, LANES=block,
            V=v, ROWS=rows, HAS_W=weight is not None, num_warps=num_warps)
        return y, rstd
    launch = fwd_row if kind == "row" else fwd_chunked
    launch[(triton.cdiv(M, rows),)](
        x2d, y, w, rstd, M, eps,
        N=N, STRIDE=dropin.row_stride(x2d), **forward_blocks(config, N), ROWS=rows,
        HAS_W=weight is not None, num_warps=num_warps)
    return y, rstd
# --8<-- [end:fast_forward_launch]


def backward_grid(M, rows, programs):
    """The persistent grid: at most `programs` programs, each with whole ROWS-steps."""
    programs = max(1, min(programs, triton.cdiv(M, rows)))
    rows_per_program = triton.cdiv(triton.cdiv(M, programs), rows) * rows
    return triton.cdiv(M, rows_per_program), rows_per_program


# --8<-- [start:fast_backward_launch]
def backward_rows(dy2d, x2d, weight, rstd, needs=(True, True), config=None,
                  programs=None):
    """dx and dW for (M, N) rows with contiguous columns; None for a gradient that
    `needs` (autograd's needs_input_grad for x and weight) does not ask for.

    config overrides backward_config(...); programs overrides the grid size. Both
    exist for tuning and for the benchmark.
    """
    M, N = x2d.shape
    # autograd may hand over any layout (the gradient of a sum is a broadcast scalar)
    dy2d = dy2d if dy2d.stride(1) == 1 or N <= 1 else dy2d.contiguous()
    grad_x, grad_w = needs[0], needs[1] and weight is not None
    dx = x2d.new_empty((M, N)) if grad_x else None
    if M == 0 or N == 0 or not (grad_x or grad_w):  # a sum over no rows is zero
        if not grad_w:
            return dx, None
        return dx, torch.zeros(N, dtype=weight.dtype, device=x2d.device)
    dw = torch.empty(N, dtype=weight.dtype, device=x2d.device) if grad_w else None

    config = config or backward_config(N, x2d.element_size())
    kind, block, rows, num_warps, per_sm = config[:5]
    split = config[5] if kind == "staged" else 1  # programs per row
    # a persistent grid: every program resident at once, each group of `split`
    # programs with a block of rows
    programs = programs or sm_count(x2d.device.index) * per_sm
    groups, rows_per_program = backward_grid(M, rows, max(1, programs // split))
    if not grad_w or (kind != "chunked" and groups == 1):
        part = dw  # one group: its sum is the answer, so it writes it straight to dw
    else:
        part = torch.empty((groups, N), dtype=torch.float32, device=x2d.device)
    if kind == "row":
        launch, design = bwd_row, {"BLOCK_N": block, "PREFETCH": config[5]}
    elif kind == "staged":
        launch, design = bwd_staged, {"SPLIT": split, "TILE": block, "REST": config[7],
                                      "STAGES": config[6], "EARLY": config[8]}
    else:
        launch, design = bwd_chunked, {"CHUNK": block}
    launch[(groups * split,)](
        x2d, dy2d, x2d if dx is None else dx, x2d if weight is None else weight, rstd,
        x2d if part is None else part, M, rows_per_program,
        N=N, STRIDE_X=dropin.row_stride(x2d), STRIDE_DY=dropin.row_stride(dy2d),
        **design, ROWS=rows,
        HAS_W=weight is not None, GRAD_X=grad_x, GRAD_W=grad_w, num_warps=num_warps)
    if part is not dw:
        # one small launch sums the partial rows and casts to the weight's dtype
        # (torch would need two: a sum, then a cast)
        reduce_n = 64 if N > 2048 else 32
        sum_partials[(triton.cdiv(N, reduce_n),)](
            part, dw, groups, N, BLOCK_P=32, BLOCK_N=reduce_n, num_warps=4)
    return dx, dw
# --8<-- [end:fast_backward_launch]


# --8<-- [start:fast_autograd]
def save_for_backward(ctx, inputs, output):
    x2d, weight = inputs[:2]
    ctx.save_for_backward(x2d, weight, output[1])
    ctx.mark_non_differentiable(output[1])  # rstd is a by-product:
    ctx.set_materialize_grads(False)  # no zeros launched for its gradient


def gradients(ctx, dy, run):
    """The gradients autograd asks for, from run: backward_rows, or the operator
    that calls it."""
    x2d, weight, rstd = ctx.saved_tensors
    dy2d = dy if dy.dim() == 2 else dy.reshape(x2d.shape)  # y had the input's shape
    needs = ctx.needs_input_grad[:2]
    dx, dw = run(dy2d, x2d, weight, rstd, list(needs))
    grads = (dx if needs[0] else None, dw if needs[1] else None)
    # and None for eps (and the eager path's shape)
    return grads + (None,) * (len(ctx.needs_input_grad) - 2)


def backward(ctx, dy, _):
    """The eager path's backward: the launches themselves."""
    return gradients(ctx, dy, backward_rows)


def backward_op(ctx, dy, _):
    """The operator's backward: torch.compile records the backward operator."""
    return gradients(ctx, dy, rms_norm_bwd)


class RMSNormFastFunction(torch.autograd.Function):
    """The eager path: forward_rows and backward_rows under autograd, without the
    operator's dispatch. (forward takes ctx: with a separate setup_context, apply would
    bind its arguments through inspect.signature on every call.)"""

    @staticmethod
    def forward(ctx, x2d, weight, eps, shape):
        output = forward_rows(x2d, weight, eps, shape=shape)
        save_for_backward(ctx, (x2d, weight), output)
        return output

    # its backward computes with kernels autograd cannot see: differentiable once
    backward = staticmethod(once_differentiable(backward))
# --8<-- [end:fast_autograd]


# --8<-- [start:fast_ops]
# The same two steps as PyTorch operators, for torch.compile: Dynamo records one
# opaque call (it would otherwise trace into the launch code and break the graph),
# the fake functions tell it the outputs' shapes, and the forward's autograd formula
# is backward_op (differentiable once, as in eager).
@torch.library.custom_op(f"{dropin.NAMESPACE}::rms_norm_fwd", mutates_args=())
def rms_norm_fwd(x2d: torch.Tensor, weight: Optional[torch.Tensor],
                 eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    return forward_rows(x2d, weight, eps)


@rms_norm_fwd.register_fake
def _(x2d, weight, eps):
    return x2d.new_empty(x2d.shape), x2d.new_empty(x2d.shape[0], dtype=torch.float32)


@torch.library.custom_op(f"{dropin.NAMESPACE}::rms_norm_bwd", mutates_args=())
def rms_norm_bwd(dy2d: torch.Tensor, x2d: torch.Tensor, weight: Optional[torch.Tensor],
                 rstd: torch.Tensor,
                 needs: list[bool]) -> tuple[torch.Tensor, torch.Tensor]:
    # an operator returns tensors: an empty one stands for a gradient not asked for
    dx, dw = backward_rows(dy2d, x2d, weight, rstd, needs)
    dx = x2d.new_empty(0) if dx is None else dx
    return dx, x2d.new_empty(0) if dw is None else dw


@rms_norm_bwd.register_fake
def _(dy2d, x2d, weight, rstd, needs):
    grad_w = needs[1] and weight is not None
    return (x2d.new_empty(x2d.shape if needs[0] else 0),
            x2d.new_empty(x2d.shape[1] if grad_w else 0,
                          dtype=weight.dtype if grad_w else x2d.dtype))


rms_norm_fwd.register_autograd(once_differentiable(backward_op),
                               setup_context=save_for_backward)
# --8<-- [end:fast_ops]


# --8<-- [start:fast_entry]
def rms_norm_fast(input, normalized_shape, weight=None, eps=None):
    """F.rms_norm with the fast Triton kernels: the same arguments and results."""
    shape = check_inputs(input, normalized_shape, weight, eps)  # before any launch
    if not dropin.on_kernels(input, weight):  # float64, or a device without the kernels
        return F.rms_norm(input, shape, weight, eps)
    if eps is None:  # PyTorch's default: the input dtype's machine epsilon
        eps = torch.finfo(input.dtype).eps
    x2d = dropin.rows_view(input, len(shape))  # a view when the rows are evenly spaced
    w = dropin.flat(weight)
    how = dropin.path(input, weight)
    if how == "launch":
        return forward_rows(x2d, w, float(eps), shape=input.shape)[0]
    if how == "autograd":
        return RMSNormFastFunction.apply(x2d, w, float(eps), input.shape)[0]
    return rms_norm_fwd(x2d, w, float(eps))[0].view(input.shape)


class RMSNormFast(torch.nn.RMSNorm):
    """torch.nn.RMSNorm with the fast kernels: the same arguments, parameters and
    state_dict keys; only forward changes."""

    def forward(self, input):
        return rms_norm_fast(input, self.normalized_shape, self.weight, self.eps)
# --8<-- [end:fast_entry]
