"""Checks the fast kernels' tests share: tolerances against an fp64 reference, and NaN-poisoned memory."""

import torch

from normkit.runtime import DEVICE

# Largest error allowed, relative to the largest reference value (or a larger natural scale).
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def poison_allocator():
    # fill the caching allocator's free blocks with NaN: an output element the kernels
    # forget to write then shows up as NaN instead of a plausible leftover value
    if DEVICE.type == "cuda":
        torch.full((64 * 1024 * 1024,), float("nan"), device=DEVICE)
        torch.cuda.synchronize()


def assert_close(name, out, ref, dtype, scale=1.0):
    out = out.double()
    assert out.shape == ref.shape, f"{name}: shape {tuple(out.shape)} != {tuple(ref.shape)}"
    scale = max(ref.abs().max().item(), scale)
    err = (out - ref).abs().max().item()
    assert err <= TOL[dtype] * scale, f"{name}: max error {err:.3g} > {TOL[dtype]} * {scale:.3g}"


def assert_same_as_torch(ours, theirs, tensors, dy_seed=0):
    """ours(*tensors) against PyTorch's theirs(*tensors): the same output shape and dtype and the
    same gradient dtypes, and values that match PyTorch's on the inputs upcast to fp64 (the exact
    answer both approximate) within twice the tolerance of the coarser of the input's and the
    result's dtype, relative to the larger of 1 and the largest value."""
    def exact(t):
        return t.detach().double().requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t
    out, pytorch_out = ours(*tensors), theirs(*tensors)
    assert (out.shape, out.dtype) == (pytorch_out.shape, pytorch_out.dtype), (out.dtype, pytorch_out.dtype)
    upcast = [exact(t) for t in tensors]
    ref = theirs(*upcast)
    def tol(result):  # the coarser of the input's dtype and the result's
        return 2 * max(TOL.get(tensors[0].dtype, 1e-12), TOL.get(result.dtype, 1e-12))
    _close("output", out, ref, tol(out))
    wanted = [i for i, t in enumerate(tensors) if isinstance(t, torch.Tensor) and t.requires_grad]
    if not wanted:
        return
    g = torch.Generator().manual_seed(dy_seed)
    dy = torch.randn(out.shape, generator=g).to(out.device, out.dtype)
    grads = torch.autograd.grad(out, [tensors[i] for i in wanted], dy)
    pytorch_grads = torch.autograd.grad(pytorch_out, [tensors[i] for i in wanted], dy)
    ref_grads = torch.autograd.grad(ref, [upcast[i] for i in wanted], dy.double())
    for i, a, p, r in zip(wanted, grads, pytorch_grads, ref_grads):
        assert (a.shape, a.dtype) == (p.shape, p.dtype), (i, a.dtype, p.dtype)
        _close(f"gradient of input {i}", a, r, tol(a))


def _close(name, out, ref, tol):
    if ref.numel() == 0:
        return
    scale = max(ref.abs().max().item(), 1.0)
    err = (out.double() - ref).abs().max().item()
    assert err <= tol * scale, f"{name}: max error {err:.3g} > {tol} * {scale:.3g}"
