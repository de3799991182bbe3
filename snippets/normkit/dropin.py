"""What both fast kernels need to stand in for PyTorch's own ops, written once.

- the checks PyTorch makes of `normalized_shape`, `weight` and `bias`, with messages that name the
  problem, made before anything is allocated or launched;
- the (M, N) row view of an input, without a copy when its rows are evenly spaced;
- which path a call takes: the registered operator while torch.compile traces (Dynamo sees one
  opaque call), the autograd.Function when a gradient is needed, the launch alone otherwise (the
  operator's dispatch costs host time an eager call does not need).
"""

import math

import torch

from normkit.launch import ContractError
from normkit.runtime import DEVICE

# the torch.library namespace of the fast kernels' operators: torch.ops.normkernels.<name>
NAMESPACE = "normkernels"
KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
ON_CUDA = DEVICE.type == "cuda"  # else the interpreter, on the CPU


def normalized_shape_of(x, normalized_shape, op):
    """normalized_shape as a tuple, checked against x's trailing dimensions as PyTorch checks it.

    Every call runs these checks: plain loops and attribute reads, the messages built only when
    one fails (a call at few rows is paid for in host time)."""
    if not isinstance(x, torch.Tensor):
        raise ContractError(f"{op}: input must be a torch.Tensor, not {type(x).__name__}")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool):
            shape = ()
    if not shape:
        raise ContractError(f"{op}: normalized_shape must be one or more ints (the trailing dimensions "
                            f"to normalize), not {normalized_shape!r}")
    if x.dim() < len(shape) or x.shape[x.dim() - len(shape):] != shape:
        raise ContractError(f"{op}: normalized_shape={list(shape)} must match the last dimensions of the "
                            f"input, but the input has shape {list(x.shape)}")
    if not x.dtype.is_floating_point:
        raise ContractError(f"{op}: input has dtype {x.dtype}; normalization needs a floating-point input")
    return shape


def check_parameter(name, p, x, shape, op):
    """weight or bias: None, or a tensor of normalized_shape on x's device (its dtype is each op's rule)."""
    if p is None:
        return
    if not isinstance(p, torch.Tensor):
        raise ContractError(f"{op}: {name} must be a tensor or None, not {type(p).__name__}")
    if p.shape != shape:
        raise ContractError(f"{op}: {name} has shape {list(p.shape)}, but normalized_shape is {list(shape)}")
    if p.device != x.device:
        raise ContractError(f"{op}: {name} is on {p.device} but the input is on {x.device}")


def check_eps(eps, op):
    if not isinstance(eps, (int, float)) or isinstance(eps, bool):
        raise ContractError(f"{op}: eps must be a number, not {type(eps).__name__}")


def on_kernels(x, *params):
    """True when the Triton kernels take these tensors: the kernels' device and dtypes. Anything
    else PyTorch accepts (float64, a CPU tensor on a GPU machine) is computed by PyTorch's own op."""
    if not (x.is_cuda if ON_CUDA else x.is_cpu) or x.dtype not in KERNEL_DTYPES:
        return False
    for p in params:  # on x's device already (check_parameter)
        if p is not None and p.dtype not in KERNEL_DTYPES:
            return False
    return True


def rows_view(x, n_dims):
    """x as (M, N) rows over its last n_dims dimensions: a view with the rows' stride when one
    exists and the columns are contiguous, a contiguous copy otherwise."""
    if x.dim() == 2 and n_dims == 1:  # already rows: no reshape to pay for
        rows, n_cols = x, x.shape[1]
    else:
        n_cols = math.prod(x.shape[x.dim() - n_dims:])
        rows = x.reshape(math.prod(x.shape[:x.dim() - n_dims]), n_cols)
    if rows.stride(1) != 1 and n_cols > 1:
        rows = rows.contiguous()
    return rows


def row_stride(rows):
    """The row stride a kernel is compiled for (a constexpr, as N is): any value serves one row."""
    return rows.stride(0) if rows.shape[0] > 1 else rows.shape[1]


def flat(p):
    """A parameter of normalized_shape as (N,), contiguous (a no-op for the usual 1-D parameter)."""
    if p is None or (p.dim() == 1 and p.is_contiguous()):
        return p
    return p.reshape(-1).contiguous()


def needs_grad(x, *params):
    """Whether autograd will ask for a gradient of this call."""
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (x, *params))


def path(x, *params):
    """'op' while torch.compile traces, 'autograd' when a gradient will be needed, else 'launch'."""
    if torch.compiler.is_compiling():
        return "op"
    return "autograd" if needs_grad(x, *params) else "launch"
