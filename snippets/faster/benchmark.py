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
Every function returns JSON-serializable dicts. What is timed and how is faster.providers'; the
looks inside one call (host steps, profiles, traces, the dW error) are faster.probes'; the Llama
training step is faster.llama's; this module plans the run, runs it and assembles the results.
"""

import argparse
import dataclasses
import json
import time

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import torch

from faster.llama import LLAMA, LLAMA_SHAPES, MODEL_PROTOCOL, llama_tasks
from faster.probes import HOST_STEPS, STEPS_SHAPE, all_host_step_tasks, dw_error, host_trace, profile
from faster.providers import (DTYPES, LN_EPS, OPS, PASSES, PROVIDERS, RMS_EPS, _dtype_name, _fast_module,
                              _inputs, bytes_moved, figure_keys, gpu_tasks, host_tasks, package_versions)
from normkit import bench, fastop
from normkit.launch_tables import backward_entry_config

TARGET_SHAPES = ((32768, 4096), (32768, 8192))


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
        def make(config=backward_entry_config(entry, n)):
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


HOST_TARGETS = {"fwd": 1.3, "fwd_bwd": 1.5}


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


# widths between the tables' entries (the backward takes the entry of the next multiple of 256): below
# 4096 and 8192's next entries, rows that start 2, 4, 8 bytes off 16 (N odd, 2 and 4 mod 8), on 16
# bytes but not 128 (N = 8 mod 64: at 8200 and 16136, where two programs share a row, its second
# half would start 8 bytes off 16 at N / 2), a multiple of 64, and the entries on either side; the
# widest odd rows (12289, 16383); and past the tables' widest, where the chunked designs take over
# (16385, and 20480 and 32768 in the chunked designs' range)
BETWEEN_N = (4096, 4097, 4098, 4100, 4104, 4160, 4352, 8192, 8193, 8194, 8196, 8200, 8256, 8448,
             12289, 16128, 16136, 16383, 16384, 16385, 20480, 32768)


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
    split = fastop.programs_a_row(bwd)
    # as backward_rows computes it: groups of `split` programs, one partial row each
    groups, rows_per_program = fastop.backward_grid(M, bwd[2], max(1, sms * bwd[4] // split))
    return {"op": op, "M": M, "N": N, "fwd_design": fwd[0], "fwd_block": fwd[1], "fwd_rows": fwd[2],
            "fwd_warps": fwd[3], "fwd_programs": -(-M // fwd[2]), "bwd_design": bwd[0], "bwd_block": bwd[1],
            "bwd_rows": bwd[2], "bwd_warps": bwd[3], "programs_per_sm": bwd[4],
            "prefetch": bool(bwd[5]) if bwd[0] == "row" else False, "sm_count": sms,
            "split": split, "stages": bwd[6] if staged else 1, "bwd_rest": bwd[7] if staged else 0,
            "bwd_early": bwd[8] if staged else False,
            "bwd_programs": groups * split, "partial_rows": groups, "rows_per_program": rows_per_program}


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
