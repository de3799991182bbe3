"""LayerNorm against PyTorch: forward, dx, dW and dB, the locks under load, and bad inputs.

The reference is torch.nn.functional.layer_norm evaluated in float64 on the CPU on the very same
(already rounded) inputs (normkit.testing.layer_norm_exact), so each tolerance below is about our
kernels alone, and the reference is the same on every device.
"""

import pytest
import torch

from normkit.runtime import DEVICE
from normkit.testing import exact, layer_norm_exact

import layernorm
from layernorm import ops

# --8<-- [start:tolerances]
# (atol, rtol) for y, dx, dW and dB, against the float64 reference
TOLERANCES = {
    torch.float32: (1e-5, 1e-4),
    torch.float16: (1e-3, 4e-3),   # 11 significant bits: 2**-11 ~ 5e-4
    torch.bfloat16: (1e-2, 3e-2),  # 8 significant bits: 2**-8 ~ 4e-3
}
# --8<-- [end:tolerances]


def make_inputs(shape, dtype, seed=0):
    """Inputs like the official tutorial's: rows off-centre (mean -2.3) so the mean matters."""
    gen = torch.Generator().manual_seed(seed)
    n = shape[-1]
    x = (-2.3 + 0.5 * torch.randn(shape, generator=gen)).to(dtype).to(DEVICE)
    w = torch.rand(n, generator=gen).to(dtype).to(DEVICE)
    b = torch.rand(n, generator=gen).to(dtype).to(DEVICE)
    dy = (0.1 * torch.randn(shape, generator=gen)).to(dtype).to(DEVICE)
    return x, w, b, dy


def grads_of(fn, x, w, b, dy, eps=1e-5):
    x, w, b = (t.detach().requires_grad_() for t in (x, w, b))
    y = fn(x, (x.shape[-1],), w, b, eps)
    return (y.detach(), *torch.autograd.grad(y, (x, w, b), dy))


# --8<-- [start:test_reference]
# M = 1, M = 17 with N = 257, N = 1, N = 8192, and a 3-D (batch, sequence, hidden)
SHAPES = [(1, 64), (17, 257), (5, 1), (3, 8192), (2, 7, 96)]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def check_against_torch(shape, dtype):
    x, w, b, dy = make_inputs(shape, dtype)
    ours = grads_of(layernorm.layer_norm, x, w, b, dy)
    # float64 copies on the CPU: the same reference on every device
    wanted = grads_of(layer_norm_exact, *(exact(t) for t in (x, w, b, dy)))
    atol, rtol = TOLERANCES[dtype]
    for name, got, want in zip(("y", "dx", "dW", "dB"), ours, wanted):
        assert got.dtype == dtype and got.shape == want.shape, name
        torch.testing.assert_close(got.cpu().double(), want, atol=atol, rtol=rtol,
                                   msg=lambda m: f"{name}: {m}")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_torch(shape, dtype):
    check_against_torch(shape, dtype)
# --8<-- [end:test_reference]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1151, 8192), (4, 512, 768), (4096, 16384)], ids=str)
def test_matches_torch_large(shape, dtype):
    check_against_torch(shape, dtype)  # 16384 fp32 elements is exactly the 64 KiB limit


# --8<-- [start:test_lock_stress]
def lock_stress(monkeypatch, rows, n_cols, groups):
    """Many rows through few locks: a lost update would drop a whole row from dB."""
    monkeypatch.setattr(ops, "group_size_for", lambda n: groups)
    x, w, b, _ = make_inputs((rows, n_cols), torch.float32, seed=1)
    gen = torch.Generator().manual_seed(2)
    dy = torch.randint(-3, 4, (rows, n_cols), generator=gen).float().to(DEVICE)
    y, dx, dw, db = grads_of(layernorm.layer_norm, x, w, b, dy)
    # small integers add up exactly in fp32, in any order: dB must be the column sum
    assert torch.equal(db, dy.sum(dim=0))
    # dW sums fp32 products, so only rounding may differ: a lost or doubled row
    # would move some dW entry by |dy * x_hat|, about 1, far beyond fp32
    # rounding over 4096 rows (< 1e-3)
    wanted = grads_of(layer_norm_exact, *(exact(t) for t in (x, w, b, dy)))
    torch.testing.assert_close(dw.cpu().double(), wanted[2], atol=1e-3, rtol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("groups", [1, 4, 96])
def test_lock_stress(monkeypatch, groups):
    lock_stress(monkeypatch, rows=4096, n_cols=1024, groups=groups)


def test_lock_stress_interpreter(monkeypatch):
    # the interpreter runs one program at a time, so no lock is ever contended:
    # this checks the bookkeeping; the GPU case above checks the locking
    lock_stress(monkeypatch, rows=256, n_cols=16, groups=4)
# --8<-- [end:test_lock_stress]


@pytest.mark.parametrize("rows", [1, 17, 300])
def test_first_writer_overwrites_garbage(monkeypatch, rows):
    """The partial buffers are never zeroed: poison them and the result must not change."""
    def poisoned(group_size, n_cols, device):
        dw_part = torch.full((group_size, n_cols), float("nan"), device=device)
        return dw_part, dw_part.clone()

    monkeypatch.setattr(ops, "partial_buffers", poisoned)
    check_against_torch((rows, 40), torch.float32)


VIEWS = {
    "transposed": lambda t: t.transpose(0, 1),        # rows no longer follow each other
    "strided_columns": lambda t: t[..., ::2],         # elements of a row two apart
}


@pytest.mark.parametrize("layout", list(VIEWS))
def test_non_contiguous_input_is_handled(layout):
    """Non-contiguous x is copied into contiguous rows; its gradient lands in the original layout."""
    base, w, b, _ = make_inputs((6, 4, 128), torch.float32)
    view_of = VIEWS[layout]
    n = view_of(base).shape[-1]
    w, b = (w[::2], b[::2]) if n == 64 else (w, b)  # a strided weight too, where the shape allows
    results = []
    for fn, leaf in ((layernorm.layer_norm, base.detach().requires_grad_()), (layer_norm_exact, exact(base))):
        x = view_of(leaf.requires_grad_())
        assert not x.is_contiguous()
        y = fn(x, (n,), w, b, 1e-5)
        dy = torch.linspace(-1, 1, y.numel(), device=y.device, dtype=y.dtype).reshape(y.shape)
        (grad,) = torch.autograd.grad(y, leaf, dy)
        results.append((y.detach().cpu().double(), grad.cpu().double()))
    (y, grad), (y_ref, grad_ref) = results
    torch.testing.assert_close(y, y_ref, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(grad, grad_ref, atol=1e-5, rtol=1e-4)


def test_expanded_upstream_gradient():
    """y.sum().backward() hands backward a stride-0 gradient; it must be read as ones."""
    x, w, b, _ = make_inputs((9, 33), torch.float32)
    leaves = [t.detach().requires_grad_() for t in (x, w, b)]
    layernorm.layer_norm(leaves[0], (33,), leaves[1], leaves[2]).sum().backward()
    refs = [exact(t).requires_grad_() for t in (x, w, b)]
    layer_norm_exact(refs[0], (33,), refs[1], refs[2]).sum().backward()
    for got, want in zip(leaves, refs):
        torch.testing.assert_close(got.grad.cpu().double(), want.grad, atol=1e-5, rtol=1e-4)


def test_group_size_shrinks_as_rows_widen():
    sizes = [ops.group_size_for(n) for n in (1, 1024, 1025, 4096, 4097, 8192, 8193, 16384)]
    assert sizes == [256, 256, 128, 128, 96, 96, 64, 64]
