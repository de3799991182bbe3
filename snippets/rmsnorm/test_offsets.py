"""Past 2**31 elements: the fast RMSNorm computes with 64-bit row offsets; the teaching one refuses.

The teaching kernels' fp32 scratch (one value per element) is capped at 64 MiB, so every input they
accept has fewer than 2**31 elements and int32 offsets suffice; larger ones are refused with a
ContractError before anything runs. On the GPU: the refusal at 2**31 + 2**20 elements, and the fast
kernels at that size checked against PyTorch in float64 on the CPU on the rows around element 2**31.
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch

from normkit.runtime import DEVICE
from normkit.testing import TOL, exact, rms_norm_exact
from rmsnorm.fast import rms_norm_fast
from rmsnorm.ops import MAX_N, SCRATCH_LIMIT_BYTES, ContractError, rms_norm, scratch_bytes

BIG = (2**18 + 128, 8192)  # 2**31 + 2**20 elements; row 2**18 starts exactly at element 2**31


def test_teaching_contract_keeps_offsets_below_2_31():
    # the largest input the contract accepts: the scratch limit in fp32 values, rows of MAX_N
    most = SCRATCH_LIMIT_BYTES // scratch_bytes(1, 1)
    assert most < 2**31
    assert scratch_bytes(2**31 // MAX_N + 1, MAX_N) > SCRATCH_LIMIT_BYTES


@pytest.mark.gpu
def test_teaching_refuses_past_2_31_elements():
    x = torch.empty((2**31 // 4096 + 256, 4096), device=DEVICE, dtype=torch.float16)
    with pytest.raises(ContractError, match="scratch"):
        rms_norm(x, torch.ones(4096, device=DEVICE, dtype=torch.float16))


@pytest.mark.gpu
def test_fast_past_2_31_elements():
    g = torch.Generator(device=DEVICE).manual_seed(0)
    x = torch.randn(BIG, device=DEVICE, dtype=torch.bfloat16, generator=g).requires_grad_()
    w = (torch.rand(BIG[1], device=DEVICE, generator=g) + 0.5).bfloat16().requires_grad_()
    dy = torch.randn(BIG, device=DEVICE, dtype=torch.bfloat16, generator=g)
    y = rms_norm_fast(x, (BIG[1],), w, 1e-6)
    dx, dw = torch.autograd.grad(y, (x, w), dy)
    rows = torch.cat([torch.arange(64), torch.arange(2**18 - 64, BIG[0])]).to(DEVICE)
    # y and dx of the rows from the float64 CPU oracle; dW over all rows in float64 on the GPU (the
    # same sum; on the CPU, 2**31 elements take minutes)
    xr = exact(x[rows])
    y_ref = rms_norm_exact(xr, (BIG[1],), w, 1e-6)
    (dx_ref,) = torch.autograd.grad(y_ref, xr, exact(dy[rows]))
    dw_ref = torch.zeros(BIG[1], device=DEVICE, dtype=torch.float64)
    for chunk in torch.arange(BIG[0], device=DEVICE).split(16384):
        xc = x.detach()[chunk].double()
        dw_ref += (dy[chunk].double() * xc * torch.rsqrt(xc.pow(2).mean(1, keepdim=True) + 1e-6)).sum(0)
    for name, out, ref in (("y", y.detach()[rows], y_ref.detach()), ("dx", dx[rows], dx_ref), ("dW", dw, dw_ref.cpu())):
        err = (out.detach().to("cpu", torch.float64) - ref).abs().max().item()
        assert err <= TOL[torch.bfloat16] * max(ref.abs().max().item(), 1.0), f"{name}: max error {err:.3g}"
