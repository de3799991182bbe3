"""A fast RMSNorm for Hopper: the chapter's "Going faster" kernels. The forward kernels
and what is RMSNorm's own are here, the backward kernels in fast_backward.py, and the
host side both fast ops share (plans, launches, autograd and operators) in
normkit/fastop.py.

y = x * rsqrt(mean(x^2) + eps) * weight, over the last dimension.

What changes against the teaching kernels (rmsnorm/ops.py):

- forward: short rows are packed ROWS to a program, warps per row tuned on an H200.
  Rows that fill the registers badly (wide ones, or widths far from a power of two) are
  walked in column chunks instead: the second walk reads the row again from the L2
  cache.
- backward: the teaching dx kernel writes one fp32 partial per element (M x N x 4 bytes,
  more than x itself); here a persistent grid of about (SMs x a small factor) programs
  each owns a contiguous block of rows, computes dx row by row and keeps its share of
  dW in fp32 registers. The partial buffer shrinks to (programs x N) fp32, summed by one
  small kernel at the end, and the next row's loads are in flight while this row
  computes.

N is a compile-time constant: each width gets its own compiled kernels, as torch.compile
does for a static shape. Launch configurations come from tables a tuning run on an H200
wrote for every width (snippets/faster/tune.py), worked out once per call shape; the
compiled kernels are launched directly (normkit.direct_launch).

A drop-in for F.rms_norm (same signature): what it accepts, rms_norm_fast accepts, with
the same result dtype (the input's). Any normalized_shape of trailing dimensions, any
leading dimensions, empty batches, no weight, a weight of another float dtype than the
input (fp32 weights with bf16 activations); eps=None is the input dtype's machine
epsilon, as in PyTorch. Rows wider than the tuned range take WIDE's designs; rows a
constant stride apart (a slice of wider rows) are read in place. float64, and tensors on
a device the kernels do not run on, are computed by F.rms_norm itself. What PyTorch
refuses is refused with a ContractError that names the problem, before any launch.
Offsets are 64-bit: more than 2**31 elements are fine.

For torch.compile the two steps are PyTorch operators
(torch.ops.normkernels.rms_norm_fwd and _bwd, with fake functions and an autograd
formula): no graph breaks. RMSNormFast is torch.nn.RMSNorm with this forward.
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

from rmsnorm.fast_backward import (rms_fast_bwd_chunked_kernel, rms_fast_bwd_classes_kernel,
                                   rms_fast_bwd_kernel, rms_fast_bwd_staged_kernel)

__all__ = ["ContractError", "RMSNormFast", "rms_norm_fast", "MAX_N"]

MAX_N = 16384  # the tuned range; wider rows take WIDE's designs


# --8<-- [start:fast_forward_kernel]
@triton.jit(do_not_specialize=["M"])  # one compilation per width N, for every M
def rms_fast_fwd_kernel(
    X, Y,        # (M, N) input, rows STRIDE elements apart, and contiguous output
    W,           # (N,) weight (any float dtype; unread without HAS_W)
    Rstd,        # (1, M) fp32, saved for the backward pass
    M, eps,
    N: tl.constexpr,        # known when compiling: masks and index math fold away
    STRIDE: tl.constexpr,   # x's row stride: N when contiguous, more for a slice
    BLOCK_N: tl.constexpr,  # next power of two >= N: the whole row in registers
    ROWS: tl.constexpr,     # rows per program: short rows packed to move enough bytes
    HAS_W: tl.constexpr,
    SAVE_STATS: tl.constexpr,  # under autograd: the backward reads them
):
    # this program's ROWS rows, whole, in fp32 (normkit/tiles.py)
    rows, row_ok, cols, col_ok, mask, rows64, x = row_block(X, M, N, STRIDE, BLOCK_N,
                                                            ROWS)

    # masked lanes hold 0: they add nothing
    rstd = tl.rsqrt(tl.sum(x * x, axis=1) / N + eps)
    y = x * rstd[:, None]
    if HAS_W:
        y *= tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(Y + rows64 * N + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)
    if SAVE_STATS:
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
    SAVE_STATS: tl.constexpr,  # under autograd: the backward reads them
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
    if SAVE_STATS:
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
    SAVE_STATS: tl.constexpr,  # under autograd: the backward reads them
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
    if SAVE_STATS:
        tl.store(Rstd + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_chunked_kernel]


# --8<-- [start:fast_direct_launch]
fwd_row, fwd_aligned, fwd_chunked = map(DirectLauncher, (
    rms_fast_fwd_kernel, rms_fast_fwd_aligned_kernel, rms_fast_fwd_chunked_kernel))
bwd_row, bwd_classes, bwd_staged, bwd_chunked = map(DirectLauncher, (
    rms_fast_bwd_kernel, rms_fast_bwd_classes_kernel, rms_fast_bwd_staged_kernel,
    rms_fast_bwd_chunked_kernel))
# --8<-- [end:fast_direct_launch]


def check_inputs(x, normalized_shape, weight, eps):
    """What F.rms_norm checks, checked before anything is allocated or launched: a
    ContractError names the problem. Returns normalized_shape as a tuple."""
    op = "rms_norm_fast"
    shape = dropin.normalized_shape_of(x, normalized_shape, op)
    dropin.check_parameter("weight", weight, x, shape,
                           op)  # any float dtype, as PyTorch (normkit.contract)
    if eps is not None:
        dropin.check_eps(eps, op)
    return shape


# --8<-- [start:fast_op]
class RMSNormKernels(FastNorm):
    """RMSNorm's kernels, parameter and rules, for the host side both ops share."""

    NAME = "rms_norm"
    PARAMS = {"weight": "W"}  # the kernels' flags: HAS_W, GRAD_W
    STATS = 1  # a row's rstd
    CENTRED = False
    # the forward by width, four rungs a dtype (widest N, entry), fitted as LayerNorm's
    # (notes/data/tune-21-forward-h100.json, tune-22-forward-fp32-h100.json): 0.08 and
    # 0.11 points of copy below each width's best on average, 0.5 and 0.9 at worst
    FORWARD = {2: ((1024, ("row", 8, 8)), (4096, ("row", 1, 8)),
                   (12288, ("chunked", 8192, 1, 16)), (MAX_N, ("row", 1, 16))),
               4: ((256, ("row", 8, 4)), (4096, ("row", 2, 8)),
                   (10240, ("chunked", 4096, 1, 16)), (MAX_N, ("row", 1, 16)))}
    TUNED = tables_beside(__file__)
    MAX_N = MAX_N
    # past MAX_N (notes/data/wide-rows-1-h100.json): 8192-element chunks forward, 95 and
    # 87 % of copy at 20480 and 32768 against 92 and 82 with 4096. The backward by width
    # (wide-rows-3-h100.json, -3-fp32-h100.json; rows on 16 bytes, % of copy for the
    # backward alone): the staged design in two shares to 24576 in bf16 (75 and 68 at
    # 20480 and 24576 against 57 and 50 chunked), to 20480 in fp32 (93 against 62); then
    # the chunked design (four rows a step were ahead at 32768, 48 against 37 in bf16,
    # and behind at rows off 16 bytes, 44 against 54 at fp32 16385)
    # rows off 16 bytes past MAX_N walk by residue class (normkit.classes_chunked;
    # notes/data/classes-chunked-{1,2}-h100.json, H100, fwd+bwd % of copy): 4096-lane
    # chunks, two rows a step, 8 warps, one program an SM (by registers), at every such
    # width (the last field). Two runs in bf16: 43 to 65 at 16385-32769, 16386 and 16388
    # against 29 to 54 for the chunked rung; fp16 (16385, 24577) as bf16; fp32, one run:
    # 50 to 58 against 45 to 57 at 16385-32769, 66 against 66 at 16386
    WIDE = {"forward": ("chunked", 8192, 1, 16),
            classes_chunked.KIND: (4096, 2, 8, 1, 8),
            "backward": {
                2: ((24576, WIDE_STAGED[2]), exchange.WIDE_RUNG,
                    (math.inf, ("chunked", 4096, 1, 16, 1))),
                4: ((20480, WIDE_STAGED[4]), exchange.WIDE_RUNG,
                    (math.inf, ("chunked", 4096, 1, 16, 1)))}}
    BACKWARD = {"row": bwd_row, "classes": bwd_classes, "staged": bwd_staged,
                "chunked": bwd_chunked, classes_chunked.KIND: classes_chunked.backward,
                exchange.KIND: exchange.backward}

    def forward_rule(self, config, n_cols, element_size):
        """Rows whose every access would move one element: read whole from their aligned
        windows where a window fits the tuned range (normkit.aligned.window_config);
        other rows off 16 bytes in short chunks (normkit.aligned.offset_config)."""
        window = aligned.window_config(config, n_cols, element_size, MAX_N)
        offset = {2: ("chunked", aligned.OFFSET_CHUNK, 1, aligned.OFFSET_WARPS)}
        return aligned.offset_config(window, n_cols, element_size, offset)

    def forward_design(self, config, n_cols, element_size, stride):
        """The forward kernel of a configuration and its tile: the row's, the walk's
        chunk, or the aligned window's lanes."""
        kind, block, rows = config[:3]
        if kind == "aligned":
            return fwd_aligned, {"LANES": block, "V": aligned.vector(element_size),
                                 "ROWS": rows}
        tile = {"BLOCK_N" if kind == "row" else "CHUNK": block}
        return (fwd_row if kind == "row" else fwd_chunked), {"STRIDE": stride, **tile,
                                                             "ROWS": rows}


OP = RMSNormKernels()
# --8<-- [end:fast_op]
forward_rows, backward_rows = OP.forward_rows, OP.backward_rows
forward_config, backward_config, tuned_table = (OP.forward_config, OP.backward_config,
                                                OP.tuned_table)
rms_norm_fwd, rms_norm_bwd = OP.forward_op, OP.backward_op


# --8<-- [start:fast_entry]
def rms_norm_fast(input, normalized_shape, weight=None, eps=None):
    """F.rms_norm with the fast Triton kernels: the same arguments and results."""
    shape = check_inputs(input, normalized_shape, weight, eps)  # before any launch
    if not dropin.on_kernels(input, weight):  # float64, or a device without the kernels
        return F.rms_norm(input, shape, weight, eps)
    if eps is None:  # PyTorch's default: the input dtype's machine epsilon
        eps = torch.finfo(input.dtype).eps
    return OP(input, shape, (weight,), float(eps))


class RMSNormFast(torch.nn.RMSNorm):
    """torch.nn.RMSNorm with the fast kernels: the same arguments, parameters and
    state_dict keys; only forward changes."""

    def forward(self, input):
        return rms_norm_fast(input, self.normalized_shape, self.weight, self.eps)
# --8<-- [end:fast_entry]
