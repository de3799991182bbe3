"""Past 2**31 elements: row offsets must be 64-bit, or the kernels address outside the tensor.

On the GPU both public functions run on a (262272, 8192) bf16 tensor, 2**31 + 2**20 elements, and
the rows on both sides of element 2**31 are checked against PyTorch in float64 on the CPU. On the
CPU a small kernel checks
the same arithmetic, row_start, with a stride large enough that an int32 product would wrap.
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch
import triton
import triton.language as tl

from layernorm.fast import layer_norm_fast
from layernorm.ops import layer_norm, row_start
from normkit.runtime import DEVICE
from normkit.testing import TOL, exact, layer_norm_exact

BIG = (2**18 + 128, 8192)  # 2**31 + 2**20 elements; row 2**18 starts exactly at element 2**31


@triton.jit
def row_start_kernel(Out, stride):
    row = tl.program_id(0)
    tl.store(Out + row, row_start(row, stride))


def test_row_start_is_64_bit():
    stride = 2**30 + 16  # rows 2 and 3 start past 2**31: an int32 product would wrap negative
    out = torch.zeros(4, dtype=torch.int64, device=DEVICE)
    row_start_kernel[(4,)](out, stride)
    assert out.tolist() == [row * stride for row in range(4)]


def reference_grads(x, w, b, dy, rows):
    """y and dx of the given rows (each row's are its own) from the float64 CPU oracle, and dW, dB
    over all rows in float64 on x's device (the same sums; on the CPU, 2**31 elements take minutes)."""
    xr, wr, br = (exact(t[rows] if t.dim() == 2 else t).requires_grad_() for t in (x, w, b))
    y = layer_norm_exact(xr, (x.shape[1],), wr, br, 1e-5)
    (dx,) = torch.autograd.grad(y, xr, exact(dy[rows]))
    dw = torch.zeros(x.shape[1], device=x.device, dtype=torch.float64)
    db = torch.zeros_like(dw)
    for chunk in torch.arange(x.shape[0], device=x.device).split(16384):
        xc = x[chunk].double()
        x_hat = (xc - xc.mean(1, keepdim=True)) * torch.rsqrt(xc.var(1, unbiased=False, keepdim=True) + 1e-5)
        dw += (dy[chunk].double() * x_hat).sum(0)
        db += dy[chunk].double().sum(0)
    return y.detach(), dx, dw.cpu(), db.cpu()


def assert_close(name, out, ref):
    err = (out.detach().to("cpu", torch.float64) - ref).abs().max().item()
    assert err <= TOL[torch.bfloat16] * max(ref.abs().max().item(), 1.0), f"{name}: max error {err:.3g}"


@pytest.mark.gpu
@pytest.mark.parametrize("fn", [layer_norm, layer_norm_fast], ids=lambda f: f.__name__)
def test_past_2_31_elements(fn):
    g = torch.Generator(device=DEVICE).manual_seed(0)
    x = torch.randn(BIG, device=DEVICE, dtype=torch.bfloat16, generator=g).requires_grad_()
    w = (torch.rand(BIG[1], device=DEVICE, generator=g) + 0.5).bfloat16().requires_grad_()
    b = torch.randn(BIG[1], device=DEVICE, generator=g).bfloat16().requires_grad_()
    dy = torch.randn(BIG, device=DEVICE, dtype=torch.bfloat16, generator=g)
    y = fn(x, (BIG[1],), w, b)
    dx, dw, db = torch.autograd.grad(y, (x, w, b), dy)
    # the first rows, and the rows on both sides of element 2**31
    rows = torch.cat([torch.arange(64), torch.arange(2**18 - 64, BIG[0])]).to(DEVICE)
    y_ref, dx_ref, dw_ref, db_ref = reference_grads(x.detach(), w.detach(), b.detach(), dy, rows)
    for name, out, ref in (("y", y[rows], y_ref), ("dx", dx[rows], dx_ref), ("dW", dw, dw_ref), ("dB", db, db_ref)):
        assert_close(name, out.detach(), ref)
