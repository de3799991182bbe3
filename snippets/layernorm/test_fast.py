"""The fast LayerNorm against PyTorch's layer_norm computed in float64 on the CPU on the same inputs.

Tolerance: max|out - ref| <= TOL[dtype] * max(max|ref|, 1) (for dx, max(max|ref|, rstd*max|dy*w|, 1)), for y, dx, dW and dB, where ref
is normkit.testing.layer_norm_exact on the inputs upcast to fp64 on the CPU (an fp32 reference rounds by more than
the fp32 tolerance where the exact answer is 0, e.g. N=1; PyTorch's own op on the GPU refuses inputs its CPU
computes: normkit.contract). TOL is about two half-ulps of the output
dtype at the largest value: fp32 1e-5, fp16 2e-3, bf16 1e-2. NaN never passes.
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch

from layernorm import fast

from layernorm.fast import layer_norm_fast
from normkit import aligned
from normkit.runtime import DEVICE, INTERPRETED
from normkit.testing import (DTYPES, FAST_DESIGNS, UNREADABLE_LAYOUTS, assert_close, exact,
                             layer_norm_exact, poison_allocator, unreadable_rows)

# LayerNorm's chunked forward takes a fifth field, TAIL_TILE: the columns after the whole
# chunks as one more step of the walk (0) or as a tile of their own (1)
DESIGNS = {**FAST_DESIGNS,
           "chunked": (lambda n: ("chunked", 256, 2, 4, 0), FAST_DESIGNS["chunked"][1]),
           "chunked-1-row": (lambda n: ("chunked", 128, 1, 2, 1), FAST_DESIGNS["chunked-1-row"][1]),
           "chunked-tail": (lambda n: ("chunked", 256, 2, 4, 1), FAST_DESIGNS["chunked"][1]),
           # the forward from aligned windows, walked 64 lanes a step (several steps at 257)
           "aligned": (lambda n: ("aligned", 64, 1, 2, ("row", 1024, 2, 4)), FAST_DESIGNS["row"][1])}


def check(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    n = shape[-1]
    x = (torch.randn(shape, generator=g) * 2 + 0.5).to(DEVICE, dtype).requires_grad_()
    w = (torch.rand(n, generator=g) + 0.5).to(DEVICE, dtype).requires_grad_()
    b = torch.randn(n, generator=g).to(DEVICE, dtype).requires_grad_()
    dy = torch.randn(shape, generator=g).to(DEVICE, dtype)

    poison_allocator()
    y = layer_norm_fast(x, (n,), w, b)
    dx, dw, db = torch.autograd.grad(y, (x, w, b), dy)
    assert y.dtype == dx.dtype == dw.dtype == db.dtype == dtype

    xr, wr, br, dyr = (exact(t) for t in (x, w, b, dy))
    yr = layer_norm_exact(xr, (n,), wr, br, 1e-5)
    dxr, dwr, dbr = torch.autograd.grad(yr, (xr, wr, br), dyr)
    # dx is rstd times a difference of terms as large as |dy * w|: its rounding scales with
    # rstd * max|dy * w| (at N=1, rstd = 1/sqrt(eps) while the exact dx is 0)
    rstd = torch.rsqrt(xr.detach().var(-1, unbiased=False) + 1e-5).max().item()
    dx_scale = max(1.0, rstd * (dyr * wr.detach()).abs().max().item())
    for name, out, ref, scale in (("y", y, yr, 1.0), ("dx", dx, dxr, dx_scale), ("dW", dw, dwr, 1.0), ("dB", db, dbr, 1.0)):
        assert_close(name, out, ref.detach(), dtype, scale)


@pytest.mark.parametrize("design", ["row", "chunked", "chunked-tail"])
def test_rows_far_from_zero(design):
    # a mean of 1000 and a spread of 1 must not cancel away: neither in the row design's two
    # passes over the registers nor in the chunked design's running (Welford) statistics
    g = torch.Generator().manual_seed(1)
    x = (1000 + torch.randn(6, 1000, generator=g)).to(DEVICE)
    w, b = torch.ones(1000, device=DEVICE), torch.zeros(1000, device=DEVICE)
    config = DESIGNS[design][0](1000)
    y, _ = fast.forward_rows(x, w, b, 1e-5, config=config)
    ref = layer_norm_exact(x, (1000,), w, b, 1e-5)
    assert (y.cpu().double() - ref).abs().max().item() < 1e-3


@pytest.mark.parametrize("tail_tile", [0, 1])
def test_chunked_statistics_ignore_which_element_comes_first(tail_tile):
    # a massive activation in column 0: a shift by x[0] would lose the variance's low digits
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3000, generator=g)
    x[:, 0] = 3e4
    x = x.to(DEVICE)
    config = ("chunked", 1024, 2, 4, tail_tile)  # with a partial last chunk: 3000 = 2 * 1024 + 952
    y, _ = fast.forward_rows(x, None, None, 1e-5, config=config)
    ref = layer_norm_exact(x, (3000,), eps=1e-5)
    assert_close("y", y, ref, torch.float32)
    y_rolled, _ = fast.forward_rows(x.roll(1500, dims=1).contiguous(), None, None, 1e-5, config=config)
    assert_close("y of the rolled rows", y_rolled.roll(-1500, dims=1), ref, torch.float32)


def test_non_contiguous_input():
    x = torch.randn(40, 64, device=DEVICE).t()  # (64, 40), rows not contiguous
    w, b = torch.randn(40, device=DEVICE), torch.randn(40, device=DEVICE)
    assert_close("y", layer_norm_fast(x, (40,), w, b), layer_norm_exact(x, (40,), w, b), torch.float32)


@pytest.mark.skipif(not INTERPRETED, reason="the GPU runs the full-size case: faster/test_fast_ops.py")
def test_many_rows_interpreter_sized():
    check((2048, 32), torch.bfloat16)  # many rows per program: the fp32 accumulation at work


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
# 3, 257 and 1026 columns: rows that start off 16 bytes in every dtype but 1026 in fp32; 3 and 257
# (odd N) take the row backward (normkit.aligned.narrow_row_config): too narrow for the classes
@pytest.mark.parametrize("shape", [(5, 3), (13, 257), (9, 1026)], ids=str)
def test_rows_off_16_bytes(shape, dtype):
    check(shape, dtype)


@pytest.mark.parametrize("n, element_size, windowed", [
    (2049, 2, True), (16129, 2, True), (2047, 2, False), (4098, 2, False), (4104, 2, False),
    (8193, 4, False), (16129, 4, False), (4097, 4, False), (8194, 4, False)])
def test_which_rows_the_forward_reads_from_aligned_windows(n, element_size, windowed):
    # normkit.aligned.walk_config: odd N above WALK_MIN_COLS, in 16 bits only
    assert (fast.forward_config(n, element_size)[0] == "aligned") == windowed


@pytest.mark.parametrize("n", [4097, 4098, 8193, 12290, 16129, 20482])
def test_fp32_rows_off_16_bytes_take_their_chunks(n):
    assert fast.forward_config(n, 4) == aligned.OFFSET_FP32


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.itemsize == 2], ids=str)
def test_rows_read_from_aligned_windows_by_default(dtype, monkeypatch):
    monkeypatch.setattr(aligned, "WINDOW_MIN_BYTES", 0)  # the test's input is small
    monkeypatch.setattr(fast.OP, "forward_plans", {})  # none made with the default
    check((3, 8193), dtype)  # four steps of 2048 lanes; in 16 bits the classes backward (classes_config)


@pytest.mark.parametrize("params", ["fp32", "no weight", "no bias", "neither"])
def test_aligned_windows_take_every_parameter_pytorch_takes(params, monkeypatch):
    # fp32 parameters for a bf16 input, and absent ones: the shifted tables follow the parameters
    monkeypatch.setattr(aligned, "WINDOW_MIN_BYTES", 0)
    monkeypatch.setattr(fast.OP, "forward_plans", {})  # none made with the default
    n = 4097
    x = torch.randn(3, n, device=DEVICE).to(torch.bfloat16)
    w, b = torch.randn(n, device=DEVICE), torch.randn(n, device=DEVICE)
    if params != "fp32":
        w, b = w.to(torch.bfloat16), b.to(torch.bfloat16)
    w = None if params in ("no weight", "neither") else w
    b = None if params in ("no bias", "neither") else b
    assert fast.forward_config(n, 2)[0] == "aligned"
    y = layer_norm_fast(x, (n,), w, b)
    assert y.dtype == torch.bfloat16  # the input's, for every parameter dtype it takes (normkit.contract)
    assert_close("y", y, layer_norm_exact(x, (n,), w, b), torch.bfloat16)


@pytest.mark.parametrize("layout", UNREADABLE_LAYOUTS)
def test_inputs_the_aligned_windows_cannot_read_take_the_tables_configuration(layout):
    n = 257
    x = unreadable_rows(layout, n)
    w, b = torch.randn(n, device=DEVICE), torch.randn(n, device=DEVICE)
    config = ("aligned", 64, 1, 2, ("row", 512, 2, 4))
    assert_close("y", fast.forward_rows(x, w, b, 1e-5, config=config)[0], layer_norm_exact(x, (n,), w, b), torch.float32)
