"""Bad inputs raise a ContractError naming the problem, before anything is allocated or run."""

import math

import pytest
import torch

from normkit.launch import ContractError
from normkit.runtime import DEVICE

import layernorm
from layernorm import ops

N = 32
ELSEWHERE = torch.device("meta")  # a device the kernels never run on, GPU or CPU


def good():
    x = torch.randn(3, N, device=DEVICE, requires_grad=True)
    w = torch.ones(N, device=DEVICE, requires_grad=True)
    b = torch.zeros(N, device=DEVICE, requires_grad=True)
    return x, w, b


def case(**changes):
    x, w, b = good()
    args = {"x": x, "normalized_shape": (N,), "weight": w, "bias": b, "eps": 1e-5}
    args.update(changes)
    return args


# --8<-- [start:bad_inputs]
def tensor(*shape, **kwargs):
    return torch.ones(shape, **{"device": DEVICE, **kwargs})


def too_wide():  # fp32 rows of 16385 elements: one more than fit in 64 KiB
    wide = 16385
    return case(x=tensor(2, wide), normalized_shape=(wide,),
                weight=tensor(wide), bias=tensor(wide))


BAD_INPUTS = {  # what is wrong: (arguments, what the message must say)
    "too wide": (too_wide, r"N=16385.*16384"),
    "x elsewhere": (lambda: case(x=tensor(3, N, device=ELSEWHERE)), r"x is on meta"),
    "w elsewhere": (lambda: case(weight=tensor(N, device=ELSEWHERE)), r"weight is on"),
    "weight shape": (lambda: case(weight=tensor(N + 1)), r"weight has shape \(33,\)"),
    "bias missing": (lambda: case(bias=None), r"bias must be a tensor"),
    "bias dtype": (lambda: case(bias=tensor(N, dtype=torch.float16)), r"bias has dt"),
    "2 normalized dims": (lambda: case(normalized_shape=(3, N)), r"only the last dim"),
    "wrong N": (lambda: case(normalized_shape=N + 1), r"must be \(32,\)"),
    "int32 x": (lambda: case(x=tensor(3, N, dtype=torch.int32)), r"dtype torch.int32"),
    "float64 x": (lambda: case(x=tensor(3, N, dtype=torch.float64)), r"float64"),
    "0-d x": (lambda: case(x=tensor()), r"0-d"),
    "empty x": (lambda: case(x=tensor(0, N)), r"no elements"),
    "negative eps": (lambda: case(eps=-1e-5), r"eps must be"),
    "nan eps": (lambda: case(eps=math.nan), r"eps must be"),
    "x not a tensor": (lambda: case(x=[[1.0] * N]), r"x must be a torch.Tensor"),
}
# --8<-- [end:bad_inputs]


@pytest.fixture
def nothing_may_run(monkeypatch):
    """Fail the test if a kernel is launched or ops allocates anything."""
    def forbidden(*args, **kwargs):
        raise AssertionError("allocated or launched before the inputs were checked")

    class NoLaunch:
        def __getitem__(self, grid):
            return forbidden

    kernels = ("layer_norm_fwd_kernel", "layer_norm_bwd_dx_kernel", "layer_norm_bwd_dwdb_kernel")
    for kernel in kernels:
        monkeypatch.setattr(ops, kernel, NoLaunch())
    for allocator in ("empty", "empty_like", "zeros", "full"):
        monkeypatch.setattr(ops.torch, allocator, forbidden)


# --8<-- [start:test_bad_inputs]
@pytest.mark.parametrize("what", list(BAD_INPUTS))
def test_bad_input_is_refused_before_anything_runs(what, request):
    make_args, message = BAD_INPUTS[what]
    args = make_args()
    # from here on, allocating fails the test
    request.getfixturevalue("nothing_may_run")
    with pytest.raises(ContractError, match=message):
        layernorm.layer_norm(**args)
    for name in ("x", "weight", "bias"):
        if isinstance(args[name], torch.Tensor):
            assert args[name].grad is None, f"{name}.grad was written"
# --8<-- [end:test_bad_inputs]


def test_contract_error_is_a_value_error():
    assert issubclass(ContractError, ValueError)
    assert layernorm.ContractError is ContractError
