"""A fast LayerNorm for Hopper: the chapter's "Going faster" kernels. The forward
kernels and what is LayerNorm's own are here, the backward kernels in fast_backward.py,
and the host side both fast ops share (plans, launches, autograd and operators) in
normkit/fastop.py.

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
  kernels, as torch.compile does for a static shape; the masks and index arithmetic
  fold, and the chunk loops get constant bounds.

- launch: each kernel's launch configuration comes from a table a tuning run on an H200
  wrote for every width (snippets/faster/tune.py), worked out once per call shape, and
  the compiled kernels are launched directly (normkit.direct_launch), skipping the JIT's
  per-call argument binding.

A drop-in for F.layer_norm: what it accepts, layer_norm_fast accepts, with the same
result dtypes. Any normalized_shape of trailing dimensions, any leading dimensions,
empty batches, weight and bias of None, fp32 parameters with fp16/bf16 input; rows wider
than the tuned range take WIDE's designs; rows a constant stride apart (a slice of
wider rows) are read in place. float64, and tensors on a device the kernels do not run
on, are computed by F.layer_norm itself. What PyTorch refuses is refused with a
ContractError that names the problem, before any launch. Offsets are 64-bit: more than
2**31 elements are fine.

For torch.compile the two steps are PyTorch operators
(torch.ops.normkernels.layer_norm_fwd and _bwd, with fake functions and an autograd
formula): no graph breaks. LayerNormFast is torch.nn.LayerNorm with this forward.
"""

import math

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit import aligned, classes_chunked, dropin, exchange
from normkit.aligned import body_of, edges_of, row_window
from normkit.direct_launch import DirectLauncher
from normkit.fastop import FastNorm
from normkit.launch_tables import tables_beside
from normkit.tiles import WIDE_STAGED, row_block
from normkit.launch import ContractError

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from layernorm.fast_backward import (ln_fast_bwd_chunked_kernel, ln_fast_bwd_classes_kernel,
                                     ln_fast_bwd_kernel, ln_fast_bwd_staged_kernel)

__all__ = ["ContractError", "LayerNormFast", "layer_norm_fast", "MAX_N"]

MAX_N = 16384  # the tuned range; wider rows take WIDE's designs
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
    SAVE_STATS: tl.constexpr,  # under autograd: the backward reads them
):
    # this program's ROWS rows, whole, in fp32 (normkit/tiles.py)
    rows, row_ok, cols, col_ok, mask, rows64, x = row_block(X, M, N, STRIDE, BLOCK_N,
                                                            ROWS)

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
    if SAVE_STATS:
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
    SAVE_STATS: tl.constexpr,  # under autograd: the backward reads them
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
    if SAVE_STATS:
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
    SAVE_STATS: tl.constexpr,  # under autograd: the backward reads them
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
    if SAVE_STATS:
        tl.store(Stats + row, mean_row, mask=row_ok)
        tl.store(Stats + M + row, rstd, mask=row_ok)
# --8<-- [end:fast_forward_aligned_kernel]


# --8<-- [start:fast_direct_launch]
fwd_row, fwd_aligned, fwd_chunked = map(DirectLauncher, (
    ln_fast_fwd_kernel, ln_fast_fwd_aligned_kernel, ln_fast_fwd_chunked_kernel))
bwd_row, bwd_classes, bwd_staged, bwd_chunked = map(DirectLauncher, (
    ln_fast_bwd_kernel, ln_fast_bwd_classes_kernel, ln_fast_bwd_staged_kernel,
    ln_fast_bwd_chunked_kernel))
# --8<-- [end:fast_direct_launch]


def check_inputs(x, normalized_shape, weight, bias, eps):
    """What F.layer_norm checks, checked before anything is allocated or launched: a
    ContractError names the problem. Returns normalized_shape as a tuple."""
    op = "layer_norm_fast"
    shape = dropin.normalized_shape_of(x, normalized_shape, op)
    for name, p in (("weight", weight), ("bias", bias)):
        dropin.check_parameter(name, p, x, shape, op)
    # PyTorch's CPU rule, on every device (normkit.contract: CUDA's F.layer_norm refuses
    # fp32 parameters for a 16-bit input): parameters in the input's dtype, or fp32 for
    # a 16-bit input
    w_dtype = None if weight is None else weight.dtype
    b_dtype = None if bias is None else bias.dtype
    dtype = w_dtype or b_dtype
    if (w_dtype and b_dtype and w_dtype != b_dtype) or (
            dtype and dtype != x.dtype and not (dtype == torch.float32 and x.dtype in HALF_DTYPES)):
        raise ContractError(f"{op}: weight and bias must have the input's dtype ({x.dtype}), or both be "
                            f"float32 for a 16-bit input; got weight {w_dtype} and bias {b_dtype}")
    dropin.check_eps(eps, op)
    return shape


# --8<-- [start:fast_op]
class LayerNormKernels(FastNorm):
    """LayerNorm's kernels, parameters and rules, for the host side both ops share."""

    NAME = "layer_norm"
    PARAMS = {"weight": "W", "bias": "B"}  # the kernels' flags: HAS_W, GRAD_W, ...
    STATS = 2  # a row's mean, then its rstd
    CENTRED = True
    # the forward by width, four rungs a dtype (widest N, entry), fitted to every
    # candidate timed at 17 widths in bf16 and 14 in fp32 on an H100 (python -m
    # faster.ladder; notes/data/tune-21-forward-h100.json, -22-forward-fp32-h100.json):
    # 0.36 and 0.15 points of copy below each width's best on average, 1.7 and 0.5 at
    # worst, within a run's spread. A table by width did not pay; the backward's still
    # does (TUNED)
    FORWARD = {2: ((1024, ("row", 8, 4)), (6144, ("row", 2, 8)),
                   (12288, ("chunked", 4096, 1, 16, 0)), (MAX_N, ("row", 1, 8))),
               4: ((1024, ("row", 8, 4)), (4096, ("row", 2, 16)),
                   (6144, ("chunked", 4096, 1, 16, 0)),
                   (MAX_N, ("chunked", 8192, 1, 16, 1)))}
    TUNED = tables_beside(__file__)
    MAX_N = MAX_N
    # past MAX_N (notes/data/wide-rows-1-h100.json, bf16, H100): 8192-element chunks
    # forward, 94 and 89 % of copy at 20480 and 32768 against 88 and 74 with 4096. The
    # backward by width (wide-rows-3-h100.json, -3-fp32-h100.json; rows on 16 bytes, %
    # of copy for the backward alone): the staged design in two shares to 20480 (bf16
    # 55, fp32 67, against 30 and 38 with the chunked design of one row a step); then
    # four rows a step, whose running dW and dB go through L2 once a step, not once a
    # row (bf16 39 and 38 at 24576 and 32768 against 24 and 21; fp32 49 at 32768 against
    # 32)
    # rows off 16 bytes past MAX_N walk by residue class (normkit.classes_chunked;
    # notes/data/classes-chunked-{1,2}-h100.json, H100, fwd+bwd % of copy): 2048-lane
    # chunks, four rows a step, 8 warps, one program an SM (by registers). Two runs in
    # bf16: 40 to 47 at 16385-32769 and 16386 against 25 to 26 and 42 for the chunked
    # rung; at 16388, where the rung moves 4 elements an access, 46 and 47 against 48:
    # the rung keeps such rows (the last field). fp16 (16385, 24577) as bf16; fp32, one
    # run: 52 to 54 against 38 to 39
    WIDE = {"forward": ("chunked", 8192, 1, 16, 0),
            classes_chunked.KIND: (2048, 4, 8, 1, 4),
            "backward": {
                2: ((20480, WIDE_STAGED[2]), exchange.WIDE_RUNG,
                    (math.inf, ("chunked", 4096, 4, 8, 1))),
                4: ((20480, WIDE_STAGED[4]), exchange.WIDE_RUNG,
                    (math.inf, ("chunked", 4096, 4, 8, 1)))}}
    BACKWARD = {"row": bwd_row, "classes": bwd_classes, "staged": bwd_staged,
                "chunked": bwd_chunked, classes_chunked.KIND: classes_chunked.backward,
                exchange.KIND: exchange.backward}

    def forward_rule(self, config, n_cols, element_size):
        """Rows whose every access would move one element: walked from their aligned
        windows in chunks (normkit.aligned.walk_config); other rows off 16 bytes in
        short chunks, the tail in a tile of its own (normkit.aligned.offset_config)."""
        walk = aligned.walk_config(config, n_cols, element_size)
        offset = {2: ("chunked", aligned.OFFSET_CHUNK, 1, aligned.OFFSET_WARPS, 1),
                  4: aligned.OFFSET_FP32}
        return aligned.offset_config(walk, n_cols, element_size, offset)

    def forward_design(self, config, n_cols, element_size, stride):
        """The forward kernel of a configuration and its tiles: the row's, the walk's
        chunk and tail, or the aligned walk's chunk and windows."""
        kind, block, rows, num_warps = config[:4]
        if kind == "aligned":
            v = aligned.vector(element_size)
            return fwd_aligned, {"CHUNK": block,
                                 "LANES": aligned.walk_lanes(n_cols, block), "V": v,
                                 "EDGES": max(2 * v, 32 * num_warps)}
        if kind == "row":
            return fwd_row, {"STRIDE": stride, "BLOCK_N": block, "ROWS": rows}
        tail_tile = config[4]
        tail_block = max(1, triton.next_power_of_2(n_cols % block)) if tail_tile else 1
        return fwd_chunked, {"STRIDE": stride, "CHUNK": block, "TAIL_TILE": tail_tile,
                             "TAIL_BLOCK": tail_block, "ROWS": rows}


OP = LayerNormKernels()
# --8<-- [end:fast_op]
forward_rows, backward_rows = OP.forward_rows, OP.backward_rows
forward_config, backward_config, tuned_table = (OP.forward_config, OP.backward_config,
                                                OP.tuned_table)
layer_norm_fwd, layer_norm_bwd = OP.forward_op, OP.backward_op


# --8<-- [start:fast_entry]
def layer_norm_fast(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """F.layer_norm with the fast Triton kernels: the same arguments and results."""
    # before any launch
    shape = check_inputs(input, normalized_shape, weight, bias, eps)
    # float64, or a device without the kernels: PyTorch computes it
    if not dropin.on_kernels(input, weight, bias):
        return F.layer_norm(input, shape, weight, bias, eps)
    return OP(input, shape, (weight, bias), float(eps))


class LayerNormFast(torch.nn.LayerNorm):
    """torch.nn.LayerNorm with the fast kernels: the same arguments, parameters and
    state_dict keys; only forward changes."""

    def forward(self, input):
        return layer_norm_fast(input, self.normalized_shape, self.weight, self.bias,
                               self.eps)
# --8<-- [end:fast_entry]
