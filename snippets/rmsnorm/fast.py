"""A fast RMSNorm for Hopper: the chapter's "Going faster" kernels, in one file.

y = x * rsqrt(mean(x^2) + eps) * weight, over the last dimension.

What changes against the teaching kernels (rmsnorm/ops.py):

- forward: short rows are packed ROWS to a program, warps per row tuned on an H200.
- backward: the teaching dx kernel writes one fp32 partial per element (M x N x 4 bytes,
  more than x itself); here a persistent grid of about (SMs x a small factor) programs
  each owns a contiguous block of rows, computes dx row by row and keeps its share of
  dW in fp32 registers. The partial buffer shrinks to (programs x N) fp32, summed by one
  small kernel at the end, and the next row's loads are in flight while this row computes.

Inputs: float32, float16 or bfloat16, any number of leading dimensions, N up to 16384.
"""

import functools
import math

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit.launch import ContractError, require
from normkit.runtime import INTERPRETED

import torch
import triton
import triton.language as tl

__all__ = ["ContractError", "RMSNormFastFunction", "rms_norm_fast", "MAX_N"]

MAX_N = 16384
SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


# --8<-- [start:fast_forward_kernel]
@triton.jit
def rms_fast_fwd_kernel(
    X, Y,        # (M, N) contiguous input and output
    W,           # (N,) weight
    Rstd,        # (M,) fp32, saved for the backward pass
    M, N, eps,
    BLOCK_N: tl.constexpr,  # next power of two >= N: the whole row in registers
    ROWS: tl.constexpr,     # rows per program: short rows are packed so a program moves enough bytes
):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    mask = row_ok[:, None] & col_ok[None, :]
    offsets = rows.to(tl.int64)[:, None] * N + cols[None, :]  # int64: M * N may pass 2**31

    x = tl.load(X + offsets, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)

    rstd = tl.rsqrt(tl.sum(x * x, axis=1) / N + eps)  # masked lanes hold 0: they add nothing
    y = x * rstd[:, None] * w[None, :]
    tl.store(Y + offsets, y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Rstd + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_kernel]


# --8<-- [start:fast_backward_kernel]
@triton.jit
def rms_fast_bwd_kernel(
    X, DY, DX,   # (M, N): saved input, upstream gradient, gradient out
    W,           # (N,) weight
    Rstd,        # (M,) fp32 from the forward pass
    Part,        # (programs, N): this program writes row pid
    M, N, rows_per_program,
    BLOCK_N: tl.constexpr,
    ROWS: tl.constexpr,      # rows handled per step of the loop
    PREFETCH: tl.constexpr,  # load the next step's x and dy before computing this one
):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)  # once per program, not per row

    # this program's contiguous block of rows
    first = pid * rows_per_program
    end = tl.minimum(first + rows_per_program, M)

    # the fp32 accumulator lives in registers for the whole block of rows
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)

    start = first
    if PREFETCH:
        rows = start + tl.arange(0, ROWS)
        mask = (rows < end)[:, None] & col_ok[None, :]
        offsets = rows.to(tl.int64)[:, None] * N + cols[None, :]
        x = tl.load(X + offsets, mask=mask, other=0.0)
        dy = tl.load(DY + offsets, mask=mask, other=0.0)
    while start < end:
        rows = start + tl.arange(0, ROWS)
        row_ok = rows < end
        mask = row_ok[:, None] & col_ok[None, :]
        offsets = rows.to(tl.int64)[:, None] * N + cols[None, :]
        if PREFETCH:
            # the next step's loads go out now and arrive while this step computes
            nxt = rows + ROWS
            nxt_mask = (nxt < end)[:, None] & col_ok[None, :]
            nxt_offsets = nxt.to(tl.int64)[:, None] * N + cols[None, :]
            x_next = tl.load(X + nxt_offsets, mask=nxt_mask, other=0.0)
            dy_next = tl.load(DY + nxt_offsets, mask=nxt_mask, other=0.0)
        else:
            x = tl.load(X + offsets, mask=mask, other=0.0)
            dy = tl.load(DY + offsets, mask=mask, other=0.0)
        rstd = tl.load(Rstd + rows, mask=row_ok, other=0.0)

        xf = x.to(tl.float32)
        dyf = dy.to(tl.float32)
        x_hat = xf * rstd[:, None]
        g = dyf * w[None, :]                       # gradient reaching x_hat
        c = tl.math.div_rn(tl.sum(x_hat * g, axis=1), tl.full([], N, tl.float32))  # rounded, like the forward's mean
        dx = (g - x_hat * c[:, None]) * rstd[:, None]
        tl.store(DX + offsets, dx.to(DX.dtype.element_ty), mask=mask)

        dw += tl.sum(dyf * x_hat, axis=0)          # masked rows hold zeros: they add nothing
        if PREFETCH:
            x = x_next
            dy = dy_next
        start += ROWS

    # Part is fp32, or the final dW in the weight's dtype when one program did all the rows
    tl.store(Part + pid * N + cols, dw.to(Part.dtype.element_ty), mask=col_ok)
# --8<-- [end:fast_backward_kernel]


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
        return 4  # the interpreter runs programs one by one: a few are enough to test the reduction
    return torch.cuda.get_device_properties(device_index).multi_processor_count


# Measured on an H200 at M=32768 in bf16 (notes/fast-kernels.md, `python -m faster --tune`).
# forward: N's power of two -> (ROWS, num_warps)
FORWARD_TABLE = {1024: (2, 2), 2048: (1, 4), 4096: (1, 8), 8192: (2, 16), 16384: (1, 16)}
# backward: N's power of two -> (ROWS, num_warps, programs per SM, PREFETCH)
BACKWARD_TABLE = {
    1024: (2, 4, 4, True), 2048: (1, 4, 4, True), 4096: (2, 16, 1, True),
    8192: (1, 16, 1, True), 16384: (1, 16, 1, False),  # 16384: the prefetched row no longer fits
}


@functools.lru_cache(maxsize=None)
def forward_config(n_cols, element_size):
    """(BLOCK_N, ROWS, num_warps) for the forward kernel."""
    block_n = triton.next_power_of_2(n_cols)
    if element_size == 2 and block_n in FORWARD_TABLE:
        return (block_n, *FORWARD_TABLE[block_n])
    rows = max(1, 2048 // block_n)                   # at least 2048 elements per program
    num_warps = min(max(rows * block_n * element_size // 2048, 1), 16)  # about 2 KiB of x per warp
    return block_n, rows, num_warps


@functools.lru_cache(maxsize=None)
def backward_config(n_cols, element_size):
    """(BLOCK_N, ROWS, num_warps, programs_per_sm, PREFETCH) for the backward kernel."""
    block_n = triton.next_power_of_2(n_cols)
    if element_size == 2 and block_n in BACKWARD_TABLE:
        return (block_n, *BACKWARD_TABLE[block_n])
    rows = max(1, 1024 // block_n)
    num_warps = min(max(rows * block_n * 4 // 2048, 1), 16)  # the backward holds fp32 rows
    return block_n, rows, num_warps, 2, block_n * element_size < 32768
# --8<-- [end:fast_configs]


def check_inputs(x, weight, eps):
    """Raise ContractError for anything the kernels cannot take; touch no memory."""
    require(isinstance(x, torch.Tensor), f"x must be a torch.Tensor, not {type(x).__name__}")
    require(x.dim() >= 1, "x is a 0-d tensor; it needs a last dimension to normalize")
    require(x.dtype in SUPPORTED_DTYPES, f"x has dtype {x.dtype}; supported are float32, float16 and bfloat16")
    require(x.numel() > 0, f"x of shape {tuple(x.shape)} has no elements")
    n_cols = x.shape[-1]
    require(isinstance(weight, torch.Tensor), f"weight must be a tensor of shape ({n_cols},), not {type(weight).__name__}")
    require(weight.shape == (n_cols,), f"weight has shape {tuple(weight.shape)}, but x has N={n_cols}: expected ({n_cols},)")
    require(weight.dtype == x.dtype, f"weight has dtype {weight.dtype} but x has {x.dtype}")
    require(weight.device == x.device, f"weight is on {weight.device} but x is on {x.device}")
    require(
        x.device.type == ("cpu" if INTERPRETED else "cuda"),
        f"x is on {x.device}, but the kernels here run on {'cpu' if INTERPRETED else 'cuda'}",
    )
    require(n_cols <= MAX_N, f"N={n_cols} is wider than the {MAX_N} columns one program keeps in registers")
    require(
        isinstance(eps, (int, float)) and not isinstance(eps, bool) and math.isfinite(eps) and eps >= 0,
        f"eps must be a finite number >= 0, not {eps!r}",
    )


# --8<-- [start:fast_forward_launch]
def forward_rows(x2d, weight, eps, config=None):
    """y, rstd for contiguous (M, N) rows. config overrides (ROWS, num_warps) for tuning."""
    M, N = x2d.shape
    block_n, rows, num_warps = forward_config(N, x2d.element_size())
    if config is not None:
        rows, num_warps = config
    y = torch.empty_like(x2d)
    rstd = torch.empty(M, dtype=torch.float32, device=x2d.device)
    rms_fast_fwd_kernel[(triton.cdiv(M, rows),)](
        x2d, y, weight, rstd, M, N, eps,
        BLOCK_N=block_n, ROWS=rows, num_warps=num_warps,
    )
    return y, rstd
# --8<-- [end:fast_forward_launch]


# --8<-- [start:fast_backward_launch]
def backward_rows(dy2d, x2d, weight, rstd, config=None, programs=None):
    """dx and dW for contiguous (M, N) rows.

    config overrides (ROWS, num_warps, programs_per_sm, PREFETCH); programs overrides the
    grid size. Both exist for tuning and for the benchmark.
    """
    M, N = x2d.shape
    block_n, rows, num_warps, per_sm, prefetch = backward_config(N, x2d.element_size())
    if config is not None:
        rows, num_warps, per_sm, prefetch = config
    if programs is None:
        # a persistent grid: every program resident at once, each with a block of rows
        programs = sm_count(x2d.device.index) * per_sm
    programs = max(1, min(programs, triton.cdiv(M, rows)))
    rows_per_program = triton.cdiv(triton.cdiv(M, programs), rows) * rows  # whole steps
    programs = triton.cdiv(M, rows_per_program)

    dx = torch.empty_like(x2d)
    dw = torch.empty(N, dtype=weight.dtype, device=x2d.device)
    # one program: its sum is the answer, so it writes it straight to dw
    part = dw if programs == 1 else torch.empty((programs, N), dtype=torch.float32, device=x2d.device)
    rms_fast_bwd_kernel[(programs,)](
        x2d, dy2d, dx, weight, rstd, part, M, N, rows_per_program,
        BLOCK_N=block_n, ROWS=rows, PREFETCH=prefetch, num_warps=num_warps,
    )
    if programs > 1:
        # one small launch sums the partial rows and casts to the weight's dtype
        # (torch would need two: a sum, then a cast)
        reduce_n = 64 if N > 2048 else 32
        sum_partials_kernel[(triton.cdiv(N, reduce_n),)](
            part, dw, programs, N, BLOCK_P=32, BLOCK_N=reduce_n, num_warps=4,
        )
    return dx, dw
# --8<-- [end:fast_backward_launch]


# --8<-- [start:fast_autograd]
class RMSNormFastFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        x2d = x.reshape(-1, x.shape[-1])
        if not x2d.is_contiguous():
            x2d = x2d.contiguous()
        weight = weight.contiguous()
        y, rstd = forward_rows(x2d, weight, eps)
        ctx.save_for_backward(x2d, weight, rstd)
        ctx.x_shape = x.shape
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x2d, weight, rstd = ctx.saved_tensors
        dy2d = dy.reshape(x2d.shape)
        if not dy2d.is_contiguous():
            dy2d = dy2d.contiguous()
        dx, dw = backward_rows(dy2d, x2d, weight, rstd)
        return dx.view(ctx.x_shape), dw, None


def rms_norm_fast(x, weight, eps=1e-6):
    """RMSNorm over the last dimension (F.rms_norm with normalized_shape=(N,)), fast kernels."""
    check_inputs(x, weight, eps)  # before any allocation or launch
    return RMSNormFastFunction.apply(x, weight, eps)
# --8<-- [end:fast_autograd]
