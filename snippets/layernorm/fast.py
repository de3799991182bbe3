"""A fast LayerNorm for Hopper: the chapter's "Going faster" kernels, in one file.

What changes against the teaching kernel (layernorm/ops.py):

- forward: the row is read from memory once and kept in registers; short rows are
  packed ROWS to a program so each program still moves enough bytes; warps per row
  are tuned on an H200. Rows that fill the registers badly (wide ones, or widths far
  from a power of two) are walked in column chunks instead: a second walk reads the
  row again, from the L2 cache rather than from memory.
- backward: a persistent grid of about (SMs x a small factor) programs, each owning a
  contiguous block of rows. A program computes dx row by row and adds the row's dW and
  dB into fp32 registers, so the only extra traffic is one (programs x N) fp32 partial
  buffer for each of dW and dB, summed by one small kernel at the end. No locks, no
  partial sums in fp16/bf16, and the next row's loads are in flight while this row is
  computed.

- compile per width: N is a compile-time constant, so each width gets its own compiled
  kernels, as torch.compile does for a static shape; the masks and index arithmetic fold,
  and the chunk loops get constant bounds.

- launch: each kernel's launch configuration comes from a table a tuning run on an H200
  wrote for every width (snippets/faster/tune.py), and the compiled kernels are launched
  directly (normkit.direct_launch), skipping the JIT's per-call argument binding.

A drop-in for F.layer_norm: what it accepts, layer_norm_fast accepts, with the same result
dtypes. Any normalized_shape of trailing dimensions, any leading dimensions, empty batches,
weight and bias of None, fp32 parameters with fp16/bf16 input; rows wider than the tuned
range take the chunked design; rows a constant stride apart (a slice of wider rows) are read
in place. float64, and tensors on a device the kernels do not run on, are computed by
F.layer_norm itself. What PyTorch refuses is refused with a ContractError that names the
problem, before any launch. Offsets are 64-bit: more than 2**31 elements are fine.

For torch.compile the two steps are PyTorch operators (torch.ops.normkernels.layer_norm_fwd
and _bwd, with fake functions and an autograd formula): no graph breaks. LayerNormFast is
torch.nn.LayerNorm with this forward.
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
from normkit.tiles import (SHARE_COLUMNS, forward_entry_config, load_weight, pair_sums, per_row,
                           row_sum, rows_of, share_tile, staged_config)

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable

__all__ = ["ContractError", "LayerNormFast", "LayerNormFastFunction", "layer_norm_fast", "MAX_N"]

MAX_N = 16384  # the tuned range; wider rows take the chunked design (WIDE)
HALF_DTYPES = (torch.float16, torch.bfloat16)


# --8<-- [start:fast_forward_kernel]
@triton.jit(do_not_specialize=["M"])  # one compilation per width N, for every M
def ln_fast_fwd_kernel(
    X, Y,          # (M, N) input, rows STRIDE elements apart, and contiguous output
    W, B,          # (N,) weight and bias (unread without HAS_W / HAS_B)
    Stats,         # (2, M) fp32: mean, then rstd, saved for the backward pass
    M, eps,
    N: tl.constexpr,        # known when compiling: masks and index math fold away
    STRIDE: tl.constexpr,   # x's row stride: N when contiguous, more for a slice
    BLOCK_N: tl.constexpr,  # next power of two >= N: the whole row in registers
    ROWS: tl.constexpr,     # rows per program: short rows packed to move enough bytes
    HAS_W: tl.constexpr, HAS_B: tl.constexpr,
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

    # both statistics from the registers: one read of x, not the teaching kernel's three
    mean = tl.sum(x, axis=1) / N
    # masked lanes must not add (0 - mean)^2
    xc = tl.where(mask, x - mean[:, None], 0.0)
    rstd = tl.rsqrt(tl.sum(xc * xc, axis=1) / N + eps)

    # w and b only now: registers held them idle during the two reductions
    y = xc * rstd[:, None]
    if HAS_W:
        y *= tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    if HAS_B:
        y += tl.load(B + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(Y + rows64 * N + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Stats + rows, mean, mask=row_ok)
    tl.store(Stats + M + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_kernel]


# --8<-- [start:fast_forward_chunked_kernel]
@triton.jit
def _load_chunk(X, rows64, row_ok, cols, N: tl.constexpr, STRIDE: tl.constexpr,
                EVICT: tl.constexpr, PARTIAL: tl.constexpr):
    """One step's (ROWS, CHUNK) block in fp32, and which of its columns are in the row:
    columns are masked only when the walk has a partial chunk (PARTIAL)."""
    if PARTIAL:
        col_ok = (cols < N)[None, :]
        mask = row_ok[:, None] & col_ok
    else:
        col_ok = tl.full([1, cols.shape[0]], 1, tl.int1)
        mask = row_ok[:, None]
    x = tl.load(X + rows64 * STRIDE + cols[None, :], mask=mask, other=0.0,
                eviction_policy=EVICT).to(tl.float32)
    return x, col_ok


@triton.jit
def _normalize_into(Y, W, B, x, mean_row, rstd, rows64, mask, cols, col_ok,
                    N: tl.constexpr, HAS_W: tl.constexpr, HAS_B: tl.constexpr):
    """y = (x - mean) * rstd * w + b for columns cols of a block of rows, stored."""
    y = (x - mean_row[:, None]) * rstd[:, None]
    if HAS_W:
        y *= tl.load(W + cols[None, :], mask=col_ok, other=0.0,
                     eviction_policy="evict_last").to(tl.float32)
    if HAS_B:
        y += tl.load(B + cols[None, :], mask=col_ok, other=0.0,
                     eviction_policy="evict_last").to(tl.float32)
    tl.store(Y + rows64 * N + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)


@triton.jit(do_not_specialize=["M"])
def ln_fast_fwd_chunked_kernel(
    X, Y, W, B, Stats, M, eps,      # as ln_fast_fwd_kernel
    N: tl.constexpr, STRIDE: tl.constexpr,
    CHUNK: tl.constexpr,            # columns per step of the walk along the row
    TAIL_TILE: tl.constexpr,        # the N % CHUNK columns after the whole chunks:
    TAIL_BLOCK: tl.constexpr,       # a tile of their own (TAIL_BLOCK = next power of
    ROWS: tl.constexpr,             # two >= N % CHUNK), or one more step of the walk
    HAS_W: tl.constexpr, HAS_B: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    rows64 = rows.to(tl.int64)[:, None]  # int64: M * N may pass 2**31
    lanes = tl.arange(0, CHUNK)
    TAIL: tl.constexpr = N % CHUNK if TAIL_TILE else 0  # the tail tile's columns
    STEPS: tl.constexpr = (N - TAIL + CHUNK - 1) // CHUNK
    PARTIAL: tl.constexpr = TAIL == 0 and N % CHUNK > 0  # the last step: masked columns

    # the tail tile first: its loads are in flight with the first chunk's, and it
    # stays in registers for walk 2
    if TAIL > 0:
        tail = STEPS * CHUNK + tl.arange(0, TAIL_BLOCK)
        tail_cols_ok = (tail < N)[None, :]
        tail_ok = row_ok[:, None] & tail_cols_ok
        xt = tl.load(X + rows64 * STRIDE + tail[None, :], mask=tail_ok,
                     other=0.0).to(tl.float32)

    # walk 1: each lane keeps Welford's running mean and sum of squared deviations of
    # the values it sees, so no statistic depends on which element comes first (a
    # shift by x[0] loses precision when x[0] is a massive activation). The count is
    # the step number, the same for every lane: one reciprocal per step. A lane past N
    # in a partial last chunk adds nothing (d = 0). evict_last: keep the row in L2.
    mean = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
    m2 = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
    for step in range(0, STEPS):
        cols = step * CHUNK + lanes
        x, col_ok = _load_chunk(X, rows64, row_ok, cols, N, STRIDE, "evict_last",
                                PARTIAL)
        d = tl.where(col_ok, x - mean, 0.0)
        mean += d * (1.0 / (step + 1))
        m2 += d * (x - mean)
    # values each lane saw: one more below N % CHUNK when the walk took the tail
    count = tl.zeros([ROWS, CHUNK], dtype=tl.float32) + (N - TAIL) // CHUNK
    if TAIL == 0:
        count += (lanes < N % CHUNK).to(tl.float32)[None, :]
    # Chan's merge of all lanes (and the tail) at once: the row's mean, then each
    # group's squared deviations plus its count times its mean's squared distance
    # from the row's. Plain sums, no division in the reduction tree
    total = tl.sum(mean * count, axis=1)
    if TAIL > 0:
        total += tl.sum(xt, axis=1)
    mean_row = total / N
    spread = mean - mean_row[:, None]
    m2_row = tl.sum(m2 + count * spread * spread, axis=1)
    if TAIL > 0:  # the tail's own deviations, from the registers
        xt_c = tl.where(tail_ok, xt - mean_row[:, None], 0.0)
        m2_row += tl.sum(xt_c * xt_c, axis=1)
    rstd = tl.rsqrt(m2_row / N + eps)

    # walk 2: normalize. The row was just read: these loads hit the L2 cache, not
    # memory, and evict_first lets the row go once it is used
    for step in range(0, STEPS):
        cols = step * CHUNK + lanes
        x, col_ok = _load_chunk(X, rows64, row_ok, cols, N, STRIDE, "evict_first",
                                PARTIAL)
        _normalize_into(Y, W, B, x, mean_row, rstd, rows64, row_ok[:, None] & col_ok,
                        cols, col_ok, N, HAS_W, HAS_B)
    if TAIL > 0:
        _normalize_into(Y, W, B, xt, mean_row, rstd, rows64, tail_ok, tail,
                        tail_cols_ok, N, HAS_W, HAS_B)
    tl.store(Stats + rows, mean_row, mask=row_ok)
    tl.store(Stats + M + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_chunked_kernel]


# --8<-- [start:fast_forward_aligned_kernel]
@triton.jit(do_not_specialize=["M"])
def ln_fast_fwd_aligned_kernel(
    X, Y,          # (M, N) contiguous input and output, rows off 16 bytes
    W_AT, B_AT,    # (V, LANES): row s, the weight and bias for a row s lanes in
    W, B,          # (N,) weight and bias, read at the edges
    Stats, M, eps,
    N: tl.constexpr,
    CHUNK: tl.constexpr,   # lanes per step of the walk along the window
    LANES: tl.constexpr,   # V lanes, then whole chunks past the row's end
    V: tl.constexpr,       # elements in 16 bytes
    EDGES: tl.constexpr,   # lanes of the edges' tensor: one a thread, at least 2V
    HAS_W: tl.constexpr, HAS_B: tl.constexpr,
):
    row = tl.program_id(0) + tl.arange(0, 1)  # one row a program
    row_ok = row < M
    base, s = row_window(row, N, V)
    STEPS: tl.constexpr = LANES // CHUNK - 1
    # the walk starts at lane V and the first group is an edge, partial or not: a
    # lane is then in the row from the first step until it passes the row's end, so
    # its count is the step number (one reciprocal a step, as the chunked kernel's)
    lanes0 = V + tl.arange(0, CHUNK)[None, :]

    # walk 1: Welford per lane, in 16-byte loads; evict_last keeps the row in L2
    mean = tl.zeros([1, CHUNK], dtype=tl.float32)
    m2 = tl.zeros([1, CHUNK], dtype=tl.float32)
    for step in range(0, STEPS):
        lanes = step * CHUNK + lanes0
        body = body_of(lanes, s, row_ok, N, V)
        x = tl.load(X + base + lanes, mask=body, other=0.0,
                    eviction_policy="evict_last").to(tl.float32)
        d = tl.where(body, x - mean, 0.0)
        mean += d * (1.0 / (step + 1))
        m2 += d * (x - mean)
    # the steps whose group lay in the row
    left = s + N - V - (lanes0 // V) * V
    count = tl.where(left < 0, 0, left // CHUNK + 1).to(tl.float32)

    # the edges only now: no register holds them across walk 1
    cols_e, edge = edges_of(s, row_ok, N, V, EDGES, V)
    x_e = tl.load(X + base + s + cols_e, mask=edge, other=0.0).to(tl.float32)
    # Chan's merge of the lanes, plus the edges, as in the chunked kernel
    mean_row = (tl.sum(mean * count, axis=1) + tl.sum(x_e, axis=1)) / N
    spread = mean - mean_row[:, None]
    xc_e = tl.where(edge, x_e - mean_row[:, None], 0.0)
    m2_row = tl.sum(m2 + count * spread * spread, axis=1) + tl.sum(xc_e * xc_e, axis=1)
    rstd = tl.rsqrt(m2_row / N + eps)
    y_e = xc_e * rstd[:, None]
    if HAS_W:
        y_e *= tl.load(W + cols_e, mask=edge, other=0.0).to(tl.float32)
    if HAS_B:
        y_e += tl.load(B + cols_e, mask=edge, other=0.0).to(tl.float32)
    tl.store(Y + base + s + cols_e, y_e.to(Y.dtype.element_ty), mask=edge)

    # walk 2 from L2; the weight and bias from the tables' row s, aligned like x
    frame = s * LANES
    for step in range(0, STEPS):
        lanes = step * CHUNK + lanes0
        body = body_of(lanes, s, row_ok, N, V)
        x = tl.load(X + base + lanes, mask=body, other=0.0,
                    eviction_policy="evict_first").to(tl.float32)
        y = (x - mean_row[:, None]) * rstd[:, None]
        if HAS_W:
            y *= tl.load(W_AT + frame + lanes, mask=body, other=0.0,
                         eviction_policy="evict_last").to(tl.float32)
        if HAS_B:
            y += tl.load(B_AT + frame + lanes, mask=body, other=0.0,
                         eviction_policy="evict_last").to(tl.float32)
        tl.store(Y + base + lanes, y.to(Y.dtype.element_ty), mask=body)
    tl.store(Stats + row, mean_row, mask=row_ok)
    tl.store(Stats + M + row, rstd, mask=row_ok)
# --8<-- [end:fast_forward_aligned_kernel]


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
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    if HAS_W:  # once per program, not per row
        w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)

    # this program's contiguous block of rows
    first = pid * rows_per_program
    end = tl.minimum(first + rows_per_program, M)

    # fp32 accumulators in registers: a bf16 running sum would stop growing once it
    # is 256 times larger than what is added to it
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_N], dtype=tl.float32)

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
        mean = tl.load(Stats + rows, mask=row_ok, other=0.0)
        rstd = tl.load(Stats + M + rows, mask=row_ok, other=0.0)

        xf = x.to(tl.float32)
        dyf = dy.to(tl.float32)
        x_hat = tl.where(mask, (xf - mean[:, None]) * rstd[:, None], 0.0)
        if GRAD_X:
            g = dyf * w[None, :] if HAS_W else dyf    # gradient reaching x_hat
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
        if PREFETCH:
            x = x_next
            dy = dy_next
        start += ROWS

    # one row of partial sums per program and part; Part is fp32, or the final
    # (GRAD_W + GRAD_B, N) output in the parameters' dtype when a single program did
    # all the rows
    if GRAD_W:
        tl.store(Part + pid * N + cols, dw.to(Part.dtype.element_ty), mask=col_ok)
    if GRAD_B:
        db_row = Part + ((programs if GRAD_W else 0) + pid) * N
        tl.store(db_row + cols, db.to(Part.dtype.element_ty), mask=col_ok)
# --8<-- [end:fast_backward_kernel]


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
    TILE: tl.constexpr,    # a program's N / SPLIT columns held as a power-of-two tile
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
    # tiles.share_width: N / SPLIT in whole SHARE_COLUMNS, so that shares start aligned
    SHARE: tl.constexpr = SPLIT * SHARE_COLUMNS
    WIDTH: tl.constexpr = (N + SHARE - 1) // SHARE * SHARE_COLUMNS
    cols_a, ok_a = share_tile(share, 0, TILE, WIDTH, N)
    w_a = load_weight(W, cols_a, ok_a, HAS_W)
    dw_a = tl.zeros([TILE], dtype=tl.float32)
    db_a = tl.zeros([TILE], dtype=tl.float32)
    if REST > 0:
        cols_b, ok_b = share_tile(share, TILE, REST, WIDTH, N)
        w_b = load_weight(W, cols_b, ok_b, HAS_W)
        dw_b = tl.zeros([REST], dtype=tl.float32)
        db_b = tl.zeros([REST], dtype=tl.float32)
    if SPLIT == 2:
        o_a, o_ok_a = share_tile(1 - share, 0, TILE, WIDTH, N)
        wo_a = load_weight(W, o_a, o_ok_a, HAS_W)
        wo_b = wo_a  # the second tile's, when there is one
        if REST > 0:
            o_b, o_ok_b = share_tile(1 - share, TILE, REST, WIDTH, N)
            wo_b = load_weight(W, o_b, o_ok_b, HAS_W)

    first = group * rows_per_program
    end = tl.minimum(first + rows_per_program, M)
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
    first = pid * rows_per_program
    end = tl.minimum(first + rows_per_program, M)
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
                mask = row_ok[:, None] & (cols < N)[None, :]
                x = tl.load(X + rows64 * STRIDE_X + cols[None, :], mask=mask, other=0.0,
                            eviction_policy="evict_last")
                dy = tl.load(DY + rows64 * STRIDE_DY + cols[None, :], mask=mask,
                             other=0.0, eviction_policy="evict_last")
                xc = x.to(tl.float32) - mean[:, None]
                x_hat = tl.where(mask, xc * rstd[:, None], 0.0)
                g = dy.to(tl.float32)
                if HAS_W:
                    g *= tl.load(W + cols, mask=cols < N, other=0.0,
                                 eviction_policy="evict_last").to(tl.float32)[None, :]
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
            mask = row_ok[:, None] & col_ok[None, :]
            x = tl.load(X + rows64 * STRIDE_X + cols[None, :], mask=mask, other=0.0,
                        eviction_policy="evict_first")
            dy = tl.load(DY + rows64 * STRIDE_DY + cols[None, :], mask=mask, other=0.0,
                         eviction_policy="evict_first")
            dyf = dy.to(tl.float32)
            xc = x.to(tl.float32) - mean[:, None]
            x_hat = tl.where(mask, xc * rstd[:, None], 0.0)
            if GRAD_X:
                g = dyf
                if HAS_W:
                    g *= tl.load(W + cols, mask=col_ok, other=0.0,
                                 eviction_policy="evict_last").to(tl.float32)[None, :]
                dx = (g - (x_hat * c1[:, None] + c2[:, None])) * rstd[:, None]
                tl.store(DX + rows64 * N + cols[None, :], dx.to(DX.dtype.element_ty),
                         mask=mask)
            # the first step has no running sums yet: it writes instead of adding
            old = col_ok & (start > first)
            if GRAD_W:
                dw = tl.load(DW_PART + cols, mask=old, other=0.0,
                             eviction_policy="evict_last")
                tl.store(DW_PART + cols, dw + tl.sum(dyf * x_hat, axis=0), mask=col_ok)
            if GRAD_B:
                db = tl.load(DB_PART + cols, mask=old, other=0.0,
                             eviction_policy="evict_last")
                tl.store(DB_PART + cols, db + tl.sum(dyf, axis=0), mask=col_ok)
        # the next step reads these running sums back, and the thread that loads an
        # element need not be the one that stored it: the barrier orders every store
        # of this step before every load of the next
        tl.debug_barrier()
        start += ROWS
# --8<-- [end:fast_backward_chunked_kernel]


# --8<-- [start:fast_reduce_kernel]
@triton.jit
def sum_partials_kernel(
    Part,    # (2 * P, N) fp32: P partial rows of dW, then P of dB
    Out,     # (2, N) in the weight's dtype: dW, then dB
    P, N,
    BLOCK_P: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    # grid (column blocks, 2): axis 1 picks dW or dB, so both are summed in one launch
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    which = tl.program_id(1)
    Part += which * P * N
    acc = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    p = 0
    while p < P:
        r = p + tl.arange(0, BLOCK_P)
        mask = (r < P)[:, None] & (cols < N)[None, :]
        acc += tl.load(Part + r[:, None] * N + cols[None, :], mask=mask, other=0.0)
        p += BLOCK_P
    # round once, at the very end, to the weight's dtype
    total = tl.sum(acc, axis=0).to(Out.dtype.element_ty)
    tl.store(Out + which * N + cols, total, mask=cols < N)
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
# forward:  ["row", ROWS, num_warps]
#           or ["chunked", CHUNK, ROWS, num_warps, TAIL_TILE]
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
WIDE = {"forward": ("chunked", 4096, 1, 16, 0), "backward": ("chunked", 4096, 1, 16, 1)}


@functools.lru_cache(maxsize=None)
def forward_config(n_cols, element_size):
    """("row", BLOCK_N, ROWS, num_warps), ("chunked", CHUNK, ROWS, num_warps,
    TAIL_TILE) or, for rows whose every access would move one element, ("aligned",
    CHUNK, 1, num_warps, the table's configuration) for the forward."""
    block_n = triton.next_power_of_2(n_cols)
    entry = table_entry("forward", n_cols, element_size)
    if entry is not None:
        return aligned.walk_config(forward_entry_config(entry, n_cols), n_cols,
                                   element_size)
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


def check_inputs(x, normalized_shape, weight, bias, eps):
    """What F.layer_norm checks, checked before anything is allocated or launched: a
    ContractError names the problem. Returns normalized_shape as a tuple."""
    op = "layer_norm_fast"
    shape = dropin.normalized_shape_of(x, normalized_shape, op)
    for name, p in (("weight", weight), ("bias", bias)):
        dropin.check_parameter(name, p, x, shape, op)
    # PyTorch's CPU rule, on every device (normkit.contract: CUDA's F.layer_norm refuses fp32
    # parameters for a 16-bit input): parameters in the input's dtype, or fp32 for a 16-bit input
    w_dtype = None if weight is None else weight.dtype
    b_dtype = None if bias is None else bias.dtype
    dtype = w_dtype or b_dtype
    if (w_dtype and b_dtype and w_dtype != b_dtype) or (
            dtype and dtype != x.dtype and not (dtype == torch.float32 and x.dtype in HALF_DTYPES)):
        raise ContractError(f"{op}: weight and bias must have the input's dtype ({x.dtype}), or both be "
                            f"float32 for a 16-bit input; got weight {w_dtype} and bias {b_dtype}")
    dropin.check_eps(eps, op)
    return shape


# --8<-- [start:fast_direct_launch]
# kernel[grid](...) binds and specializes every argument on every call; these launch the
# compiled kernel directly once it exists (normkit/direct_launch.py)
fwd_row = DirectLauncher(ln_fast_fwd_kernel)
fwd_aligned = DirectLauncher(ln_fast_fwd_aligned_kernel)
fwd_chunked = DirectLauncher(ln_fast_fwd_chunked_kernel)
bwd_row = DirectLauncher(ln_fast_bwd_kernel)
bwd_staged = DirectLauncher(ln_fast_bwd_staged_kernel)
bwd_chunked = DirectLauncher(ln_fast_bwd_chunked_kernel)
sum_partials = DirectLauncher(sum_partials_kernel)
# --8<-- [end:fast_direct_launch]


# --8<-- [start:fast_forward_launch]
def forward_blocks(config, N):
    """The forward kernel's tiles: the row's (BLOCK_N), or the walk's chunk and tail."""
    kind, block = config[:2]
    if kind == "row":
        return {"BLOCK_N": block}
    tail_tile = config[4]
    return {"CHUNK": block, "TAIL_TILE": tail_tile,
            "TAIL_BLOCK": max(1, triton.next_power_of_2(N % block)) if tail_tile else 1}


def forward_rows(x2d, weight, bias, eps, config=None, shape=None):
    """y (contiguous, in x's dtype) and the (2, M) fp32 mean and rstd, for (M, N) rows
    with contiguous columns (normkit.dropin.rows_view). weight and bias: (N,) or None.

    y has `shape` when given (the caller's input shape: no view to pay for afterwards);
    config overrides forward_config(...) for tuning."""
    M, N = x2d.shape
    y = x2d.new_empty(shape or (M, N))
    # one allocation for both statistics
    stats = torch.empty((2, M), dtype=torch.float32, device=x2d.device)
    if y.numel() == 0:  # an empty batch, or rows of no columns: nothing to launch
        return y, stats
    config = aligned.chosen(config or forward_config(N, x2d.element_size()), x2d,
                            default=config is None)
    kind, block, rows, num_warps = config[:4]
    # an absent parameter: any pointer stands in, the kernel never reads it
    w, b = x2d if weight is None else weight, x2d if bias is None else bias
    if kind == "aligned":
        v, lanes = aligned.vector(x2d.element_size()), aligned.walk_lanes(N, block)
        w_at, b_at = (aligned.shifted_params(p, lanes, v) for p in (weight, bias))
        fwd_aligned[(M,)](
            x2d, y, x2d if w_at is None else w_at, x2d if b_at is None else b_at, w, b,
            stats, M, eps, N=N, CHUNK=block, LANES=lanes, V=v,
            EDGES=max(2 * v, 32 * num_warps), HAS_W=weight is not None,
            HAS_B=bias is not None, num_warps=num_warps)
        return y, stats
    launch = fwd_row if kind == "row" else fwd_chunked
    launch[(triton.cdiv(M, rows),)](
        x2d, y, w, b, stats, M, eps, N=N, STRIDE=dropin.row_stride(x2d),
        **forward_blocks(config, N), ROWS=rows, HAS_W=weight is not None,
        HAS_B=bias is not None, num_warps=num_warps)
    return y, stats
# --8<-- [end:fast_forward_launch]


def backward_grid(M, rows, programs):
    """The persistent grid: at most `programs` programs, each with whole ROWS-steps."""
    programs = max(1, min(programs, triton.cdiv(M, rows)))
    rows_per_program = triton.cdiv(triton.cdiv(M, programs), rows) * rows
    return triton.cdiv(M, rows_per_program), rows_per_program


# --8<-- [start:fast_backward_launch]
def params_dtype(weight, bias_dtype):
    """The dtype of the (dW, dB) rows: the parameters' (the input's, or fp32 for a
    16-bit input). Without weight or bias there are no rows; their empty tensor is
    fp32, stated here so that the operator and its fake agree."""
    if weight is not None:
        return weight.dtype
    return torch.float32 if bias_dtype is None else bias_dtype


def backward_rows(dy2d, x2d, weight, stats, bias_dtype=torch.float32,
                  needs=(True, True, True), config=None, programs=None):
    """dx and the (dW, dB) rows that `needs` (autograd's needs_input_grad for x, weight,
    bias) asks for, as one (parts, N) tensor in the parameters' dtype; dx is None
    when not asked for. x2d: (M, N) rows with contiguous columns; bias_dtype: None
    without a bias.

    config overrides backward_config(...); programs overrides the grid size. Both
    exist for tuning and for the benchmark.
    """
    M, N = x2d.shape
    # autograd may hand over any layout (the gradient of a sum is a broadcast scalar)
    dy2d = dy2d if dy2d.stride(1) == 1 or N <= 1 else dy2d.contiguous()
    grad_x = needs[0]
    grad_w = needs[1] and weight is not None
    grad_b = needs[2] and bias_dtype is not None
    parts = grad_w + grad_b
    dx = x2d.new_empty((M, N)) if grad_x else None
    param_dtype = params_dtype(weight, bias_dtype)
    if M == 0 or N == 0 or not (grad_x or parts):  # sums over no rows are zeros
        return dx, torch.zeros((parts, N), dtype=param_dtype, device=x2d.device)
    out = torch.empty((parts, N), dtype=param_dtype, device=x2d.device)

    config = config or backward_config(N, x2d.element_size())
    kind, block, rows, num_warps, per_sm = config[:5]
    split = config[5] if kind == "staged" else 1  # programs per row
    # a persistent grid: every program resident at once, each group of `split`
    # programs with a block of rows
    programs = programs or sm_count(x2d.device.index) * per_sm
    groups, rows_per_program = backward_grid(M, rows, max(1, programs // split))
    if kind != "chunked" and groups == 1:
        # one group: its sums are the answer, so it writes them straight to `out`
        part = out
    else:
        part = torch.empty((parts, groups, N), dtype=torch.float32, device=x2d.device)
    if kind == "row":
        launch, design = bwd_row, {"BLOCK_N": block, "PREFETCH": config[5]}
    elif kind == "staged":
        launch, design = bwd_staged, {"SPLIT": split, "TILE": block, "REST": config[7],
                                      "STAGES": config[6], "EARLY": config[8]}
    else:
        launch, design = bwd_chunked, {"CHUNK": block}
    launch[(groups * split,)](
        x2d, dy2d, x2d if dx is None else dx, x2d if weight is None else weight, stats,
        part if parts else x2d, M, rows_per_program,
        N=N, STRIDE_X=dropin.row_stride(x2d), STRIDE_DY=dropin.row_stride(dy2d),
        **design, ROWS=rows,
        HAS_W=weight is not None, GRAD_X=grad_x, GRAD_W=grad_w, GRAD_B=grad_b,
        num_warps=num_warps)
    if parts and part is not out:
        # one small launch sums every part and casts to the parameters' dtype; torch
        # would need a sum and a cast for each of dW and dB (four launches)
        reduce_n = 64 if N > 2048 else 32
        sum_partials[(triton.cdiv(N, reduce_n), parts)](
            part, out, groups, N, BLOCK_P=32, BLOCK_N=reduce_n, num_warps=4)
    return dx, out
# --8<-- [end:fast_backward_launch]


# --8<-- [start:fast_autograd]
def save_for_backward(ctx, inputs, output):
    x2d, weight, bias = inputs[:3]
    ctx.save_for_backward(x2d, weight, output[1])
    ctx.bias_dtype = None if bias is None else bias.dtype
    ctx.mark_non_differentiable(output[1])  # the statistics are a by-product:
    ctx.set_materialize_grads(False)  # no zeros launched for their gradient


def gradients(ctx, dy, run):
    """The gradients autograd asks for, from run: backward_rows, or the operator
    that calls it."""
    x2d, weight, stats = ctx.saved_tensors
    dy2d = dy if dy.dim() == 2 else dy.reshape(x2d.shape)  # y had the input's shape
    needs = ctx.needs_input_grad[:3]
    dx, dparams = run(dy2d, x2d, weight, stats, ctx.bias_dtype, list(needs))
    parts = iter(dparams)  # dW, then dB: the rows that were asked for
    grads = (dx if needs[0] else None, next(parts) if needs[1] else None,
             next(parts) if needs[2] else None)
    # and None for eps (and the eager path's shape)
    return grads + (None,) * (len(ctx.needs_input_grad) - 3)


def backward(ctx, dy, _):
    """The eager path's backward: the launches themselves."""
    return gradients(ctx, dy, backward_rows)


def backward_op(ctx, dy, _):
    """The operator's backward: torch.compile records the backward operator."""
    return gradients(ctx, dy, layer_norm_bwd)


class LayerNormFastFunction(torch.autograd.Function):
    """The eager path: forward_rows and backward_rows under autograd, without the
    operator's dispatch. (forward takes ctx: with a separate setup_context, apply would
    bind its arguments through inspect.signature on every call.)"""

    @staticmethod
    def forward(ctx, x2d, weight, bias, eps, shape):
        output = forward_rows(x2d, weight, bias, eps, shape=shape)
        save_for_backward(ctx, (x2d, weight, bias), output)
        return output

    # its backward computes with kernels autograd cannot see: differentiable once
    backward = staticmethod(once_differentiable(backward))
# --8<-- [end:fast_autograd]


# --8<-- [start:fast_ops]
# The same two steps as PyTorch operators, for torch.compile: Dynamo records one
# opaque call (it would otherwise trace into the launch code and break the graph),
# the fake functions tell it the outputs' shapes, and the forward's autograd formula
# is backward_op (differentiable once, as in eager).
@torch.library.custom_op(f"{dropin.NAMESPACE}::layer_norm_fwd", mutates_args=())
def layer_norm_fwd(x2d: torch.Tensor, weight: Optional[torch.Tensor],
                   bias: Optional[torch.Tensor],
                   eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    return forward_rows(x2d, weight, bias, eps)


@layer_norm_fwd.register_fake
def _(x2d, weight, bias, eps):
    stats = x2d.new_empty((2, x2d.shape[0]), dtype=torch.float32)
    return x2d.new_empty(x2d.shape), stats


@torch.library.custom_op(f"{dropin.NAMESPACE}::layer_norm_bwd", mutates_args=())
def layer_norm_bwd(dy2d: torch.Tensor, x2d: torch.Tensor,
                   weight: Optional[torch.Tensor], stats: torch.Tensor,
                   bias_dtype: Optional[torch.dtype],
                   needs: list[bool]) -> tuple[torch.Tensor, torch.Tensor]:
    """dx (empty when not asked for) and the asked-for rows of (dW, dB) as one
    tensor: an operator's outputs are tensors, none of them a view of another."""
    dx, dparams = backward_rows(dy2d, x2d, weight, stats, bias_dtype, needs)
    return x2d.new_empty(0) if dx is None else dx, dparams


@layer_norm_bwd.register_fake
def _(dy2d, x2d, weight, stats, bias_dtype, needs):
    parts = (needs[1] and weight is not None) + (needs[2] and bias_dtype is not None)
    rows_dtype = params_dtype(weight, bias_dtype)
    return (x2d.new_empty(x2d.shape if needs[0] else 0),
            x2d.new_empty((parts, x2d.shape[1]), dtype=rows_dtype))


layer_norm_fwd.register_autograd(once_differentiable(backward_op),
                                 setup_context=save_for_backward)
# --8<-- [end:fast_ops]


# --8<-- [start:fast_entry]
def layer_norm_fast(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """F.layer_norm with the fast Triton kernels: the same arguments and results."""
    # before any launch
    shape = check_inputs(input, normalized_shape, weight, bias, eps)
    # float64, or a device without the kernels: PyTorch computes it
    if not dropin.on_kernels(input, weight, bias):
        return F.layer_norm(input, shape, weight, bias, eps)
    x2d = dropin.rows_view(input, len(shape))  # a view when the rows are evenly spaced
    w, b = dropin.flat(weight), dropin.flat(bias)
    how = dropin.path(input, weight, bias)
    if how == "launch":
        return forward_rows(x2d, w, b, float(eps), shape=input.shape)[0]
    if how == "autograd":
        return LayerNormFastFunction.apply(x2d, w, b, float(eps), input.shape)[0]
    return layer_norm_fwd(x2d, w, b, float(eps))[0].view(input.shape)


class LayerNormFast(torch.nn.LayerNorm):
    """torch.nn.LayerNorm with the fast kernels: the same arguments, parameters and
    state_dict keys; only forward changes."""

    def forward(self, input):
        return layer_norm_fast(input, self.normalized_shape, self.weight, self.bias,
                               self.eps)
# --8<-- [end:fast_entry]
