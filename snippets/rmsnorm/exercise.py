"""The exercise: a deliberately wrong forward that divides by BLOCK instead of N.

Never use this kernel for anything but being caught by a test.
"""

import normkit  # noqa: F401
import torch
import triton
import triton.language as tl

from normkit import words
from normkit.runtime import DEVICE
from rmsnorm.accuracy import TOLERANCES
from rmsnorm.ops import check_contract
from rmsnorm.reference import rmsnorm_reference


# --8<-- [start:wrong_kernel]
@triton.jit
def forward_kernel_divides_by_block(
    x_ptr, gamma_ptr, y_ptr, rstd_ptr, n_cols, eps, BLOCK: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols
    offsets = row * n_cols + cols
    x = tl.load(x_ptr + offsets, mask=inside, other=0.0).to(tl.float32)
    g = tl.load(gamma_ptr + cols, mask=inside, other=0.0).to(tl.float32)
    mean_sq = tl.sum(x * x, axis=0) / BLOCK  # WRONG: the padding is counted as data
    rstd = tl.rsqrt(mean_sq + eps)
    tl.store(y_ptr + offsets, (x * rstd * g).to(y_ptr.dtype.element_ty), mask=inside)
    tl.store(rstd_ptr + row, rstd)
# --8<-- [end:wrong_kernel]


def wrong_forward(x, gamma, eps=1e-6):
    check_contract(x, gamma, eps)
    m, n = x.shape
    y = torch.empty_like(x)
    rstd = torch.empty(m, device=x.device, dtype=torch.float32)
    forward_kernel_divides_by_block[(m,)](x, gamma, y, rstd, n, eps, BLOCK=triton.next_power_of_2(n))
    return y


# --8<-- [start:catch]
def try_width(n, m=4, dtype=torch.float32, device=DEVICE):
    """Run the wrong kernel on an M x n input;
    is it caught by the campaign's tolerance?"""
    gen = torch.Generator().manual_seed(n)
    x = torch.randn(m, n, generator=gen).to(device=device, dtype=dtype)
    gamma = torch.ones(n, device=device, dtype=dtype)
    got, want = wrong_forward(x, gamma).double(), rmsnorm_reference(x, gamma).double()
    tol = TOLERANCES[dtype]
    caught = not torch.allclose(got, want, atol=tol["atol"], rtol=tol["rtol"])
    return {
        "n": n,
        "block": triton.next_power_of_2(n),
        "max_abs_err": (got - want).abs().max().item(),
        "caught": caught,
    }
# --8<-- [end:catch]


# --8<-- [start:backward_denominator]
def dx_with_denominator(x, gamma, dy, denominator, eps=1e-6):
    """dx with mean(u*x) computed as sum(u*x) / denominator;
    only denominator = N is the true gradient."""
    r = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
    u = dy * gamma
    return r * u - x * r.pow(3) * (u * x).sum(dim=-1, keepdim=True) / denominator


def backward_needs_n(n, m=4, eps=1e-6):
    """Compare dx built with N and with BLOCK
    against autograd of the float64 reference."""
    gen = torch.Generator().manual_seed(n)
    x = torch.randn(m, n, dtype=torch.float64, generator=gen, requires_grad=True)
    gamma = torch.randn(n, dtype=torch.float64, generator=gen)
    dy = torch.randn(m, n, dtype=torch.float64, generator=gen)
    (dx_true,) = torch.autograd.grad(rmsnorm_reference(x, gamma, eps), x, dy)
    x = x.detach()
    block = triton.next_power_of_2(n)
    return {
        "n": n,
        "block": block,
        "err_with_n": (
            (dx_with_denominator(x, gamma, dy, n, eps) - dx_true).abs().max().item()
        ),
        "err_with_block": (
            (dx_with_denominator(x, gamma, dy, block, eps) - dx_true).abs().max().item()
        ),
    }
# --8<-- [end:backward_denominator]


def run_exercise():
    return {"forward": [try_width(257), try_width(256)],
            "backward": [backward_needs_n(257), backward_needs_n(256)]}


def format_exercise(r, t=None):
    """What `python -m rmsnorm exercise` and the notebook print about run_exercise()'s result r, in the
    numbers and words of t (a normkit.words.Words; by default the reader's, words.reader())."""
    t = t or words.reader()
    lines = [t("exercise_forward_heading")]
    for f in r["forward"]:
        verdict = t("exercise_caught") if f["caught"] else t("exercise_hidden")
        lines.append(f"  N={f['n']:<4} BLOCK={f['block']:<4} max |err| = {t.number(f['max_abs_err'], '.3e')}  {verdict}")
    lines.append(t("exercise_backward_heading"))
    for b in r["backward"]:
        lines.append(f"  N={b['n']:<4} BLOCK={b['block']:<4} " + t("exercise_backward_errors").format(
            with_n=t.number(b["err_with_n"], ".1e"), with_block=t.number(b["err_with_block"], ".1e")))
    return "\n".join(lines)
