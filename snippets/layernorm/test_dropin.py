"""layer_norm_fast as a drop-in for F.layer_norm: every input PyTorch computes, computed the same
(output dtype, values, gradients); every input PyTorch refuses, refused with a ContractError that
names the problem; torch.compile without graph breaks; the module with nn.LayerNorm's state_dict."""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch
import torch.nn.functional as F

from layernorm import fast
from layernorm.fast import ContractError, LayerNormFast, layer_norm_fast
from normkit import dropin
from normkit.runtime import DEVICE, INTERPRETED
from normkit.testing import (assert_compiled_matches_eager, assert_graph_replays,
                             assert_refused_as_pytorch_refuses, assert_same_as_torch)
from normkit.testing import seeded as tensor

BF16, F16, F32 = torch.bfloat16, torch.float16, torch.float32


def ours(x, shape, w, b):
    return layer_norm_fast(x, shape, w, b, 1e-5)


def torchs(x, shape, w, b):
    return F.layer_norm(x, shape, w, b, 1e-5)


N = 96
CASES = {
    "leading dims": lambda: (tensor(2, 3, N), (N,), tensor(N), tensor(N)),
    "empty batch": lambda: (tensor(0, N), (N,), tensor(N), tensor(N)),
    "empty middle dim": lambda: (tensor(2, 0, N), (N,), tensor(N), tensor(N)),
    "rows of no columns": lambda: (tensor(3, 0), (0,), tensor(0), tensor(0)),
    "no weight, no bias": lambda: (tensor(4, N), (N,), None, None),
    "weight only": lambda: (tensor(4, N), (N,), tensor(N), None),
    "bias only": lambda: (tensor(4, N), (N,), None, tensor(N)),
    "bf16 throughout": lambda: (tensor(5, N, dtype=BF16), (N,), tensor(N, dtype=BF16), tensor(N, dtype=BF16)),
    "two normalized dims": lambda: (tensor(3, 4, 24), (4, 24), tensor(4, 24), tensor(4, 24)),
    "wider than the tuned range": lambda: (tensor(2, fast.MAX_N + 320), (fast.MAX_N + 320,),
                                           tensor(fast.MAX_N + 320), tensor(fast.MAX_N + 320)),
    "frozen parameters": lambda: (tensor(4, N), (N,), tensor(N, grad=False), tensor(N, grad=False)),
    "frozen input": lambda: (tensor(4, N, grad=False), (N,), tensor(N), tensor(N)),
    "float64 (PyTorch computes it)": lambda: (tensor(4, N, dtype=torch.float64), (N,),
                                             tensor(N, dtype=torch.float64), tensor(N, dtype=torch.float64)),
}


@pytest.mark.parametrize("case", CASES)
def test_computes_what_pytorch_computes(case):
    assert_same_as_torch(ours, torchs, CASES[case]())
    # (one column: test_fast.py's N = 1 cases, with the tolerance dx needs where rstd = 1/sqrt(eps))


def torchs_on_cpu(x, shape, w, b):
    # PyTorch computes a 16-bit input with fp32 parameters on the CPU and refuses it on CUDA
    # ("expected scalar type BFloat16 but found Float"): the CPU's result is the rule
    return F.layer_norm(x.cpu(), shape, w.cpu(), b.cpu(), 1e-5).to(x.device)


@pytest.mark.parametrize("dtype", [BF16, F16], ids=str)
def test_16_bit_input_with_fp32_parameters_follows_pytorch_on_the_cpu(dtype):
    assert_same_as_torch(ours, torchs_on_cpu, (tensor(5, N, dtype=dtype), (N,), tensor(N), tensor(N)))


def test_row_strided_input_is_read_in_place():
    wide = tensor(2, 5, 2 * N, grad=False)
    x = wide[..., :N].requires_grad_()  # rows 2N apart: a slice of wider rows
    rows = dropin.rows_view(x, 1)
    assert rows.data_ptr() == x.data_ptr() and rows.stride() == (2 * N, 1)
    assert_same_as_torch(ours, torchs, (x, (N,), tensor(N), tensor(N)))


def test_column_strided_input_is_copied_and_correct():
    x = tensor(N, 4, grad=False).t().requires_grad_()  # columns 4 apart: no row view exists
    assert dropin.rows_view(x, 1).is_contiguous()
    assert_same_as_torch(ours, torchs, (x, (N,), tensor(N), tensor(N)))


def test_gradient_of_a_sum_arrives_broadcast():
    # the gradient of y.sum() is one value broadcast with stride 0: the backward must not read it as rows
    x, w, b = tensor(3, N), tensor(N), tensor(N)
    ours(x, (N,), w, b).sum().backward()
    grads = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    torchs(x, (N,), w, b).sum().backward()
    for a, t in zip(grads, (x, w, b)):
        torch.testing.assert_close(a, t.grad, atol=1e-4, rtol=1e-4)


REFUSED = {
    "integer input": (lambda: (tensor(4, 8).int(), (8,), None, None), "dtype torch.int32"),
    "normalized_shape not the last dims": (lambda: (tensor(4, 8), (4,), None, None), "normalized_shape=[4]"),
    "normalized_shape longer than the input": (lambda: (tensor(8), (2, 8), None, None), "normalized_shape=[2, 8]"),
    "empty normalized_shape": (lambda: (tensor(4, 8), (), None, None), "normalized_shape must be one or more"),
    "weight of the wrong shape": (lambda: (tensor(4, 8), (8,), tensor(4), None), "weight has shape [4]"),
    "bias of the wrong shape": (lambda: (tensor(4, 8), (8,), None, tensor(4)), "bias has shape [4]"),
    "bf16 parameters for an fp32 input": (lambda: (tensor(4, 8), (8,), tensor(8, dtype=BF16), None),
                                          "weight and bias must have the input's dtype"),
    "weight and bias in different dtypes": (lambda: (tensor(4, 8, dtype=BF16), (8,), tensor(8),
                                                     tensor(8, dtype=BF16)), "weight and bias must"),
    "weight on another device": (lambda: (tensor(4, 8), (8,), torch.ones(8, device="meta"), None),
                                 "weight is on meta"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_refuses_what_pytorch_refuses(case):
    make, words = REFUSED[case]
    assert_refused_as_pytorch_refuses(ours, torchs, make(), words)


def test_eps_must_be_a_number():
    with pytest.raises(ContractError, match="eps must be a number"):
        layer_norm_fast(tensor(4, 8), (8,), None, None, eps="small")


def test_a_device_without_the_kernels_is_computed_by_pytorch():
    x = torch.ones(4, 8, device="meta")
    assert layer_norm_fast(x, (8,)).device.type == "meta"


def test_double_backward_says_it_is_differentiable_once():
    x, w = tensor(3, 16), tensor(16)
    y = layer_norm_fast(x, (16,), w, None)
    (gx,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="differentiate twice"):
        gx.sum().backward()


def test_the_operator_is_differentiable_once_too():
    x, w = tensor(3, 16), tensor(16)
    y, _ = fast.layer_norm_fwd(x, w, None, 1e-5)
    (gx,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="differentiate twice"):
        gx.sum().backward()


@pytest.mark.parametrize("kwargs", [{}, {"bias": False}, {"elementwise_affine": False}], ids=str)
def test_module_is_nn_layernorm_with_the_fast_forward(kwargs):
    torch.manual_seed(0)
    reference = torch.nn.LayerNorm((4, 24), **kwargs).to(DEVICE)
    module = LayerNormFast((4, 24), **kwargs).to(DEVICE)
    assert list(module.state_dict()) == list(reference.state_dict())
    for p in reference.parameters():
        torch.nn.init.normal_(p)
    module.load_state_dict(reference.state_dict())
    x = tensor(3, 4, 24)
    torch.testing.assert_close(module(x), reference(x), atol=2e-5, rtol=2e-5)


def test_torch_compile_full_graph_matches_eager():
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), LayerNormFast(32), torch.nn.GELU(),
                                LayerNormFast(32, bias=False)).to(DEVICE)
    assert_compiled_matches_eager(model, tensor(4, 8, 32, grad=False))


@pytest.mark.gpu
def test_cuda_graph_capture_replays_the_call():
    x, w, b = tensor(64, 1024, grad=False), tensor(1024, grad=False), tensor(1024, grad=False)
    assert_graph_replays(lambda: layer_norm_fast(x, (1024,), w, b),
                         lambda: F.layer_norm(x, (1024,), w, b), x)


@pytest.mark.skipif(INTERPRETED, reason="the interpreter runs on the CPU")
def test_kernels_are_used_on_the_gpu():
    assert dropin.on_kernels(tensor(2, 8))


@pytest.mark.skipif(INTERPRETED or torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
def test_second_gpu_while_the_first_is_current():
    # the compiled kernels are per device, and the launch goes to the tensor's device and stream
    for device in ("cuda:0", "cuda:1", "cuda:0", "cuda:1"):
        x = torch.randn(64, 512, device=device, requires_grad=True)
        w, b = (torch.randn(512, device=device, requires_grad=True) for _ in range(2))
        assert torch.cuda.current_device() == 0
        assert_same_as_torch(ours, torchs, (x, (512,), w, b))
