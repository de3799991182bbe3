"""RMSNorm in Triton: a forward kernel, a dx kernel, a dgamma reduction and the autograd wrapper.

The layout follows the Liger-Kernel habit of one file per operation: the checks, the kernels,
their launchers and the torch.autograd.Function that ties them together.
"""

import math

import normkit  # noqa: F401  (chooses GPU or interpreter before triton defines any kernel)
import torch
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable

from normkit.launch import ContractError, require, require_kernel_device, require_same_device, warps_for_block

MAX_N = 4096
SCRATCH_LIMIT_BYTES = 64 * 1024 * 1024
SUPPORTED_DTYPES = (torch.float32, torch.float16)
GAMMA_BLOCK_M = 32
GAMMA_BLOCK_N = 32

# Counts calls of the autograd wrapper, so a test can prove the kernel path really ran.
CALLS = {"forward": 0, "backward": 0}


def reset_calls():
    CALLS["forward"] = 0
    CALLS["backward"] = 0


# --8<-- [start:contract]
def scratch_bytes(m, n):
    """Size of the fp32 PARTIAL buffer the backward writes:
    one value per element of x."""
    return m * n * 4


def check_contract(x, gamma, eps):
    """Refuse every input the kernels were not written for,
    before anything is allocated."""
    require(
        isinstance(x, torch.Tensor),
        f"x must be a torch.Tensor, got {type(x).__name__}",
    )
    require(
        isinstance(gamma, torch.Tensor),
        f"gamma must be a torch.Tensor, got {type(gamma).__name__}",
    )
    require(x.dim() == 2, f"x must be 2-D (M, N), got {x.dim()} dimension(s)")
    require(
        x.dtype in SUPPORTED_DTYPES,
        f"x has dtype {x.dtype}; only float32 and float16 are supported",
    )
    require(
        x.is_contiguous(),
        "x is not contiguous: the kernels address row i at i * N",
    )
    m, n = x.shape
    require(
        m >= 1 and n >= 1,
        f"x must have at least one row and one column, got {m}x{n}",
    )
    require(
        gamma.dim() == 1 and gamma.shape[0] == n,
        f"gamma must have shape ({n},), got {tuple(gamma.shape)}",
    )
    require(
        gamma.dtype == x.dtype,
        f"gamma has dtype {gamma.dtype} but x has dtype {x.dtype}",
    )
    require(gamma.is_contiguous(), "gamma is not contiguous")
    require_same_device("x", x, gamma=gamma)
    require_kernel_device("x", x)
    require(
        isinstance(eps, (int, float))
        and not isinstance(eps, bool)
        and math.isfinite(eps)
        and eps > 0,
        f"eps must be a finite number > 0, got {eps!r}",
    )
    require(
        n <= MAX_N,
        f"N={n} is wider than the {MAX_N} columns one program holds in a row",
    )
    require(
        scratch_bytes(m, n) <= SCRATCH_LIMIT_BYTES,
        f"the dgamma scratch of {m}x{n} fp32 values needs {scratch_bytes(m, n)} bytes, "
        f"more than the {SCRATCH_LIMIT_BYTES} bytes (64 MiB) allowed",
    )


def check_upstream_grad(x, dy):
    require(
        isinstance(dy, torch.Tensor),
        f"dy must be a torch.Tensor, got {type(dy).__name__}",
    )
    require(
        dy.shape == x.shape,
        f"dy has shape {tuple(dy.shape)} but x has shape {tuple(x.shape)}",
    )
    require(dy.dtype == x.dtype, f"dy has dtype {dy.dtype} but x has dtype {x.dtype}")
    require_same_device("x", x, dy=dy)
    require(dy.is_contiguous(), "dy is not contiguous")
# --8<-- [end:contract]


# --8<-- [start:forward_kernel]
@triton.jit
def rmsnorm_forward_kernel(
    x_ptr, gamma_ptr, y_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr
):
    row = tl.program_id(0)  # (1)!
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols  # (2)!
    offsets = row * n_cols + cols  # rows are packed N apart, never BLOCK apart
    x = tl.load(x_ptr + offsets, mask=inside, other=0.0).to(tl.float32)  # (3)!
    g = tl.load(gamma_ptr + cols, mask=inside, other=0.0).to(tl.float32)
    mean_sq = tl.sum(x * x, axis=0) / n_cols  # (4)!
    rstd = tl.rsqrt(mean_sq + eps)
    y = x * rstd * g
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=inside)
    tl.store(rstd_ptr + row, rstd)  # (5)!
# --8<-- [end:forward_kernel]


# --8<-- [start:forward_launch]
def rmsnorm_forward(x, gamma, eps=1e-6):
    check_contract(x, gamma, eps)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    y = torch.empty_like(x)
    rstd = torch.empty(m, device=x.device, dtype=torch.float32)
    rmsnorm_forward_kernel[(m,)](
        x, gamma, y, rstd, n, eps, BLOCK=block, num_warps=warps_for_block(block)
    )
    return y, rstd
# --8<-- [end:forward_launch]


# --8<-- [start:dx_kernel]
@triton.jit
def rmsnorm_dx_kernel(
    x_ptr, gamma_ptr, dy_ptr, rstd_ptr, dx_ptr, partial_ptr, n_cols, BLOCK: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols
    offsets = row * n_cols + cols
    x = tl.load(x_ptr + offsets, mask=inside, other=0.0).to(tl.float32)
    g = tl.load(gamma_ptr + cols, mask=inside, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offsets, mask=inside, other=0.0).to(tl.float32)
    rstd = tl.load(rstd_ptr + row)  # saved by the forward, already fp32
    u = dy * g
    mean_ux = tl.sum(u * x, axis=0) / n_cols  # the same N as the forward
    dx = rstd * u - x * (rstd * rstd * rstd) * mean_ux
    tl.store(dx_ptr + offsets, dx.to(dx_ptr.dtype.element_ty), mask=inside)
    # this row's share of dgamma
    tl.store(partial_ptr + offsets, dy * x * rstd, mask=inside)
# --8<-- [end:dx_kernel]


# --8<-- [start:dx_launch]
def rmsnorm_dx(x, gamma, dy, rstd, eps=1e-6):
    check_contract(x, gamma, eps)
    check_upstream_grad(x, dy)
    m, n = x.shape
    block = triton.next_power_of_2(n)
    dx = torch.empty_like(x)
    partial = torch.empty((m, n), device=x.device, dtype=torch.float32)
    rmsnorm_dx_kernel[(m,)](
        x, gamma, dy, rstd, dx, partial, n,
        BLOCK=block, num_warps=warps_for_block(block),
    )
    return dx, partial
# --8<-- [end:dx_launch]


# --8<-- [start:gamma_kernel]
@triton.jit
def gamma_grad_kernel(
    partial_ptr, dgamma_ptr, n_rows, n_cols,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)  # one program owns BLOCK_N columns, all rows
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_inside = cols < n_cols
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < n_rows) & col_inside[None, :]
        # int64: the partial buffer given to this public function
        # may pass 2**31 elements
        acc += tl.load(
            partial_ptr + rows[:, None].to(tl.int64) * n_cols + cols[None, :],
            mask=mask,
            other=0.0,
        )
    total = tl.sum(acc, axis=0)  # a sum over rows, not a mean
    tl.store(dgamma_ptr + cols, total.to(dgamma_ptr.dtype.element_ty), mask=col_inside)
# --8<-- [end:gamma_kernel]


# --8<-- [start:gamma_launch]
def gamma_programs(n):
    return triton.cdiv(n, GAMMA_BLOCK_N)


def reduce_gamma_grad(partial, dtype):
    m, n = partial.shape
    dgamma = torch.empty(n, device=partial.device, dtype=dtype)
    gamma_grad_kernel[(gamma_programs(n),)](
        partial, dgamma, m, n, BLOCK_M=GAMMA_BLOCK_M, BLOCK_N=GAMMA_BLOCK_N
    )
    return dgamma
# --8<-- [end:gamma_launch]


# --8<-- [start:autograd]
class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, gamma, eps):
        y, rstd = rmsnorm_forward(x, gamma, eps)
        ctx.save_for_backward(x, gamma, rstd)
        ctx.eps = eps
        CALLS["forward"] += 1
        return y

    @staticmethod
    @once_differentiable  # a second derivative raises instead of being silently wrong
    def backward(ctx, dy):
        x, gamma, rstd = ctx.saved_tensors
        dx, partial = rmsnorm_dx(x, gamma, dy.contiguous(), rstd, ctx.eps)
        dgamma = reduce_gamma_grad(partial, gamma.dtype)
        CALLS["backward"] += 1
        return dx, dgamma, None  # one answer per input of forward: x, gamma, eps


def rms_norm(x, gamma, eps=1e-6):
    return RMSNormFunction.apply(x, gamma, eps)
# --8<-- [end:autograd]


__all__ = [
    "CALLS",
    "ContractError",
    "MAX_N",
    "SCRATCH_LIMIT_BYTES",
    "RMSNormFunction",
    "check_contract",
    "gamma_programs",
    "reduce_gamma_grad",
    "reset_calls",
    "rms_norm",
    "rmsnorm_dx",
    "rmsnorm_forward",
    "scratch_bytes",
]
