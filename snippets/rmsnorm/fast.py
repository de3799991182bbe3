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

Inputs: float32, float16 or bfloat16, any number of leading dimensions, N up to 16384.
Offsets are 64-bit: more than 2**31 elements are fine.
"""

import functools
import json
import math
from pathlib import Path

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit.direct_launch import DirectLauncher
from normkit.launch import ContractError
from normkit.runtime import INTERPRETED

import torch
import triton
import triton.language as tl

__all__ = ["ContractError", "RMSNormFastFunction", "rms_norm_fast", "MAX_N"]

MAX_N = 16384
SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


# --8<-- [start:fast_forward_kernel]
@triton.jit(do_not_specialize=["M"])  # one compilation per width N, for every M
def rms_fast_fwd_kernel(
    X, Y,        # (M, N) contiguous input and output
    W,           # (N,) weight
    Rstd,        # (M,) fp32, saved for the backward pass
    M, eps,
    N: tl.constexpr,        # known when compiling: masks and index math fold away
    BLOCK_N: tl.constexpr,  # next power of two >= N: the whole row in registers
    ROWS: tl.constexpr,     # rows per program: short rows packed to move enough bytes
):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    mask = row_ok[:, None] & col_ok[None, :]
    # int64: M * N may pass 2**31
    offsets = rows.to(tl.int64)[:, None] * N + cols[None, :]

    x = tl.load(X + offsets, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)

    # masked lanes hold 0: they add nothing
    rstd = tl.rsqrt(tl.sum(x * x, axis=1) / N + eps)
    y = x * rstd[:, None] * w[None, :]
    tl.store(Y + offsets, y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Rstd + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_kernel]


# --8<-- [start:fast_forward_chunked_kernel]
@triton.jit(do_not_specialize=["M"])
def rms_fast_fwd_chunked_kernel(
    X, Y, W, Rstd, M, eps,      # as rms_fast_fwd_kernel
    N: tl.constexpr,
    CHUNK: tl.constexpr,        # columns per step of the walk along the row
    ROWS: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    starts = rows.to(tl.int64)[:, None] * N  # int64: M * N may pass 2**31

    # walk 1: the sum of squares, each lane its own, from memory; evict_last keeps
    # the row in L2 for walk 2
    squares = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
    for start in range(0, N, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        mask = row_ok[:, None] & (cols < N)[None, :]
        x = tl.load(X + starts + cols[None, :], mask=mask, other=0.0,
                    eviction_policy="evict_last").to(tl.float32)
        squares += x * x
    rstd = tl.rsqrt(tl.sum(squares, axis=1) / N + eps)

    # walk 2: scale. The row was just read: these loads hit the L2 cache, not memory
    for start in range(0, N, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        col_ok = cols < N
        mask = row_ok[:, None] & col_ok[None, :]
        x = tl.load(X + starts + cols[None, :], mask=mask, other=0.0,
                    eviction_policy="evict_first").to(tl.float32)
        w = tl.load(W + cols, mask=col_ok, other=0.0,
                    eviction_policy="evict_last").to(tl.float32)
        y = x * rstd[:, None] * w[None, :]
        tl.store(Y + starts + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Rstd + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_chunked_kernel]


# --8<-- [start:fast_backward_kernel]
@triton.jit(do_not_specialize=["M", "rows_per_program"])
def rms_fast_bwd_kernel(
    X, DY, DX,   # (M, N): saved input, upstream gradient, gradient out
    W,           # (N,) weight
    Rstd,        # (M,) fp32 from the forward pass
    Part,        # (programs, N): this program writes row pid
    M, rows_per_program,
    N: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ROWS: tl.constexpr,      # rows handled per step of the loop
    PREFETCH: tl.constexpr,  # load the next step's x and dy before computing this one
):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    # once per program, not per row
    w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)

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
        # rounded division, like the forward's mean
        c = tl.math.div_rn(tl.sum(x_hat * g, axis=1), tl.full([], N, tl.float32))
        dx = (g - x_hat * c[:, None]) * rstd[:, None]
        tl.store(DX + offsets, dx.to(DX.dtype.element_ty), mask=mask)

        dw += tl.sum(dyf * x_hat, axis=0)  # masked rows hold zeros: they add nothing
        if PREFETCH:
            x = x_next
            dy = dy_next
        start += ROWS

    # Part is fp32, or the final dW in the weight's dtype when one program did
    # all the rows
    tl.store(Part + pid * N + cols, dw.to(Part.dtype.element_ty), mask=col_ok)
# --8<-- [end:fast_backward_kernel]


# --8<-- [start:fast_backward_chunked_kernel]
@triton.jit(do_not_specialize=["M", "rows_per_program"])
def rms_fast_bwd_chunked_kernel(
    X, DY, DX, W, Rstd,   # as rms_fast_bwd_kernel
    Part,          # (programs, N) fp32: row pid is this program's running dW
    M, rows_per_program,
    N: tl.constexpr,
    CHUNK: tl.constexpr,   # columns per step of the walk along the row
    ROWS: tl.constexpr,    # rows per step
):
    pid = tl.program_id(0)
    first = pid * rows_per_program
    end = tl.minimum(first + rows_per_program, M)
    n = tl.full([], N, tl.float32)

    start = first
    while start < end:
        rows = start + tl.arange(0, ROWS)
        row_ok = rows < end
        starts = rows.to(tl.int64)[:, None] * N
        rstd = tl.load(Rstd + rows, mask=row_ok, other=0.0)

        # walk 1: the row sum dx needs, per lane, then across lanes. x and dy come
        # from memory; evict_last keeps them in L2 for walk 2
        s = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
        for c in range(0, N, CHUNK):
            cols = c + tl.arange(0, CHUNK)
            mask = row_ok[:, None] & (cols < N)[None, :]
            x = tl.load(X + starts + cols[None, :], mask=mask, other=0.0,
                        eviction_policy="evict_last")
            dy = tl.load(DY + starts + cols[None, :], mask=mask, other=0.0,
                         eviction_policy="evict_last")
            w = tl.load(W + cols, mask=cols < N, other=0.0,
                        eviction_policy="evict_last").to(tl.float32)
            s += x.to(tl.float32) * dy.to(tl.float32) * w[None, :]
        c1 = tl.math.div_rn(tl.sum(s, axis=1) * rstd, n)

        # walk 2: dx, and this step's dW added to the program's running sum. x and dy
        # come from L2 now (evict_first: last use); so does the running sum
        # (programs x N x 4 bytes in all), read and written back by this program alone
        for c in range(0, N, CHUNK):
            cols = c + tl.arange(0, CHUNK)
            col_ok = cols < N
            mask = row_ok[:, None] & col_ok[None, :]
            x = tl.load(X + starts + cols[None, :], mask=mask, other=0.0,
                        eviction_policy="evict_first")
            dy = tl.load(DY + starts + cols[None, :], mask=mask, other=0.0,
                         eviction_policy="evict_first")
            w = tl.load(W + cols, mask=col_ok, other=0.0,
                        eviction_policy="evict_last").to(tl.float32)
            dyf = dy.to(tl.float32)
            x_hat = x.to(tl.float32) * rstd[:, None]
            dx = (dyf * w[None, :] - x_hat * c1[:, None]) * rstd[:, None]
            tl.store(DX + starts + cols[None, :], dx.to(DX.dtype.element_ty), mask=mask)
            # the first step has no running sum yet: it writes instead of adding
            old = col_ok & (start > first)
            dw = tl.load(Part + pid * N + cols, mask=old, other=0.0,
                         eviction_policy="evict_last")
            tl.store(Part + pid * N + cols, dw + tl.sum(dyf * x_hat, axis=0),
                     mask=col_ok)
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
    return table


def table_entry(kind, n_cols, element_size):
    """The tuned entry of the next multiple of the table's step at or above N
    (its rows are at least as wide)."""
    table = tuned_table(element_size)
    if table is None:
        return None
    return table[kind].get(triton.cdiv(n_cols, table["step"]) * table["step"])


@functools.lru_cache(maxsize=None)
def forward_config(n_cols, element_size):
    """("row", BLOCK_N, ROWS, num_warps) or ("chunked", CHUNK, ROWS, num_warps)
    for the forward."""
    block_n = triton.next_power_of_2(n_cols)
    entry = table_entry("forward", n_cols, element_size)
    if entry is not None:
        return ("row", block_n, *entry[1:]) if entry[0] == "row" else tuple(entry)
    # outside the table (or no table yet): the whole row in registers, at least
    # 2048 elements per program
    rows = max(1, 2048 // block_n)
    # about 2 KiB of x per warp
    num_warps = min(max(rows * block_n * element_size // 2048, 1), 16)
    return "row", block_n, rows, num_warps


@functools.lru_cache(maxsize=None)
def backward_config(n_cols, element_size):
    """("row", BLOCK_N, ROWS, num_warps, programs_per_sm, PREFETCH) or
    ("chunked", CHUNK, ROWS, num_warps, programs_per_sm) for the backward."""
    block_n = triton.next_power_of_2(n_cols)
    entry = table_entry("backward", n_cols, element_size)
    if entry is not None:
        return ("row", block_n, *entry[1:]) if entry[0] == "row" else tuple(entry)
    rows = max(1, 1024 // block_n)
    # the backward holds fp32 rows
    num_warps = min(max(rows * block_n * 4 // 2048, 1), 16)
    return "row", block_n, rows, num_warps, 2, block_n * element_size < 32768
# --8<-- [end:fast_configs]


def check_inputs(x, weight, eps):
    """Raise ContractError for anything the kernels cannot take; touch no memory.

    Every call runs these checks, so the messages are formatted only when one fails.
    """
    if not isinstance(x, torch.Tensor):
        raise ContractError(f"x must be a torch.Tensor, not {type(x).__name__}")
    if x.dim() < 1:
        raise ContractError("x is a 0-d tensor; it needs a last dimension to normalize")
    if x.dtype not in SUPPORTED_DTYPES:
        raise ContractError(f"x has dtype {x.dtype}; supported are float32, float16 and bfloat16")
    if x.numel() == 0:
        raise ContractError(f"x of shape {tuple(x.shape)} has no elements")
    n_cols = x.shape[-1]
    if not isinstance(weight, torch.Tensor):
        raise ContractError(f"weight must be a tensor of shape ({n_cols},), not {type(weight).__name__}")
    if weight.shape != (n_cols,):
        raise ContractError(f"weight has shape {tuple(weight.shape)}, but x has N={n_cols}: expected ({n_cols},)")
    if weight.dtype != x.dtype:
        raise ContractError(f"weight has dtype {weight.dtype} but x has {x.dtype}")
    if weight.device != x.device:
        raise ContractError(f"weight is on {weight.device} but x is on {x.device}")
    if x.device.type != ("cpu" if INTERPRETED else "cuda"):
        raise ContractError(f"x is on {x.device}, but the kernels here run on {'cpu' if INTERPRETED else 'cuda'}")
    if n_cols > MAX_N:
        raise ContractError(f"N={n_cols} is wider than the {MAX_N} columns the kernels were tuned for")
    if not (isinstance(eps, (int, float)) and not isinstance(eps, bool) and math.isfinite(eps) and eps >= 0):
        raise ContractError(f"eps must be a finite number >= 0, not {eps!r}")


# --8<-- [start:fast_direct_launch]
# kernel[grid](...) binds and specializes every argument on every call; these launch the
# compiled kernel directly once it exists (normkit/direct_launch.py)
fwd_row = DirectLauncher(rms_fast_fwd_kernel)
fwd_chunked = DirectLauncher(rms_fast_fwd_chunked_kernel)
bwd_row = DirectLauncher(rms_fast_bwd_kernel)
bwd_chunked = DirectLauncher(rms_fast_bwd_chunked_kernel)
sum_partials = DirectLauncher(sum_partials_kernel)
# --8<-- [end:fast_direct_launch]


# --8<-- [start:fast_forward_launch]
def forward_rows(x2d, weight, eps, config=None):
    """y and the fp32 rstd for contiguous (M, N) rows.

    config overrides forward_config(...) for tuning."""
    M, N = x2d.shape
    kind, block, rows, num_warps = config or forward_config(N, x2d.element_size())
    y = torch.empty_like(x2d)
    rstd = torch.empty(M, dtype=torch.float32, device=x2d.device)
    if kind == "row":
        fwd_row[(triton.cdiv(M, rows),)](x2d, y, weight, rstd, M, eps,
                                         N=N, BLOCK_N=block, ROWS=rows,
                                         num_warps=num_warps)
    else:
        fwd_chunked[(triton.cdiv(M, rows),)](x2d, y, weight, rstd, M, eps,
                                             N=N, CHUNK=block, ROWS=rows,
                                             num_warps=num_warps)
    return y, rstd
# --8<-- [end:fast_forward_launch]


def backward_grid(M, rows, programs):
    """The persistent grid: at most `programs` programs, each with whole ROWS-steps."""
    programs = max(1, min(programs, triton.cdiv(M, rows)))
    rows_per_program = triton.cdiv(triton.cdiv(M, programs), rows) * rows
    return triton.cdiv(M, rows_per_program), rows_per_program


# --8<-- [start:fast_backward_launch]
def backward_rows(dy2d, x2d, weight, rstd, config=None, programs=None):
    """dx and dW for contiguous (M, N) rows.

    config overrides backward_config(...); programs overrides the grid size. Both
    exist for tuning and for the benchmark.
    """
    M, N = x2d.shape
    config = config or backward_config(N, x2d.element_size())
    kind, block, rows, num_warps, per_sm = config[:5]
    # a persistent grid: every program resident at once, each with a block of rows
    programs = programs or sm_count(x2d.device.index) * per_sm
    programs, rows_per_program = backward_grid(M, rows, programs)

    dx = torch.empty_like(x2d)
    dw = torch.empty(N, dtype=weight.dtype, device=x2d.device)
    if kind == "row" and programs == 1:
        # one program: its sum is the answer, so it writes it straight to dw
        bwd_row[(1,)](x2d, dy2d, dx, weight, rstd, dw, M, rows_per_program,
                      N=N, BLOCK_N=block, ROWS=rows, PREFETCH=config[5],
                      num_warps=num_warps)
        return dx, dw
    part = torch.empty((programs, N), dtype=torch.float32, device=x2d.device)
    if kind == "row":
        bwd_row[(programs,)](x2d, dy2d, dx, weight, rstd, part, M, rows_per_program,
                             N=N, BLOCK_N=block, ROWS=rows, PREFETCH=config[5],
                             num_warps=num_warps)
    else:
        bwd_chunked[(programs,)](x2d, dy2d, dx, weight, rstd, part, M, rows_per_program,
                                 N=N, CHUNK=block, ROWS=rows, num_warps=num_warps)
    # one small launch sums the partial rows and casts to the weight's dtype
    # (torch would need two: a sum, then a cast)
    reduce_n = 64 if N > 2048 else 32
    sum_partials[(triton.cdiv(N, reduce_n),)](
        part, dw, programs, N, BLOCK_P=32, BLOCK_N=reduce_n, num_warps=4)
    return dx, dw
# --8<-- [end:fast_backward_launch]


# --8<-- [start:fast_autograd]
class RMSNormFastFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        x2d = x.reshape(-1, x.shape[-1])
        if not x2d.is_contiguous():
            x2d = x2d.contiguous()
        y, rstd = forward_rows(x2d, weight.contiguous(), eps)
        ctx.save_for_backward(x2d, weight, rstd)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x2d, weight, rstd = ctx.saved_tensors
        dy2d = dy.reshape(x2d.shape)
        if not dy2d.is_contiguous():
            dy2d = dy2d.contiguous()
        dx, dw = backward_rows(dy2d, x2d, weight.contiguous(), rstd)
        return dx.view(dy.shape), dw, None


def rms_norm_fast(x, weight, eps=1e-6):
    """RMSNorm over the last dimension, with the fast Triton kernels.

    The same as F.rms_norm(x, (N,), weight, eps)."""
    check_inputs(x, weight, eps)  # before any allocation or launch
    return RMSNormFastFunction.apply(x, weight, eps)
# --8<-- [end:fast_autograd]
