"""faster.report.write renders the "faster" tables, plots and quotes. Every number here is SYNTHETIC,
made up to test the rendering only: none of it is a measurement and none of it is ever published.

The synthetic data set has the layout of faster.benchmark.measure() (see a quick run's
measurements.json): every GPU time and host cost a figure {"median", "low", "high", "runs"}, the
copy bandwidth a figure in the provenance. GPU times are made from chosen percentages of a 4000 GB/s
copy, so that the expected strings (worked out by hand in the comments) read in percent: a figure's
stated range is its runs' range, at least ±3 % of the median (GPU time), ±60 % (host cost) or ±2 %
(copy bandwidth), and its digits are the ones that range supports (normkit.claims).
"""

import json

import pytest

import torch

from faster import benchmark as speed
from faster import report
from normkit.testing import key_paths
from normkit.words import ENGLISH

# the plots keep Chinese text as SVG text, drawn by the browser: matplotlib's font has no CJK glyphs
pytestmark = pytest.mark.filterwarnings("ignore:Glyph .* missing from font")

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


def _read(path):
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
    n_bytes = speed.bytes_moved(pass_, m, n, getattr(torch, dtype))
    return _spread(n_bytes / (RUN_PCT[name] / 100 * COPY * 1e3))


def _run_profile(op, m, n, provider):
    """SYNTHETIC profiler repetitions of one call, through faster.benchmark.profile_record."""
    prefix = OPS_PREFIX[op]
    kernels = {f"{prefix}_fast_fwd_kernel": (100.0, 1), f"{prefix}_fast_bwd_kernel": (300.0, 1),
               "sum_partials_kernel": (5.0, 1)} if provider == "fast" else {"void at::native::vectorized_norm": (600.0, 3)}
    runs = [{"host_us": 900.0 + i, "kernels": {k: (us + i, c) for k, (us, c) in kernels.items()}} for i in range(3)]
    return speed.profile_record(op, m, n, torch.bfloat16, provider, runs)


def _run_trace(op):
    """SYNTHETIC trace repetitions of one call (call_spans' records), through faster.benchmark.trace_record."""
    def one(i):
        spans = [{"name": "Forward", "thread": 0, "depth": 0, "start_us": 10.0 + i, "us": 40.0, "count": 1},
                 {"name": "cuLaunchKernelEx", "thread": 0, "depth": 1, "start_us": 30.0, "us": 8.0 + i, "count": 2},
                 {"name": "Backward", "thread": 1, "depth": 0, "start_us": 60.0, "us": 50.0 + i, "count": 1}]
        return {"call_us": 200.0 + i, "outside_us": 100.0 + i, "launch_us": 20.0, "launches": 3, "spans": spans}
    return speed.trace_record(op, speed.STEPS_SHAPE, torch.bfloat16, "fast", [one(i) for i in range(3)])


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
        llama={key: _spread(10000.0) for key in speed.llama_keys(plan.llama_shapes)},
        agreement=[speed.agreement_record(provider, hidden, 10.5, 10.5, 1e-3)
                   for provider, hidden in speed.llama_keys(plan.llama_shapes)],
        dw=speed.dw_record(*plan.dw_shape, torch.bfloat16, {name: error for name in speed.DW_PROVIDERS},
                           {**error, "max_abs": 14.0}, 96),
        profiles=[_run_profile(op, m, n, provider) for op, m, n, provider in speed.profile_points(plan)],
        seconds={"total": 0.0, "slowest_tasks": []})
    return speed.document(speed.assemble(plan, measured), fig(COPY, 3990.0, 4010.0), plan.quick)


@pytest.mark.parametrize("plan", [speed.FULL, speed.QUICK_PLAN], ids=["full", "quick"])
def test_a_run_of_each_plan_renders_every_file(plan, tmp_path):
    measurements = synthetic_run(plan)
    json.dumps(measurements, allow_nan=False)  # the data set is stored as JSON
    report.write(measurements, tmp_path)
    q = json.loads(_read(tmp_path / "quotes.json"))
    assert q["gpu"] == "Synthetic GPU" and q["sweep_n_count"] == str(len(plan.sweep_n))
    names = {p.name for p in tmp_path.iterdir()}
    assert {f"{op}-{t}.md" for op in OPS for t in ("targets", "sweep", "between", "designs")} <= names
    # the rows of the designs' side-by-side are the plan's: 2²⁰ / N in the quick run
    assert f"M = {report._total_text(plan.sweep_total)} / N rows" in _read(tmp_path / "layernorm-designs.md")


def test_the_hand_made_data_set_has_a_runs_layout():
    # the exact strings above are worked out on a hand-made data set: every key it has, a run's
    # layout (assemble's) has too, so the two cannot drift apart. Errors aside: a run records one
    # where a provider fails, which the synthetic runs do not all reach
    run = key_paths(synthetic_run(speed.FULL), data_keys=DATA_KEYS)
    hand = {p for p in key_paths(synthetic_measurements(), data_keys=DATA_KEYS) if not p.endswith(".error")}
    assert hand <= run, sorted(hand - run)


def test_the_walks_chunks_are_a_sentence_even_where_the_sweep_has_no_walked_width():
    # the full sweep's odd 16-bit widths 2049 to 16383 take chunks of 1024 to 4096 lanes (N / 4,
    # clamped); the quick sweep ends at 1024, below the walk's narrowest width (WALK_MIN_COLS)
    full, quick = (report.quotes(synthetic_run(plan)) for plan in (speed.FULL, speed.QUICK_PLAN))
    assert full["walk_chunks"] == "from 1024 to 4096 lanes at the sweep's odd widths"
    assert quick["walk_chunks"] == ENGLISH("walk_chunks_none")


def test_write_renders_every_file_in_every_language(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    expected = ["basis.json"] + [f"quotes{lang}.json" for lang in LANGS]  # basis.json: one, what verdicts rest on
    for stem in ("dw-error", "llama", *(f"{op}-{t}" for op in OPS for t in ("targets", "small", "profile", "sweep",
                                                                             "dtypes", "host", "host-steps", "host-trace",
                                                                             "designs", "between"))):
        expected += [f"{stem}{lang}.md" for lang in LANGS]
    expected += [f"{op}-sweep-gpu{lang}.svg" for op in OPS for lang in LANGS]
    assert names == sorted(expected)
    # the same rows in every language: words and number formats differ, not the number of rows
    for stem in ("layernorm-targets", "rmsnorm-small", "layernorm-profile", "dw-error"):
        rows = [[line for line in _read(tmp_path / f"{stem}{lang}.md").splitlines() if line.startswith("| ")]
                for lang in LANGS]
        assert len(rows[0]) == len(rows[1]) == len(rows[2]), stem


def test_targets_table_reads_each_target_from_the_stated_range(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    table = _read(tmp_path / "layernorm-targets.md")
    # the copy: 4000 with runs 3990–4010, stated ±2 % (3920–4080), tens
    assert table.startswith("**bfloat16** · M = 32768 · copy bandwidth (same run): 4000 (3920–4080) GB/s · "
                            "targets: fwd ≥ 92%, fwd+bwd ≥ 85%")
    # fast at 4096: fwd 95 % (stated 92.15–97.85: all of it ≥ 92, met) in 2*32768*4096*2 B / (0.95*4000 GB/s)
    # = 141.3 µs (stated 137.0–145.5: units); fwd+bwd 80 % (77.6–82.4: all of it < 85, missed) in 419.4 µs
    # (stated 406.8–432.0: tens)
    assert "| 32768×4096 | `layer_norm_fast` | 141 (137–146) | 95 (92–98) ✓ | 420 (400–440) | 80 (77–83) ✗ |" in table
    # fast at 8192: fwd 96.4 % (93.5–99.3) met; fwd+bwd 86 % (83.42–88.58) holds 85: this run cannot tell
    assert "| 32768×8192 | `layer_norm_fast` | 278 (270–287) | 96 (93–100) ✓ | 780 (750–810) | 86 (83–89) ≈ |" in table
    # torch.compile at 4096: fwd 92 % (89.24–94.76) holds the target; fwd+bwd 82 % (79.54–84.46) misses it
    assert "| 32768×4096 | `torch.compile` | 146 (141–151) | 92 (89–95) ≈ | 410 (390–430) | 82 (79–85) ✗ |" in table
    # the teaching kernel: 31 % (stated 30.07–31.93: one decimal) of fwd+bwd
    assert "| 32768×4096 | `layer_norm` | 192 (185–198) | 70 (67–73) ✗ | 1080 (1040–1120) | 31.0 (30.0–32.0) ✗ |" in table
    assert "`Liger`" not in table  # not installed: left out, not shown as refused
    assert "10 warm-up replays, then the median of 20 samples of 10 replays" in table
    zh = _read(tmp_path / "rmsnorm-targets.zh.md")
    assert "| 32768×4096 | `rms_norm` | 不支持 | — | — | — |" in zh  # the teaching kernel refuses bf16
    assert "| 32768×4096 | `rms_norm_fast` | 141 (137–146) | 95 (92–98) ✓ | 420 (400–440) | 80 (77–83) ✗ |" in zh


def test_small_table_keeps_gpu_time_and_host_cost_apart(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    small = _read(tmp_path / "layernorm-small.md")
    assert small.startswith("**128×257 float32** · µs per call")
    # GPU 4.2 (stated 4.074–4.326) and 8.4 (8.148–8.652); host 82 (stated ±60 %: 32.8–131.2, tens)
    # and 310 (124–496, hundreds)
    assert "| `layer_norm_fast` | 4.2 (4.0–4.4) | 8.4 (8.1–8.7) | 80 (30–140) | 300 (100–500) |" in small
    assert "| `layer_norm` | 5.5 (5.3–5.7) | 13.2 (12.8–13.6) | 130 (50–210) | 400 (100–700) |" in small
    # host 153: stated 61.2–244.8, tens: 150 (60–250)
    assert "| `F.layer_norm` | 5.2 (5.0–5.4) | 8.8 (8.5–9.1) | 30 (10–50) | 150 (60–250) |" in small
    assert "Liger" not in small
    assert "the fastest of 200 plain calls" in small
    vi = _read(tmp_path / "rmsnorm-small.vi.md")
    assert "| `rms_norm_fast` | 4,2 (4,0–4,4) | 8,4 (8,1–8,7) | 80 (30–140) | 300 (100–500) |" in vi


def test_profile_and_dw_tables(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    profile = _read(tmp_path / "layernorm-profile.md")
    # fast at 4096: host 900 (stated ±60 %: 360–1440, hundreds), kernels 400 (388–412); no verdict column
    assert "| 32768×4096 | `layer_norm_fast` | 900 (300–1500) | 400 (380–420) | 3 |" in profile
    # torch at 4096: host 150 (60–240, tens), GPU 600 (582–618)
    assert "| 32768×4096 | `F.layer_norm` | 150 (60–240) | 600 (580–620) | 3 |" in profile
    # fast at 8192: host 520 (208–832; hundreds: 500), GPU 780 (756.6–803.4)
    assert "| 32768×8192 | `layer_norm_fast` | 500 (200–900) | 780 (750–810) | 3 |" in profile
    # torch at 8192: host 700 (280–1120), GPU 800 (776–824)
    assert "| 32768×8192 | `F.layer_norm` | 700 (200–1200) | 800 (770–830) | 3 |" in profile
    assert "3 repetitions, shown as median (range)" in profile
    rms = _read(tmp_path / "rmsnorm-profile.zh.md")
    assert "| 32768×4096 | `rms_norm_fast` | 900 (300–1500) | 400 (380–420) | 3 |" in rms
    assert "32768×8192 | `F.rms_norm`" not in rms  # its profile failed: no row
    dw = _read(tmp_path / "dw-error.md")
    assert dw.startswith("**LayerNorm** · 32768×4096 bfloat16 · largest |dW| = 600")
    assert "(official tutorial, emulated, 96 rows) | 14 | 2.0\u00a0×\u00a010⁻² | 7.00× |" in dw
    assert "| `layer_norm_fast`: fp32 registers, (programs × N) fp32 partial rows | 2 | 1.5\u00a0×\u00a010⁻³ | 1.00× |" in dw
    assert "Liger" not in dw
    assert "| 14 | 2,0\u00a0×\u00a010⁻² | 7,00 lần |" in _read(tmp_path / "dw-error.vi.md")
    assert "| 14 | 2.0\u00a0×\u00a010⁻² | 7.00 倍 |" in _read(tmp_path / "dw-error.zh.md")


def test_sweep_and_dtype_tables(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    sweep = _read(tmp_path / "layernorm-sweep.md")
    assert "M = 2²⁷ / N · bfloat16" in sweep
    # the columns: the shown widths that were measured (2048 is measured but not shown)
    assert "| provider | N = 1024 | N = 4096 | N = 8192 | N = 16384 | lowest over the sweep (fwd / fwd+bwd) |" in sweep
    # every N moves 2*2^27*2 B forward: the percentages are the synthetic ones; the lowest of each pass last
    assert "| `layer_norm_fast` | 91 / 80 | 95 / 88 | 96 / 84 | 94 / 78 | 91 / 78 |" in sweep
    # under 33 % the stated range (±3 %) is narrower than 1: one decimal
    assert "| `layer_norm` | 35 / 20.0 | 35 / 24.0 | 35 / 26.0 | 35 / 18.0 | 35 / 18.0 |" in sweep
    assert "| `torch.compile` | — | — | — | — | 97 / 95 |" in sweep
    assert "torch.compile" not in _read(tmp_path / "rmsnorm-sweep.md")
    dtypes = _read(tmp_path / "layernorm-dtypes.md")
    # fp32 at half the rows moves the same bytes; sorted by N, dtype, provider
    assert ("| 32768×4096 | float16 | `F.layer_norm` | 70 (67–73) | 60 (58–62) |\n"
            "| 16384×4096 | float32 | `layer_norm_fast` | 90 (87–93) | 80 (77–83) |") in dtypes
    assert "Liger" not in dtypes


def test_between_table_and_quotes(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    table = _read(tmp_path / "layernorm-between.md")
    # providers not installed (Liger) have no column; a refused width is a dash; 4097 * 2 B = 8194 B
    # rows start on 2 bytes, 4104 * 2 on 16
    assert "| N | rows start on | `layer_norm_fast` | `F.layer_norm` | `QuACK` |" in table
    assert "| 4097 | 2 B | 50 / 40 | 20.0 / 28.0 | — |" in table
    assert "| 4104 | 16 B | 93 / 87 | 60 / 45 | 95 / 95 |" in table
    q = json.loads(_read(tmp_path / "quotes.json"))
    assert q["ln_between_align_n4097"] == "2" and q["ln_between_fast_fwdbwd_pct_n4097"] == "40%"
    # 4097 (40) lies under 4096 (88) and 4352 (86) by far more than the margin; 4104 (87) does not lie
    # under 4096's range
    assert q["ln_between_below_sentence"] == ("Forward+backward falls below both launch-table entries around it, "
                                              "by ranges at least 3% apart, at N = 4097.")
    # QuACK is faster forward+backward at 4104 (95 against 87), but their ranges (from 92.15, up to 89.61)
    # are apart by 2.8 %, under the 3 % margin: a rebuild could turn it, so no width is named
    assert q["ln_between_behind_sentence"] == ("No other provider is faster forward+backward at any of these "
                                               "widths, by ranges at least 3% apart.")
    for lang in LANGS[1:]:
        assert "4097" in json.loads(_read(tmp_path / f"quotes{lang}.json"))["ln_between_below_sentence"]


def test_quotes_are_strings_the_pages_can_quote(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    q = json.loads(_read(tmp_path / "quotes.json"))
    assert all(isinstance(v, str) for v in q.values())
    assert q["gpu"] == "Synthetic GPU" and q["sm_count"] == "100" and q["l2_mb"] == "50"
    # Little's law at 4000 GB/s: 4.0 MB on the way per µs of latency, 4e6 / 100 SMs / 1024 = 39 KiB each
    assert (q["inflight_mb_per_us"], q["inflight_kib_per_sm_per_us"]) == ("4.0", "39")
    assert q["copy_gbps"] == "4000 (3920–4080)"
    assert (q["target_fwd"], q["target_fwdbwd"], q["sweep_total"]) == ("92%", "85%", "2^{27}")
    assert (q["sweep_n_min"], q["sweep_n_max"], q["sweep_n_count"]) == ("1024", "16384", "5")
    assert (q["timing_samples"], q["timing_repeats"], q["timing_host_calls"]) == ("20", "3", "200")
    assert q["floor_gpu"] == "3%" and q["floor_host"] == "60%"
    # minimum traffic at 32768x4096 bf16: 2*M*N*2 B = 537 MB, 134 µs at 4000 GB/s; fwd+bwd 1342 MB, 336 µs
    assert q["ln_min_fwd_mb_32768x4096"] == "537" and q["ln_min_fwd_us_32768x4096"] == "134"
    assert q["ln_min_fwdbwd_mb_32768x4096"] == "1342" and q["ln_min_fwdbwd_us_32768x4096"] == "336"
    # the targets
    assert q["ln_fast_fwd_pct_32768x4096"] == "95%" and q["ln_fast_fwdbwd_pct_32768x4096"] == "80%"
    assert q["ln_fast_fwd_us_32768x4096"] == "141" and q["ln_fast_fwdbwd_us_32768x4096"] == "420"
    assert q["ln_fast_fwd_target_32768x4096"] == "met" and q["ln_fast_fwdbwd_target_32768x4096"] == "missed"
    assert q["ln_fast_fwdbwd_target_32768x8192"] == "within the spread"
    assert q["ln_targets_sentence"] == ("Of the 4 targets, 2 met by the whole range of its figure, 1 missed by "
                                        "the whole range and 1 inside the range, where this run cannot tell.")
    # the fastest other provider (lowest median time): torch.compile; at 4096 the ranges overlap, at 8192
    # the fast kernel's 270–287 µs lies under torch.compile's 325–346
    assert q["ln_best_other_fwd_32768x4096"] == "torch.compile" and q["ln_best_other_fwd_pct_32768x4096"] == "92%"
    assert q["ln_best_other_fwdbwd_pct_32768x4096"] == "82%"
    assert q["ln_fast_fwd_vs_best_other_32768x4096"] == "on par"
    assert q["ln_fast_fwd_vs_best_other_32768x8192"] == "faster"
    assert q["ln_fwd_vs_best_other_sentence"] == (
        "The forward alone is on par at 32768×4096 (95% against torch.compile's 92%) and faster at 32768×8192 "
        "(96% against torch.compile's 80%).")
    assert q["rms_best_other_fwdbwd_32768x4096"] == "torch.compile"
    assert "rms_teaching_fwd_pct_32768x4096" not in q  # refused: nothing to quote
    # the launch and the partial rows: 200 programs x 4096 x 4 B x (dW, dB) = 6.6 MB, 1.0 % of 1342 MB moved
    # twice; RMSNorm has dW alone; the teaching RMSNorm's M x N fp32 partial buffer: 537 MB
    assert q["ln_partial_mb_32768x4096"] == "6.6" and q["ln_partial_share_32768x4096"] == "1.0%"
    assert q["rms_partial_mb_32768x4096"] == "3.3" and q["rms_teaching_partial_mb_32768x4096"] == "537"
    assert q["ln_prefetch_32768x4096"] == "PREFETCH=1" and q["ln_bwd_programs_32768x4096"] == "200"
    # the profile
    assert q["ln_fast_host_us_32768x4096"] == "900" and q["ln_fast_gpu_us_32768x4096"] == "400"
    assert q["ln_fast_launches_32768x4096"] == "3"
    # no "limited by" verdict: the profile's host time is too noisy for one (notes/timing.md)
    assert not any("_bound_" in key for key in q)
    # each kernel's time per repetition, summed by name: fwd 99/100/102, bwd 290/295/297, reduce 4.9/5.0/5.1
    assert q["ln_fast_fwd_kernel_us_32768x4096"] == "100" and q["ln_fast_bwd_kernel_us_32768x4096"] == "295"
    assert q["ln_fast_reduce_kernel_us_32768x4096"] == "5.0" and q["rms_fast_reduce_kernel_us_32768x8192"] == "10.0"
    assert q["rms_fast_fwd_kernel_us_32768x8192"] == "200" and q["rms_fast_bwd_kernel_us_32768x8192"] == "570"
    assert "rms_torch_host_us_32768x8192" not in q  # the profile that failed
    # the launch-bound shape: GPU time 5.2 / 4.2 = 1.24 (ranges apart), 8.8 / 8.4 = 1.05 (ranges overlap);
    # host cost 31 / 82 = 0.38: the fast path costs the host more
    assert q["small_shape"] == "128×257" and q["small_dtype"] == "float32"
    assert q["ln_fast_small_fwd_gpu_us"] == "4.2" and q["ln_fast_small_fwdbwd_host_us"] == "300"
    # each with the range its verdict reads: faster where the low end clears 1 by the 3 % margin
    assert q["ln_small_fwd_gpu_vs_torch"] == "1.24× (1.16–1.32)" and q["ln_small_fwd_gpu_verdict"] == "faster"
    assert q["ln_small_fwdbwd_gpu_vs_torch"] == "1.05× (0.98–1.12)" and q["ln_small_fwdbwd_gpu_verdict"] == "on par"
    # host 82 against 31, paired: a ratio of 0.38, its range (the paired one, at least ±20 %) all under 1/1.2
    assert q["ln_small_fwd_host_vs_torch"] == "0.38× (0.31–0.48)" and q["ln_small_fwd_host_verdict"] == "slower"
    # dW error
    assert q["dw_lock_vs_fast"] == "7.00×" and q["dw_lock_buffer_in_input_dtype_rel"] == "2.0\u00a0×\u00a010⁻²"
    assert q["dw_ref_max"] == "600" and q["dw_lock_group"] == "96"
    assert q["dw_half_ulp"] == "2"  # bf16 near 600: exponent 9, 8 significant bits
    # not installed: no figure of it to quote, only the sentence that says so
    assert [k for k in q if k.startswith(("ln_liger", "rms_liger", "dw_liger"))] == ["ln_liger_sweep_fwd",
                                                                                     "rms_liger_sweep_fwd"]
    assert q["ln_liger_sweep_fwd"] == "Liger-Kernel was not installed in this run, so the tables leave it out."


def test_sweep_quotes_count_targets_from_the_stated_ranges(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    q = json.loads(_read(tmp_path / "quotes.json"))
    assert q["ln_fast_gpu_fwd_pct_n1024"] == "91%" and q["ln_fast_gpu_fwdbwd_pct_n4096"] == "88%"
    assert q["ln_fast_gpu_lowest_fwd_pct"] == "91%" and q["ln_fast_gpu_lowest_fwdbwd_pct"] == "78%"
    assert not any("worst" in key for key in q)  # which width is lowest can change between builds
    # fwd+bwd 80, 86, 88, 84, 78: the median is 84
    assert q["ln_fast_gpu_fwdbwd_pct_typical"] == "84%"
    assert q["ln_teaching_gpu_fwdbwd_pct_typical"] == "22.0%"
    # fwd against 90 %: 91 (88.3–93.7) within, 93, 95, 96, 94 met (targets take no margin)
    # fwd+bwd against 85 % up to N = 8192 and 75 % above: 80 missed, 86 within, 88 met, 84 (81.5–86.5)
    # within, 78 at 16384 (75.7–80.3) met
    assert q["ln_sweep_tallies"] == ("forward meets its target at 4 and has it inside its range at 1 of the 5 widths, "
                                     "and its forward+backward meets its target at 2, misses it at 1 and has it "
                                     "inside its range at 2 of the 5 widths")
    # torch.compile's fwd+bwd at 2048 (95 %: 342.6–363.8 µs) lies under the fast kernel's (86 %: 378.5–401.9 µs)
    # by 4 %, over the 3 % margin
    assert q["ln_sweep_fwdbwd_behind_sentence"] == ("Another provider is faster forward+backward, by ranges "
                                                   "at least 3% apart, at N = 2048.")
    assert q["rms_sweep_fwdbwd_behind_sentence"] == ENGLISH("sweep_behind_none").format(margin="3%")
    # the 80 % that misses its 85 % is the fast kernel's fwd+bwd at 1024
    assert q["ln_sweep_fwdbwd_missed_sentence"] == "The forward+backward target is missed at N = 1024."
    assert q["ln_compile_gpu_fwdbwd_pct_n2048"] == "95%"


def test_quotes_in_every_language(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    en = json.loads(_read(tmp_path / "quotes.json"))
    zh = json.loads(_read(tmp_path / "quotes.zh.json"))
    vi = json.loads(_read(tmp_path / "quotes.vi.json"))
    assert en.keys() == zh.keys() == vi.keys()
    assert zh["ln_small_fwd_gpu_vs_torch"] == "1.24 倍 (1.16–1.32)" and zh["dw_lock_vs_fast"] == "7.00 倍"
    assert zh["ln_fast_fwd_target_32768x4096"] == "达到" and zh["ln_fast_fwd_vs_best_other_32768x8192"] == "更快"
    # "none" said once: a sentence, not "0 个：无"
    assert zh["rms_sweep_fwdbwd_behind_sentence"] == "在这些宽度上，没有哪个其他实现的前向+反向比它快、且两者范围相隔至少 3%。"
    assert zh["ln_sweep_fwdbwd_behind_sentence"] == "其他实现的前向+反向比它快、且两者范围相隔至少 3% 的宽度有 1 个：2048。"
    assert vi["ln_between_below_sentence"] == ("Có 1 độ rộng mà lượt xuôi + lượt ngược thấp hơn cả hai mục của bảng "
                                               "cấu hình khởi chạy ở hai bên, với khoảng đo cách cả hai ít nhất 3%: 4097.")
    assert vi["ln_fast_small_fwd_gpu_us"] == "4,2" and vi["ln_small_fwd_gpu_vs_torch"] == "1,24 lần (1,16–1,32)"
    assert vi["ln_teaching_gpu_fwdbwd_pct_typical"] == "22,0%" and vi["ln_partial_mb_32768x4096"] == "6,6"


def test_plots_are_deterministic_with_text_as_text_in_each_language(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    report.write(synthetic_measurements(), first)
    report.write(synthetic_measurements(), second)
    for path in sorted(first.iterdir()):
        assert path.read_bytes() == (second / path.name).read_bytes(), path.name
    svg = _read(first / "layernorm-sweep-gpu.svg")
    assert svg.lstrip().startswith("<?xml") and "<dc:date>" not in svg
    # labels are <text> (svg.fonttype none), in the page's words, the functions' names in every language
    assert "<text" in svg and "fwd+bwd" in svg and "layer_norm_fast" in svg and "torch.compile" in svg
    assert "Synthetic GPU · M = 2²⁷ / N · bfloat16" in svg
    zh = _read(first / "layernorm-sweep-gpu.zh.svg")
    assert "前向+反向" in zh and "layer_norm_fast" in zh
    vi = _read(first / "rmsnorm-sweep-gpu.vi.svg")
    assert "lượt xuôi" in vi and "rms_norm_fast" in vi and "Liger" not in vi


@pytest.mark.gpu
def test_quick_measure_renders(tmp_path):
    from normkit import bench

    results = speed.measure(quick=True)
    json.dumps(results)
    assert results["protocol"] == bench.protocol_record(bench.QUICK)
    # the quick run skips torch.compile; a provider that is missing still has its (error) row
    assert {r["provider"] for r in results["targets"]["layernorm"]} == set(speed.PROVIDERS) - {"compile"}
    for op in speed.OPS:
        for r in results["targets"][op] + results["sweep"][op]:
            if "error" not in r:
                for key in ("fwd_gpu_us", "fwd_bwd_gpu_us"):
                    assert len(r[key]["runs"]) == bench.QUICK.repeats and r[key]["median"] > 0
    for r in results["small"]:
        if "error" not in r:
            assert all(r[f"{key}_{kind}_us"]["median"] > 0 for key in ("fwd", "fwd_bwd") for kind in ("gpu", "host"))
    for p in results["profile"]:
        if "error" not in p:
            assert p["host_us_per_call"]["median"] > 0 and p["gpu_us_per_call"]["median"] > 0
            assert all(set(k) == {"kernel", "us_per_call", "count_per_call"} for k in p["kernels"])
    report.write(speed.document(results, bench.copy_bandwidth_gb_per_s(protocol=bench.QUICK), True), tmp_path)
    assert json.loads(_read(tmp_path / "quotes.json"))["gpu"] == results["device"]


def test_host_table_reads_each_target_from_the_paired_ratio(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    table = _read(tmp_path / "rmsnorm-host.md")
    # 20 / 18 = 1.11x, within ±20 % of its median: the range 0.89-1.33 holds 1.2, so "≈"; 60 / 20 = 3x: "✗",
    # each ratio shown with the paired range that decides it (18 prints as 20: a host cost's digits stop
    # at its ±60 % floor)
    assert "| 1×4096 | 20 · 20 | 1.1× (0.8–1.4) ≈ | 150 · 100 | 1.5× (1.2–1.8) ≈ |" in table, table
    assert "| 8×4096 | 60 · 20 | 3.0× (2.4–3.6) ✗ |" in table, table
    q = json.loads(_read(tmp_path / "quotes.json"))
    # forward 1.1x (within) and 3x (missed); forward+backward 1.5x (within) at both
    assert q["rms_host_tallies"] == ("The forward target is inside the range at 1 and missed at 1 of the 2 shapes, "
                                     "the forward+backward one inside the range at all 2 shapes")
    assert q["rms_host_fwd_ratio_span"] == "1.1× to 3.0×"
    assert q["host_fwd_target"] == "1.2×" and q["host_m_list"] == "1 and 8"


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


def test_host_trace_table(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    md = _read(tmp_path / "layernorm-host-trace.md")
    rows = [ln for ln in md.splitlines() if ln.startswith("| ")]
    assert len(rows) == 1 + 3 + 2  # the header, the spans, the whole call and its time in no span
    # host figures carry at least ±60 % of their median as their range (normkit.claims)
    assert rows[2] == "| \u2003↳ `cuLaunchKernelEx` ×2 | caller | 30 (10–50) | 8 (3–13) |", rows[2]
    assert rows[3].startswith("| `LayerNormFastFunctionBackward` | autograd |")
    assert rows[4] == "| **the whole call** | caller | | 200 (80–320) |"
    assert "the fastest of 50 plain forward+backward calls of layer_norm_fast" in md
    q = json.loads(_read(tmp_path / "quotes.json"))
    assert (q["ln_trace_call_us"], q["ln_trace_outside_us"], q["ln_trace_launches"]) == ("200", "100", "3")
    zh = _read(tmp_path / "layernorm-host-trace.zh.md")
    assert "| **整个调用** | 调用方 |" in zh

def test_host_steps_and_llama_tables(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    steps = _read(tmp_path / "layernorm-host-steps.md")
    assert len([ln for ln in steps.splitlines() if ln.startswith("| ")]) == 1 + len(HOST_STEPS)
    assert "| the whole forward call, layer_norm_fast | 16 (6–26) |" in steps, steps
    llama = _read(tmp_path / "llama.md")
    # 12000 / 10000 µs: 1.2x, faster (the ranges do not overlap); Liger is not installed: left out
    assert "| 2048 | `rms_norm_fast` | 10.0 (9.7–10.3) | 1.20× · faster | 10.50003 | 8.4\u00a0×\u00a010⁻³ |" in llama, llama
    assert "Liger" not in llama.split("\n\n")[1]
    q = json.loads(_read(tmp_path / "quotes.json"))
    assert q["llama_fast_speedup_h2048"] == "1.20×" and q["llama_fast_verdict_h2048"] == "faster"
    assert "llama_liger_speedup_h2048" not in q and "llama_fast_vs_liger" not in q


def test_designs_side_by_side():
    m = synthetic_measurements()
    md = report.designs_md(m["results"], "layernorm", COPY, ENGLISH)
    lines = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(lines) == 1 + 2  # the header and one row per width
    # 3 * M * N bf16 bytes in 300 and 240 us, against the copy bandwidth; no chunked figure there
    row_pct, staged_pct = (100 * 3 * (2**27 // 2304) * 2304 * 2 / (us * 1e3) / COPY for us in (300, 240))
    assert lines[1].startswith("| 2304 |") and lines[1].rstrip().endswith("| — |")
    assert f"| {row_pct:.0f}% | {staged_pct:.0f}% |" in lines[1]
    q = report.quotes(m, ENGLISH)
    assert q["ln_design_staged_bwd_pct_n4352"] == f"{100 * 3 * (2**27 // 4352) * 4352 * 2 / 240e3 / COPY:.0f}%"
    assert q["ln_design_staged_vs_row_n2304"] == ENGLISH("faster")


def test_designs_in_another_dtype_are_rows_and_quotes_of_their_own():
    m = synthetic_measurements()
    m["results"]["designs"] += [{"op": "layernorm", "design": d, "N": 16384, "dtype": "float32", "M": 2**26 // 16384,
                                 "config": [d], "bwd_gpu_us": fig(us, us - 1, us + 1)}
                                for d, us in (("chunked", 500.0), ("staged", 300.0))]
    md = report.designs_md(m["results"], "layernorm", COPY, ENGLISH)
    lines = [line for line in md.splitlines() if line.startswith("| ")]
    assert lines[-1].startswith("| 16384 · float32 | — |")  # after the run's own dtype, no row design
    # fp32: 4 bytes an element, at half the rows
    staged_pct = 100 * 3 * (2**26 // 16384) * 16384 * 4 / 300e3 / COPY
    q = report.quotes(m, ENGLISH)
    assert q["ln_design_staged_bwd_pct_n16384_fp32"] == f"{staged_pct:.0f}%"
    assert q["ln_design_staged_vs_chunked_n16384_fp32"] == ENGLISH("faster")
    assert q["design_n_list"] == "2304 and 4352"  # the run's own dtype only


def test_targets_say_which_provider_packages_the_run_had(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    assert "Provider packages in this run: Liger-Kernel: not installed · QuACK 0.6.5." in _read(
        tmp_path / "layernorm-targets.md")
    assert "本次运行中的第三方实现：Liger-Kernel：未安装 · QuACK 0.6.5。" in _read(tmp_path / "rmsnorm-targets.zh.md")
    # a data set measured before the packages were recorded says nothing about them
    m = synthetic_measurements()
    del m["results"]["packages"]
    assert "packages" not in report.targets_md(m["results"], "layernorm", m["provenance"]["copy"], ENGLISH)


def test_a_provider_package_forward_over_the_sweep_is_one_sentence_present_or_not(tmp_path):
    m = synthetic_measurements()
    sweep = m["results"]["sweep"]["layernorm"]
    sweep += [{**r, "provider": "quack"} for r in sweep if r["provider"] == "fast"]
    q = report.quotes(m, ENGLISH)
    fast = [q[f"ln_fast_gpu_fwd_pct_n{n}"] for n in SWEEP_N]
    low, high = min(fast, key=lambda p: float(p.rstrip("%"))), max(fast, key=lambda p: float(p.rstrip("%")))
    assert q["ln_quack_sweep_fwd"] == f"Over the sweep, QuACK's forward runs at {low} to {high} of the copy bandwidth in this run."
    # the run without the package says so, in a sentence of the page's language
    assert q["rms_quack_sweep_fwd"] == "QuACK was not installed in this run, so the tables leave it out."
    report.write(m, tmp_path)
    zh = json.loads(_read(tmp_path / "quotes.zh.json"))
    assert zh["rms_liger_sweep_fwd"] == "本次运行没有安装 Liger-Kernel，所以表中没有它。"
    assert zh["ln_quack_sweep_fwd"].startswith("在本次运行的宽度扫描中，QuACK 的前向速度介于拷贝带宽的 ")


def test_a_header_puts_no_space_between_chinese_characters():
    assert report._phrase("fwd", "% copy") == "fwd % copy"
    assert report._phrase("前向", "占拷贝带宽 %") == "前向占拷贝带宽 %"
    assert report._phrase("前向", "GPU µs") == "前向 GPU µs"
