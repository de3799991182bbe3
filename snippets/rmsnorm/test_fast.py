"""The fast RMSNorm against PyTorch's rms_norm computed in float64 on the CPU on the same inputs.

Tolerance: max|out - ref| <= TOL[dtype] * max(max|ref|, 1) (for dx, max(max|ref|, rstd*max|dy*w|, 1)), for y, dx and dW, where ref is
normkit.testing.rms_norm_exact on the inputs upcast to fp64 on the CPU (an fp32 reference rounds by more than
the fp32 tolerance where the exact answer is 0, e.g. N=1; PyTorch's own op answers by device: normkit.contract).
TOL is about two half-ulps of the output dtype at the largest value: fp32 1e-5, fp16 2e-3, bf16 1e-2. NaN
never passes.
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch

from rmsnorm import fast

from normkit import aligned
from normkit.runtime import DEVICE, INTERPRETED
from normkit.testing import (ALIGNED_DESIGN, DTYPES, FAST_DESIGNS, UNREADABLE_LAYOUTS,
                             assert_close, exact, poison_allocator, rms_norm_exact, unreadable_rows)
from rmsnorm.fast import rms_norm_fast

DESIGNS = {**FAST_DESIGNS, "aligned": ALIGNED_DESIGN}

EPS = 1e-6


def check(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    n = shape[-1]
    x = (torch.randn(shape, generator=g) * 2 + 0.5).to(DEVICE, dtype).requires_grad_()
    w = (torch.rand(n, generator=g) + 0.5).to(DEVICE, dtype).requires_grad_()
    dy = torch.randn(shape, generator=g).to(DEVICE, dtype)

    poison_allocator()
    y = rms_norm_fast(x, (n,), w, EPS)
    dx, dw = torch.autograd.grad(y, (x, w), dy)
    assert y.dtype == dx.dtype == dw.dtype == dtype

    xr, wr, dyr = (exact(t) for t in (x, w, dy))
    yr = rms_norm_exact(xr, (n,), wr, EPS)
    dxr, dwr = torch.autograd.grad(yr, (xr, wr), dyr)
    # dx is rstd times a difference of terms as large as |dy * w|: its rounding scales with
    # rstd * max|dy * w|
    rstd = torch.rsqrt(xr.detach().pow(2).mean(-1) + EPS).max().item()
    dx_scale = max(1.0, rstd * (dyr * wr.detach()).abs().max().item())
    for name, out, ref, scale in (("y", y, yr, 1.0), ("dx", dx, dxr, dx_scale), ("dW", dw, dwr, 1.0)):
        assert_close(name, out, ref.detach(), dtype, scale)


def test_non_contiguous_input():
    x = torch.randn(40, 64, device=DEVICE).t()  # (64, 40), rows not contiguous
    w = torch.randn(40, device=DEVICE)
    assert_close("y", rms_norm_fast(x, (40,), w, EPS), rms_norm_exact(x, (40,), w, EPS), torch.float32)


@pytest.mark.skipif(not INTERPRETED, reason="the GPU runs the full-size case: faster/test_fast_ops.py")
def test_many_rows_interpreter_sized():
    check((2048, 32), torch.bfloat16)  # many rows per program: the fp32 accumulation at work


@pytest.mark.parametrize("n, windowed", [(4097, True), (16129, True), (4098, False), (4104, False),
                                        (1025, False), (16383, False)])
def test_which_rows_the_forward_reads_from_aligned_windows(n, windowed):
    # normkit.aligned.window_config: odd N above WINDOW_MIN_COLS whose window fits, in every dtype
    for element_size in (2, 4):
        assert (fast.forward_config(n, element_size)[0] == "aligned") == windowed


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rows_read_from_aligned_windows_by_default(dtype, monkeypatch):
    monkeypatch.setattr(aligned, "WINDOW_MIN_BYTES", 0)  # the test's input is small
    monkeypatch.setattr(fast.OP, "forward_plans", {})  # none made with the default
    check((3, 4097), dtype)  # and in 16 bits the classes backward (normkit.aligned.classes_config)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
# 3, 257 and 1026 columns: rows that start off 16 bytes in every dtype but 1026 in fp32, read
# by the table's designs (narrower than WINDOW_MIN_COLS)
@pytest.mark.parametrize("shape", [(5, 3), (13, 257), (9, 1026)], ids=str)
def test_rows_off_16_bytes(shape, dtype):
    check(shape, dtype)


@pytest.mark.parametrize("layout", UNREADABLE_LAYOUTS)
def test_inputs_the_aligned_windows_cannot_read_take_the_tables_configuration(layout):
    n = 257
    x = unreadable_rows(layout, n)
    w = torch.randn(n, device=DEVICE)
    config = ("aligned", 512, 2, 4, ("row", 512, 2, 4))
    assert_close("y", fast.forward_rows(x, w, 1e-6, config=config)[0], rms_norm_exact(x, (n,), w, 1e-6), torch.float32)
