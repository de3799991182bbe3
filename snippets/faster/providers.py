"""What the side-by-side benchmark times: each provider's function of one LayerNorm or RMSNorm call
(the chapter's teaching kernel, the fast kernel, torch eager and under torch.compile, Liger-Kernel
and QuACK where installed), its inputs, and the timing tasks of one call: GPU time (forward alone
and forward+backward, normkit.bench's CUDA-graph replay) and host cost. Shared by the benchmark
(faster.benchmark), the looks inside one call (faster.probes) and the tuner (faster.tune).
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import torch
import torch.nn.functional as F

from normkit import bench


OPS = ("layernorm", "rmsnorm")


PROVIDERS = ("teaching", "fast", "torch", "compile", "liger", "quack")


# the providers that are packages of their own: a run without one leaves it out (and says so)
PACKAGES = {"liger": "liger-kernel", "quack": "quack-kernels"}


DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


LN_EPS, RMS_EPS = 1e-5, 1e-6


def _provider_fn(op, name):
    """A function (x, w, b) -> y for one provider, or raise ImportError when it is missing."""
    if op == "layernorm":
        if name == "teaching":
            from layernorm import layer_norm
            return lambda x, w, b: layer_norm(x, (x.shape[-1],), w, b, LN_EPS)
        if name == "fast":
            from layernorm.fast import layer_norm_fast
            return lambda x, w, b: layer_norm_fast(x, (x.shape[-1],), w, b, LN_EPS)
        if name in ("torch", "compile"):
            fn = lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, LN_EPS)  # noqa: E731
            return torch.compile(fn, dynamic=False) if name == "compile" else fn
        if name == "liger":
            from liger_kernel.ops.layer_norm import LigerLayerNormFunction
            return lambda x, w, b: LigerLayerNormFunction.apply(x, w, b, LN_EPS)
        if name == "quack":
            return _quack_layer_norm()
    else:
        if name == "teaching":
            from rmsnorm import rms_norm
            return lambda x, w, b: rms_norm(x, w, RMS_EPS)
        if name == "fast":
            from rmsnorm.fast import rms_norm_fast
            return lambda x, w, b: rms_norm_fast(x, (x.shape[-1],), w, RMS_EPS)
        if name in ("torch", "compile"):
            fn = lambda x, w, b: F.rms_norm(x, (x.shape[-1],), w, RMS_EPS)  # noqa: E731
            return torch.compile(fn, dynamic=False) if name == "compile" else fn
        if name == "liger":
            from liger_kernel.ops.rms_norm import LigerRMSNormFunction
            # Liger's defaults: Llama casting, dx written in place of dy
            return lambda x, w, b: LigerRMSNormFunction.apply(x, w, RMS_EPS)
        if name == "quack":  # Tri Dao's CuTe-DSL kernels, with their own autograd Function
            from quack.rmsnorm import rmsnorm
            return lambda x, w, b: rmsnorm(x, w, eps=RMS_EPS)
    raise ValueError(f"unknown op/provider {op}/{name}")


def _quack_layer_norm():
    """QuACK's LayerNorm passes behind autograd. quack-kernels exports the forward and the backward
    kernel calls but no autograd Function for LayerNorm (it has one for RMSNorm), so this is the
    smallest one; its kernels take fp32 weight and bias, converted on every call (two small kernels)."""
    from quack.rmsnorm import layernorm_bwd, layernorm_fwd

    class QuackLayerNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b):
            y, rstd, mean = layernorm_fwd(x, w.float(), b.float(), LN_EPS, return_rstd=True, return_mean=True)
            ctx.save_for_backward(x, w, rstd, mean)
            return y

        @staticmethod
        def backward(ctx, dy):
            x, w, rstd, mean = ctx.saved_tensors
            dx, dw, db = layernorm_bwd(x, w.float(), dy.contiguous(), rstd, mean, has_bias=True)
            return dx, dw.to(w.dtype), db.to(w.dtype)

    return QuackLayerNorm.apply


def package_versions():
    """{provider: its package's installed version, or None}: which run had which provider."""
    from importlib import metadata

    def version(dist):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None
    return {name: version(dist) for name, dist in PACKAGES.items()}


def _inputs(op, M, N, dtype, grad):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(M, N, device="cuda", dtype=dtype, generator=g)
    w = torch.rand(N, device="cuda", dtype=dtype, generator=g) + 0.5
    b = torch.randn(N, device="cuda", dtype=dtype, generator=g)
    dy = torch.randn(M, N, device="cuda", dtype=dtype, generator=g)
    params = [x, w, b] if op == "layernorm" else [x, w]
    for t in params:
        t.requires_grad_(grad)
    return x, w, b, dy, params


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def make_step(op, fn, M, N, dtype, key):
    """Builds fresh inputs; returns one call: the forward alone (no graph recorded), or the forward
    and the gradients of every input (a fresh graph each call)."""
    def make():
        x, w, b, dy, params = _inputs(op, M, N, dtype, grad=key == "fwd_bwd")
        if key == "fwd":
            return lambda: fn(x, w, b)
        return lambda: torch.autograd.grad(fn(x, w, b), params, dy)
    return make


PASSES = ("fwd", "fwd_bwd")


def bytes_moved(key, M, N, dtype):
    return {"fwd": 2, "fwd_bwd": 5}[key] * M * N * dtype.itemsize


def figure_keys(op, name, M, N, dtype, kind):
    """The keys of one provider's figures at one shape, both passes: (op, name, M, N, dtype name,
    pass, "gpu" or "host")."""
    return [(op, name, M, N, _dtype_name(dtype), key, kind) for key in PASSES]


def gpu_tasks(op, name, M, N, dtype, protocol):
    """{(op, name, M, N, dtype, key, "gpu"): one repetition} for both passes of one provider and shape.

    A provider that is missing or refuses the input raises from its first repetition, which
    bench.measure_all records as the figure's error."""
    tasks = {}
    fn_holder = {}

    def fn():
        if "fn" not in fn_holder:  # built once per provider and shape: torch.compile compiles per shape
            if name == "compile":
                torch._dynamo.reset()
            fn_holder["fn"] = _provider_fn(op, name)
        return fn_holder["fn"]

    for figure_key in figure_keys(op, name, M, N, dtype, "gpu"):
        key = figure_key[5]
        copies = bench.rotating_copies(bytes_moved(key, M, N, dtype), protocol)

        def one(key=key, copies=copies):
            return bench.gpu_us(make_step(op, fn(), M, N, dtype, key), copies, protocol)
        tasks[figure_key] = one
    return tasks


def host_tasks(op, name, M, N, dtype, protocol):
    tasks = {}
    for figure_key in figure_keys(op, name, M, N, dtype, "host"):
        def one(key=figure_key[5]):
            return bench.host_us(make_step(op, _provider_fn(op, name), M, N, dtype, key), protocol)
        tasks[figure_key] = one
    return tasks


def _fast_module(op):
    if op == "layernorm":
        from layernorm import fast
    else:
        from rmsnorm import fast
    return fast
