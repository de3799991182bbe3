"""Looks inside one call of a fast kernel, for the "Going faster" pages' host-cost and accuracy
sections: each host step of a call on its own (what the Python around the kernels costs), the
profiler's kernel time of a call and its trace span by span, and the LayerNorm weight gradient's
error per design. Every function returns JSON-serializable dicts; faster.benchmark runs them.
"""

import time

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import torch
import torch.nn.functional as F

from faster.providers import LN_EPS, OPS, RMS_EPS, _dtype_name, _fast_module, _inputs, _provider_fn, make_step
from normkit import bench


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
    # the launch step alone: the plan a no-grad call of this shape runs, as forward_rows launches it
    weights = (wd, bd) if op == "layernorm" else (wd,)
    plan = fast.OP.forward_plan(xd, weights, save=False)
    eps = LN_EPS if op == "layernorm" else RMS_EPS
    y = torch.empty_like(xd)
    fn, torch_fn = _provider_fn(op, "fast"), _provider_fn(op, "torch")
    checks = lambda: fast.check_inputs(xd, (N,), *weights, eps)  # noqa: E731
    forward_rows = lambda: fast.forward_rows(xd, *weights, eps, save=False)  # noqa: E731
    saved = fast.forward_rows(xd, *weights, eps)[1]
    backward_rows = lambda: fast.backward_rows(dy, xd, wd, saved)  # noqa: E731
    xi = torch.randn(M, N, device="cuda", requires_grad=True)
    return {
        "synchronize": lambda: None,  # every figure includes one synchronization: this is it alone
        "checks": checks,
        "views": lambda: (dropin.rows_view(xd, 1), dropin.flat(wd), dropin.path(xd, wd)),
        "allocate": lambda: xd.new_empty((M, N)),  # the output: a no-grad call keeps no statistics
        "launch": lambda: plan.kernel((xd, y, *weights, xd, M, eps)),
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
