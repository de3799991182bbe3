"""rms_norm_fast as a drop-in for F.rms_norm: every input PyTorch computes, computed with PyTorch's output
and gradient dtypes and the values F.rms_norm gives in float64 on the CPU (normkit.testing.rms_norm_exact);
the dtypes of normkit.contract's "fast" column on every device; every input PyTorch refuses, refused
with a ContractError that names the problem; torch.compile without graph breaks; the module with
nn.RMSNorm's state_dict."""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch
import torch.nn.functional as F

from normkit import contract, dropin
from normkit.runtime import DEVICE
from normkit.testing import (assert_close, assert_compiled_matches_eager, assert_graph_replays,
                             assert_matches_oracle, assert_refused_as_pytorch_refuses, assert_same_as_torch,
                             exact, rms_norm_exact)
from normkit.testing import seeded as tensor
from rmsnorm import fast
from rmsnorm.fast import ContractError, RMSNormFast, rms_norm_fast

BF16 = torch.bfloat16


def ours(x, shape, w, eps=1e-6):
    return rms_norm_fast(x, shape, w, eps)


def torchs(x, shape, w, eps=1e-6):
    return F.rms_norm(x, shape, w, eps)


N = 96
WIDE = fast.MAX_N + 320
CASES = {  # the dtypes each case can take: test_takes_the_dtypes_the_contract_says_on_every_device
    "leading dims": lambda: (tensor(2, 3, N), (N,), tensor(N)),
    "empty batch": lambda: (tensor(0, N), (N,), tensor(N)),
    "empty middle dim": lambda: (tensor(2, 0, N), (N,), tensor(N)),
    "rows of no columns": lambda: (tensor(3, 0), (0,), tensor(0)),
    "no weight": lambda: (tensor(4, N), (N,), None),
    "two normalized dims": lambda: (tensor(3, 4, 24), (4, 24), tensor(4, 24)),
    "one column": lambda: (tensor(6, 1), (1,), tensor(1)),
    "wider than the tuned range": lambda: (tensor(2, WIDE), (WIDE,), tensor(WIDE)),
    "frozen weight": lambda: (tensor(4, N), (N,), tensor(N, grad=False)),
    "frozen input": lambda: (tensor(4, N, grad=False), (N,), tensor(N)),
}


@pytest.mark.parametrize("case", CASES)
def test_computes_what_pytorch_computes(case):
    assert_same_as_torch(ours, torchs, rms_norm_exact, CASES[case]())


def test_eps_none_is_the_input_dtypes_epsilon():
    x, w = tensor(4, N, dtype=BF16), tensor(N, dtype=BF16)
    assert_same_as_torch(lambda x, shape, w: ours(x, shape, w, None), lambda x, shape, w: torchs(x, shape, w, None),
                         lambda x, shape, w: rms_norm_exact(x, shape, w, torch.finfo(BF16).eps), (x, (N,), w))


PYTORCH_HERE = "cuda" if DEVICE.type == "cuda" else "cpu"  # the column of normkit.contract this device is


@pytest.mark.parametrize("dtypes", contract.RMS_NORM, ids=contract.case_name)
def test_takes_the_dtypes_the_contract_says_on_every_device(dtypes):
    # the fast path's column of normkit.contract: any floating weight, the output in the input's dtype
    expected, pytorch_here = contract.RMS_NORM[dtypes]["fast"], contract.RMS_NORM[dtypes][PYTORCH_HERE]
    args = (tensor(5, N, dtype=dtypes[0]), (N,), dtypes[1] and tensor(N, dtype=dtypes[1]))
    y = ours(*args)
    assert y.dtype == expected
    assert_matches_oracle(y, rms_norm_exact, args, pytorch_out=None if pytorch_here == contract.REFUSED
                          else torchs(*args))


def test_row_strided_input_is_read_in_place():
    # QK-norm's case: a norm over a slice of wider rows (rows 2N apart)
    wide = tensor(2, 5, 2 * N, grad=False)
    x = wide[..., N:].requires_grad_()
    rows = dropin.rows_view(x, 1)
    assert rows.data_ptr() == x.data_ptr() and rows.stride() == (2 * N, 1)
    assert_same_as_torch(ours, torchs, rms_norm_exact, (x, (N,), tensor(N)))


def test_gradient_of_a_sum_arrives_broadcast():
    x, w = tensor(3, N), tensor(N)
    ours(x, (N,), w).sum().backward()
    xe, we = exact(x), exact(w)
    rms_norm_exact(xe, (N,), we).sum().backward()
    for name, t, e in (("x", x, xe), ("weight", w, we)):
        assert_close(f"gradient of {name}", t.grad, e.grad, t.dtype)


REFUSED = {
    "integer input": (lambda: (tensor(4, 8).int(), (8,), None), "dtype torch.int32"),
    "normalized_shape not the last dims": (lambda: (tensor(4, 8), (4,), None), "normalized_shape=[4]"),
    "empty normalized_shape": (lambda: (tensor(4, 8), (), None), "normalized_shape must be one or more"),
    "weight of the wrong shape": (lambda: (tensor(4, 8), (8,), tensor(4)), "weight has shape [4]"),
    "weight on another device": (lambda: (tensor(4, 8), (8,), torch.ones(8, device="meta")),
                                 "weight is on meta"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_refuses_what_pytorch_refuses(case):
    make, words = REFUSED[case]
    assert_refused_as_pytorch_refuses(ours, torchs, make(), words)


def test_eps_must_be_a_number_or_none():
    with pytest.raises(ContractError, match="eps must be a number"):
        rms_norm_fast(tensor(4, 8), (8,), None, eps="small")


def test_double_backward_says_it_is_differentiable_once():
    x, w = tensor(3, 16), tensor(16)
    y = rms_norm_fast(x, (16,), w)
    (gx,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="differentiate twice"):
        gx.sum().backward()


@pytest.mark.parametrize("kwargs", [{}, {"elementwise_affine": False}, {"eps": 1e-5}], ids=str)
def test_module_is_nn_rmsnorm_with_the_fast_forward(kwargs):
    reference = torch.nn.RMSNorm((4, 24), **kwargs).to(DEVICE)
    module = RMSNormFast((4, 24), **kwargs).to(DEVICE)
    assert list(module.state_dict()) == list(reference.state_dict())
    for p in reference.parameters():
        torch.nn.init.normal_(p)
    module.load_state_dict(reference.state_dict())
    x = tensor(3, 4, 24)
    eps = torch.finfo(x.dtype).eps if reference.eps is None else reference.eps  # nn.RMSNorm's default
    assert_close("y", module(x), rms_norm_exact(x, (4, 24), reference.weight, eps), torch.float32)


def test_torch_compile_full_graph_matches_eager():
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), RMSNormFast(32), torch.nn.GELU(),
                                RMSNormFast(32, elementwise_affine=False)).to(DEVICE)
    assert_compiled_matches_eager(model, tensor(4, 8, 32, grad=False))


@pytest.mark.gpu
def test_cuda_graph_capture_replays_the_call():
    x, w = tensor(64, 1024, grad=False), tensor(1024, grad=False)
    assert_graph_replays(lambda: rms_norm_fast(x, (1024,), w, 1e-6),
                         lambda: rms_norm_exact(x, (1024,), w, 1e-6), x)


@pytest.mark.gpu
def test_compiled_with_cuda_graphs_matches_eager():
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), RMSNormFast(256)).to(DEVICE)
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    x = tensor(64, 256, grad=False)
    for _ in range(3):  # reduce-overhead records its CUDA graph on a later call
        y = compiled(x)
    torch.testing.assert_close(y, model(x), atol=1e-4, rtol=1e-4)


@pytest.mark.skipif(DEVICE.type != "cuda" or torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
def test_second_gpu_while_the_first_is_current():
    # the compiled kernels are per device, and the launch goes to the tensor's device and stream
    for device in ("cuda:0", "cuda:1", "cuda:0", "cuda:1"):
        x = torch.randn(64, 512, device=device, requires_grad=True)
        w = torch.randn(512, device=device, requires_grad=True)
        assert torch.cuda.current_device() == 0
        assert_same_as_torch(ours, torchs, rms_norm_exact, (x, (512,), w))


@pytest.mark.parametrize("x_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("with_weight", [True, False])
@pytest.mark.parametrize("needs", [[True, True], [False, True], [True, False]])
def test_operators_and_their_fakes_agree(x_dtype, with_weight, needs):
    """torch.library.opcheck on both operators: schema, fake outputs (shape, dtype, device) against
    the real ones, and autograd's registration, over the parameters the operators take."""
    x = tensor(4, N).to(x_dtype)
    w = tensor(N).to(torch.float32) if with_weight else None
    for save in (True, False):  # statistics kept for a backward, or none (and no gradient asked)
        inputs = (x, w) if save else [None if t is None else t.detach() for t in (x, w)]
        torch.library.opcheck(fast.rms_norm_fwd, (*inputs, 1e-6), {"save": save})
    # the backward operator's inputs need no gradient: it is differentiable once
    x, w = x.detach(), None if w is None else w.detach()
    _, rstd = fast.rms_norm_fwd(x, w, 1e-6)
    dy = tensor(4, N, grad=False).to(x_dtype)
    torch.library.opcheck(fast.rms_norm_bwd, (dy, x, w, rstd, needs, torch.float32))
