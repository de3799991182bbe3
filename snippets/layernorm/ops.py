"""LayerNorm over the last dimension in Triton, forward and backward, in one file.

Read it top to bottom: the forward kernel, the two backward kernels, the GROUP_SIZE
heuristic, the launch code and the autograd.Function that ties them to PyTorch.

Every row must fit in one block (at most 64 KiB of it); wider rows are refused with a
ContractError before anything runs.
"""

import math

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit.launch import (
    ContractError,
    fused_block_size,
    require,
    require_kernel_device,
    require_same_device,
    rows_of,
    warps_for_block,
)

import torch
import triton
import triton.language as tl

__all__ = ["ContractError", "layer_norm", "LayerNormFunction", "group_size_for"]


# --8<-- [start:row_start]
@triton.jit
def row_start(row, stride):
    """Offset of a row's first element, in 64-bit integers.

    program_id is an int32, and so is row * stride: past 2**31 elements (262144 rows of
    8192) the product wraps to a negative offset and the kernel reads and writes outside
    the tensor. One cast before the multiplication makes it an int64 product.
    """
    return row.to(tl.int64) * stride
# --8<-- [end:row_start]


# --8<-- [start:forward_kernel]
@triton.jit
def layer_norm_fwd_kernel(
    X, Y,          # (M, N) input and output rows
    W, B,          # (N,) weight and bias
    Mean, Rstd,    # (M,) fp32: kept for the backward pass
    stride,        # elements from the start of one row to the next
    N, eps,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0)  # one program normalizes one row
    X += row_start(row, stride)
    Y += row_start(row, stride)

    # mean: sum the row in fp32, whatever the storage dtype
    total = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        total += x
    mean = tl.sum(total, axis=0) / N

    # variance about that mean; a masked lane would add (0 - mean)^2: zero it
    squares = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        centered = tl.where(cols < N, x - mean, 0.0)
        squares += centered * centered
    var = tl.sum(squares, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)

    # the backward pass rebuilds x_hat from these two numbers
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)

    # normalize, scale and shift
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        b = tl.load(B + cols, mask=mask).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)
# --8<-- [end:forward_kernel]


# --8<-- [start:backward_dx]
@triton.jit
def layer_norm_bwd_dx_kernel(
    DX, DY, X,         # (M, N): gradient out, upstream gradient in, saved input
    W,                 # (N,) weight
    DW_part, DB_part,  # (GROUP_SIZE, N) fp32 partial sums of dW and dB
    Mean, Rstd,        # (M,) saved by the forward pass
    Locks,             # (2 * GROUP_SIZE,) int32, zeroed: lock words, then count flags
    stride, N,
    GROUP_SIZE: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
):
    row = tl.program_id(0)  # one program per row again; the whole row in one block
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    start = row_start(row, stride)
    X += start
    DY += start
    DX += start

    # load everything first, then compute
    x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)

    x_hat = tl.where(mask, (x - mean) * rstd, 0.0)  # not -mean * rstd on masked lanes
    g = w * dy                                      # the gradient reaching x_hat
    c1 = tl.sum(x_hat * g, axis=0) / N
    c2 = tl.sum(g, axis=0) / N
    dx = (g - (x_hat * c1 + c2)) * rstd
    tl.store(DX + cols, dx.to(DX.dtype.element_ty), mask=mask)
# --8<-- [end:backward_dx]

    # --8<-- [start:backward_lock]
    # this row's share of dW and dB, kept in fp32
    dw = dy * x_hat
    db = dy

    # rows g, g + GROUP_SIZE, g + 2 * GROUP_SIZE, ... share a partial row and its lock
    group = row % GROUP_SIZE
    Lock = Locks + group
    Count = Locks + GROUP_SIZE + group
    DW_part += group * N + cols
    DB_part += group * N + cols

    # acquire: swap 0 -> 1; reading back 1 means another program holds the lock
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        # first writer of this group: the partial row holds garbage, overwrite it
        tl.atomic_xchg(Count, 1)
    else:
        dw += tl.load(DW_part, mask=mask)
        db += tl.load(DB_part, mask=mask)
    tl.store(DW_part, dw, mask=mask)
    tl.store(DB_part, db, mask=mask)

    # every thread of this program must have stored before anyone else may read
    tl.debug_barrier()
    # release
    tl.atomic_xchg(Lock, 0)
    # --8<-- [end:backward_lock]


# --8<-- [start:backward_reduce]
@triton.jit
def layer_norm_bwd_dwdb_kernel(
    DW_part, DB_part,  # (rows, N) fp32 partial sums written under the locks
    DW, DB,            # (N,) final gradients
    rows, N,           # rows = min(GROUP_SIZE, M): unused groups are never read
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
):
    # one program per BLOCK_SIZE_N columns: parallel along N now, not along M
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for start in range(0, rows, BLOCK_SIZE_M):
        r = start + tl.arange(0, BLOCK_SIZE_M)
        mask = (r[:, None] < rows) & (cols[None, :] < N)
        offsets = r[:, None] * N + cols[None, :]
        dw += tl.load(DW_part + offsets, mask=mask, other=0.0)
        db += tl.load(DB_part + offsets, mask=mask, other=0.0)
    # fold the tile's BLOCK_SIZE_M rows, then round once to the weight's dtype
    tl.store(DW + cols, tl.sum(dw, axis=0).to(DW.dtype.element_ty), mask=cols < N)
    tl.store(DB + cols, tl.sum(db, axis=0).to(DB.dtype.element_ty), mask=cols < N)
# --8<-- [end:backward_reduce]


# --8<-- [start:group_size]
def group_size_for(n_cols):
    """How many partial rows, each with its lock, the dW and dB sums are spread over.

    More groups: shorter queues, about M / GROUP_SIZE updates behind each lock.
    Fewer groups: smaller fp32 buffers, GROUP_SIZE * N * 4 bytes each for dW and dB,
    written by kernel 1 and read back by kernel 2.
    Wider rows make each update longer and the buffers bigger: they get fewer groups.
    """
    if n_cols <= 1024:
        return 256
    if n_cols <= 4096:
        return 128
    if n_cols <= 8192:
        return 96
    return 64
# --8<-- [end:group_size]


# Block shape of the reduction kernel: 32 partial rows by 128 columns per step.
REDUCE_BLOCK_M = 32
REDUCE_BLOCK_N = 128
SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


# --8<-- [start:contract]
def check_inputs(x, normalized_shape, weight, bias, eps):
    """Raise ContractError for anything the kernels cannot take; touch no memory."""
    require(
        isinstance(x, torch.Tensor), f"x must be a torch.Tensor, not {type(x).__name__}"
    )
    require(x.dim() >= 1, "x is a 0-d tensor; it needs a last dimension to normalize")
    require(
        x.dtype in SUPPORTED_DTYPES,
        f"x has dtype {x.dtype}; supported are float32, float16 and bfloat16",
    )
    require_kernel_device("x", x)
    n_cols = x.shape[-1]
    require(x.numel() > 0, f"x of shape {tuple(x.shape)} has no elements")

    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    try:
        shape = tuple(normalized_shape)
    except TypeError:
        shape = None
    require(
        shape == (n_cols,),
        f"normalized_shape is {normalized_shape!r}, but only the last dimension "
        f"can be normalized here: it must be ({n_cols},)",
    )

    for name, param in (("weight", weight), ("bias", bias)):
        require(
            isinstance(param, torch.Tensor),
            f"{name} must be a tensor of shape ({n_cols},), "
            f"not {type(param).__name__}",
        )
        require(
            tuple(param.shape) == (n_cols,),
            f"{name} has shape {tuple(param.shape)}, but x has N={n_cols}: "
            f"expected ({n_cols},)",
        )
        require(
            param.dtype == x.dtype,
            f"{name} has dtype {param.dtype} but x has {x.dtype}",
        )
    require_same_device("x", x, weight=weight, bias=bias)

    require(
        isinstance(eps, (int, float)) and not isinstance(eps, bool)
        and math.isfinite(eps) and eps >= 0,
        f"eps must be a finite number >= 0, not {eps!r}",
    )
    # last: a row wider than one 64 KiB block is refused, naming N and the limit
    fused_block_size(n_cols, x.element_size())
# --8<-- [end:contract]


# --8<-- [start:wrapper]
def forward_rows(x2d, weight, bias, eps):
    """Forward kernel on contiguous (M, N) rows: y, mean, rstd and the launch meta."""
    M, N = x2d.shape
    BLOCK_SIZE = fused_block_size(N, x2d.element_size())  # the whole row in one block
    num_warps = warps_for_block(BLOCK_SIZE)
    y = torch.empty_like(x2d)
    mean = torch.empty((M,), dtype=torch.float32, device=x2d.device)
    rstd = torch.empty((M,), dtype=torch.float32, device=x2d.device)
    layer_norm_fwd_kernel[(M,)](
        x2d, y, weight, bias, mean, rstd,
        x2d.stride(0), N, eps,
        BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
    )
    return y, mean, rstd, (BLOCK_SIZE, num_warps)
# --8<-- [end:wrapper]


def partial_buffers(group_size, n_cols, device):
    """Uninitialised fp32 (GROUP_SIZE, N) buffers for the dW and dB partial sums.

    No zeroing is needed: the first program to take a group's lock overwrites its row,
    and rows of groups that no row was sent to are never read.
    """
    dw_part = torch.empty((group_size, n_cols), dtype=torch.float32, device=device)
    return dw_part, torch.empty_like(dw_part)


# --8<-- [start:backward_launch]
def backward_rows(dy2d, x2d, weight, mean, rstd, meta, group_size=None):
    """dx, dW and dB for contiguous (M, N) rows, with the two backward kernels."""
    M, N = x2d.shape
    BLOCK_SIZE, num_warps = meta
    GROUP_SIZE = group_size_for(N) if group_size is None else group_size
    dx = torch.empty_like(x2d)
    dw = torch.empty((N,), dtype=weight.dtype, device=weight.device)
    db = torch.empty((N,), dtype=weight.dtype, device=weight.device)
    dw_part, db_part = partial_buffers(GROUP_SIZE, N, x2d.device)
    locks = torch.zeros(2 * GROUP_SIZE, dtype=torch.int32, device=x2d.device)

    # kernel 1: M programs, one per row -> dx, and the partial sums under the locks
    layer_norm_bwd_dx_kernel[(M,)](
        dx, dy2d, x2d, weight, dw_part, db_part, mean, rstd, locks,
        x2d.stride(0), N,
        GROUP_SIZE=GROUP_SIZE, BLOCK_SIZE_N=BLOCK_SIZE, num_warps=num_warps,
    )
    # kernel 2: one program per 128 columns; starts only once kernel 1 has finished
    layer_norm_bwd_dwdb_kernel[(triton.cdiv(N, REDUCE_BLOCK_N),)](
        dw_part, db_part, dw, db,
        min(GROUP_SIZE, M), N,
        BLOCK_SIZE_M=REDUCE_BLOCK_M, BLOCK_SIZE_N=REDUCE_BLOCK_N,
    )
    return dx, dw, db
# --8<-- [end:backward_launch]


# --8<-- [start:autograd]
class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, normalized_shape, weight, bias, eps):
        x2d, _ = rows_of(x)  # (M, N), copied only if the rows are not contiguous
        weight, bias = weight.contiguous(), bias.contiguous()
        y, mean, rstd, meta = forward_rows(x2d, weight, bias, eps)
        ctx.save_for_backward(x2d, weight, mean, rstd)  # (1)!
        ctx.meta = meta                                  # (2)!
        ctx.x_shape = x.shape
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x2d, weight, mean, rstd = ctx.saved_tensors
        dy2d, _ = rows_of(dy)  # (3)!
        dx, dw, db = backward_rows(dy2d, x2d, weight, mean, rstd, ctx.meta)
        return dx.view(ctx.x_shape), None, dw, db, None  # (4)!


def layer_norm(x, normalized_shape, weight, bias, eps=1e-5):
    """torch.nn.functional.layer_norm over the last dimension, with Triton kernels."""
    check_inputs(x, normalized_shape, weight, bias, eps)  # before any allocation
    return LayerNormFunction.apply(x, normalized_shape, weight, bias, eps)
# --8<-- [end:autograd]
