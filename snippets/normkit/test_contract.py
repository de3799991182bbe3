"""normkit.contract's table is what PyTorch does: its CPU column, checked on every run; its CUDA
column, checked on a GPU. (The fast paths against the table: each chapter's test_dropin.py.)"""

import pytest
import torch
import torch.nn.functional as F

from normkit import contract

N = 8
CASES = [(op, dtypes) for op, cases in contract.CASES.items() for dtypes in cases]
IDS = [f"{op}: {contract.case_name(dtypes)}" for op, dtypes in CASES]


def pytorch_outcome(op, dtypes, device):
    """The dtype of PyTorch's output for the case on device, or REFUSED where its forward or its
    backward raises; a computed case's gradients each in its own tensor's dtype."""
    g = torch.Generator().manual_seed(0)
    x, *params = (None if d is None else torch.randn((4, N) if i == 0 else (N,), generator=g)
                  .to(device, d).requires_grad_() for i, d in enumerate(dtypes))
    inputs = [t for t in (x, *params) if t is not None]
    try:
        y = F.layer_norm(x, (N,), *params) if op == "layer_norm" else F.rms_norm(x, (N,), *params)
        grads = torch.autograd.grad(y.sum(), inputs)
    except RuntimeError:  # PyTorch's refusals of a dtype: "expected scalar type ...", "mixed dtype (CPU) ..."
        return contract.REFUSED
    assert [gr.dtype for gr in grads] == [t.dtype for t in inputs]
    return y.dtype


@pytest.mark.parametrize("op, dtypes", CASES, ids=IDS)
def test_the_cpu_column_is_what_pytorch_does_on_the_cpu(op, dtypes):
    assert pytorch_outcome(op, dtypes, "cpu") == contract.CASES[op][dtypes]["cpu"]


@pytest.mark.gpu
@pytest.mark.parametrize("op, dtypes", CASES, ids=IDS)
def test_the_cuda_column_is_what_pytorch_does_on_cuda(op, dtypes):
    assert pytorch_outcome(op, dtypes, "cuda") == contract.CASES[op][dtypes]["cuda"]
