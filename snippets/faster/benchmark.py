"""Side-by-side speed of every LayerNorm / RMSNorm provider, measured in one run on any CUDA GPU.

    python -m faster                      # the target shapes, both ops, bf16, GPU time
    python -m faster.tune --out DIR       # the tuning run: every N, every launch configuration
    python -m faster --all out/           # everything the "Going faster" pages show, rendered
    python -m faster --all out/ --quick   # the same pipeline on tiny shapes, in seconds

Providers: the chapter's teaching kernel (when it imports and accepts the input), the fast
kernel, torch eager, torch.compile (compiled per shape) and Liger-Kernel (when installed).
Each is timed forward alone and forward+backward (torch.autograd.grad on a fresh graph
every call, so torch.compile's donated buffers are never reused), with normkit.bench's one
protocol: GPU time from CUDA-graph replay, host cost as the fastest of many synchronized calls,
every figure from three repetitions in separate passes. Bytes counted: forward 2*M*N*elt (read x,
write y); forward+backward 5*M*N*elt (and the backward reads x and dy and writes dx); the report
turns them into a percentage of the copy bandwidth measured in the same run.
Every function returns JSON-serializable dicts.
"""

import argparse
import dataclasses
import json
import time

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import torch
import torch.nn.functional as F

from normkit import bench

OPS = ("layernorm", "rmsnorm")
PROVIDERS = ("teaching", "fast", "torch", "compile", "liger", "quack")
# the providers that are packages of their own: a run without one leaves it out (and says so)
PACKAGES = {"liger": "liger-kernel", "quack": "quack-kernels"}
TARGET_SHAPES = ((32768, 4096), (32768, 8192))
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


# The backward's designs side by side (Going faster: what made the difference): at each width, the
# fastest configuration of each design in the tuning run behind the launch table, timed in this run
DESIGN_N = (2304, 4352, 8192, 9216, 16384)
# fp32 rows are twice the bytes of bf16 rows: at this width a pipeline of three stages (two rows of
# x and dy staged) no longer fits in an SM's shared memory, one of two stages (one row) does (Going
# faster: the shared memory of a staged program)
DESIGN_N_FP32 = (16384,)


def designs_at(op, n, dtype):
    """{design: its launch table entry} of the designs the launch table of the dtype's size has at n."""
    return _fast_module(op).tuned_table(dtype.itemsize)["backward_designs"].get(n, {})


def design_tasks(op, n, dtype, protocol, total):
    """{(op, design, n, dtype): one repetition of the backward's GPU time} for each design in the
    launch table of the dtype's size."""
    fast = _fast_module(op)
    M = sweep_m(n, total, dtype)
    tasks = {}
    for design, entry in designs_at(op, n, dtype).items():
        def make(config=fast.backward_entry_config(entry, n)):
            x, w, b, dy, _ = _inputs(op, M, n, dtype, grad=False)
            if op == "layernorm":
                stats = fast.forward_rows(x, w, b, LN_EPS)[1]
                return lambda: fast.backward_rows(dy, x, w, stats, config=config)
            rstd = fast.forward_rows(x, w, RMS_EPS)[1]
            return lambda: fast.backward_rows(dy, x, w, rstd, config=config)
        copies = bench.rotating_copies(3 * M * n * dtype.itemsize, protocol)
        tasks[(op, design, n, dtype)] = lambda make=make, copies=copies: bench.gpu_us(make, copies, protocol)
    return tasks


# Host cost where a model calls the norm with few rows (decoding, small batches): issue 20's grid and
# targets, the fast call's host cost over eager PyTorch's (F.layer_norm / F.rms_norm) at each shape
HOST_M = (1, 8, 64, 512)
HOST_N = (2048, 4096, 8192)
HOST_TARGETS = {"fwd": 1.2, "fwd_bwd": 1.5}
STEPS_SHAPE = (8, 4096)  # the shape whose call is taken apart step by step (host_step_tasks)
HOST_STEPS = ("synchronize", "checks", "views", "allocate", "launch", "forward_rows", "call", "torch_call",
              "autograd_forward", "backward_rows", "autograd_identity", "call_fwd_bwd", "torch_fwd_bwd")


class _Identity(torch.autograd.Function):
    """The autograd machinery alone: a Python forward and backward that launch nothing."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, dy):
        return dy


def _fast_calls(op, M, N, dtype):
    """{step: callable} for each step of one fast call, on bf16 inputs of (M, N)."""
    from normkit import dropin
    fast = _fast_module(op)
    x, w, b, dy, params = _inputs(op, M, N, dtype, grad=True)
    xd, wd, bd = (t.detach() for t in (x, w, b))
    elt = xd.element_size()
    config = fast.forward_config(N, elt)
    kind, _, rows, num_warps = config[:4]
    meta = {"N": N, "STRIDE": N, **fast.forward_blocks(config, N), "ROWS": rows,
            "HAS_W": True, "num_warps": num_warps}
    launcher = fast.fwd_row if kind == "row" else fast.fwd_chunked
    y = torch.empty_like(xd)
    fn, torch_fn = _provider_fn(op, "fast"), _provider_fn(op, "torch")
    if op == "layernorm":
        saved = torch.empty((2, M), device="cuda")
        checks = lambda: fast.check_inputs(xd, (N,), wd, bd, LN_EPS)  # noqa: E731
        allocate = lambda: (xd.new_empty((M, N)), torch.empty((2, M), device="cuda"))  # noqa: E731
        launch = lambda: launcher[(-(-M // rows),)](xd, y, wd, bd, saved, M, LN_EPS, HAS_B=True, **meta)  # noqa: E731
        forward_rows = lambda: fast.forward_rows(xd, wd, bd, LN_EPS)  # noqa: E731
        saved = forward_rows()[1]
        backward_rows = lambda: fast.backward_rows(dy, xd, wd, saved)  # noqa: E731
    else:
        saved = torch.empty(M, device="cuda")
        checks = lambda: fast.check_inputs(xd, (N,), wd, RMS_EPS)  # noqa: E731
        allocate = lambda: (xd.new_empty((M, N)), torch.empty(M, device="cuda"))  # noqa: E731
        launch = lambda: launcher[(-(-M // rows),)](xd, y, wd, saved, M, RMS_EPS, **meta)  # noqa: E731
        forward_rows = lambda: fast.forward_rows(xd, wd, RMS_EPS)  # noqa: E731
        saved = forward_rows()[1]
        backward_rows = lambda: fast.backward_rows(dy, xd, wd, saved)  # noqa: E731
    xi = torch.randn(M, N, device="cuda", requires_grad=True)
    return {
        "synchronize": lambda: None,  # every figure includes one synchronization: this is it alone
        "checks": checks,
        "views": lambda: (dropin.rows_view(xd, 1), dropin.flat(wd), dropin.path(xd, wd)),
        "allocate": allocate,
        "launch": launch,
        "forward_rows": forward_rows,
        "call": lambda: fn(xd, wd, bd),
        "torch_call": lambda: torch_fn(xd, wd, bd),
        "autograd_forward": lambda: fn(x, w, b),
        "backward_rows": backward_rows,
        "autograd_identity": lambda: torch.autograd.grad(_Identity.apply(xi), xi, xi),
        "call_fwd_bwd": lambda: torch.autograd.grad(fn(x, w, b), params, dy),
        "torch_fwd_bwd": lambda: torch.autograd.grad(torch_fn(x, w, b), params, dy),
    }


def host_step_tasks(op, protocol, shape=STEPS_SHAPE, dtype=torch.bfloat16):
    """{(op, step): one repetition} of the host cost of each step of one fast call (bench.host_us)."""
    holder = {}

    def calls():
        if "calls" not in holder:
            holder["calls"] = _fast_calls(op, *shape, dtype)
        return holder["calls"]

    return {(op, step): (lambda step=step: bench.host_us(lambda: calls()[step], protocol)) for step in HOST_STEPS}


def all_host_step_tasks(protocol):
    return {k: v for op in OPS for k, v in host_step_tasks(op, protocol).items()}


# A Llama-style training step (forward, loss, gradients of every parameter) with Hugging Face's
# LlamaRMSNorm (eager), the fast kernels swapped in (faster.models.use_fast_norms) and Liger-Kernel's
# RMSNorm swapped in the same way. Random weights, the same for all three; bf16.
LLAMA_SHAPES = ((2048, 5632), (4096, 11008))  # hidden size, MLP size
LLAMA = {"layers": 2, "batch": 2, "seq": 2048, "vocab": 32000, "head_dim": 128}
MODEL_PROVIDERS = ("torch", "fast", "liger")
# a step takes milliseconds: fewer replays per repetition than the kernels' protocol
MODEL_PROTOCOL = bench.Protocol(warmup_calls=3, samples=5, calls_per_sample=2, repeats=3, max_copies=1)


def llama_model(hidden, intermediate, provider, llama=LLAMA):
    """A bf16 LlamaForCausalLM on the GPU with the provider's RMSNorm; ImportError without the package."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from faster import models
    heads = hidden // llama["head_dim"]
    config = LlamaConfig(hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=llama["layers"],
                         num_attention_heads=heads, num_key_value_heads=heads, vocab_size=llama["vocab"],
                         max_position_embeddings=llama["seq"], attn_implementation="sdpa")
    torch.manual_seed(0)  # the same weights for every provider
    with torch.device("cuda"):
        model = LlamaForCausalLM(config).to(torch.bfloat16)
    if provider == "fast":
        models.use_fast_norms(model)
    elif provider == "liger":
        from liger_kernel.transformers.rms_norm import LigerRMSNorm
        code = models.llama_norm_code()
        models.replace_modules(model, lambda m: models.rms_norm_like(m, LigerRMSNorm)
                               if models.is_llama_rms_norm(m, code) else None)
    return model


def llama_step(model, ids):
    """One training step's computation: the loss and the gradient of every parameter."""
    params = [p for p in model.parameters() if p.requires_grad]
    loss = model(input_ids=ids, labels=ids).loss
    return loss, torch.autograd.grad(loss, params)


def llama_tasks(protocol, shapes=LLAMA_SHAPES, llama=LLAMA):
    """{(provider, hidden): one repetition of the step's GPU time, µs}, and an agreement function that
    returns each provider's loss and its gradients' largest relative difference from eager's."""
    models_by = {}

    def model(provider, hidden, intermediate):
        if (provider, hidden) not in models_by:
            models_by[(provider, hidden)] = llama_model(hidden, intermediate, provider, llama)
        return models_by[(provider, hidden)]

    g = torch.Generator(device="cuda").manual_seed(1)
    ids = torch.randint(0, llama["vocab"], (llama["batch"], llama["seq"]), device="cuda", generator=g)
    intermediate_of = dict(shapes)
    tasks = {}
    for provider, hidden in llama_keys(shapes):
        def one(provider=provider, hidden=hidden):
            m = model(provider, hidden, intermediate_of[hidden])
            return bench.gpu_us(lambda: (lambda: llama_step(m, ids)), 1, protocol)
        tasks[(provider, hidden)] = one

    def agreement():
        out = []
        for hidden, intermediate in shapes:
            ref_loss, ref_grads = llama_step(model("torch", hidden, intermediate), ids)
            for provider in MODEL_PROVIDERS:
                try:
                    loss, grads = llama_step(model(provider, hidden, intermediate), ids)
                except Exception as e:  # noqa: BLE001 - a missing package: recorded, shown as missing
                    out.append({"provider": provider, "hidden": hidden, "error": bench.error_text(e)})
                    continue
                rel = max(((a.float() - r.float()).norm() / r.float().norm().clamp_min(1e-30)).item()
                          for a, r in zip(grads, ref_grads))
                out.append(agreement_record(provider, hidden, loss.item(), ref_loss.item(), rel))
        models_by.clear()
        return out
    return tasks, agreement


def llama_keys(shapes):
    """(provider, hidden) of every Llama step timed: each provider at each shape."""
    return [(provider, hidden) for hidden, _ in shapes for provider in MODEL_PROVIDERS]


def agreement_record(provider, hidden, loss, eager_loss, max_grad_rel_diff):
    """One provider's Llama step against eager's: its loss and its gradients' largest relative difference."""
    return {"provider": provider, "hidden": hidden, "loss": loss, "eager_loss": eager_loss,
            "max_grad_rel_diff": max_grad_rel_diff}


def rows_from(figures, kinds=("gpu",)):
    """One row per (op, provider, shape): {"fwd_gpu_us": figure, "fwd_bwd_gpu_us": figure, ...} or an error."""
    rows = {}
    for (op, name, M, N, dtype, key, kind), fig in figures.items():
        row = rows.setdefault((op, name, M, N, dtype),
                              {"op": op, "provider": name, "M": M, "N": N, "dtype": dtype})
        if "error" in fig:
            row["error"] = fig["error"]
        else:
            row[f"{key}_{kind}_us"] = fig
    return [row for row in rows.values() if "error" in row or all(
        f"{key}_{kind}_us" in row for key in PASSES for kind in kinds)]


DW_PROVIDERS = ("teaching", "fast", "torch", "liger")


def dw_error(M=32768, N=4096, dtype=torch.bfloat16, providers=DW_PROVIDERS):
    """dW error against PyTorch's fp32 computation, for each LayerNorm design, at many rows.

    Includes an emulation of the official Triton tutorial's lock buffer, whose partial
    sums are kept in the input dtype (GROUP_SIZE_M rows, each summing M / GROUP_SIZE_M
    rounded contributions), to show the error that fp32 accumulation removes.
    """
    x, w, b, dy, params = _inputs("layernorm", M, N, dtype, grad=True)
    xr, wr, br = (t.detach().float().requires_grad_() for t in (x, w, b))
    yr = F.layer_norm(xr, (N,), wr, br, LN_EPS)
    _, dw_ref, _ = torch.autograd.grad(yr, (xr, wr, br), dy.float())

    def err(dw):
        d = (dw.float() - dw_ref).abs()
        return {"max_abs": d.max().item(), "rel_norm": (d.norm() / dw_ref.norm()).item(),
                "max_abs_ref": dw_ref.abs().max().item()}

    errors = {}
    for name in providers:
        try:
            fn = _provider_fn("layernorm", name)
            errors[name] = err(torch.autograd.grad(fn(x, w, b), params, dy)[1])
        except Exception as e:
            errors[name] = {"error": f"{type(e).__name__}: {str(e)[:160]}"}

    # the tutorial's design: partial rows in the input dtype, one per group of rows
    group = 64 if N > 4096 else (96 if N > 1024 else 128)
    with torch.no_grad():
        xf = xr.detach()
        mean = xf.mean(1, keepdim=True)
        rstd = torch.rsqrt(xf.var(1, unbiased=False, keepdim=True) + LN_EPS)
        contrib = (dy.float() * (xf - mean) * rstd).to(dtype)   # the kernel rounds its row first
        part = torch.zeros(group, N, device="cuda", dtype=dtype)
        for start in range(0, M, group):                          # rows start..start+group-1 hit groups 0..
            chunk = contrib[start:start + group]
            part[: chunk.shape[0]] = (part[: chunk.shape[0]].float() + chunk.float()).to(dtype)
        lock = err(part.float().sum(0).to(dtype))
    return dw_record(M, N, dtype, errors, lock, group)


def dw_record(M, N, dtype, errors, lock, group):
    """dw_error's figures: {provider: its error, or why it has none} and the lock buffer's, with its group size.
    Each error: {"max_abs", "rel_norm", "max_abs_ref"} (the largest |dW| of the reference)."""
    return {"M": M, "N": N, "dtype": _dtype_name(dtype), **errors,
            "lock_buffer_in_input_dtype": {**lock, "group_size": group}}



def warm_step(op, provider, M, N, dtype, warmup_calls):
    """A plain forward+backward step of a provider, called warmup_calls times (compiled, cached)."""
    step = make_step(op, _provider_fn(op, provider), M, N, dtype, "fwd_bwd")()
    for _ in range(warmup_calls):
        step()
    torch.cuda.synchronize()
    return step


def profiled_events(step, calls, mark=None):
    """The host and device events of `calls` calls of step under the profiler; with a mark, each
    call is a record_function span of that name and ends with a synchronization."""
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(calls):
            if mark is None:
                step()
            else:
                with torch.profiler.record_function(mark):
                    step()
                    torch.cuda.synchronize()
        torch.cuda.synchronize()
    return prof.events()


def profile_once(op, M, N, dtype=torch.bfloat16, provider="fast", calls=10, warmup_calls=bench.PROTOCOL.warmup_calls):
    """One repetition of where a forward+backward call's time goes: host time per call (no
    synchronization inside the loop) and the GPU kernels with their device time per call."""
    from torch.autograd import DeviceType

    step = warm_step(op, provider, M, N, dtype, warmup_calls)
    start = time.perf_counter()
    for _ in range(calls):
        step()
    host = (time.perf_counter() - start) / calls
    torch.cuda.synchronize()
    events = profiled_events(step, calls)
    # device-side events only (kernels, memsets, copies): CPU ops also carry a device time,
    # the sum of their children's, which would count every kernel twice
    per_kernel = {}
    for e in events:
        if getattr(e, "device_type", None) != DeviceType.CUDA:
            continue
        entry = per_kernel.setdefault(e.name[:60], [0.0, 0])
        entry[0] += e.time_range.elapsed_us()
        entry[1] += 1
    del step
    torch.cuda.empty_cache()
    return {"host_us": 1e6 * host, "kernels": {k: (us / calls, n / calls) for k, (us, n) in per_kernel.items()}}


def profile(op, M, N, dtype=torch.bfloat16, provider="fast", protocol=bench.PROTOCOL):
    """The profile's figures from protocol.repeats repetitions: host µs per call, kernel µs per call
    (the profiler's device time, summed over the call's kernels) and each kernel's share."""
    runs = [profile_once(op, M, N, dtype, provider, warmup_calls=protocol.warmup_calls)
            for _ in range(protocol.repeats)]
    return profile_record(op, M, N, dtype, provider, runs)


def profile_record(op, M, N, dtype, provider, runs):
    """The profile's figures from its repetitions (profile_once's), the eight slowest kernels by name."""
    names = sorted({k for r in runs for k in r["kernels"]}, key=lambda k: -runs[-1]["kernels"].get(k, (0, 0))[0])
    kernels = [{"kernel": k, "us_per_call": bench.figure([r["kernels"].get(k, (0.0, 0))[0] for r in runs]),
                "count_per_call": runs[-1]["kernels"].get(k, (0.0, 0))[1]} for k in names[:8]]
    return {"op": op, "provider": provider, "M": M, "N": N, "dtype": _dtype_name(dtype),
            "host_us_per_call": bench.figure([r["host_us"] for r in runs]),
            "gpu_us_per_call": bench.figure([sum(us for us, _ in r["kernels"].values()) for r in runs]),
            "launches_per_call": sum(n for _, n in runs[-1]["kernels"].values()), "kernels": kernels}



# A profiler trace of plain forward+backward calls (the host's share, Going faster): each call is
# marked, and what the host does inside it is kept to TRACE_DEPTH levels below the mark, or below a
# thread's own outermost span (autograd runs a CUDA backward on a thread of its own)
TRACE_MARK = "normkernels::call"
TRACE_CALLS = 50  # profiled calls per repetition; the fastest one is kept
TRACE_DEPTH = 2  # the backward's launches sit two levels below autograd's outermost span


def _depth(event, mark):
    """Levels between a host event and the call's mark (or its thread's outermost span)."""
    depth, parent = 0, event.cpu_parent
    while parent is not None and parent is not mark:
        depth, parent = depth + 1, parent.cpu_parent
    return depth


def _uncovered(length, intervals):
    """How much of [0, length] no interval covers."""
    covered, reach = 0.0, 0.0
    for a, b in sorted(intervals):
        a, b = max(a, reach), min(b, length)
        if b > a:
            covered, reach = covered + b - a, b
    return length - covered


def call_spans(events, mark_name=TRACE_MARK, max_depth=TRACE_DEPTH):
    """[{"call_us", "outside_us", "launch_us", "launches", "spans"}] for each marked call of a
    profile's events. A span is a host event that starts inside the call, {"name", "thread" (0: the
    caller's, 1: another), "depth", "start_us", "us", "count"}, in order of start; adjacent spans of
    one name at one level are merged (count). outside_us: the time in no outermost span of any
    thread (Python between them); launch_us: the kernel launches' spans, at any depth."""
    from torch.autograd import DeviceType

    host = sorted((e for e in events if e.device_type == DeviceType.CPU), key=lambda e: e.time_range.start)
    # the marked calls follow one another: one pass over the events, each to the call it starts in
    marks = [e for e in host if e.name == mark_name]
    calls = [{"mark": m, "spans": [], "outer": [], "launches": []} for m in marks]
    i = 0
    for e in host:
        if e.name == mark_name:
            continue
        while i < len(marks) and e.time_range.start >= marks[i].time_range.end:
            i += 1
        if i == len(marks):
            break
        mark, call = marks[i], calls[i]
        start = mark.time_range.start
        if e.time_range.start < start:
            continue
        if "LaunchKernel" in e.name:  # cudaLaunchKernel, cuLaunchKernel(Ex)
            call["launches"].append(e.time_range.elapsed_us())
        depth = _depth(e, mark)
        if depth == 0:
            call["outer"].append((e.time_range.start - start, e.time_range.end - start))
        if depth > max_depth:
            continue
        thread = 0 if e.thread == mark.thread else 1
        spans = call["spans"]
        last = spans[-1] if spans else None
        if last and (last["name"], last["thread"], last["depth"]) == (e.name, thread, depth):
            last["us"] += e.time_range.elapsed_us()
            last["count"] += 1
            continue
        spans.append({"name": e.name, "thread": thread, "depth": depth, "start_us": e.time_range.start - start,
                      "us": e.time_range.elapsed_us(), "count": 1})
    out = []
    for call in calls:
        length = call["mark"].time_range.elapsed_us()
        out.append({"call_us": length, "outside_us": _uncovered(length, call["outer"]),
                    "launch_us": sum(call["launches"]), "launches": len(call["launches"]), "spans": call["spans"]})
    return out


def host_trace_once(op, shape=STEPS_SHAPE, dtype=torch.bfloat16, provider="fast", calls=TRACE_CALLS,
                    warmup_calls=bench.PROTOCOL.warmup_calls):
    """One repetition: the fastest of `calls` profiled plain forward+backward calls, each with its
    synchronization, as call_spans gives it."""
    step = warm_step(op, provider, *shape, dtype, warmup_calls)
    return min(call_spans(profiled_events(step, calls, TRACE_MARK)), key=lambda c: c["call_us"])


def host_trace(op, protocol=bench.PROTOCOL, shape=STEPS_SHAPE, dtype=torch.bfloat16, provider="fast"):
    """The trace's figures over protocol.repeats repetitions: the call, its time outside every span
    (Python between them), its kernel launches, and each span of the median repetition's call, its start and
    length a figure over the repetitions that have it (matched by name, thread, level, occurrence)."""
    runs = [host_trace_once(op, shape, dtype, provider, warmup_calls=protocol.warmup_calls)
            for _ in range(protocol.repeats)]
    return trace_record(op, shape, dtype, provider, runs)


def trace_record(op, shape, dtype, provider, runs):
    """The trace's figures from its repetitions (host_trace_once's: call_spans of one call each)."""
    def keyed(run):
        seen, out = {}, {}
        for s in run["spans"]:
            key = (s["name"], s["thread"], s["depth"])
            seen[key] = seen.get(key, -1) + 1
            out[(*key, seen[key])] = s
        return out

    median_run = sorted(runs, key=lambda r: r["call_us"])[len(runs) // 2]
    per_run = [keyed(r) for r in runs]
    spans = []
    for key, s in keyed(median_run).items():
        found = [k[key] for k in per_run if key in k]
        spans.append({"name": s["name"], "thread": s["thread"], "depth": s["depth"], "count": s["count"],
                      "repeats": len(found), "start_us": bench.figure([f["start_us"] for f in found]),
                      "us": bench.figure([f["us"] for f in found])})
    return {"op": op, "provider": provider, "M": shape[0], "N": shape[1], "dtype": _dtype_name(dtype),
            "calls": TRACE_CALLS, "launches": median_run["launches"], "spans": spans,
            **{k: bench.figure([r[k] for r in runs]) for k in ("call_us", "outside_us", "launch_us")}}


# The "faster" data set of the GPU build (scripts/gpu_build.py): everything the "Going faster"
# pages show, measured in one process with normkit.bench.PROTOCOL, after warm() has compiled its
# kernels in parallel processes (each stage's seconds on an H200: notes/gpu-build.md).
TARGETS_PCT = {"fwd": 92.0, "fwd_bwd": 85.0}  # the targets, % of the copy bandwidth
# issue 13's targets over the sweep, GPU-bound: forward, and forward+backward up to / past N = 8192
SWEEP_TARGETS_PCT = {"fwd": 90.0, "fwd_bwd": 85.0, "fwd_bwd_wide": 75.0, "wide_above": 8192}
SWEEP_TOTAL = 2**27  # elements per tensor at every N of the sweep: M = SWEEP_TOTAL / N rows
# the build's sweep, a dozen widths: the powers of two and widths between them, where a row padded to
# the next power of two costs most (the tuning run, python -m faster.tune, covers every multiple of 256)
BUILD_SWEEP_N = (1024, 1536, 2048, 2560, 3072, 4096, 5120, 6144, 8192, 10240, 12288, 16384)
# widths between the tables' entries (any N takes the entry of the next multiple of 256): below
# 4096 and 8192's next entries, rows that start 2, 4, 8 bytes off 16 (N odd, 2 and 4 mod 8), on 16
# bytes but not 128 (N = 8 mod 64: at 8200 and 16136, where two programs share a row, its second
# half would start 8 bytes off 16 at N / 2), a multiple of 64, and the entries on either side
BETWEEN_N = (4096, 4097, 4098, 4100, 4104, 4160, 4352, 8192, 8193, 8194, 8196, 8200, 8256, 8448,
             16128, 16136, 16384)
OTHER_DTYPE_POINTS = ((4096, "fp16"), (4096, "fp32"), (12288, "fp16"))  # fp32 at half the rows
COMPILE_SWEEP_N = (2048, 12288)  # torch.compile compiles each shape: a few N only (4096: the targets' rows)
SMALL = (128, 257, torch.float32)  # the launch-bound shape: GPU time against host cost


def fast_launch(op, M, N, sms, dtype=torch.bfloat16):
    """The launch configuration the fast kernels pick for one shape on a GPU of `sms` SMs, and the
    backward's grid."""
    fast = _fast_module(op)
    elt = torch.empty((), dtype=dtype).element_size()
    fwd = fast.forward_config(N, elt)
    bwd = fast.backward_config(N, elt)
    staged = bwd[0] == "staged"
    split = bwd[5] if staged else 1  # programs that share a row
    # as backward_rows computes it: groups of `split` programs, one partial row each
    groups, rows_per_program = fast.backward_grid(M, bwd[2], max(1, sms * bwd[4] // split))
    return {"op": op, "M": M, "N": N, "fwd_design": fwd[0], "fwd_block": fwd[1], "fwd_rows": fwd[2],
            "fwd_warps": fwd[3], "fwd_programs": -(-M // fwd[2]), "bwd_design": bwd[0], "bwd_block": bwd[1],
            "bwd_rows": bwd[2], "bwd_warps": bwd[3], "programs_per_sm": bwd[4],
            "prefetch": bool(bwd[5]) if bwd[0] == "row" else False, "sm_count": sms,
            "split": split, "stages": bwd[6] if staged else 1, "bwd_rest": bwd[7] if staged else 0,
            "bwd_early": bwd[8] if staged else False,
            "bwd_programs": groups * split, "partial_rows": groups, "rows_per_program": rows_per_program}


def _fast_module(op):
    if op == "layernorm":
        from layernorm import fast
    else:
        from rmsnorm import fast
    return fast


def sweep_m(n, total, dtype):
    """Rows at width n: total / n, halved for fp32 so that every point moves the same bytes."""
    return max(1, round(total / n)) // (2 if dtype == torch.float32 else 1)


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one run measures: its protocols and every shape list the pages show."""
    quick: bool
    protocol: bench.Protocol
    M: int  # the target shapes' rows
    target_n: tuple
    sweep_n: tuple
    sweep_total: int  # elements per tensor at every sweep point
    between_n: tuple
    other_points: tuple  # (N, dtype name) for the other dtypes
    compile_n: tuple
    dw_shape: tuple
    host_m: tuple
    host_n: tuple
    design_n: tuple
    design_n_fp32: tuple
    model_protocol: bench.Protocol
    llama_shapes: tuple
    llama: dict


FULL = Plan(False, bench.PROTOCOL, 32768, tuple(n for _, n in TARGET_SHAPES), BUILD_SWEEP_N, SWEEP_TOTAL,
            BETWEEN_N, OTHER_DTYPE_POINTS, COMPILE_SWEEP_N, (32768, 4096), HOST_M, HOST_N, DESIGN_N,
            DESIGN_N_FP32, MODEL_PROTOCOL, LLAMA_SHAPES, LLAMA)
# small shapes, the quick protocol and no torch.compile: the pipeline smoke-tested in seconds
QUICK_PLAN = Plan(True, bench.QUICK, 2048, (1024,), (512, 1024), 2**20, (512, 513, 520, 768), ((512, "fp32"),),
                  (), (4096, 512), (1, 64), (2048,), (1024,), (1024,), bench.QUICK, ((256, 512),),
                  {**LLAMA, "seq": 256})


def plan(quick=False):
    return QUICK_PLAN if quick else FULL


FIRST = tuple(p for p in PROVIDERS if p != "compile")  # torch.compile is timed last, shape by shape
PACKAGED = tuple(p for p in FIRST if p != "teaching")  # the drop-ins: the widths between, the other dtypes


def timing_points(p):
    """{(op, provider, M, N, dtype): kinds} of every figure of the tables: GPU time ("gpu") at every
    point, and the host cost ("host") too at the launch-bound shape. A shape in two lists is one point."""
    bf16, points = torch.bfloat16, {}
    for op in OPS:
        for n in p.target_n:
            points |= {(op, name, p.M, n, bf16): ("gpu",) for name in FIRST}
        m, n, small_dtype = SMALL
        points |= {(op, name, m, n, small_dtype): ("gpu", "host") for name in FIRST}
        for n in p.sweep_n:
            points |= {(op, name, sweep_m(n, p.sweep_total, bf16), n, bf16): ("gpu",) for name in FIRST}
        for n in p.between_n:
            points |= {(op, name, sweep_m(n, p.sweep_total, bf16), n, bf16): ("gpu",) for name in PACKAGED}
        for n, short in p.other_points:
            other = DTYPES[short]
            points |= {(op, name, sweep_m(n, p.sweep_total, other), n, other): ("gpu",) for name in PACKAGED}
    return points


def timing_keys(p):
    """The keys of every figure timing_tasks(p) measures (and of compile_keys(p): the rows' too)."""
    return [key for point, kinds in timing_points(p).items() for kind in kinds for key in figure_keys(*point, kind)]


def timing_tasks(p, protocol=None):
    """Every GPU-time and host-cost figure of the tables, as one set of tasks (measure_all's passes)."""
    protocol, tasks = protocol or p.protocol, {}
    for point, kinds in timing_points(p).items():
        tasks |= gpu_tasks(*point, protocol)
        if "host" in kinds:
            tasks |= host_tasks(*point, protocol)
    return tasks


def design_points(p):
    return [(n, torch.bfloat16) for n in p.design_n] + [(n, torch.float32) for n in p.design_n_fp32]


def design_keys(p):
    """(op, design, N, dtype) of every backward design of the side-by-side."""
    return [(op, design, n, d) for op in OPS for n, d in design_points(p) for design in designs_at(op, n, d)]


def all_design_tasks(p, protocol=None):
    return {k: v for op in OPS for n, d in design_points(p)
            for k, v in design_tasks(op, n, d, protocol or p.protocol, p.sweep_total).items()}


def host_grid_points(p):
    """(op, provider, M, N, dtype) of the host grid: the fast call and eager PyTorch's at each shape."""
    return [(op, name, m, n, torch.bfloat16) for op in OPS for m in p.host_m for n in p.host_n
            for name in ("fast", "torch")]


def host_grid_keys(p):
    return [key for point in host_grid_points(p) for key in figure_keys(*point, "host")]


def host_grid_tasks(p, protocol=None):
    """Host cost at few rows: the fast call against eager PyTorch's at each shape of the grid."""
    return {k: v for point in host_grid_points(p) for k, v in host_tasks(*point, protocol or p.protocol).items()}


def host_step_keys():
    return [(op, step) for op in OPS for step in HOST_STEPS]


def compile_shapes(p):
    """torch.compile's shapes (none in the quick run): it compiles each, so a few only."""
    if p.quick:
        return []
    return [(p.M, n) for n in p.target_n] + [(sweep_m(n, p.sweep_total, torch.bfloat16), n) for n in p.compile_n]


def compile_keys(p):
    return [key for op in OPS for m, n in compile_shapes(p) for key in figure_keys(op, "compile", m, n, torch.bfloat16, "gpu")]


def profile_points(p):
    """(op, M, N, provider) of every profile: the fast call and eager PyTorch's, which the pages compare."""
    return [(op, p.M, n, name) for op in OPS for n in p.target_n for name in ("fast", "torch")]


def warm(quick=False, part=0, parts=1):
    """Run every task of the plan that compiles something once, the quick protocol, in this process:
    Triton's and torch.compile's on-disk caches (and QuACK's) then hold every kernel the measurement
    launches. The GPU build runs `parts` of these processes side by side before it measures (each
    compilation is one CPU core's work); nothing they time is kept."""
    p, protocol = plan(quick), bench.QUICK
    tasks = {**timing_tasks(p, protocol), **all_design_tasks(p, protocol), **host_grid_tasks(p, protocol),
             **all_host_step_tasks(protocol), **llama_tasks(protocol, p.llama_shapes, p.llama)[0]}
    for op in OPS:
        for m, n in compile_shapes(p):
            tasks |= gpu_tasks(op, "compile", m, n, torch.bfloat16, protocol)
    mine = {key: one for i, (key, one) in enumerate(sorted(tasks.items(), key=lambda kv: str(kv[0])))
            if i % parts == part}
    bench.measure_all(mine, dataclasses.replace(protocol, repeats=1))
    return len(mine)


@dataclasses.dataclass
class Measured:
    """What one run measured, before assemble() lays it out as the pages' data set. Each {key:
    figure} dict has the keys of the plan's *_keys functions; the records are the *_record
    functions' (a figure or record may be {"error": ...} instead)."""
    device: dict  # "name", "sm_count", "l2_bytes"
    packages: dict  # package_versions()
    timing: dict  # timing_keys(p) and compile_keys(p)
    designs: dict  # design_keys(p)
    host_grid: dict  # host_grid_keys(p)
    steps: dict  # host_step_keys()
    traces: list  # trace_record, one per op
    llama: dict  # llama_keys(p.llama_shapes)
    agreement: list  # agreement_record per llama key
    dw: dict  # dw_record at p.dw_shape
    profiles: list  # profile_record per profile_points(p)
    seconds: dict  # each stage's, "total" and "slowest_tasks"


def run(p):
    """Every task of the plan, stage by stage (each stage's seconds printed and recorded, with the
    slowest tasks): a Measured."""
    protocol, dtype = p.protocol, torch.bfloat16
    seconds, task_seconds, start = {}, {}, time.perf_counter()

    def lap(stage):
        seconds[stage] = round(time.perf_counter() - start - sum(seconds.values()), 1) + 0.0  # no -0.0
        print(f"# faster: {stage} done, {seconds[stage]} s", flush=True)

    figures = bench.measure_all(timing_tasks(p), protocol, task_seconds)
    lap("timing")
    designs = bench.measure_all(all_design_tasks(p), protocol, task_seconds)
    lap("designs")
    # host cost at few rows: the grid against eager PyTorch, then one call taken apart step by step
    host_grid = bench.measure_all(host_grid_tasks(p), protocol, task_seconds)
    steps = bench.measure_all(all_host_step_tasks(protocol), protocol, task_seconds)
    traces = [host_trace(op, protocol) for op in OPS]
    lap("host")
    llama_timing, llama_agreement = llama_tasks(p.model_protocol, p.llama_shapes, p.llama)
    llama_figures = bench.measure_all(llama_timing, p.model_protocol, task_seconds)
    agreement = llama_agreement()
    lap("llama")
    # torch.compile last and shape by shape: its compilations take the longest
    for op in OPS:
        for m, n in compile_shapes(p):
            figures |= bench.measure_all(gpu_tasks(op, "compile", m, n, dtype, protocol), protocol, task_seconds)
    lap("compile")
    dw = dw_error(*p.dw_shape, dtype)
    lap("dw_error")
    profiles = []
    for op, M, n, name in profile_points(p):
        try:
            profiles.append(profile(op, M, n, dtype, name, protocol))
        except Exception as e:  # a profiler that cannot start: the pages then fail to build, loudly
            profiles.append({"op": op, "provider": name, "M": M, "N": n, "error": bench.error_text(e)})
        torch.cuda.empty_cache()
    lap("profile")
    slowest = sorted(task_seconds.items(), key=lambda kv: -kv[1])[:20]
    seconds |= {"total": round(time.perf_counter() - start, 1),
                "slowest_tasks": [[" ".join(map(str, key)), round(s, 2)] for key, s in slowest]}
    properties = torch.cuda.get_device_properties(0)
    device = {"name": properties.name, "sm_count": properties.multi_processor_count,
              "l2_bytes": properties.L2_cache_size}
    return Measured(device, package_versions(), figures, designs, host_grid, steps, traces, llama_figures,
                    agreement, dw, profiles, seconds)


def assemble(p, measured):
    """The data set of the "Going faster" pages from what a run of plan p measured: a JSON-serializable
    dict (faster.report renders it). Needs no GPU: the CPU tests assemble synthetic runs of both plans."""
    M, target_n, sweep_total, dtype = p.M, p.target_n, p.sweep_total, torch.bfloat16
    figures = measured.timing
    is_small = lambda key: key[2:5] == (SMALL[0], SMALL[1], _dtype_name(SMALL[2]))  # noqa: E731
    rows = rows_from({k: v for k, v in figures.items() if not is_small(k)})
    small_rows = rows_from({k: v for k, v in figures.items() if is_small(k)}, kinds=("gpu", "host"))

    bf16 = _dtype_name(dtype)
    others = {(n, _dtype_name(DTYPES[short])) for n, short in p.other_points}

    def in_targets(r):
        return r["M"] == M and r["N"] in target_n and r["dtype"] == bf16

    def in_sweep(r):  # a shape can be in both: 32768 x 4096 is a target and the sweep's point at 4096
        return (r["N"], r["dtype"]) in others or (r["dtype"] == bf16 and r["M"] == sweep_m(r["N"], sweep_total, dtype)
                                                  and (r["N"] in p.sweep_n or r["provider"] == "compile"))

    def in_between(r):
        return r["dtype"] == bf16 and r["N"] in p.between_n and r["M"] == sweep_m(r["N"], sweep_total, dtype) \
            and r["provider"] in PACKAGED

    def chosen(op, keep):
        return [r for r in rows if r["op"] == op and keep(r)]

    sms = measured.device["sm_count"]
    return {
        "quick": p.quick, "device": measured.device["name"], "sm_count": sms,
        "l2_bytes": measured.device["l2_bytes"],
        "targets_pct": TARGETS_PCT,
        "M": M, "dtype": bf16, "target_n": list(target_n), "sweep_n": list(p.sweep_n),
        "sweep_total": sweep_total, "sweep_targets_pct": SWEEP_TARGETS_PCT,
        "providers": list(PROVIDERS), "packages": measured.packages, "protocol": bench.protocol_record(p.protocol),
        "launch": {op: [fast_launch(op, M if n in target_n else sweep_m(n, sweep_total, dtype), n, sms, dtype)
                        for n in sorted({*target_n, *p.sweep_n})] for op in OPS},
        "targets": {op: chosen(op, in_targets) for op in OPS},
        "sweep": {op: chosen(op, in_sweep) for op in OPS},
        "between_n": list(p.between_n), "between": {op: chosen(op, in_between) for op in OPS},
        "small": small_rows,
        "dw_error": measured.dw, "profile": measured.profiles,
        "designs": [{"op": op, "design": design, "N": n, "dtype": _dtype_name(d), "M": sweep_m(n, sweep_total, d),
                     "config": list(designs_at(op, n, d)[design]), "bwd_gpu_us": fig}
                    for (op, design, n, d), fig in measured.designs.items()],
        "host_targets": HOST_TARGETS,
        "host_grid": rows_from(measured.host_grid, kinds=("host",)),
        "host_steps": {"M": STEPS_SHAPE[0], "N": STEPS_SHAPE[1], "dtype": bf16,
                       "steps": [{"op": op, "step": step, "host_us": fig}
                                 for (op, step), fig in measured.steps.items()]},
        "host_trace": measured.traces,
        "llama": {"config": p.llama, "shapes": [list(s) for s in p.llama_shapes],
                  "protocol": bench.protocol_record(p.model_protocol),
                  "steps": [{"provider": prov, "hidden": h, "gpu_us": fig} for (prov, h), fig in measured.llama.items()],
                  "agreement": measured.agreement},
        "seconds": measured.seconds,
    }


def measure(quick=False):
    """Every number of the "Going faster" pages, in one run; a JSON-serializable dict.

    quick=True: the quick plan (QUICK_PLAN), to smoke-test the pipeline in seconds (not for
    publishing). The run prints each stage's seconds and records them, with its slowest tasks.
    """
    if not torch.cuda.is_available():
        raise SystemExit("faster.benchmark.measure needs a CUDA GPU")
    p = plan(quick)
    return assemble(p, run(p))


def document(results, copy, quick):
    """The data set as the GPU build stores it: the results and their provenance (the GPU, the copy
    bandwidth measured around the run, a figure)."""
    return {"provenance": {"gpu": results["device"], "copy": copy, "copy_gb_per_s": round(copy["median"], 1),
                           "quick": quick},
            "results": results}


def format_table(rows, copy_gbps):
    """Markdown table: provider x shape, forward and forward+backward GPU µs and % of copy bandwidth."""
    lines = [f"copy bandwidth {copy_gbps:.0f} GB/s; GPU time, median of three repetitions",
             "| op | shape | dtype | provider | fwd µs | fwd % copy | fwd+bwd µs | fwd+bwd % copy |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        head = f"| {r['op']} | {r['M']}x{r['N']} | {r['dtype']} | {r['provider']} |"
        if "error" in r:
            lines.append(f"{head} {r['error'][:60]} | | | |")
            continue
        cells = []
        for key in PASSES:
            us = r[f"{key}_gpu_us"]["median"]
            n_bytes = bytes_moved(key, r["M"], r["N"], getattr(torch, r["dtype"]))
            cells += [f"{us:.1f}", f"{100 * bench.gb_per_s(n_bytes, us / 1e3) / copy_gbps:.1f}%"]
        lines.append(f"{head} " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--op", choices=OPS, nargs="*", default=list(OPS))
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    p.add_argument("--M", type=int, default=32768)
    p.add_argument("--N", type=int, nargs="*", default=[n for _, n in TARGET_SHAPES])
    p.add_argument("--providers", nargs="*", default=list(PROVIDERS))
    p.add_argument("--json", help="write the rows here")
    p.add_argument("--all", metavar="DIR",
                   help="run the GPU build's full measurement (measure()) and render its tables, plots "
                        "and quotes into DIR, as the 'Going faster' pages show them")
    p.add_argument("--quick", action="store_true", help="with --all or --warm: the quick plan")
    p.add_argument("--warm", metavar="K/W", help="fill the compile caches with part K of W of the full "
                   "measurement's tasks (warm(); the GPU build runs W such processes side by side)")
    a = p.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("python -m faster needs a CUDA GPU")
    if a.warm:
        part, parts = map(int, a.warm.split("/"))
        start = time.perf_counter()
        count = warm(a.quick, part, parts)
        print(f"# faster: warm {a.warm}: {count} tasks, {time.perf_counter() - start:.1f} s", flush=True)
        return count
    if a.all:
        from pathlib import Path

        from faster import report

        protocol = bench.QUICK if a.quick else bench.PROTOCOL
        before = bench.copy_bandwidth_gb_per_s(protocol=protocol)
        results = measure(quick=a.quick)
        copy = bench.figure(before["runs"] + bench.copy_bandwidth_gb_per_s(protocol=protocol)["runs"])
        out = Path(a.all)
        out.mkdir(parents=True, exist_ok=True)
        measurements = document(results, copy, a.quick)
        (out / "measurements.json").write_text(json.dumps(measurements, indent=2) + "\n", encoding="utf-8")
        report.write(measurements, out)
        for op in OPS:
            print((out / f"{op}-targets.md").read_text(encoding="utf-8"))
        return measurements
    dtype = DTYPES[a.dtype]
    copy = bench.copy_bandwidth_gb_per_s()
    tasks = {}
    for op in a.op:
        for n in a.N:
            for name in a.providers:
                tasks |= gpu_tasks(op, name, a.M, n, dtype, bench.PROTOCOL)
    rows = rows_from(bench.measure_all(tasks))
    if a.json:
        Path = __import__("pathlib").Path
        Path(a.json).write_text(json.dumps({"copy": copy, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(format_table(rows, copy["median"]))
    return rows


if __name__ == "__main__":
    main()
