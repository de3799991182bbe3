import pytest
import torch

import rmsnorm.ops as ops
from rmsnorm.reference import manual_backward, rmsnorm_reference


def inputs(m, n, dtype, device, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(m, n, generator=gen)
    g = 1 + 0.5 * torch.randn(n, generator=gen)
    dy = torch.randn(m, n, generator=gen)
    return tuple(t.to(device=device, dtype=dtype) for t in (x, g, dy))


@pytest.mark.parametrize("m, n", [(1, 1), (3, 257), (17, 256), (5, 1000)])
def test_forward_matches_reference(m, n, device):
    x, g, _ = inputs(m, n, torch.float32, device)
    y, rstd = ops.rmsnorm_forward(x, g)
    assert y.dtype == x.dtype and rstd.dtype == torch.float32 and rstd.shape == (m,)
    torch.testing.assert_close(y, rmsnorm_reference(x, g), atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(rstd, torch.rsqrt(x.pow(2).mean(-1) + 1e-6), atol=1e-5, rtol=1e-4)


def test_forward_worked_example(device):
    x = torch.tensor([[3.0, 4.0]], device=device)
    y, _ = ops.rmsnorm_forward(x, torch.tensor([2.0, 0.5], device=device))
    assert y.cpu()[0].tolist() == pytest.approx([1.697056, 0.565685], abs=1e-6)


def test_row_of_257_ones(device):
    y, _ = ops.rmsnorm_forward(torch.ones(1, 257, device=device), torch.ones(257, device=device))
    assert torch.allclose(y.cpu(), torch.full((1, 257), 0.9999995), atol=1e-7)


def test_fp16_reduces_in_fp32(device):
    # A sum of squares of 4096 values near 8 overflows fp16 (max 65504); the fp32 reduction does not.
    x = torch.full((2, 4096), 8.0, device=device, dtype=torch.float16)
    g = torch.ones(4096, device=device, dtype=torch.float16)
    y, _ = ops.rmsnorm_forward(x, g)
    assert torch.isfinite(y).all()
    torch.testing.assert_close(y.float().cpu(), torch.ones(2, 4096), atol=3e-3, rtol=3e-3)


@pytest.mark.parametrize("m, n, dtype", [(1, 257, torch.float32), (17, 255, torch.float32), (17, 257, torch.float16)])
def test_dx_and_partial(m, n, dtype, device):
    x, g, dy = inputs(m, n, dtype, device)
    _, rstd = ops.rmsnorm_forward(x, g)
    dx, partial = ops.rmsnorm_dx(x, g, dy, rstd)
    assert partial.dtype == torch.float32 and partial.shape == (m, n)
    dx_ref, dg_ref = manual_backward(x, g, dy)
    tol = 1e-4 if dtype == torch.float32 else 3e-3
    torch.testing.assert_close(dx.float(), dx_ref.float(), atol=tol, rtol=tol)
    torch.testing.assert_close(partial.sum(0), dg_ref.float(), atol=tol, rtol=tol)


@pytest.mark.parametrize("m, n", [(1, 5), (17, 257), (70, 33)])
def test_gamma_reduction_is_a_column_sum(m, n, device):
    partial = torch.randn(m, n, device=device)
    for dtype in (torch.float32, torch.float16):
        dg = ops.reduce_gamma_grad(partial, dtype)
        assert dg.dtype == dtype
        torch.testing.assert_close(dg.float(), partial.sum(0).to(dtype).float(), atol=1e-3, rtol=1e-3)


def test_autograd_path_and_counters(device):
    x, g, dy = inputs(17, 257, torch.float32, device)
    xg, gg = x.clone().requires_grad_(), g.clone().requires_grad_()
    ops.reset_calls()
    y = ops.rms_norm(xg, gg)
    (y * dy).sum().backward()
    assert ops.CALLS == {"forward": 1, "backward": 1}
    dx_ref, dg_ref = manual_backward(x, g, dy)
    torch.testing.assert_close(xg.grad, dx_ref, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(gg.grad, dg_ref, atol=1e-5, rtol=1e-4)


def test_noncontiguous_upstream_gradient_is_made_contiguous(device):
    x, g, _ = inputs(4, 8, torch.float32, device)
    xg = x.clone().requires_grad_()
    y = ops.rms_norm(xg, g)
    dy = torch.randn(8, 4, device=device).t()  # a transposed view: not contiguous
    (dx,) = torch.autograd.grad(y, xg, dy)
    torch.testing.assert_close(dx, manual_backward(x, g, dy)[0], atol=1e-5, rtol=1e-4)


def test_double_backward_is_refused(device):
    x, g, _ = inputs(2, 8, torch.float32, device)
    xg = x.clone().requires_grad_()
    y = ops.rms_norm(xg, g)
    (dx,) = torch.autograd.grad(y.sum(), xg, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable|does not require grad|double backward"):
        torch.autograd.grad(dx.sum(), xg)


@pytest.mark.gpu
def test_llm_sized_fp16_on_gpu(device):
    x, g, dy = inputs(4096, 4096, torch.float16, device)
    xg, gg = x.clone().requires_grad_(), g.clone().requires_grad_()
    y = ops.rms_norm(xg, gg)
    dx, dg = torch.autograd.grad(y, (xg, gg), dy)
    torch.testing.assert_close(y, rmsnorm_reference(x, g), atol=3e-3, rtol=3e-3)
    dx_ref, dg_ref = manual_backward(x, g, dy)
    torch.testing.assert_close(dx, dx_ref, atol=3e-3, rtol=3e-3)
    torch.testing.assert_close(dg, dg_ref, atol=3e-3, rtol=3e-3)
