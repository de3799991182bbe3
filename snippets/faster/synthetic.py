"""SYNTHETIC measurements of the "faster" data set, for the tests of its rendering (test_report.py,
test_quotes.py). Every number here is made up to test the rendering only: none of it is a measurement
and none of it is ever published.

The synthetic data set has the layout of faster.benchmark.measure() (see a quick run's
measurements.json): every GPU time and host cost a figure {"median", "low", "high", "runs"}, the
copy bandwidth a figure in the provenance. GPU times are made from chosen percentages of a 4000 GB/s
copy, so that the expected strings (worked out by hand in the tests' comments) read in percent: a
figure's stated range is its runs' range, at least ±3 % of the median (GPU time), ±60 % (host cost)
or ±2 % (copy bandwidth), and its digits are the ones that range supports (normkit.claims).
"""

import torch

from faster import benchmark as speed
from faster import llama, probes, providers


OPS = ("layernorm", "rmsnorm")


OPS_PREFIX = {"layernorm": "ln", "rmsnorm": "rms"}


LANGS = ("", ".zh", ".vi")


M = 32768


TARGET_N = [4096, 8192]


SWEEP_N = [1024, 2048, 4096, 8192, 16384]


SWEEP_TOTAL = 2**27


COPY = 4000.0  # synthetic copy bandwidth, GB/s: the median of the provenance's copy figure


PROTOCOL = {"warmup_calls": 10, "samples": 20, "calls_per_sample": 10, "repeats": 3, "host_calls": 200,
            "max_copies": 8}


MISSING = "ModuleNotFoundError: No module named 'liger_kernel'"


REFUSED = "ContractError: x has dtype torch.bfloat16; only float32 and float16 are supported"


ELEMENT = {"bfloat16": 2, "float16": 2, "float32": 4}


# SYNTHETIC % of the copy bandwidth, (fwd, fwd+bwd), each (median, half spread of the runs)
TARGET_PCT = {
    "fast": {4096: ((95.0, 1.0), (80.0, 1.0)), 8192: ((96.4, 0.5), (86.0, 0.5))},
    "teaching": {4096: ((70.0, 0.5), (31.0, 0.5)), 8192: ((72.0, 0.5), (33.0, 0.5))},
    "torch": {4096: ((60.0, 0.5), (45.0, 0.5)), 8192: ((62.0, 0.5), (47.0, 0.5))},
    "compile": {4096: ((92.0, 0.5), (82.0, 0.5)), 8192: ((80.0, 0.5), (70.0, 0.5))},
}


SWEEP_PCT = {
    "fast": {1024: (91.0, 80.0), 2048: (93.0, 86.0), 4096: (95.0, 88.0), 8192: (96.0, 84.0), 16384: (94.0, 78.0)},
    "teaching": {1024: (35.0, 20.0), 2048: (35.0, 22.0), 4096: (35.0, 24.0), 8192: (35.0, 26.0), 16384: (35.0, 18.0)},
    "torch": {n: (60.0, 45.0) for n in SWEEP_N},
    "compile": {2048: (97.0, 95.0)},  # torch.compile at one width of the sweep (LayerNorm only)
}


# SYNTHETIC widths between the launch table's entries: {N: {provider: (fwd, fwd+bwd)}}; QuACK
# refuses 4097 (a row of 8194 bytes does not start on 16)
BETWEEN_PCT = {
    4096: {"fast": (95.0, 88.0), "torch": (60.0, 45.0), "quack": (96.0, 80.0)},
    4097: {"fast": (50.0, 40.0), "torch": (20.0, 28.0)},
    4104: {"fast": (93.0, 87.0), "torch": (60.0, 45.0), "quack": (95.0, 95.0)},
    4352: {"fast": (94.0, 86.0), "torch": (60.0, 45.0), "quack": (95.0, 79.0)},
}


QUACK_REFUSED = "AssertionError: N must be a multiple of 8"


# SYNTHETIC 128x257 fp32 figures: (median, low, high) of fwd GPU, fwd+bwd GPU, fwd host, fwd+bwd host
SMALL_US = {
    "fast": ((4.2, 4.1, 4.3), (8.4, 8.3, 8.5), (82.0, 80.0, 84.0), (310.0, 300.0, 320.0)),
    "teaching": ((5.5, 5.4, 5.6), (13.2, 13.0, 13.4), (130.0, 125.0, 137.0), (390.0, 380.0, 420.0)),
    "torch": ((5.2, 5.1, 5.3), (8.8, 8.7, 8.9), (31.0, 30.0, 32.0), (153.0, 149.0, 157.0)),
}


def fig(median, low, high):
    """A SYNTHETIC figure of three repetitions."""
    return {"median": median, "low": low, "high": high, "runs": [low, median, high]}


def _us_from_pct(pct, half, n_bytes):
    """The GPU-time figure (µs) at which n_bytes run at pct ± half % of the copy bandwidth."""
    us = lambda p: n_bytes / (p / 100 * COPY * 1e3)  # noqa: E731
    return fig(us(pct), us(pct + half), us(pct - half))


def _row(op, provider, m, n, dtype, fwd, both):
    """A GPU-time row as faster.benchmark.rows_from() makes it; fwd, both: (% of copy, half spread)."""
    row = {"op": op, "provider": provider, "M": m, "N": n, "dtype": dtype}
    for key, (pct, half), mult in (("fwd", fwd, 2), ("fwd_bwd", both, 5)):
        row[f"{key}_gpu_us"] = _us_from_pct(pct, half, mult * m * n * ELEMENT[dtype])
    return row


def _error(op, provider, m, n, dtype, error):
    return {"op": op, "provider": provider, "M": m, "N": n, "dtype": dtype, "error": error}


def _targets(op):
    rows = []
    for n in TARGET_N:
        for provider in ("teaching", "fast", "torch", "liger", "compile"):
            if provider == "liger":
                rows.append(_error(op, provider, M, n, "bfloat16", MISSING))
            elif provider == "teaching" and op == "rmsnorm":
                rows.append(_error(op, provider, M, n, "bfloat16", REFUSED))
            else:
                rows.append(_row(op, provider, M, n, "bfloat16", *TARGET_PCT[provider][n]))
    return rows


def _sweep(op):
    rows = []
    for n in SWEEP_N:
        m = SWEEP_TOTAL // n
        for provider in ("teaching", "fast", "torch", "liger", "compile"):
            if provider == "liger":
                rows.append(_error(op, provider, m, n, "bfloat16", MISSING))
            elif provider == "teaching" and op == "rmsnorm":
                rows.append(_error(op, provider, m, n, "bfloat16", REFUSED))
            elif provider == "compile" and (op == "rmsnorm" or n not in SWEEP_PCT["compile"]):
                continue
            else:
                fwd, both = SWEEP_PCT[provider][n]
                rows.append(_row(op, provider, m, n, "bfloat16", (fwd, 0.5), (both, 0.5)))
    # the other dtypes: fp32 at half the rows, fp16 at the same rows
    rows.append(_row(op, "fast", SWEEP_TOTAL // 4096 // 2, 4096, "float32", (90.0, 0.5), (80.0, 0.5)))
    rows.append(_row(op, "torch", SWEEP_TOTAL // 4096, 4096, "float16", (70.0, 0.5), (60.0, 0.5)))
    rows.append(_error(op, "liger", SWEEP_TOTAL // 4096 // 2, 4096, "float32", MISSING))
    return rows


def _between_rows(op):
    rows = []
    for n, by in BETWEEN_PCT.items():
        m = SWEEP_TOTAL // n
        for provider in ("fast", "torch", "liger", "quack"):
            if provider in by:
                fwd, both = by[provider]
                rows.append(_row(op, provider, m, n, "bfloat16", (fwd, 0.5), (both, 0.5)))
            else:
                rows.append(_error(op, provider, m, n, "bfloat16", MISSING if provider == "liger" else QUACK_REFUSED))
    return rows


def _small(op):
    rows = []
    for provider, (fwd, both, fwd_host, both_host) in SMALL_US.items():
        rows.append({"op": op, "provider": provider, "M": 128, "N": 257, "dtype": "float32",
                     "fwd_gpu_us": fig(*fwd), "fwd_bwd_gpu_us": fig(*both),
                     "fwd_host_us": fig(*fwd_host), "fwd_bwd_host_us": fig(*both_host)})
    rows.append(_error(op, "liger", 128, 257, "float32", MISSING))
    return rows


def _profile(op):
    prefix = {"layernorm": "ln", "rmsnorm": "rms"}[op]
    out = []
    # (host µs, GPU µs, kernels' µs: fwd, bwd, reduce), each (median, low, high)
    fast = {4096: ((900.0, 880.0, 920.0), (400.0, 398.0, 402.0),
                   ((100.0, 99.0, 102.0), (295.0, 290.0, 297.0), (5.0, 4.9, 5.1))),
            8192: ((520.0, 500.0, 540.0), (780.0, 775.0, 785.0),
                   ((200.0, 198.0, 202.0), (570.0, 566.0, 572.0), (10.0, 9.8, 10.2)))}
    torch_ = {4096: ((150.0, 145.0, 155.0), (600.0, 596.0, 604.0)), 8192: ((700.0, 690.0, 710.0), (800.0, 795.0, 805.0))}
    # each design's kernel has its own name: at 8192 the staged backward and the chunked forward
    designs = {4096: ("", ""), 8192: ("_chunked", "_staged")}
    for n in TARGET_N:
        host, gpu, (fwd, bwd, reduce) = fast[n]
        fwd_design, bwd_design = designs[n]
        kernels = [{"kernel": f"{prefix}_fast_bwd{bwd_design}_kernel", "us_per_call": fig(*bwd), "count_per_call": 1.0},
                   {"kernel": f"{prefix}_fast_fwd{fwd_design}_kernel", "us_per_call": fig(*fwd), "count_per_call": 1.0},
                   {"kernel": "sum_partials_kernel", "us_per_call": fig(*reduce), "count_per_call": 1.0}]
        out.append({"op": op, "provider": "fast", "M": M, "N": n, "dtype": "bfloat16", "host_us_per_call": fig(*host),
                    "gpu_us_per_call": fig(*gpu), "launches_per_call": 3.0, "kernels": kernels})
        if op == "rmsnorm" and n == 8192:  # a profile that could not run: left out of the table and quotes
            out.append({"op": op, "provider": "torch", "M": M, "N": n, "error": "RuntimeError: profiler busy"})
            continue
        host, gpu = torch_[n]
        out.append({"op": op, "provider": "torch", "M": M, "N": n, "dtype": "bfloat16", "host_us_per_call": fig(*host),
                    "gpu_us_per_call": fig(*gpu), "launches_per_call": 3.0,
                    "kernels": [{"kernel": "void at::native::vectorized_norm", "us_per_call": fig(*gpu),
                                 "count_per_call": 3.0}]})
    return out


def _launch(op):
    return [{"op": op, "M": M if n in TARGET_N else SWEEP_TOTAL // n, "N": n, "fwd_design": "row", "fwd_block": n,
             "fwd_rows": 1, "fwd_warps": 8, "fwd_programs": M, "bwd_design": "row", "bwd_block": n, "bwd_rows": 1,
             "bwd_warps": 16, "programs_per_sm": 2, "prefetch": True, "sm_count": 100, "bwd_programs": 200,
             "rows_per_program": 164} for n in sorted({*TARGET_N, *SWEEP_N})]


HOST_STEPS = ("synchronize", "checks", "views", "allocate", "launch", "forward_rows", "call", "torch_call",
              "autograd_identity", "autograd_forward", "backward_rows", "call_fwd_bwd", "torch_fwd_bwd")


def _host_grid(op):
    # M=1: fast 20 µs against eager 18 (1.11x, runs paired: met at 1.2); M=8: 60 against 20 (3x: missed)
    rows = []
    for m, fast_fwd in ((1, 20.0), (8, 60.0)):
        for name, fwd, both in (("fast", fast_fwd, 150.0), ("torch", 18.0 if m == 1 else 20.0, 100.0)):
            rows.append({"op": op, "provider": name, "M": m, "N": 4096, "dtype": "bfloat16",
                         "fwd_host_us": {"median": fwd, "low": fwd, "high": fwd, "runs": [fwd] * 3},
                         "fwd_bwd_host_us": {"median": both, "low": both, "high": both, "runs": [both] * 3}})
    return rows


def _llama():
    steps = [{"provider": "torch", "hidden": 2048, "gpu_us": fig(12000.0, 11950.0, 12050.0)},
             {"provider": "fast", "hidden": 2048, "gpu_us": fig(10000.0, 9950.0, 10050.0)},
             {"provider": "liger", "hidden": 2048, "gpu_us": {"error": MISSING}}]
    agreement = [{"provider": "torch", "hidden": 2048, "loss": 10.5, "eager_loss": 10.5, "max_grad_rel_diff": 0.0},
                 {"provider": "fast", "hidden": 2048, "loss": 10.50003, "eager_loss": 10.5,
                  "max_grad_rel_diff": 8.4e-3},
                 {"provider": "liger", "hidden": 2048, "error": MISSING}]
    return {"config": {"layers": 2, "batch": 2, "seq": 2048, "vocab": 32000, "head_dim": 128},
            "shapes": [[2048, 5632]], "protocol": PROTOCOL, "steps": steps, "agreement": agreement}


def _trace(op):
    """A SYNTHETIC trace: a forward span with two launches below it, a backward on autograd's thread."""
    span = lambda name, thread, depth, start, us, count=1: {  # noqa: E731
        "name": name, "thread": thread, "depth": depth, "count": count, "repeats": 3,
        "start_us": fig(start, start - 1, start + 1), "us": fig(us, us - 1, us + 1)}
    return {"op": op, "provider": "fast", "M": 8, "N": 4096, "dtype": "bfloat16", "calls": 50, "launches": 3,
            "spans": [span("LayerNormFastFunction", 0, 0, 10.0, 40.0), span("cuLaunchKernelEx", 0, 1, 30.0, 8.0, 2),
                      span("LayerNormFastFunctionBackward", 1, 0, 60.0, 50.0)],
            "call_us": fig(200.0, 190.0, 210.0), "outside_us": fig(100.0, 95.0, 105.0),
            "launch_us": fig(20.0, 19.0, 21.0)}


def synthetic_measurements():
    err = {"max_abs_ref": 600.0}
    dw = {"M": M, "N": 4096, "dtype": "bfloat16",
          "teaching": {"max_abs": 2.0, "rel_norm": 1.5e-3, **err}, "fast": {"max_abs": 2.0, "rel_norm": 1.5e-3, **err},
          "torch": {"max_abs": 2.0, "rel_norm": 1.5e-3, **err},
          "liger": {"error": MISSING},
          "lock_buffer_in_input_dtype": {"max_abs": 14.0, "rel_norm": 2.04e-2, "group_size": 96, **err}}
    results = {"quick": False, "device": "Synthetic GPU", "sm_count": 100, "l2_bytes": 50_000_000,
               "targets_pct": {"fwd": 92.0, "fwd_bwd": 85.0}, "M": M, "dtype": "bfloat16", "target_n": TARGET_N,
               "sweep_n": SWEEP_N, "sweep_total": SWEEP_TOTAL,
               "sweep_targets_pct": {"fwd": 90.0, "fwd_bwd": 85.0, "fwd_bwd_wide": 75.0, "wide_above": 8192},
               "providers": ["teaching", "fast", "torch", "compile", "liger"], "protocol": PROTOCOL,
               "launch": {op: _launch(op) for op in OPS}, "targets": {op: _targets(op) for op in OPS},
               "sweep": {op: _sweep(op) for op in OPS},
               "between_n": list(BETWEEN_PCT), "between": {op: _between_rows(op) for op in OPS}, "small": [r for op in OPS for r in _small(op)],
               "dw_error": dw, "profile": [p for op in OPS for p in _profile(op)], "seconds": {},
               "host_targets": {"fwd": 1.2, "fwd_bwd": 1.5},
               "host_grid": [r for op in OPS for r in _host_grid(op)],
               "host_steps": {"M": 8, "N": 4096, "dtype": "bfloat16",
                              "steps": [{"op": op, "step": st, "host_us": fig(10.0 + i, 9.0 + i, 11.0 + i)}
                                        for op in OPS for i, st in enumerate(HOST_STEPS)]},
               "host_trace": [_trace(op) for op in OPS],
               "packages": {"liger": None, "quack": "0.6.5"},
               "llama": _llama(),
               "designs": [{"op": op, "design": d, "N": n, "M": 2**27 // n, "config": [d],
                            "bwd_gpu_us": fig(us, us - 1, us + 1)}
                           for op in OPS for n in (2304, 4352)
                           for d, us in (("row", 300.0), ("staged", 240.0))]}
    copy = fig(COPY, 3990.0, 4010.0)
    return {"provenance": {"gpu": "Synthetic GPU", "copy": copy, "copy_gb_per_s": COPY, "quick": False},
            "results": results}


def read_text(path):
    return path.read_text(encoding="utf-8")


# --- SYNTHETIC runs of the benchmark's own plans (faster.benchmark.FULL and QUICK_PLAN): every key
# of every task, figures made up, laid out by faster.benchmark.assemble as a GPU run's are. They
# reach every path the report takes on a run's real shape lists (an empty range, a missing key)
# without a GPU; the hand-made data set above pins the exact strings.

# SYNTHETIC % of the copy bandwidth of each provider's GPU time
RUN_PCT = {"fast": 90.0, "teaching": 40.0, "torch": 70.0, "compile": 85.0, "liger": 80.0, "quack": 88.0}


RUN_HOST_US = {"fast": 30.0, "teaching": 60.0, "torch": 15.0, "compile": 40.0, "liger": 35.0, "quack": 45.0}


RUN_PACKAGES = {"liger": "0.0.0", "quack": None}  # one provider package installed, one not


QUACK_MISSING = "ModuleNotFoundError: No module named 'quack'"


DATA_KEYS = ("packages", "kernels")  # keyed by provider and kernel names


def _spread(value):
    """A SYNTHETIC figure of three repetitions, 1 % apart."""
    return fig(value, 0.99 * value, 1.01 * value)


def _run_figure(key):
    """A SYNTHETIC figure for one timing key of faster.benchmark: the provider's share of the copy
    bandwidth, or its host cost; QuACK not installed, the teaching RMSNorm refusing bf16."""
    op, name, m, n, dtype, pass_, kind = key
    if name == "quack":
        return {"error": QUACK_MISSING}
    if (op, name, dtype) == ("rmsnorm", "teaching", "bfloat16"):
        return {"error": REFUSED}
    if kind == "host":
        return _spread(RUN_HOST_US[name] * (3 if pass_ == "fwd_bwd" else 1))
    n_bytes = providers.bytes_moved(pass_, m, n, getattr(torch, dtype))
    return _spread(n_bytes / (RUN_PCT[name] / 100 * COPY * 1e3))


def _run_profile(op, m, n, provider):
    """SYNTHETIC profiler repetitions of one call, through faster.probes.profile_record."""
    prefix = OPS_PREFIX[op]
    kernels = {f"{prefix}_fast_fwd_kernel": (100.0, 1), f"{prefix}_fast_bwd_kernel": (300.0, 1),
               "sum_partials_kernel": (5.0, 1)} if provider == "fast" else {"void at::native::vectorized_norm": (600.0, 3)}
    runs = [{"host_us": 900.0 + i, "kernels": {k: (us + i, c) for k, (us, c) in kernels.items()}} for i in range(3)]
    return probes.profile_record(op, m, n, torch.bfloat16, provider, runs)


def _run_trace(op):
    """SYNTHETIC trace repetitions of one call (call_spans' records), through faster.probes.trace_record."""
    def one(i):
        spans = [{"name": "Forward", "thread": 0, "depth": 0, "start_us": 10.0 + i, "us": 40.0, "count": 1},
                 {"name": "cuLaunchKernelEx", "thread": 0, "depth": 1, "start_us": 30.0, "us": 8.0 + i, "count": 2},
                 {"name": "Backward", "thread": 1, "depth": 0, "start_us": 60.0, "us": 50.0 + i, "count": 1}]
        return {"call_us": 200.0 + i, "outside_us": 100.0 + i, "launch_us": 20.0, "launches": 3, "spans": spans}
    return probes.trace_record(op, probes.STEPS_SHAPE, torch.bfloat16, "fast", [one(i) for i in range(3)])


def synthetic_run(plan):
    """The data set faster.benchmark.measure would return for plan, with SYNTHETIC figures, and its
    provenance as the benchmark's CLI stores it."""
    error = {"max_abs": 2.0, "rel_norm": 1.5e-3, "max_abs_ref": 600.0}
    measured = speed.Measured(
        device={"name": "Synthetic GPU", "sm_count": 132, "l2_bytes": 50_000_000},
        packages=RUN_PACKAGES,
        timing={key: _run_figure(key) for key in speed.timing_keys(plan) + speed.compile_keys(plan)},
        designs={key: _spread(300.0) for key in speed.design_keys(plan)},
        host_grid={key: _run_figure(key) for key in speed.host_grid_keys(plan)},
        steps={key: _spread(10.0) for key in speed.host_step_keys()},
        traces=[_run_trace(op) for op in OPS],
        llama={key: _spread(10000.0) for key in llama.llama_keys(plan.llama_shapes)},
        agreement=[llama.agreement_record(provider, hidden, 10.5, 10.5, 1e-3)
                   for provider, hidden in llama.llama_keys(plan.llama_shapes)],
        dw=probes.dw_record(*plan.dw_shape, torch.bfloat16, {name: error for name in probes.DW_PROVIDERS},
                           {**error, "max_abs": 14.0}, 96),
        profiles=[_run_profile(op, m, n, provider) for op, m, n, provider in speed.profile_points(plan)],
        seconds={"total": 0.0, "slowest_tasks": []})
    return speed.document(speed.assemble(plan, measured), fig(COPY, 3990.0, 4010.0), plan.quick)
