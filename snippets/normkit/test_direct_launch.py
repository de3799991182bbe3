"""DirectLauncher refuses what would make its cache key wrong."""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch
import triton
import triton.language as tl

from normkit.direct_launch import DirectLauncher
from normkit.runtime import DEVICE


@triton.jit
def fill_kernel(Out, value, N: tl.constexpr):
    cols = tl.arange(0, N)
    tl.store(Out + cols, tl.full([N], value, tl.float32))


def test_constexpr_by_name_launches():
    out = torch.zeros(16, device=DEVICE)
    DirectLauncher(fill_kernel)[(1,)](out, 2.0, N=16)
    assert out.eq(2.0).all()


def test_constexpr_by_position_is_refused():
    # the cache key holds the values of named constants only: a compile-time N passed by
    # position would let a kernel compiled for one width run at another
    out = torch.zeros(16, device=DEVICE)
    with pytest.raises(TypeError, match="pass N"):
        DirectLauncher(fill_kernel)[(1,)](out, 2.0, 16)
    assert out.eq(0.0).all()
