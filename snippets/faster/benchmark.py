"""Side-by-side speed of every LayerNorm / RMSNorm provider, measured in one run on any CUDA GPU.

    python -m faster                      # the target shapes, both ops, bf16
    python -m faster.tune --out DIR       # the tuning run: every N, every launch configuration
    python -m faster --sweep --small --json out.json
    python -m faster --all out/           # everything the "Going faster" pages show, rendered

Providers: the chapter's teaching kernel (when it imports and accepts the input), the fast
kernel, torch eager, torch.compile (compiled per shape) and Liger-Kernel (when installed).
Each is timed forward alone and forward+backward (torch.autograd.grad on a fresh graph
every call, so torch.compile's donated buffers are never reused), as the median of
normkit.bench.median_call_ms. Bytes counted: forward 2*M*N*elt (read x, write y);
forward+backward 5*M*N*elt (and the backward reads x and dy and writes dx). Each figure is
also given as a percentage of the device-to-device copy bandwidth measured in the same run.
Every function returns JSON-serializable dicts.
"""

import argparse
import json
import time

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import torch
import torch.nn.functional as F

from normkit.bench import copy_bandwidth_gb_per_s, gb_per_s, median_call_ms

OPS = ("layernorm", "rmsnorm")
PROVIDERS = ("teaching", "fast", "torch", "compile", "liger")
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
    else:
        if name == "teaching":
            from rmsnorm import rms_norm
            return lambda x, w, b: rms_norm(x, w, RMS_EPS)
        if name == "fast":
            from rmsnorm.fast import rms_norm_fast
            return lambda x, w, b: rms_norm_fast(x, w, RMS_EPS)
        if name in ("torch", "compile"):
            fn = lambda x, w, b: F.rms_norm(x, (x.shape[-1],), w, RMS_EPS)  # noqa: E731
            return torch.compile(fn, dynamic=False) if name == "compile" else fn
        if name == "liger":
            from liger_kernel.ops.rms_norm import LigerRMSNormFunction
            # Liger's defaults: Llama casting, dx written in place of dy
            return lambda x, w, b: LigerRMSNormFunction.apply(x, w, RMS_EPS)
    raise ValueError(f"unknown op/provider {op}/{name}")


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


def _timing_kwargs(quick):
    return dict(warmup_calls=5, samples=10, calls_per_sample=5) if quick else {}


def time_provider(op, name, M, N, dtype, copy_gbps, quick=False, timing=None):
    """Forward and forward+backward of one provider at one shape: ms, GB/s, % of copy bandwidth.

    timing: median_call_ms keyword arguments; default: normal timing, or the quick one."""
    timing = timing if timing is not None else _timing_kwargs(quick)
    elt = torch.empty((), dtype=dtype).element_size()
    row = {"op": op, "provider": name, "M": M, "N": N, "dtype": str(dtype).replace("torch.", "")}
    try:
        fn = _provider_fn(op, name)
        with torch.no_grad():
            x, w, b, _, _ = _inputs(op, M, N, dtype, grad=False)
            fwd_ms = median_call_ms(lambda: fn(x, w, b), **timing)
        del x, w, b
        x, w, b, dy, params = _inputs(op, M, N, dtype, grad=True)
        # a fresh graph every call: forward, then the gradients of all inputs
        both_ms = median_call_ms(lambda: torch.autograd.grad(fn(x, w, b), params, dy), **timing)
    except Exception as e:  # a missing package or an input the provider refuses
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        return row
    finally:
        torch.cuda.empty_cache()
    for key, ms, n_bytes in (("fwd", fwd_ms, 2 * M * N * elt), ("fwd_bwd", both_ms, 5 * M * N * elt)):
        row[f"{key}_ms"] = ms
        row[f"{key}_gbps"] = gb_per_s(n_bytes, ms)
        row[f"{key}_pct_copy"] = 100 * gb_per_s(n_bytes, ms) / copy_gbps
    return row


def measure_providers(op, shapes=TARGET_SHAPES, dtype=torch.bfloat16, providers=PROVIDERS, copy_gbps=None,
                      quick=False, timing=None):
    """Every provider at every shape, in one run. Returns {'copy_gbps': ..., 'rows': [...]}."""
    copy_gbps = copy_gbps or copy_bandwidth_gb_per_s()
    rows = []
    for M, N in shapes:
        for name in providers:
            if name == "compile":
                torch._dynamo.reset()  # compiled per shape, from scratch
            rows.append(time_provider(op, name, M, N, dtype, copy_gbps, quick, timing))
    return {"copy_gbps": copy_gbps, "rows": rows}


def graph_replay_ms(step, **timing):
    """Median ms of one replay of a CUDA graph that captured step(): the GPU's time for the work,
    with no Python, autograd or launch overhead."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up off the capturing stream, as torch asks
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    try:
        return median_call_ms(graph.replay, **timing)
    finally:
        del graph


def small_case(op, M=128, N=257, dtype=torch.float32, providers=("teaching", "fast", "torch", "liger"), timing=None):
    """The launch-bound case: plain calls against CUDA-graph replay of the same work.

    Plain calls time what a training step sees: Python, autograd and launch overhead
    included. Graph replay launches the captured kernels with none of that, so the gap
    between the two columns is the launch overhead.
    """
    timing = timing or {}
    out = []
    for name in providers:
        row = {"op": op, "provider": name, "M": M, "N": N, "dtype": str(dtype).replace("torch.", "")}
        try:
            fn = _provider_fn(op, name)
            x, w, b, dy, params = _inputs(op, M, N, dtype, grad=True)
            both = lambda: torch.autograd.grad(fn(x, w, b), params, dy)  # noqa: E731
            fwd = lambda: fn(x, w, b)  # noqa: E731
            for key, step in (("fwd", fwd), ("fwd_bwd", both)):
                row[f"{key}_plain_us"] = 1e3 * median_call_ms(step, **timing)
                row[f"{key}_graph_us"] = 1e3 * graph_replay_ms(step, **timing)
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        out.append(row)
    return out


def dw_error(M=32768, N=4096, dtype=torch.bfloat16, providers=("teaching", "fast", "torch", "liger")):
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

    result = {"M": M, "N": N, "dtype": str(dtype).replace("torch.", "")}
    for name in providers:
        try:
            fn = _provider_fn("layernorm", name)
            result[name] = err(torch.autograd.grad(fn(x, w, b), params, dy)[1])
        except Exception as e:
            result[name] = {"error": f"{type(e).__name__}: {str(e)[:160]}"}

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
        result["lock_buffer_in_input_dtype"] = err(part.float().sum(0).to(dtype))
        result["lock_buffer_in_input_dtype"]["group_size"] = group
    return result


def profile(op, M, N, dtype=torch.bfloat16, provider="fast", calls=10, timing=None):
    """Where a forward+backward call's time goes: host time per call (no synchronization),
    wall time per call, the GPU kernels with their device time per call, and the time of
    the same call replayed from a CUDA graph (no host work at all)."""
    from torch.autograd import DeviceType

    fn = _provider_fn(op, provider)
    x, w, b, dy, params = _inputs(op, M, N, dtype, grad=True)
    step = lambda: torch.autograd.grad(fn(x, w, b), params, dy)  # noqa: E731
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(calls):
        step()
    host = (time.perf_counter() - t) / calls
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t) / calls
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(calls):
            step()
        torch.cuda.synchronize()
    # device-side events only (kernels, memsets, copies): CPU ops also carry a device time,
    # the sum of their children's, which would count every kernel twice
    per_kernel = {}
    for e in prof.events():
        if getattr(e, "device_type", None) != DeviceType.CUDA:
            continue
        entry = per_kernel.setdefault(e.name[:60], [0.0, 0])
        entry[0] += e.time_range.elapsed_us()
        entry[1] += 1
    kernels = [{"kernel": k, "us_per_call": us / calls, "count_per_call": n / calls} for k, (us, n) in per_kernel.items()]
    kernels.sort(key=lambda k: -k["us_per_call"])
    out = {"op": op, "provider": provider, "M": M, "N": N, "dtype": str(dtype).replace("torch.", ""),
           "host_us_per_call": 1e6 * host, "wall_us_per_call": 1e6 * wall,
           "gpu_us_per_call": sum(k["us_per_call"] for k in kernels),
           "launches_per_call": sum(k["count_per_call"] for k in kernels), "kernels": kernels[:8]}
    try:
        out["graph_us_per_call"] = 1e3 * graph_replay_ms(step, **(timing or {}))
    except Exception as e:  # a provider whose call cannot be captured
        out["graph_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
    del x, w, b, dy, params
    torch.cuda.empty_cache()
    return out


# The "faster" data set of the GPU build (scripts/gpu_build.py): everything the "Going faster"
# pages show, measured in one process. Timing: the targets and the small case use
# median_call_ms's normal protocol (20 warm-up, 50 samples x 20 calls); the N sweep, plot data
# only, a shorter one. Budget on an H200: about 3 minutes, half of it compilation.
TARGETS_PCT = {"fwd": 92.0, "fwd_bwd": 85.0}  # the targets, % of the copy bandwidth
# issue 13's targets over the sweep, GPU-bound: forward, and forward+backward up to / past N = 8192
SWEEP_TARGETS_PCT = {"fwd": 90.0, "fwd_bwd": 85.0, "fwd_bwd_wide": 75.0, "wide_above": 8192}
SWEEP_TOTAL = 2**27  # elements per tensor at every N of the sweep: M = SWEEP_TOTAL / N rows
# the build's sweep, a dozen widths: the powers of two and widths between them, where a row padded to
# the next power of two costs most (the tuning run, python -m faster.tune, covers every multiple of 256)
BUILD_SWEEP_N = (1024, 1536, 2048, 2560, 3072, 4096, 5120, 6144, 8192, 10240, 12288, 16384)
OTHER_DTYPE_POINTS = ((4096, "fp16"), (4096, "fp32"), (12288, "fp16"))  # fp32 at half the rows
COMPILE_SWEEP_N = (2048, 12288)  # torch.compile compiles each shape: a few N only (4096: the targets' rows)
GRAPH_TIMING = dict(warmup_calls=3, samples=10, calls_per_sample=3)
SWEEP_TIMING = dict(warmup_calls=5, samples=10, calls_per_sample=10)
QUICK_TIMING = dict(warmup_calls=3, samples=5, calls_per_sample=3)


def fast_launch(op, M, N, dtype=torch.bfloat16):
    """The launch configuration the fast kernels pick for one shape, and the backward's grid."""
    fast = _fast_module(op)
    elt = torch.empty((), dtype=dtype).element_size()
    fwd = fast.forward_config(N, elt)
    bwd = fast.backward_config(N, elt)
    sms = fast.sm_count(torch.cuda.current_device())
    programs, rows_per_program = fast.backward_grid(M, bwd[2], sms * bwd[4])  # as backward_rows computes it
    return {"op": op, "M": M, "N": N, "fwd_design": fwd[0], "fwd_block": fwd[1], "fwd_rows": fwd[2],
            "fwd_warps": fwd[3], "fwd_programs": -(-M // fwd[2]), "bwd_design": bwd[0], "bwd_block": bwd[1],
            "bwd_rows": bwd[2], "bwd_warps": bwd[3], "programs_per_sm": bwd[4],
            "prefetch": bool(bwd[5]) if bwd[0] == "row" else False, "sm_count": sms,
            "bwd_programs": programs, "rows_per_program": rows_per_program}


def _fast_module(op):
    if op == "layernorm":
        from layernorm import fast
    else:
        from rmsnorm import fast
    return fast


def sweep_row(op, name, M, N, dtype, copy_gbps, timing):
    """One provider at one shape, forward and forward+backward, two ways: as plain calls (host
    included: median_call_ms) and GPU-bound (one call captured in a CUDA graph and replayed)."""
    elt = torch.empty((), dtype=dtype).element_size()
    row = {"op": op, "provider": name, "M": M, "N": N, "dtype": str(dtype).replace("torch.", "")}
    try:
        fn = _provider_fn(op, name)
        x, w, b, dy, params = _inputs(op, M, N, dtype, grad=True)
        steps = {"fwd": lambda: fn(x, w, b), "fwd_bwd": lambda: torch.autograd.grad(fn(x, w, b), params, dy)}
        for key, step in steps.items():
            if key == "fwd":
                with torch.no_grad():
                    ms = median_call_ms(step, **timing)
            else:
                ms = median_call_ms(step, **timing)
            row[f"{key}_ms"] = ms
            try:
                if key == "fwd":
                    with torch.no_grad():
                        row[f"{key}_gpu_ms"] = graph_replay_ms(step, **GRAPH_TIMING)
                else:
                    row[f"{key}_gpu_ms"] = graph_replay_ms(step, **GRAPH_TIMING)
            except Exception as e:  # a provider whose call cannot be captured: plain calls only
                row[f"{key}_gpu_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
        del x, w, b, dy, params, steps
    except Exception as e:  # a missing package or an input the provider refuses
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        return row
    finally:
        torch.cuda.empty_cache()
    for key, mult in (("fwd", 2), ("fwd_bwd", 5)):
        n_bytes = mult * M * N * elt
        row[f"{key}_gbps"] = gb_per_s(n_bytes, row[f"{key}_ms"])
        row[f"{key}_pct_copy"] = 100 * row[f"{key}_gbps"] / copy_gbps
        if f"{key}_gpu_ms" in row:
            row[f"{key}_gpu_pct_copy"] = 100 * gb_per_s(n_bytes, row[f"{key}_gpu_ms"]) / copy_gbps
    return row


def host_cost(op, M=128, N=257, dtype=torch.float32, calls=300, providers=("fast", "torch", "liger")):
    """What one call costs the host: the fastest of `calls` synchronized plain calls (host time plus
    the GPU's few microseconds), against the same call replayed from a CUDA graph."""
    out = []
    for name in providers:
        row = {"op": op, "provider": name, "M": M, "N": N, "dtype": str(dtype).replace("torch.", ""), "calls": calls}
        try:
            fn = _provider_fn(op, name)
            x, w, b, dy, params = _inputs(op, M, N, dtype, grad=True)
            steps = {"fwd": lambda: fn(x, w, b), "fwd_bwd": lambda: torch.autograd.grad(fn(x, w, b), params, dy)}
            for key, step in steps.items():
                for _ in range(20):
                    step()
                torch.cuda.synchronize()
                best = float("inf")
                for _ in range(calls):
                    t = time.perf_counter()
                    step()
                    torch.cuda.synchronize()
                    best = min(best, time.perf_counter() - t)
                row[f"{key}_min_us"] = 1e6 * best
                row[f"{key}_graph_us"] = 1e3 * graph_replay_ms(step, **GRAPH_TIMING)
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        out.append(row)
    return out


def measure(quick=False):
    """Every number of the "Going faster" pages, in one run; a JSON-serializable dict.

    quick=True: one small shape, few samples and no torch.compile, to smoke-test the pipeline in
    seconds (not for publishing). The full run prints each stage's seconds and records them under
    "seconds": on an H200 about 3 minutes, half of it compilation (Triton's and torch.compile's).
    """
    if not torch.cuda.is_available():
        raise SystemExit("faster.benchmark.measure needs a CUDA GPU")
    dtype = torch.bfloat16
    if quick:
        M, target_n, sweep_n, dw_shape = 2048, (1024,), (512, 1024), (4096, 512)
        timing = sweep_timing = small_timing = QUICK_TIMING
        sweep_total, other_points, compile_n, host_calls = 2**20, ((512, "fp32"),), (), 20
    else:
        M, target_n, sweep_n, dw_shape = 32768, tuple(n for _, n in TARGET_SHAPES), BUILD_SWEEP_N, (32768, 4096)
        timing, sweep_timing, small_timing = {}, SWEEP_TIMING, {}
        sweep_total, other_points, compile_n, host_calls = SWEEP_TOTAL, OTHER_DTYPE_POINTS, COMPILE_SWEEP_N, 300
    first = [p for p in PROVIDERS if p != "compile"]
    seconds, start = {}, time.perf_counter()

    def lap(stage):
        seconds[stage] = round(time.perf_counter() - start - sum(seconds.values()), 1)
        print(f"# faster: {stage} done, {seconds[stage]} s", flush=True)

    copy_gbps = copy_bandwidth_gb_per_s()
    lap("copy")
    targets = {op: measure_providers(op, [(M, n) for n in target_n], dtype, first, copy_gbps, timing=timing)["rows"]
               for op in OPS}
    lap("targets")
    small = [row for op in OPS for row in small_case(op, 128, 257, torch.float32, timing=small_timing)]
    lap("small")
    dw = dw_error(*dw_shape, dtype)
    lap("dw_error")
    profiles = []
    for op in OPS:
        for n in target_n:
            for name in ("fast", "torch"):  # the pages compare these two; Liger's host cost is the fast path's
                try:
                    profiles.append(profile(op, M, n, dtype, name, timing=timing))
                except Exception as e:  # a profiler that cannot start: the pages then fail to build, loudly
                    profiles.append({"op": op, "provider": name, "M": M, "N": n,
                                     "error": f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"})
                torch.cuda.empty_cache()
    lap("profile")
    host = [row for op in OPS for row in host_cost(op, calls=host_calls)]
    lap("host")
    # the sweep: M = sweep_total / N rows at every N, every provider but torch.compile, bf16; then a
    # few points in the other dtypes (fp32 at half the rows: the same bytes)
    sweep = {op: [] for op in OPS}
    for n in sweep_n:
        for op in OPS:
            for name in first:
                sweep[op].append(sweep_row(op, name, max(1, round(sweep_total / n)), n, dtype, copy_gbps, sweep_timing))
    for n, short in other_points:
        other = DTYPES[short]
        m = max(1, round(sweep_total / n)) // (2 if other == torch.float32 else 1)
        for op in OPS:
            for name in ("fast", "torch", "liger"):
                sweep[op].append(sweep_row(op, name, m, n, other, copy_gbps, sweep_timing))
    lap("sweep")
    # torch.compile last: its compilations take the longest (the quick run skips them)
    for op in OPS if not quick else ():
        targets[op] += measure_providers(op, [(M, n) for n in target_n], dtype, ["compile"], copy_gbps,
                                         timing=timing)["rows"]
        for n in compile_n:
            torch._dynamo.reset()  # compiled per shape, from scratch
            sweep[op].append(sweep_row(op, "compile", max(1, round(sweep_total / n)), n, dtype, copy_gbps,
                                       sweep_timing))
    lap("compile")
    copy_gbps_end = copy_bandwidth_gb_per_s()
    lap("copy_end")
    properties = torch.cuda.get_device_properties(0)
    return {
        "quick": quick, "device": properties.name, "sm_count": properties.multi_processor_count,
        "copy_gbps": copy_gbps, "copy_gbps_end": copy_gbps_end, "targets_pct": TARGETS_PCT,
        "M": M, "dtype": str(dtype).replace("torch.", ""), "target_n": list(target_n), "sweep_n": list(sweep_n),
        "sweep_total": sweep_total, "sweep_targets_pct": SWEEP_TARGETS_PCT, "host": host,
        "providers": list(PROVIDERS),
        "timing": {"targets": timing or "normal", "sweep": sweep_timing, "small": small_timing or "normal"},
        "launch": {op: [fast_launch(op, M if n in target_n else max(1, round(sweep_total / n)), n, dtype)
                        for n in sorted({*target_n, *sweep_n})] for op in OPS},
        "targets": targets, "sweep": sweep, "small": small, "dw_error": dw, "profile": profiles,
        "seconds": {**seconds, "total": round(time.perf_counter() - start, 1)},
    }


def format_table(result):
    """Markdown table: provider x shape, forward and forward+backward as % of copy bandwidth."""
    lines = [f"copy bandwidth {result['copy_gbps']:.0f} GB/s",
             "| op | shape | dtype | provider | fwd ms | fwd % copy | fwd+bwd ms | fwd+bwd % copy |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        head = f"| {r['op']} | {r['M']}x{r['N']} | {r['dtype']} | {r['provider']} |"
        if "error" in r:
            lines.append(f"{head} {r['error'][:60]} | | | |")
        else:
            lines.append(f"{head} {r['fwd_ms']:.3f} | {r['fwd_pct_copy']:.1f}% | "
                         f"{r['fwd_bwd_ms']:.3f} | {r['fwd_bwd_pct_copy']:.1f}% |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--op", choices=OPS, nargs="*", default=list(OPS))
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    p.add_argument("--M", type=int, default=32768)
    p.add_argument("--N", type=int, nargs="*", default=[n for _, n in TARGET_SHAPES])
    p.add_argument("--providers", nargs="*", default=list(PROVIDERS))
    p.add_argument("--sweep", action="store_true", help=f"also N in {BUILD_SWEEP_N} (quicker timing)")
    p.add_argument("--small", action="store_true", help="the launch-bound 128x257 fp32 case, plain vs CUDA graph")
    p.add_argument("--dw-error", action="store_true", help="LayerNorm dW error against fp32, per design")
    p.add_argument("--profile", action="store_true", help="host and kernel time of the fast fwd+bwd")
    p.add_argument("--skip-targets", action="store_true", help="skip the provider table at the target shapes")
    p.add_argument("--json", help="write every result here")
    p.add_argument("--all", metavar="DIR",
                   help="run the GPU build's full measurement (measure()) and render its tables, plots "
                        "and quotes into DIR, as the 'Going faster' pages show them")
    p.add_argument("--quick", action="store_true", help="with --all: a tiny smoke-test run")
    a = p.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("python -m faster needs a CUDA GPU")
    if a.all:
        from pathlib import Path

        from faster import report

        results = measure(quick=a.quick)
        out = Path(a.all)
        out.mkdir(parents=True, exist_ok=True)
        document = {"provenance": {"gpu": results["device"], "copy_gb_per_s": round(results["copy_gbps"], 1),
                                   "quick": a.quick}, "results": results}
        (out / "measurements.json").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        report.write(document, out)
        for op in OPS:
            print((out / f"{op}-targets.md").read_text(encoding="utf-8"))
        return document
    dtype = DTYPES[a.dtype]
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    import triton
    report["triton"] = triton.__version__
    report["copy_gbps"] = copy_gbps = copy_bandwidth_gb_per_s()

    def save(stage):
        # written after every stage, so a run cut short still leaves what it measured
        if a.json:
            with open(a.json, "w") as f:
                json.dump(report, f, indent=1)
        print(f"# {stage} done", flush=True)

    if a.profile:
        report["profile"] = [profile(op, a.M, n, dtype, prov) for op in a.op for n in a.N
                             for prov in ("fast", "torch", "liger")]
        for r in report["profile"]:
            print(json.dumps(r), flush=True)
    # torch.compile last: its compilations take the longest
    first = [p for p in a.providers if p != "compile"]
    report["targets"] = {}
    if not a.skip_targets:
        report["targets"] = {op: measure_providers(op, [(a.M, n) for n in a.N], dtype, first, copy_gbps)
                             for op in a.op}
        save("targets")
    if a.small:
        report["small"] = [row for op in a.op for row in small_case(op)]
        for r in report["small"]:
            print(json.dumps(r), flush=True)
        save("small")
    if a.dw_error:
        report["dw_error"] = dw_error()
        print(json.dumps(report["dw_error"]), flush=True)
        save("dw_error")
    if a.sweep:
        report["sweep"] = {op: measure_providers(op, [(a.M, n) for n in BUILD_SWEEP_N], dtype, first, copy_gbps, quick=True)
                           for op in a.op}
        save("sweep")
    if "compile" in a.providers and not a.skip_targets:
        for op in a.op:
            report["targets"][op]["rows"] += measure_providers(op, [(a.M, n) for n in a.N], dtype, ["compile"], copy_gbps)["rows"]
            save(f"compile {op}")
    report["copy_gbps_end"] = copy_bandwidth_gb_per_s()
    save("all")
    for op in report["targets"]:
        print(format_table(report["targets"][op]))
    return report


if __name__ == "__main__":
    main()
