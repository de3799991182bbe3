"""The on-ramp's kernel against torch.sum: widths that are and are not powers of two, a row stride."""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import pytest
import torch

from normkit.runtime import DEVICE
from onramp import row_sum


@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (5, 128), (8, 1000)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_row_sum_matches_torch(shape, dtype):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(DEVICE, dtype)
    expected = x.float().sum(dim=1)
    torch.testing.assert_close(row_sum(x), expected, rtol=1e-5, atol=1e-5)


def test_rows_a_stride_apart():
    wide = torch.randn(4, 50, generator=torch.Generator().manual_seed(1)).to(DEVICE)
    x = wide[:, :30]  # each row 50 elements after the previous one, 30 of them read
    torch.testing.assert_close(row_sum(x), x.sum(dim=1))
