"""Every contract failure raises ContractError naming the problem, before any allocation or launch."""

import math

import pytest
import torch

import rmsnorm.ops as ops
from normkit.launch import ContractError


class Boom:
    """Stands in for a kernel or an allocator: touching it fails the test."""

    def __init__(self, what):
        self.what = what

    def __getitem__(self, grid):
        raise AssertionError(f"{self.what} was launched")

    def __call__(self, *a, **k):
        raise AssertionError(f"{self.what} was called")


@pytest.fixture
def arm(monkeypatch):
    """Call arm() once the inputs exist: from then on any launch or allocation by ops fails the test."""

    def install():
        for name in ("rmsnorm_forward_kernel", "rmsnorm_dx_kernel", "gamma_grad_kernel"):
            monkeypatch.setattr(ops, name, Boom(name))
        monkeypatch.setattr(ops.torch, "empty", Boom("torch.empty"))
        monkeypatch.setattr(ops.torch, "empty_like", Boom("torch.empty_like"))

    return install


def ok_inputs(device, m=4, n=8, dtype=torch.float32):
    return torch.randn(m, n, device=device, dtype=dtype), torch.ones(n, device=device, dtype=dtype)


def bad_cases(device):
    x, g = ok_inputs(device)
    return {
        "not a tensor": ([[1.0, 2.0]], g, 1e-6, "x must be a torch.Tensor"),
        "gamma not a tensor": (x, [1.0] * 8, 1e-6, "gamma must be a torch.Tensor"),
        "1-D x": (x[0], g, 1e-6, "x must be 2-D"),
        "3-D x": (x.reshape(2, 2, 8), g, 1e-6, "x must be 2-D"),
        "bfloat16": (x.bfloat16(), g.bfloat16(), 1e-6, "only float32 and float16"),
        "float64": (x.double(), g.double(), 1e-6, "only float32 and float16"),
        "transposed": (torch.randn(8, 8, device=device).t(), g, 1e-6, "not contiguous"),
        "strided rows": (torch.randn(4, 16, device=device)[:, ::2], g, 1e-6, "not contiguous"),
        "empty": (torch.empty(0, 8, device=device), g, 1e-6, "at least one row"),
        "gamma length": (x, torch.ones(7, device=device), 1e-6, "gamma must have shape (8,)"),
        "gamma 2-D": (x, torch.ones(1, 8, device=device), 1e-6, "gamma must have shape (8,)"),
        "gamma dtype": (x, g.half(), 1e-6, "gamma has dtype torch.float16"),
        "gamma strided": (x, torch.ones(16, device=device)[::2], 1e-6, "gamma is not contiguous"),
        "eps zero": (x, g, 0.0, "eps must be a finite number > 0"),
        "eps negative": (x, g, -1e-6, "eps must be a finite number > 0"),
        "eps nan": (x, g, math.nan, "eps must be a finite number > 0"),
        "eps inf": (x, g, math.inf, "eps must be a finite number > 0"),
        "eps bool": (x, g, True, "eps must be a finite number > 0"),
        "eps tensor": (x, g, torch.tensor(1e-6), "eps must be a finite number > 0"),
        "N too wide": (torch.randn(1, 4097, device=device), torch.ones(4097, device=device), 1e-6,
                       "N=4097 is wider than the 4096"),
        "scratch too big": (torch.empty(4097, 4096, device=device), torch.ones(4096, device=device), 1e-6,
                            "more than the 67108864 bytes"),
    }


@pytest.mark.parametrize("case", list(bad_cases("cpu")))
def test_forward_rejects_before_allocating(case, device, arm):
    x, g, eps, message = bad_cases(device)[case]
    arm()
    with pytest.raises(ContractError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ops.rmsnorm_forward(x, g, eps)


@pytest.mark.parametrize("case", ["transposed", "gamma dtype", "eps zero", "N too wide"])
def test_autograd_entry_rejects_too(case, device, arm):
    x, g, eps, message = bad_cases(device)[case]
    arm()
    with pytest.raises(ContractError):
        ops.rms_norm(x, g, eps)


def test_contract_error_is_a_value_error():
    assert issubclass(ContractError, ValueError)


def test_largest_accepted_scratch_is_exactly_64_mib():
    ops.check_contract(torch.empty(4096, 4096, device=_device()), torch.ones(4096, device=_device()), 1e-6)


def _device():
    from normkit.runtime import DEVICE

    return DEVICE


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a second device type")
def test_wrong_device_is_refused(arm):
    x = torch.randn(4, 8, device="cuda")
    g, xc = torch.ones(8), x.cpu()
    arm()
    with pytest.raises(ContractError, match="gamma is on cpu"):
        ops.rmsnorm_forward(x, g, 1e-6)
    with pytest.raises(ContractError, match="the kernels here run on cuda"):
        ops.rmsnorm_forward(xc, g, 1e-6)


def test_meta_device_is_refused(arm):
    x, g = torch.empty(4, 8, device="meta"), torch.empty(8, device="meta")
    arm()
    with pytest.raises(ContractError, match="is on meta"):
        ops.rmsnorm_forward(x, g, 1e-6)


@pytest.mark.parametrize(
    "make_dy, message",
    [
        (lambda x: x[:, :4].contiguous(), "dy has shape"),
        (lambda x: x.half(), "dy has dtype"),
        (lambda x: torch.randn(8, 4, device=x.device).t(), "dy is not contiguous"),
        (lambda x: x.tolist(), "dy must be a torch.Tensor"),
    ],
)
def test_dx_rejects_bad_upstream_gradient(make_dy, message, device, arm):
    x, g = ok_inputs(device)
    rstd, dy = torch.ones(4, device=device), make_dy(x)
    arm()
    with pytest.raises(ContractError, match=message):
        ops.rmsnorm_dx(x, g, dy, rstd, 1e-6)


def test_no_output_written_on_failure(device):
    """With real kernels: a refused call leaves a caller's tensors untouched."""
    x = torch.randn(8, 8, device=device).t()
    before = x.clone()
    g = torch.ones(8, device=device)
    with pytest.raises(ContractError):
        ops.rms_norm(x, g)
    assert torch.equal(x, before)


def test_refused_call_is_not_counted(device):
    x, g = ok_inputs(device)
    before = dict(ops.CALLS)
    with pytest.raises(ContractError):
        ops.rms_norm(x, g, eps=-1.0)
    assert ops.CALLS == before
