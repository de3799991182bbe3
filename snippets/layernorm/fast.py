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

Inputs: float32, float16 or bfloat16, any number of leading dimensions, N up to 16384
(the tuned range; wider rows are refused). Offsets are 64-bit: more than 2**31 elements are fine.
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

__all__ = ["ContractError", "LayerNormFastFunction", "layer_norm_fast", "MAX_N"]

MAX_N = 16384
SUPPORTED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


# --8<-- [start:fast_forward_kernel]
@triton.jit(do_not_specialize=["M"])  # one compilation per width N, for every M
def ln_fast_fwd_kernel(
    X, Y,          # (M, N) contiguous input and output
    W, B,          # (N,) weight and bias
    Stats,         # (2, M) fp32: mean, then rstd, saved for the backward pass
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

    # both statistics from the registers: one read of x, not the teaching kernel's three
    mean = tl.sum(x, axis=1) / N
    # masked lanes must not add (0 - mean)^2
    xc = tl.where(mask, x - mean[:, None], 0.0)
    rstd = tl.rsqrt(tl.sum(xc * xc, axis=1) / N + eps)

    # w and b only now: registers held them idle during the two reductions
    w = tl.load(W + cols, mask=col_ok, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=col_ok, other=0.0).to(tl.float32)
    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(Y + offsets, y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Stats + rows, mean, mask=row_ok)
    tl.store(Stats + M + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_kernel]


# --8<-- [start:fast_forward_chunked_kernel]
@triton.jit(do_not_specialize=["M"])
def ln_fast_fwd_chunked_kernel(
    X, Y, W, B, Stats, M, eps,      # as ln_fast_fwd_kernel
    N: tl.constexpr,
    CHUNK: tl.constexpr,            # columns per step of the walk along the row
    ROWS: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    starts = rows.to(tl.int64)[:, None] * N  # int64: M * N may pass 2**31

    # walk 1: sums of (x - K) and (x - K)^2, where K is the row's first element.
    # Shifting by a value of the row keeps var = E[(x-K)^2] - E[x-K]^2 from
    # subtracting two large, nearly equal numbers when the mean is far from 0. Each
    # lane keeps its own sums: no reduction inside the loop, none before it.
    # evict_last: keep the row in L2 for walk 2.
    shift = tl.load(X + starts, mask=row_ok[:, None], other=0.0).to(tl.float32)
    s1 = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
    s2 = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
    for start in range(0, N, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        mask = row_ok[:, None] & (cols < N)[None, :]
        x = tl.load(X + starts + cols[None, :], mask=mask, other=0.0,
                    eviction_policy="evict_last").to(tl.float32)
        d = tl.where(mask, x - shift, 0.0)
        s1 += d
        s2 += d * d
    mean_d = tl.sum(s1, axis=1) / N
    mean = tl.sum(shift, axis=1) + mean_d
    rstd = tl.rsqrt(tl.maximum(tl.sum(s2, axis=1) / N - mean_d * mean_d, 0.0) + eps)

    # walk 2: normalize. The row was just read: these loads hit the L2 cache, not
    # memory, and evict_first lets the row go once it is used
    for start in range(0, N, CHUNK):
        cols = start + tl.arange(0, CHUNK)
        col_ok = cols < N
        mask = row_ok[:, None] & col_ok[None, :]
        x = tl.load(X + starts + cols[None, :], mask=mask, other=0.0,
                    eviction_policy="evict_first").to(tl.float32)
        w = tl.load(W + cols, mask=col_ok, other=0.0,
                    eviction_policy="evict_last").to(tl.float32)
        b = tl.load(B + cols, mask=col_ok, other=0.0,
                    eviction_policy="evict_last").to(tl.float32)
        y = (x - mean[:, None]) * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(Y + starts + cols[None, :], y.to(Y.dtype.element_ty), mask=mask)
    tl.store(Stats + rows, mean, mask=row_ok)
    tl.store(Stats + M + rows, rstd, mask=row_ok)
# --8<-- [end:fast_forward_chunked_kernel]


# --8<-- [start:fast_backward_kernel]
@triton.jit(do_not_specialize=["M", "rows_per_program"])
def ln_fast_bwd_kernel(
    X, DY, DX,     # (M, N): saved input, upstream gradient, gradient out
    W,             # (N,) weight
    Stats,         # (2, M) fp32 from the forward pass: mean, then rstd
    Part,          # (2, programs, N): this program writes row pid of each half (dW, dB)
    M, rows_per_program,
    N: tl.constexpr,
    BLOCK_N: tl.constexpr,
    ROWS: tl.constexpr,      # rows handled per step of the loop
    PREFETCH: tl.constexpr,  # load the next step's x and dy before computing this one
):
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    # once per program, not per row
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
        mean = tl.load(Stats + rows, mask=row_ok, other=0.0)
        rstd = tl.load(Stats + M + rows, mask=row_ok, other=0.0)

        xf = x.to(tl.float32)
        dyf = dy.to(tl.float32)
        x_hat = tl.where(mask, (xf - mean[:, None]) * rstd[:, None], 0.0)
        g = dyf * w[None, :]                       # gradient reaching x_hat
        # rounded division: at N=1, c2 must equal g exactly, or rstd (up to
        # 1/sqrt(eps)) amplifies the ulp
        n = tl.full([], N, tl.float32)
        c1 = tl.math.div_rn(tl.sum(x_hat * g, axis=1), n)
        c2 = tl.math.div_rn(tl.sum(g, axis=1), n)
        dx = (g - (x_hat * c1[:, None] + c2[:, None])) * rstd[:, None]
        tl.store(DX + offsets, dx.to(DX.dtype.element_ty), mask=mask)

        dw += tl.sum(dyf * x_hat, axis=0)  # masked rows hold zeros: they add nothing
        db += tl.sum(dyf, axis=0)
        if PREFETCH:
            x = x_next
            dy = dy_next
        start += ROWS

    # one row of partial sums per program; Part is fp32, or the final (2, N) output in
    # the weight's dtype when a single program did all the rows
    tl.store(Part + pid * N + cols, dw.to(Part.dtype.element_ty), mask=col_ok)
    tl.store(Part + (programs + pid) * N + cols, db.to(Part.dtype.element_ty),
             mask=col_ok)
# --8<-- [end:fast_backward_kernel]


# --8<-- [start:fast_backward_chunked_kernel]
@triton.jit(do_not_specialize=["M", "rows_per_program"])
def ln_fast_bwd_chunked_kernel(
    X, DY, DX, W, Stats,   # as ln_fast_bwd_kernel
    Part,          # (2, programs, N) fp32: row pid of each half: this program's dW, dB
    M, rows_per_program,
    N: tl.constexpr,
    CHUNK: tl.constexpr,   # columns per step of the walk along the row
    ROWS: tl.constexpr,    # rows per step
):
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    first = pid * rows_per_program
    end = tl.minimum(first + rows_per_program, M)
    n = tl.full([], N, tl.float32)

    start = first
    while start < end:
        rows = start + tl.arange(0, ROWS)
        row_ok = rows < end
        starts = rows.to(tl.int64)[:, None] * N
        mean = tl.load(Stats + rows, mask=row_ok, other=0.0)
        rstd = tl.load(Stats + M + rows, mask=row_ok, other=0.0)

        # walk 1: the two row sums dx needs, per lane, then across lanes. x and dy
        # come from memory; evict_last keeps them in L2 for walk 2
        s1 = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
        s2 = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
        for c in range(0, N, CHUNK):
            cols = c + tl.arange(0, CHUNK)
            mask = row_ok[:, None] & (cols < N)[None, :]
            x = tl.load(X + starts + cols[None, :], mask=mask, other=0.0,
                        eviction_policy="evict_last")
            dy = tl.load(DY + starts + cols[None, :], mask=mask, other=0.0,
                         eviction_policy="evict_last")
            w = tl.load(W + cols, mask=cols < N, other=0.0,
                        eviction_policy="evict_last").to(tl.float32)
            xc = x.to(tl.float32) - mean[:, None]
            x_hat = tl.where(mask, xc * rstd[:, None], 0.0)
            g = dy.to(tl.float32) * w[None, :]
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
            x = tl.load(X + starts + cols[None, :], mask=mask, other=0.0,
                        eviction_policy="evict_first")
            dy = tl.load(DY + starts + cols[None, :], mask=mask, other=0.0,
                         eviction_policy="evict_first")
            w = tl.load(W + cols, mask=col_ok, other=0.0,
                        eviction_policy="evict_last").to(tl.float32)
            dyf = dy.to(tl.float32)
            xc = x.to(tl.float32) - mean[:, None]
            x_hat = tl.where(mask, xc * rstd[:, None], 0.0)
            g = dyf * w[None, :]
            dx = (g - (x_hat * c1[:, None] + c2[:, None])) * rstd[:, None]
            tl.store(DX + starts + cols[None, :], dx.to(DX.dtype.element_ty), mask=mask)
            # the first step has no running sums yet: it writes instead of adding
            old = col_ok & (start > first)
            dw = tl.load(Part + pid * N + cols, mask=old, other=0.0,
                         eviction_policy="evict_last")
            db = tl.load(Part + (programs + pid) * N + cols, mask=old, other=0.0,
                         eviction_policy="evict_last")
            tl.store(Part + pid * N + cols, dw + tl.sum(dyf * x_hat, axis=0),
                     mask=col_ok)
            tl.store(Part + (programs + pid) * N + cols, db + tl.sum(dyf, axis=0),
                     mask=col_ok)
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


def check_inputs(x, normalized_shape, weight, bias, eps):
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
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if shape != (n_cols,):
        raise ContractError(
            f"normalized_shape is {normalized_shape!r}, but only the last dimension can be "
            f"normalized here: it must be ({n_cols},)")
    for name, p in (("weight", weight), ("bias", bias)):
        if not isinstance(p, torch.Tensor):
            raise ContractError(f"{name} must be a tensor of shape ({n_cols},), not {type(p).__name__}")
        if p.shape != (n_cols,):
            raise ContractError(f"{name} has shape {tuple(p.shape)}, but x has N={n_cols}: expected ({n_cols},)")
        if p.dtype != x.dtype:
            raise ContractError(f"{name} has dtype {p.dtype} but x has {x.dtype}")
        if p.device != x.device:
            raise ContractError(f"{name} is on {p.device} but x is on {x.device}")
    if x.device.type != ("cpu" if INTERPRETED else "cuda"):
        raise ContractError(f"x is on {x.device}, but the kernels here run on {'cpu' if INTERPRETED else 'cuda'}")
    if n_cols > MAX_N:
        raise ContractError(f"N={n_cols} is wider than the {MAX_N} columns the kernels were tuned for")
    if not (isinstance(eps, (int, float)) and not isinstance(eps, bool) and math.isfinite(eps) and eps >= 0):
        raise ContractError(f"eps must be a finite number >= 0, not {eps!r}")


# --8<-- [start:fast_direct_launch]
# kernel[grid](...) binds and specializes every argument on every call; these launch the
# compiled kernel directly once it exists (normkit/direct_launch.py)
fwd_row = DirectLauncher(ln_fast_fwd_kernel)
fwd_chunked = DirectLauncher(ln_fast_fwd_chunked_kernel)
bwd_row = DirectLauncher(ln_fast_bwd_kernel)
bwd_chunked = DirectLauncher(ln_fast_bwd_chunked_kernel)
sum_partials = DirectLauncher(sum_partials_kernel)
# --8<-- [end:fast_direct_launch]


# --8<-- [start:fast_forward_launch]
def forward_rows(x2d, weight, bias, eps, config=None):
    """y and the (2, M) fp32 mean and rstd, for contiguous (M, N) rows.

    config overrides forward_config(...) for tuning."""
    M, N = x2d.shape
    kind, block, rows, num_warps = config or forward_config(N, x2d.element_size())
    y = torch.empty_like(x2d)
    # one allocation for both statistics
    stats = torch.empty((2, M), dtype=torch.float32, device=x2d.device)
    if kind == "row":
        fwd_row[(triton.cdiv(M, rows),)](
            x2d, y, weight, bias, stats, M, eps,
            N=N, BLOCK_N=block, ROWS=rows, num_warps=num_warps)
    else:
        fwd_chunked[(triton.cdiv(M, rows),)](
            x2d, y, weight, bias, stats, M, eps,
            N=N, CHUNK=block, ROWS=rows, num_warps=num_warps)
    return y, stats
# --8<-- [end:fast_forward_launch]


def backward_grid(M, rows, programs):
    """The persistent grid: at most `programs` programs, each with whole ROWS-steps."""
    programs = max(1, min(programs, triton.cdiv(M, rows)))
    rows_per_program = triton.cdiv(triton.cdiv(M, programs), rows) * rows
    return triton.cdiv(M, rows_per_program), rows_per_program


# --8<-- [start:fast_backward_launch]
def backward_rows(dy2d, x2d, weight, stats, config=None, programs=None):
    """dx, dW and dB for contiguous (M, N) rows.

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
    out = torch.empty((2, N), dtype=weight.dtype, device=x2d.device)  # dW, then dB
    if kind == "row" and programs == 1:
        # one program: its sums are the answer, so it writes them straight to `out`
        bwd_row[(1,)](x2d, dy2d, dx, weight, stats, out, M, rows_per_program,
                      N=N, BLOCK_N=block, ROWS=rows, PREFETCH=config[5],
                      num_warps=num_warps)
        return dx, out[0], out[1]
    part = torch.empty((2, programs, N), dtype=torch.float32, device=x2d.device)
    if kind == "row":
        bwd_row[(programs,)](x2d, dy2d, dx, weight, stats, part, M, rows_per_program,
                             N=N, BLOCK_N=block, ROWS=rows, PREFETCH=config[5],
                             num_warps=num_warps)
    else:
        bwd_chunked[(programs,)](x2d, dy2d, dx, weight, stats, part, M,
                                 rows_per_program, N=N, CHUNK=block, ROWS=rows,
                                 num_warps=num_warps)
    # one small launch sums both halves and casts to the weight's dtype; torch would
    # need a sum and a cast for each of dW and dB (four launches)
    reduce_n = 64 if N > 2048 else 32
    sum_partials[(triton.cdiv(N, reduce_n), 2)](
        part, out, programs, N, BLOCK_P=32, BLOCK_N=reduce_n, num_warps=4)
    return dx, out[0], out[1]
# --8<-- [end:fast_backward_launch]


# --8<-- [start:fast_autograd]
class LayerNormFastFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        x2d = x.reshape(-1, x.shape[-1])
        if not x2d.is_contiguous():
            x2d = x2d.contiguous()
        y, stats = forward_rows(x2d, weight.contiguous(), bias.contiguous(), eps)
        ctx.save_for_backward(x2d, weight, stats)
        return y.view(x.shape)

    @staticmethod
    def backward(ctx, dy):
        x2d, weight, stats = ctx.saved_tensors
        dy2d = dy.reshape(x2d.shape)
        if not dy2d.is_contiguous():
            dy2d = dy2d.contiguous()
        dx, dw, db = backward_rows(dy2d, x2d, weight.contiguous(), stats)
        return dx.view(dy.shape), dw, db, None


def layer_norm_fast(x, normalized_shape, weight, bias, eps=1e-5):
    """F.layer_norm over the last dimension, with the fast Triton kernels."""
    # before any allocation or launch
    check_inputs(x, normalized_shape, weight, bias, eps)
    return LayerNormFastFunction.apply(x, weight, bias, eps)
# --8<-- [end:fast_autograd]
