"""The kernel against the formula, computed on the CPU in float64; bad input refused before a launch."""

import pytest
import torch

from normkit.launch import ContractError
from normkit.testing import TOL
from scalenorm import scale_norm


def reference(x, g, eps=1e-6):
    """The formula on the CPU in float64: the oracle does not depend on the device."""
    x = x.detach().cpu().double()
    return g * x / x.norm(dim=-1, keepdim=True).clamp_min(eps)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", [(6, 100), (2, 3, 257), (1, 1)])
def test_matches_the_formula(device, dtype, shape):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device=device, dtype=dtype)
    y = scale_norm(x, 2.0)
    assert y.shape == x.shape and y.dtype == x.dtype
    torch.testing.assert_close(y.cpu().double(), reference(x, 2.0), atol=2 * TOL[dtype], rtol=2 * TOL[dtype])


def test_a_zero_row_stays_zero(device):
    x = torch.zeros(3, 64, device=device)
    assert torch.equal(scale_norm(x), x)


@pytest.mark.parametrize("x, words", [
    (lambda device: torch.ones(2, 8, dtype=torch.int32, device=device), "torch.int32"),
    (lambda device: torch.ones(0, 8, device=device), "empty"),
    (lambda device: torch.ones(1, 40000, device=device), "wider than the fused limit"),
], ids=["integers", "empty", "too wide"])
def test_bad_input_is_refused_before_a_launch(device, x, words):
    with pytest.raises(ContractError, match=words):
        scale_norm(x(device))
