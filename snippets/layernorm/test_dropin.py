"""layer_norm_fast as a drop-in for F.layer_norm: every input PyTorch computes, computed with PyTorch's output
and gradient dtypes and the values F.layer_norm gives in float64 on the CPU (normkit.testing.layer_norm_exact);
the dtypes of normkit.contract's "fast" column on every device; every input PyTorch refuses, refused
with a ContractError that names the problem; torch.compile without graph breaks; the module with
nn.LayerNorm's state_dict."""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch
import torch.nn.functional as F

from layernorm import fast
from layernorm.fast import ContractError, LayerNormFast, layer_norm_fast
from normkit import contract, dropin
from normkit.runtime import DEVICE, INTERPRETED
from normkit.testing import (assert_close, assert_compiled_matches_eager, assert_graph_replays,
                             assert_matches_oracle, assert_refused_as_pytorch_refuses, assert_same_as_torch,
                             exact, layer_norm_exact)
from normkit.testing import seeded as tensor


def ours(x, shape, w, b):
    return layer_norm_fast(x, shape, w, b, 1e-5)


def torchs(x, shape, w, b):
    return F.layer_norm(x, shape, w, b, 1e-5)


N = 96
CASES = {  # the dtypes each case can take: test_takes_the_dtypes_the_contract_says_on_every_device
    "leading dims": lambda: (tensor(2, 3, N), (N,), tensor(N), tensor(N)),
    "empty batch": lambda: (tensor(0, N), (N,), tensor(N), tensor(N)),
    "empty middle dim": lambda: (tensor(2, 0, N), (N,), tensor(N), tensor(N)),
    "rows of no columns": lambda: (tensor(3, 0), (0,), tensor(0), tensor(0)),
    "no weight, no bias": lambda: (tensor(4, N), (N,), None, None),
    "weight only": lambda: (tensor(4, N), (N,), tensor(N), None),
    "bias only": lambda: (tensor(4, N), (N,), None, tensor(N)),
    "two normalized dims": lambda: (tensor(3, 4, 24), (4, 24), tensor(4, 24), tensor(4, 24)),
    "wider than the tuned range": lambda: (tensor(2, fast.MAX_N + 320), (fast.MAX_N + 320,),
                                           tensor(fast.MAX_N + 320), tensor(fast.MAX_N + 320)),
    "frozen parameters": lambda: (tensor(4, N), (N,), tensor(N, grad=False), tensor(N, grad=False)),
    "frozen input": lambda: (tensor(4, N, grad=False), (N,), tensor(N), tensor(N)),
}


@pytest.mark.parametrize("case", CASES)
def test_computes_what_pytorch_computes(case):
    assert_same_as_torch(ours, torchs, layer_norm_exact, CASES[case]())
    # (one column: test_fast.py's N = 1 cases, with the tolerance dx needs where rstd = 1/sqrt(eps))


PYTORCH_HERE = "cuda" if DEVICE.type == "cuda" else "cpu"  # the column of normkit.contract this device is


@pytest.mark.parametrize("dtypes", contract.LAYER_NORM, ids=contract.case_name)
def test_takes_the_dtypes_the_contract_says_on_every_device(dtypes):
    # the fast path's column of normkit.contract, whatever PyTorch does on this device: a 16-bit
    # input with float32 parameters is computed on the GPU too, where F.layer_norm refuses it
    expected, pytorch_here = contract.LAYER_NORM[dtypes]["fast"], contract.LAYER_NORM[dtypes][PYTORCH_HERE]
    args = (tensor(5, N, dtype=dtypes[0]), (N,), *(d and tensor(N, dtype=d) for d in dtypes[1:]))
    if expected == contract.REFUSED:
        with pytest.raises(ContractError, match="weight and bias must have the input's dtype"):
            ours(*args)
        return
    y = ours(*args)
    assert y.dtype == expected
    assert_matches_oracle(y, layer_norm_exact, args, pytorch_out=None if pytorch_here == contract.REFUSED
                          else torchs(*args))


def test_row_strided_input_is_read_in_place():
    wide = tensor(2, 5, 2 * N, grad=False)
    x = wide[..., :N].requires_grad_()  # rows 2N apart: a slice of wider rows
    rows = dropin.rows_view(x, 1)
    assert rows.data_ptr() == x.data_ptr() and rows.stride() == (2 * N, 1)
    assert_same_as_torch(ours, torchs, layer_norm_exact, (x, (N,), tensor(N), tensor(N)))


def test_column_strided_input_is_copied_and_correct():
    x = tensor(N, 4, grad=False).t().requires_grad_()  # columns 4 apart: no row view exists
    assert dropin.rows_view(x, 1).is_contiguous()
    assert_same_as_torch(ours, torchs, layer_norm_exact, (x, (N,), tensor(N), tensor(N)))


def test_gradient_of_a_sum_arrives_broadcast():
    # the gradient of y.sum() is one value broadcast with stride 0: the backward must not read it as rows
    x, w, b = tensor(3, N), tensor(N), tensor(N)
    ours(x, (N,), w, b).sum().backward()
    xe, we, be = (exact(t) for t in (x, w, b))
    layer_norm_exact(xe, (N,), we, be).sum().backward()
    for name, t, e in (("x", x, xe), ("weight", w, we), ("bias", b, be)):
        assert_close(f"gradient of {name}", t.grad, e.grad, t.dtype)


REFUSED = {
    "integer input": (lambda: (tensor(4, 8).int(), (8,), None, None), "dtype torch.int32"),
    "normalized_shape not the last dims": (lambda: (tensor(4, 8), (4,), None, None), "normalized_shape=[4]"),
    "normalized_shape longer than the input": (lambda: (tensor(8), (2, 8), None, None), "normalized_shape=[2, 8]"),
    "empty normalized_shape": (lambda: (tensor(4, 8), (), None, None), "normalized_shape must be one or more"),
    "weight of the wrong shape": (lambda: (tensor(4, 8), (8,), tensor(4), None), "weight has shape [4]"),
    "bias of the wrong shape": (lambda: (tensor(4, 8), (8,), None, tensor(4)), "bias has shape [4]"),
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
    assert_close("y", module(x), layer_norm_exact(x, (4, 24), reference.weight, reference.bias, reference.eps),
                 torch.float32)


def test_torch_compile_full_graph_matches_eager():
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), LayerNormFast(32), torch.nn.GELU(),
                                LayerNormFast(32, bias=False)).to(DEVICE)
    assert_compiled_matches_eager(model, tensor(4, 8, 32, grad=False))


@pytest.mark.gpu
def test_cuda_graph_capture_replays_the_call():
    x, w, b = tensor(64, 1024, grad=False), tensor(1024, grad=False), tensor(1024, grad=False)
    assert_graph_replays(lambda: layer_norm_fast(x, (1024,), w, b),
                         lambda: layer_norm_exact(x, (1024,), w, b), x)


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
        assert_same_as_torch(ours, torchs, layer_norm_exact, (x, (512,), w, b))


@pytest.mark.parametrize("x_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("with_weight", [True, False])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("needs", [[True, True, True], [False, True, True], [True, False, False]])
def test_operators_and_their_fakes_agree(x_dtype, with_weight, with_bias, needs):
    """torch.library.opcheck on both operators: schema, fake outputs (shape, dtype, device) against
    the real ones, and autograd's registration, over the parameters the operators take."""
    x = tensor(4, N).to(x_dtype)
    params = torch.float32 if x_dtype != torch.float32 else x_dtype
    w = tensor(N).to(params) if with_weight else None
    b = tensor(N).to(params) if with_bias else None
    for save in (True, False):  # statistics kept for a backward, or none (and no gradient asked)
        inputs = (x, w, b) if save else [None if t is None else t.detach() for t in (x, w, b)]
        torch.library.opcheck(fast.layer_norm_fwd, (*inputs, 1e-5), {"save": save})
    # the backward operator's inputs need no gradient: it is differentiable once
    x, w = x.detach(), None if w is None else w.detach()
    _, stats = fast.layer_norm_fwd(x, w, b, 1e-5)
    rows_dtype = params if with_weight or with_bias else torch.float32
    dy = tensor(4, N, grad=False).to(x_dtype)
    torch.library.opcheck(fast.layer_norm_bwd, (dy, x, w, stats, needs[:2] + [needs[2] and with_bias], rows_dtype))
