"""Checks the fast kernels' tests share: the oracles (PyTorch's ops in float64 on the CPU) and tolerances
against them, NaN-poisoned memory, and the drop-in checks (against PyTorch, its refusals, torch.compile,
CUDA-graph capture)."""

import re

import pytest
import torch
import torch.nn.functional as F

from normkit import aligned
from normkit.launch import ContractError
from normkit.runtime import DEVICE, INTERPRETED
from normkit.tiles import staged_config

# Largest error allowed, relative to the largest reference value (or a larger natural scale).
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def poison_allocator():
    # fill the caching allocator's free blocks with NaN: an output element the kernels
    # forget to write then shows up as NaN instead of a plausible leftover value
    if DEVICE.type == "cuda":
        torch.full((64 * 1024 * 1024,), float("nan"), device=DEVICE)
        torch.cuda.synchronize()


# --- The oracles: PyTorch's own ops in float64 on the CPU, whatever the device the kernels run on.
# What PyTorch's ops take and how they round depends on the device (normkit.contract: CUDA's
# F.layer_norm refuses a 16-bit input with fp32 parameters, its CPU computes it), and the tests must
# say the same thing on a GPU as on a CPU. PyTorch's CPU kernels, not the definition written out in
# tensor operations: those ran six times slower here (4.1 against 0.64 s for the forward and backward
# of 1024 x 16384 on one thread), which the GPU's large cases would feel.

def exact(t):
    """t as the oracles take it: a float64 copy on the CPU, a leaf that needs a gradient when t
    does, so that autograd through an oracle gives the exact gradients; not a tensor: as it is."""
    if not isinstance(t, torch.Tensor):
        return t
    return t.detach().to("cpu", torch.float64).requires_grad_(t.requires_grad)


def _float64_on_cpu(*tensors):
    # differentiable (and nothing at all for an exact() leaf): gradients reach the caller's leaves
    return [None if t is None else t.to("cpu", torch.float64) for t in tensors]


def layer_norm_exact(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """F.layer_norm in float64 on the CPU, whatever the tensors' device and dtype: exact() leaves
    for the exact gradients."""
    x, weight, bias = _float64_on_cpu(x, weight, bias)
    return F.layer_norm(x, normalized_shape, weight, bias, eps)


def rms_norm_exact(x, normalized_shape, weight=None, eps=1e-6):
    """F.rms_norm in float64 on the CPU, whatever the tensors' device and dtype: exact() leaves for
    the exact gradients. eps is a number: F.rms_norm's eps=None means the input dtype's epsilon,
    which the caller knows and a float64 copy does not."""
    x, weight = _float64_on_cpu(x, weight)
    return F.rms_norm(x, normalized_shape, weight, eps)


def assert_close(name, out, ref, dtype, scale=1.0):
    """out (any device, any dtype) within TOL[dtype] * max(max|ref|, scale) of an oracle's ref."""
    out = out.detach().to("cpu", torch.float64)
    assert out.shape == ref.shape, f"{name}: shape {tuple(out.shape)} != {tuple(ref.shape)}"
    scale = max(ref.abs().max().item(), scale)
    err = (out - ref).abs().max().item()
    assert err <= TOL[dtype] * scale, f"{name}: max error {err:.3g} > {TOL[dtype]} * {scale:.3g}"


def assert_same_as_torch(ours, theirs, oracle, args, dy_seed=0):
    """ours(*args) against PyTorch's theirs(*args) on the same device: the same output shape and
    dtype and the same gradient dtypes; and values that match oracle(*args) on exact() copies (the
    exact answer both approximate) within twice the tolerance of the coarser of the input's and the
    result's dtype, relative to the larger of 1 and the largest value."""
    out, pytorch_out = ours(*args), theirs(*args)
    assert (out.shape, out.dtype) == (pytorch_out.shape, pytorch_out.dtype), (out.dtype, pytorch_out.dtype)
    assert_matches_oracle(out, oracle, args, dy_seed, pytorch_out)


def assert_matches_oracle(out, oracle, args, dy_seed=0, pytorch_out=None):
    """out = a call on args, its values and gradients against oracle(*args) on exact() copies (see
    assert_same_as_torch); each gradient in its tensor's dtype, or in PyTorch's where pytorch_out,
    PyTorch's result of the same call, is given."""
    upcast = [exact(t) for t in args]
    ref = oracle(*upcast)
    def tol(result):  # the coarser of the input's dtype and the result's
        return 2 * max(TOL.get(args[0].dtype, 1e-12), TOL.get(result.dtype, 1e-12))
    _close("output", out, ref, tol(out))
    wanted = [i for i, t in enumerate(args) if isinstance(t, torch.Tensor) and t.requires_grad]
    if not wanted:
        return
    g = torch.Generator().manual_seed(dy_seed)
    dy = torch.randn(out.shape, generator=g).to(out.dtype)
    grads = torch.autograd.grad(out, [args[i] for i in wanted], dy.to(out.device))
    expected = ([t.dtype for t in torch.autograd.grad(pytorch_out, [args[i] for i in wanted], dy.to(out.device))]
                if pytorch_out is not None else [args[i].dtype for i in wanted])
    ref_grads = torch.autograd.grad(ref, [upcast[i] for i in wanted], dy.double())
    for i, a, dtype, r in zip(wanted, grads, expected, ref_grads):
        assert (a.shape, a.dtype) == (args[i].shape, dtype), (i, a.dtype, dtype)
        _close(f"gradient of input {i}", a, r, tol(a))


def _close(name, out, ref, tol):
    if ref.numel() == 0:
        return
    scale = max(ref.abs().max().item(), 1.0)
    err = (out.detach().to("cpu", torch.float64) - ref).abs().max().item()
    assert err <= tol * scale, f"{name}: max error {err:.3g} > {tol} * {scale:.3g}"


# inputs normkit.aligned's windows cannot read: they assume the first row on 16 bytes and the
# output's rows where the input's are
UNREADABLE_LAYOUTS = ("start off 16 bytes", "rows apart")


def unreadable_rows(layout, n, rows=13):
    """(rows, n) fp32 rows in one of UNREADABLE_LAYOUTS."""
    if layout == "rows apart":
        return torch.randn(rows, n + 3, device=DEVICE)[:, :n]
    return torch.randn(rows * n + 1, device=DEVICE)[1:].view(rows, n)


def seeded(*shape, dtype=torch.float32, grad=True, seed=0):
    """A reproducible test tensor on the kernels' device, away from zero (+0.3), needing a gradient or not."""
    g = torch.Generator().manual_seed(seed + sum(shape))
    return (torch.randn(shape, generator=g) + 0.3).to(DEVICE, dtype).requires_grad_(grad)


def assert_refused_as_pytorch_refuses(ours, theirs, args, words):
    """PyTorch refuses args (its error types vary by check); ours raises a ContractError naming the problem."""
    with pytest.raises(Exception):  # noqa: B017
        theirs(*args)
    with pytest.raises(ContractError, match=re.escape(words)):
        ours(*args)


def assert_compiled_matches_eager(model, x):
    """torch.compile(fullgraph=True) of model: no graph break, and the outputs and parameter gradients of eager.

    Inductor fuses the layers around the norms: their rounding differs (1e-4), the norms' does not."""
    torch._dynamo.reset()
    explained = torch._dynamo.explain(model)(x)
    assert explained.graph_break_count == 0, explained.break_reasons
    results = []
    for run in (torch.compile(model, fullgraph=True), model):
        y = run(x)
        results.append((y, torch.autograd.grad(y.square().sum(), list(model.parameters()))))
    (y_c, g_c), (y_e, g_e) = results
    torch.testing.assert_close(y_c, y_e, atol=1e-4, rtol=1e-4)
    for a, b in zip(g_c, g_e):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def assert_graph_replays(call, oracle, x):
    """call() captured in a CUDA graph after one warm-up call, replayed on new values of x, equals
    oracle() (an oracle's value on the new x: it reads x when called)."""
    call()  # compile before capturing
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        y = call()
    x.copy_(torch.randn_like(x))
    graph.replay()
    assert_close("replayed output", y, oracle(), y.dtype)


# Each design of the fast kernels' two passes, whatever the tuned tables pick, as functions of N:
# the whole row in registers ("row"), the walk along the row in column chunks ("chunked", with rows
# that end inside a chunk, one row, and several rows per step), and the pipelined backward
# ("staged": one tile, two tiles, two programs a row, the weight gradients before the row sums).
def _staged(rows, split, tiles, early=False):
    return lambda n: staged_config(n, rows, 4, 2, split, 3, tiles, early)


def _classes(rows, prefetch, v=8):
    """The backward by residue classes (normkit.aligned.classes_config) with V = v in every
    dtype: any V is exact, and 8 puts the tests' rows at every offset into their windows; 4
    programs an interpreted SM: two blocks of rows a class."""
    def config(n):
        lanes = aligned.class_lanes(n, v)
        return ("classes", lanes, rows, 4, 4, prefetch, v, aligned.class_edges(n, lanes, v),
                ("row", 1024, 2, 4, 2, True))
    return config


def _classes_chunked(chunk, rows, warps, g=8):
    """The chunked backward by residue class (normkit.classes_chunked) with G = K = g in every
    dtype (any G for which K rows span whole groups is exact, and 8 puts the tests' rows at
    every offset into their windows), 4 programs an interpreted SM. With one warp the lanes past
    the last whole chunk of 1000 columns are too many for the edges: one more, partial, chunk."""
    return lambda n: ("classes_chunked", chunk, rows, warps, 4, g, g, ("row", 1024, 2, 4, 2, True))


FAST_DESIGNS = {
    "row": (lambda n: ("row", 1024, 2, 4), lambda n: ("row", 1024, 2, 4, 2, True)),
    "chunked": (lambda n: ("chunked", 256, 2, 4), lambda n: ("chunked", 256, 2, 4, 1)),
    "chunked-1-row": (lambda n: ("chunked", 128, 1, 2), lambda n: ("chunked", 512, 1, 4, 2)),
    # the forward as "row" (the chunked forward's Welford merge is slow under the interpreter)
    "staged": (lambda n: ("row", 1024, 2, 4), _staged(2, 1, 1)),
    "staged-tiles": (lambda n: ("row", 1024, 2, 4), _staged(1, 1, 2)),
    "staged-split": (lambda n: ("row", 1024, 2, 4), _staged(2, 2, 2)),
    "staged-early": (lambda n: ("row", 1024, 2, 4), _staged(1, 2, 2, early=True)),
    "classes": (lambda n: ("row", 1024, 2, 4), _classes(1, True)),
    "classes-rows": (lambda n: ("row", 1024, 2, 4), _classes(2, False)),
    "classes-chunked": (lambda n: ("row", 1024, 2, 4), _classes_chunked(64, 2, 4)),
    "classes-chunked-1-row": (lambda n: ("row", 1024, 2, 4), _classes_chunked(128, 1, 1)),
    # the exchange of row sums (normkit.exchange): the interpreter runs programs one at a
    # time, so S programs of a row would never meet there: one program a row
    "exchange": (lambda n: ("row", 1024, 2, 4), lambda n: ("exchange", 1 if INTERPRETED else 4, 1, 4, 1)),
}
# RMSNorm's forward from aligned windows (normkit.aligned: its 2048 lanes hold the tests' rows and
# their offsets)
ALIGNED_DESIGN = (lambda n: ("aligned", 2048, 2, 4, ("row", 1024, 2, 4)), lambda n: ("row", 1024, 2, 4, 2, True))
# the length of a forward ladder's entry (FastNorm.FORWARD) and a launch table's backward entry, per design
TABLE_ENTRY_SIZES = {"forward": {"row": 3, "chunked": 4},
                     "backward": {"row": 5, "staged": 8, "chunked": 5}}


def key_paths(value, at="", data_keys=()):
    """Every key path of a data set ("results.sweep.layernorm[].N"), the items of a list as one; a
    dict under a key in data_keys is keyed by data (a name, a width), not by layout: not descended."""
    if isinstance(value, list):
        return set().union(*(key_paths(v, at + "[]", data_keys) for v in value))
    if not isinstance(value, dict) or at.rsplit(".", 1)[-1] in data_keys:
        return set()
    return set().union(*({f"{at}.{k}"} | key_paths(v, f"{at}.{k}", data_keys) for k, v in value.items()))

