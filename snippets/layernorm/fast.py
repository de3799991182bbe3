"""A fast LayerNorm for Hopper: the chapter's "Going faster" kernels, in one file.

What changes against the teaching kernel (layernorm/ops.py):

- forward: the row is read from memory once and kept in registers; short rows are
  packed ROWS to a program so each program still moves enough bytes; warps per row
  are tuned on an H200.
- backward: a persistent grid of about (SMs x a small factor) programs, each owning a
  contiguous block of rows. A program computes dx row by row and adds the row's dW and
  dB into fp32 registers, so the only extra traffic is one (programs x N) fp32 partial
  buffer for each of dW and dB, summed by one small kernel at the end. No locks, no
  partial sums in fp16/bf16, and the next row's loads are in flight while this row is
  computed.

Inputs: float32, float16 or bfloat16, any number of leading dimensions, N up to 16384
(wider rows are refused: a row must fit in one program's registers).
"""

import functools
import math

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit.launch import ContractError, require
from normkit.runtime import INTERPRETED

import torch
import triton
import triton.language as tl

__all__ = ["ContractError", "LayerNormFastFunction", "layer_norm_fast", "MAX_N"]

MAX_N = 16384
SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


# --8<-- [start:fast_forward_kernel]
@triton.jit
def ln_fast_fwd_kernel(
    X, Y,          # (M, N) contiguous input and output
    W, B,          # (N,) weight and bias
    Mean, Rstd,    # (M,) fp32, saved for the backward pass
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
    b = tl.load(B + cols, mask=col_ok, other=0.0).to(tl.float32)

    # both statistics from the registers: one read of x instead of the teaching kernel's three
    mean = tl.sum(x, axis=1) / N
    xc = tl.where(mask, x - mean[:, None], 0.0)  # masked lanes must not add (0 - mean)^2
    rstd = tl.rsqrt(tl.sum(xc * xc, axis=1) / N + eps)

    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(Y + offsets, y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Mean + rows, mean, mask=row_ok)
    tl.store(Rstd + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_kernel]


# --8<-- [start:fast_backward_kernel]
@triton.jit
def ln_fast_bwd_kernel(
    X, DY, DX,     # (M, N): saved input, upstream gradient, gradient out
    W,             # (N,) weight
    Mean, Rstd,    # (M,) fp32 from the forward pass
    Part,          # (2, programs, N): this program writes row pid of the dW half and of the dB half
    M, N, rows_per_program,
    BLOCK_N: tl.constexpr,
    ROWS: tl.constexpr,      # rows handled per step of the loop
    PREFETCH: tl.constexpr,  # load the next step's x and dy before computing this one
):
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)  # once per program, not per row

    # this program's contiguous block of rows
    first = pid * rows_per_program
    end = tl.minimum(first + rows_per_program, M)

    # fp32 accumulators in registers: a bf16 running sum would stop growing once it
    # is 256 times larger than what is added to it
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_N], dtype=tl.float32)

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
        mean = tl.load(Mean + rows, mask=row_ok, other=0.0)
        rstd = tl.load(Rstd + rows, mask=row_ok, other=0.0)

        xf = x.to(tl.float32)
        dyf = dy.to(tl.float32)
        x_hat = tl.where(mask, (xf - mean[:, None]) * rstd[:, None], 0.0)
        g = dyf * w[None, :]                       # gradient reaching x_hat
        # rounded division: at N=1, c2 must equal g exactly, or rstd (up to 1/sqrt(eps)) amplifies the ulp
        n = tl.full([], N, tl.float32)
        c1 = tl.math.div_rn(tl.sum(x_hat * g, axis=1), n)
        c2 = tl.math.div_rn(tl.sum(g, axis=1), n)
        dx = (g - (x_hat * c1[:, None] + c2[:, None])) * rstd[:, None]
        tl.store(DX + offsets, dx.to(DX.dtype.element_ty), mask=mask)

        dw += tl.sum(dyf * x_hat, axis=0)          # masked rows hold zeros: they add nothing
        db += tl.sum(dyf, axis=0)
        if PREFETCH:
            x = x_next
            dy = dy_next
        start += ROWS

    # one row of partial sums per program; Part is fp32, or the final (2, N) output in
    # the weight's dtype when a single program did all the rows
    tl.store(Part + pid * N + cols, dw.to(Part.dtype.element_ty), mask=col_ok)
    tl.store(Part + (programs + pid) * N + cols, db.to(Part.dtype.element_ty), mask=col_ok)
# --8<-- [end:fast_backward_kernel]


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
    tl.store(Out + which * N + cols, tl.sum(acc, axis=0).to(Out.dtype.element_ty), mask=cols < N)
# --8<-- [end:fast_reduce_kernel]


# --8<-- [start:fast_configs]
@functools.lru_cache(maxsize=None)
def sm_count(device_index):
    if INTERPRETED:
        return 4  # the interpreter runs programs one by one: a few are enough to test the reduction
    return torch.cuda.get_device_properties(device_index).multi_processor_count


# Measured on an H200 at M=32768 in bf16 (notes/fast-kernels.md, `python -m faster --tune`).
# forward: N's power of two -> (ROWS, num_warps)
FORWARD_TABLE = {1024: (2, 4), 2048: (1, 2), 4096: (2, 8), 8192: (1, 4), 16384: (1, 8)}
# backward: N's power of two -> (ROWS, num_warps, programs per SM, PREFETCH)
BACKWARD_TABLE = {
    1024: (4, 4, 4, True), 2048: (1, 4, 4, True), 4096: (1, 8, 2, True),
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


def check_inputs(x, normalized_shape, weight, bias, eps):
    """Raise ContractError for anything the kernels cannot take; touch no memory."""
    require(isinstance(x, torch.Tensor), f"x must be a torch.Tensor, not {type(x).__name__}")
    require(x.dim() >= 1, "x is a 0-d tensor; it needs a last dimension to normalize")
    require(x.dtype in SUPPORTED_DTYPES, f"x has dtype {x.dtype}; supported are float32, float16 and bfloat16")
    require(x.numel() > 0, f"x of shape {tuple(x.shape)} has no elements")
    n_cols = x.shape[-1]
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    require(
        shape == (n_cols,),
        f"normalized_shape is {normalized_shape!r}, but only the last dimension can be "
        f"normalized here: it must be ({n_cols},)",
    )
    for name, p in (("weight", weight), ("bias", bias)):
        require(isinstance(p, torch.Tensor), f"{name} must be a tensor of shape ({n_cols},), not {type(p).__name__}")
        require(p.shape == (n_cols,), f"{name} has shape {tuple(p.shape)}, but x has N={n_cols}: expected ({n_cols},)")
        require(p.dtype == x.dtype, f"{name} has dtype {p.dtype} but x has {x.dtype}")
        require(p.device == x.device, f"{name} is on {p.device} but x is on {x.device}")
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
def forward_rows(x2d, weight, bias, eps, config=None):
    """y, mean, rstd for contiguous (M, N) rows. config overrides (ROWS, num_warps) for tuning."""
    M, N = x2d.shape
    block_n, rows, num_warps = forward_config(N, x2d.element_size())
    if config is not None:
        rows, num_warps = config
    y = torch.empty_like(x2d)
    mean = torch.empty(M, dtype=torch.float32, device=x2d.device)
    rstd = torch.empty(M, dtype=torch.float32, device=x2d.device)
    ln_fast_fwd_kernel[(triton.cdiv(M, rows),)](
        x2d, y, weight, bias, mean, rstd, M, N, eps,
        BLOCK_N=block_n, ROWS=rows, num_warps=num_warps,
    )
    return y, mean, rstd
# --8<-- [end:fast_forward_launch]


# --8<-- [start:fast_backward_launch]
def backward_rows(dy2d, x2d, weight, mean, rstd, config=None, programs=None):
    """dx, dW and dB for contiguous (M, N) rows.

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
    out = torch.empty((2, N), dtype=weight.dtype, device=x2d.device)  # dW, then dB
    # one program: its sums are the answer, so it writes them straight to `out`
    part = out if programs == 1 else torch.empty((2, programs, N), dtype=torch.float32, device=x2d.device)
    ln_fast_bwd_kernel[(programs,)](
        x2d, dy2d, dx, weight, mean, rstd, part, M, N, rows_per_program,
        BLOCK_N=block_n, ROWS=rows, PREFETCH=prefetch, num_warps=num_warps,
    )
    if programs > 1:
        # one small launch sums both halves and casts to the weight's dtype; torch would
        # need a sum and a cast for each of dW and dB (four launches)
        reduce_n = 64 if N > 2048 else 32
        sum_partials_kernel[(triton.cdiv(N, reduce_n), 2)](
            part, out, programs, N, BLOCK_P=32, BLOCK_N=reduce_n, num_warps=4,
        )
    return dx, out[0], out[1]
# --8<-- [end:fast_backward_launch]


# --8<-- [start:fast_autograd]
class LayerNormFastFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        x2d = x.reshape(-1, x.shape[-1])
        if not x2d.is_contiguous():
            x2d = x2d.contiguous()
        weight, bias = weight.contiguous(), bias.contiguous()
        y, mean, rstd = forward_rows(x2d, weight, bias, eps)
        ctx.save_for_backward(x2d, weight, mean, rstd)
        ctx.x_shape = x.shape
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x2d, weight, mean, rstd = ctx.saved_tensors
        dy2d = dy.reshape(x2d.shape)
        if not dy2d.is_contiguous():
            dy2d = dy2d.contiguous()
        dx, dw, db = backward_rows(dy2d, x2d, weight, mean, rstd)
        return dx.view(ctx.x_shape), dw, db, None


def layer_norm_fast(x, normalized_shape, weight, bias, eps=1e-5):
    """F.layer_norm over the last dimension, with the fast Triton kernels."""
    check_inputs(x, normalized_shape, weight, bias, eps)  # before any allocation or launch
    return LayerNormFastFunction.apply(x, weight, bias, eps)
# --8<-- [end:fast_autograd]
