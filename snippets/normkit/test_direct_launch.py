"""DirectLauncher refuses what would make its cache key wrong."""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch
import triton
import triton.language as tl

from normkit import direct_launch
from normkit.direct_launch import DirectLauncher
from normkit.runtime import DEVICE, INTERPRETED


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


def test_cache_key_holds_the_device():
    # a kernel compiled for one GPU must not be launched for a tensor on another
    args = (torch.zeros(16), 2.0)
    assert direct_launch.cache_key(0, args, {"N": 16}) != direct_launch.cache_key(1, args, {"N": 16})
    assert direct_launch.cache_key(1, args, {"N": 16}) == direct_launch.cache_key(1, args, {"N": 16})


@pytest.mark.skipif(INTERPRETED or torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
def test_each_device_gets_its_own_kernel_and_stream():
    launcher = DirectLauncher(fill_kernel)
    outs = [torch.zeros(16, device=f"cuda:{i}") for i in (0, 1)]
    for _ in range(2):  # the second round launches the cached kernels directly
        for i, out in enumerate(outs):
            launcher[(1,)](out, float(i + 1), N=16)  # the current device stays cuda:0
    assert torch.cuda.current_device() == 0
    for i, out in enumerate(outs):
        assert out.eq(i + 1).all(), (i, out)
    assert {key[0] for key in launcher.compiled} == {0, 1}
