"""The tuning run behind the fast kernels' launch tables (notes/fast-kernels.md), on one CUDA GPU.

    python -m faster.tune --out DIR [--step 256] [--budget-s 420]

For every N that is a multiple of --step up to 16384 (M = 2**27 / N rows, bf16), both ops:

1. every candidate launch configuration of each design of each pass (the whole row in registers,
   "row"; the backward's pipelined "staged", with its tiles and programs a row; and the walk
   along the row in column chunks, "chunked"), timed GPU-bound: CUDA-graph replay of 8 calls,
   so no host time is counted; the backward's fastest becomes that N's table entry (the
   forward's timings are for fitting the ops' forward ladders, FastNorm.FORWARD);
2. with the new table: the fast path's forward and forward+backward, and torch eager's and
   Liger-Kernel's (when installed), GPU-bound (graph replay) and as plain calls (host included);
   torch.compile at a few N (each N is a compilation of its own); fp16 and fp32 (half the rows) at
   a few N;
3. the host's share: a fwd+bwd call at 128x257 fp32, the minimum over 300 plain calls, against
   F.layer_norm / F.rms_norm, and the same call replayed from a CUDA graph.

With --probe K each candidate is timed at N - K as well, as the kernels would run it there (an
entry serves the widths up to the next multiple of the step below it: a partial chunk, more
padding), and the best is the one whose worse width is fastest.

Writes DIR/layernorm-fast_tuned.json and DIR/rmsnorm-fast_tuned.json (copy them to
snippets/<op>/fast_tuned.json; with --dtype float32, *_fp32.json at half the rows) and DIR/tune.json with every timing. Candidates compile first, in
parallel processes (Triton's on-disk cache then serves the timing process).
"""

import argparse
import json
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import torch
import triton

from faster.candidates import backward_candidates, forward_candidates
from faster.providers import LN_EPS, RMS_EPS, _inputs, _provider_fn
from normkit.bench import copy_bandwidth_gb_per_s, median_call_ms
from normkit.launch_tables import backward_entry_config
from normkit.tiles import forward_entry_config

OPS = ("layernorm", "rmsnorm")
TOTAL = 2**27  # elements per tensor at every N: 256 MiB in bf16
COMPILE_N = (1024, 2560, 4096, 6144, 8192, 12288, 16384)
OTHER_DTYPES_N = (2048, 4096, 8192, 16384)


def fast_module(op):
    if op == "layernorm":
        from layernorm import fast
    else:
        from rmsnorm import fast
    return fast


def rows_for(n, dtype=torch.bfloat16, total=TOTAL):
    """M at width N: total / N rows, half as many in fp32 (the same bytes)."""
    rows = max(1, round(total / n))
    return rows // 2 if dtype == torch.float32 else rows


# (op, N, pass) -> (the table entries worth timing again, the designs timed, each as its name and
# the length of its entries: a design whose entries gained a field since is timed in full) (--prior)
PRIOR = {}
FRESH = set()  # designs ("chunked", or one pass's: "fwd:chunked") timed in full despite --prior (--fresh)
CHECK = False  # --check: the tables' configurations timed, nothing searched
PROBE = 0  # --probe: each candidate timed at N - PROBE too, and ranked by the worse of the two
NEIGHBOURS = 1024  # a width the prior runs did not tune takes the entries of those this close


def keep(op, n, kind, cands):
    """With --prior: the prior runs' fastest configurations (or, at a width they did not tune,
    those of the nearest tuned width on each side), and every candidate of a design they did
    not time or that --fresh names."""
    prior = PRIOR.get((op, n, kind)) or neighbours_prior(op, n, kind)
    if prior is None:
        return cands
    best, designs = prior
    fresh = {d.split(":")[-1] for d in FRESH if ":" not in d or d.startswith(kind + ":")}
    return [c for c in cands if _form(c) not in designs or c[0] in fresh or tuple(table_entry_of(c)) in best]


def _form(config):
    """A configuration's design and the length of its table entry."""
    return config[0], len(table_entry_of(config))


def neighbours_prior(op, n, kind):
    """The union of the prior entries at the nearest tuned width below N and above it (entries
    leave out what follows from N, so they carry over)."""
    tuned = [m for (o, m, k) in PRIOR if o == op and k == kind and abs(m - n) <= NEIGHBOURS]
    near = [max((m for m in tuned if m < n), default=None), min((m for m in tuned if m > n), default=None)]
    priors = [PRIOR[(op, m, kind)] for m in near if m is not None]
    if not priors:
        return None
    return set().union(*(b for b, _ in priors)), set().union(*(d for _, d in priors))


def candidates(op, n, kind, element_size):
    """What is timed of one pass at one N: the table's own configuration alone with --check,
    else every candidate that --prior keeps."""
    if CHECK:
        fast = fast_module(op)
        return [(fast.forward_config if kind == "fwd" else fast.backward_config)(n, element_size)]
    cands = forward_candidates(op, n) if kind == "fwd" else backward_candidates(n, element_size)
    return keep(op, n, kind, cands)


def load_prior(path, passes=("fwd", "bwd"), top=4):
    """One prior run's fastest and timed entries, added to those of the runs loaded before."""
    for r in json.loads(Path(path).read_text())["tuned"]:
        for kind in passes:
            ok = sorted((c for c in r[kind] if "ms" in c and c.get("ok", True)), key=lambda c: c["ms"])
            best, designs = PRIOR.get((r["op"], r["N"], kind), (set(), set()))
            PRIOR[(r["op"], r["N"], kind)] = (
                best | {tuple(table_entry_of(_current(c["config"]))) for c in ok[:top]},
                designs | {_form(_current(c["config"])) for c in r[kind]})


def _current(config):
    """A configuration of an earlier run in today's form (runs before tune-10 had no EARLY: the
    weight gradients were added after dx). Not convertible: LayerNorm's chunked forwards of
    tune-14 (a fifth field STAGES) and tune-15 (MAXNREG) read as TAIL_TILE entries, so with
    those runs as priors that design needs --fresh fwd:chunked."""
    if config[0] == "staged" and len(config) == 8:
        return (*config, False)
    return tuple(config)


def _compile_key(n, kind, cfg):
    """What a compilation depends on: N (a compile-time constant) and the configuration, but
    not the backward's per-SM factor, which only changes the grid."""
    return (n, *cfg) if kind == "fwd" else (n, *cfg[:4], *cfg[5:])


def at_width(op, kind, config, n):
    """A candidate as the kernels would run it at width n, which takes its table entry (the
    entry of the next multiple of the table's step serves the widths below it). Where a
    program's share of N is a power of two, one tile and two are the same candidate and the
    entry says one (table_entry_of)."""
    fast = fast_module(op)
    entry_config = forward_entry_config if kind == "fwd" else backward_entry_config
    return tuple(entry_config(table_entry_of(config), n))


def _compile_task(task):
    """Run one configuration once on a small tensor: Triton compiles it into its on-disk cache."""
    op, n, kind, cfg, dtype = task
    fast = fast_module(op)
    x, w, b, dy, _ = _inputs(op, 64, n, dtype, grad=False)
    try:
        if op == "layernorm":
            _, stats = fast.forward_rows(x, w, b, LN_EPS, config=cfg if kind == "fwd" else None)
            if kind == "bwd":
                fast.backward_rows(dy, x, w, stats, config=cfg)
        else:
            _, rstd = fast.forward_rows(x, w, RMS_EPS, config=cfg if kind == "fwd" else None)
            if kind == "bwd":
                fast.backward_rows(dy, x, w, rstd, config=cfg)
        torch.cuda.synchronize()
        return None
    except Exception as e:  # too many registers or shared memory: the timing skips it too
        return f"{op} {n} {cfg}: {type(e).__name__} {str(e)[:100]}"


def precompile(ns, workers, dtype, ops=OPS):
    tasks, seen = [], set()
    for op in ops:
        for n in ns:
            for kind in ("fwd", "bwd"):
                for cfg in candidates(op, n, kind, dtype.itemsize):
                    timed = [(n, cfg)]  # and with --probe, as the kernels would run it at N - PROBE
                    if PROBE:
                        timed.append((n - PROBE, at_width(op, kind, cfg, n - PROBE)))
                    for m, c in timed:
                        key = (op, kind, _compile_key(m, kind, c))
                        if key not in seen:
                            seen.add(key)
                            tasks.append((op, m, kind, c, dtype))
    with ProcessPoolExecutor(workers, mp_context=__import__("multiprocessing").get_context("spawn")) as pool:
        errors = [e for e in pool.map(_compile_task, tasks, chunksize=4) if e]
    return len(tasks), errors


def graph_ms(step, calls=8, replays=5):
    """GPU time of one step(): median replay time of a CUDA graph of `calls` steps, divided by calls."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            step()
    graph.replay()
    times = []
    for _ in range(replays):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / calls)
    del graph
    return statistics.median(times)


def plain_ms(step, calls=10, samples=5):
    """Wall time of one plain call, host included: median over samples of back-to-back calls."""
    return median_call_ms(step, warmup_calls=1, samples=samples, calls_per_sample=calls)


def pct(n_bytes, ms, copy):
    return 100 * n_bytes / (ms * 1e-3) / 1e9 / copy


def _workload(op, n, dtype):
    """The inputs of both passes at width n (M = rows_for(n) rows), a step that times one
    configuration of a pass on them, and the table's own outputs to check it against."""
    fast = fast_module(op)
    m = rows_for(n, dtype)
    x, w, b, dy, _ = _inputs(op, m, n, dtype, grad=False)
    head = (x, w, b, LN_EPS) if op == "layernorm" else (x, w, RMS_EPS)
    saved = fast.forward_rows(*head)[1]

    def step_of(kind, cfg):
        if kind == "fwd":
            return lambda: fast.forward_rows(*head, config=cfg)
        return lambda: fast.backward_rows(dy, x, w, saved, config=cfg)

    reference = {"fwd": fast.forward_rows(*head), "bwd": fast.backward_rows(dy, x, w, saved)}
    n_bytes = {kind: k * m * n * dtype.itemsize for kind, k in (("fwd", 2), ("bwd", 3))}
    return m, step_of, reference, n_bytes


def tune_n(op, n, copy, dtype=torch.bfloat16):
    """Every candidate of both passes at one N; returns the timings and the best of each."""
    m, step_of, reference, n_bytes = _workload(op, n, dtype)
    result = {"op": op, "N": n, "M": m, "fwd": [], "bwd": []}
    for kind in ("fwd", "bwd"):
        for cfg in candidates(op, n, kind, dtype.itemsize):
            step = step_of(kind, cfg)
            try:
                diff = worst_difference(step(), reference[kind])
                ms = graph_ms(step)
                result[kind].append({"config": list(cfg), "ms": ms, "pct": pct(n_bytes[kind], ms, copy),
                                     "difference": diff, "ok": diff <= AGREE})
            except Exception as e:
                result[kind].append({"config": list(cfg), "error": f"{type(e).__name__}: {str(e)[:100]}"})
    del step_of, reference
    torch.cuda.empty_cache()
    if PROBE:
        probe(op, n - PROBE, result, copy, dtype)
    for kind in ("fwd", "bwd"):
        ok = [r for r in result[kind] if r.get("ok")]
        result[f"best_{kind}"] = max(ok, key=worst_pct) if ok else None
    result["kernels"] = compiled_resources(fast_module(op), n)
    return result


def worst_pct(timed):
    """A candidate's % of copy at N, or with --probe the worse of N's and the probe width's."""
    return min(timed["pct"], timed.get("probe_pct", timed["pct"]))


def probe(op, m, result, copy, dtype):
    """Each timed candidate of `result` (width N) again at width m < N, as the kernels would
    run it there: its entry serves m too. Adds probe_pct, or marks the candidate not ok."""
    _, step_of, reference, n_bytes = _workload(op, m, dtype)
    result["probe_N"] = m
    for kind in ("fwd", "bwd"):
        for timed in (t for t in result[kind] if t.get("ok")):
            step = step_of(kind, at_width(op, kind, timed["config"], m))
            try:
                timed["ok"] = worst_difference(step(), reference[kind]) <= AGREE
                timed["probe_pct"] = pct(n_bytes[kind], graph_ms(step), copy)
            except Exception as e:
                timed.update(ok=False, probe_error=f"{type(e).__name__}: {str(e)[:100]}")
    del step_of, reference
    torch.cuda.empty_cache()


AGREE = 2e-2  # bf16 keeps 8 bits: two orders of fp32 sums may round 1/128 apart


def worst_difference(outputs, reference):
    """The largest difference of a candidate's outputs from the table's configuration's, each
    relative to the largest value of that output: a candidate that disagrees never wins."""
    worst = 0.0
    for out, ref in zip(outputs, reference):
        if out is not None:
            scale = ref.float().abs().max().clamp_min(1e-30)
            worst = max(worst, ((out.float() - ref.float()).abs().max() / scale).item())
    return worst


def compiled_resources(fast, n):
    """Registers, spills and shared memory of every kernel compiled for width N."""
    out = []
    for launcher in (fast.fwd_row, fast.fwd_chunked, fast.fwd_aligned, fast.bwd_row, fast.bwd_staged,
                     fast.bwd_chunked):
        names = launcher.kernel.arg_names
        for compiled, consts in launcher.compiled.values():
            meta = dict(zip(names[len(names) - len(consts):], consts))
            if meta.get("N") == n:
                out.append({"kernel": launcher.kernel.__name__, "meta": {k: v for k, v in meta.items()
                            if isinstance(v, (int, bool))}, "num_warps": compiled.metadata.num_warps,
                            "regs": compiled.n_regs, "spills": compiled.n_spills,
                            "shared": compiled.metadata.shared})
    return out


def providers_at(op, n, copy, dtype, providers, plain=True):
    """GPU-bound (graph replay) and plain-call fwd and fwd+bwd of each provider at one N."""
    m = rows_for(n, dtype)
    elt = torch.empty((), dtype=dtype).element_size()
    rows = []
    for name in providers:
        row = {"op": op, "provider": name, "N": n, "M": m, "dtype": str(dtype).replace("torch.", "")}
        try:
            if name == "compile":
                torch._dynamo.reset()
            fn = _provider_fn(op, name)
            x, w, b, dy, params = _inputs(op, m, n, dtype, grad=True)
            with torch.no_grad():
                fwd = lambda: fn(x, w, b)  # noqa: E731
                row["fwd_gpu_ms"] = graph_ms(fwd)
                if plain:
                    row["fwd_plain_ms"] = plain_ms(fwd)
            both = lambda: torch.autograd.grad(fn(x, w, b), params, dy)  # noqa: E731
            row["fwd_bwd_gpu_ms"] = graph_ms(both)
            if plain:
                row["fwd_bwd_plain_ms"] = plain_ms(both)
            for key, mult in (("fwd", 2), ("fwd_bwd", 5)):
                for how in ("gpu", "plain"):
                    if f"{key}_{how}_ms" in row:
                        row[f"{key}_{how}_pct"] = pct(mult * m * n * elt, row[f"{key}_{how}_ms"], copy)
            del x, w, b, dy, params
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
        torch.cuda.empty_cache()
        rows.append(row)
    return rows


def host_share(op, calls=300):
    """fwd+bwd at 128x257 fp32: minimum plain-call time over `calls` calls, and graph replay."""
    out = []
    for name in ("fast", "torch", "liger"):
        row = {"op": op, "provider": name}
        try:
            fn = _provider_fn(op, name)
            x, w, b, dy, params = _inputs(op, 128, 257, torch.float32, grad=True)
            step = lambda: torch.autograd.grad(fn(x, w, b), params, dy)  # noqa: E731
            for key, call in (("fwd", lambda: fn(x, w, b)), ("fwd_bwd", step)):
                for _ in range(20):
                    call()
                torch.cuda.synchronize()
                times = []
                for _ in range(calls):
                    t = time.perf_counter()
                    call()
                    torch.cuda.synchronize()
                    times.append(1e6 * (time.perf_counter() - t))
                row[f"{key}_min_us"] = min(times)
                row[f"{key}_median_us"] = statistics.median(times)
                row[f"{key}_graph_us"] = 1e3 * graph_ms(call, calls=20)
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e)[:160]}"
        out.append(row)
    return out


def table_entry_of(config):
    """A candidate configuration as a table entry: what follows from N is left out."""
    cfg = list(config)
    if cfg[0] == "row":
        return [cfg[0], *cfg[2:]]  # BLOCK_N follows from N
    if cfg[0] == "staged":  # the tiles follow from N, SPLIT and TILES
        return [cfg[0], *cfg[2:7], 2 if cfg[7] else 1, cfg[8]]
    return cfg


def table_from(results, op):
    """The tuned table: the backward's fastest configuration at each N, per-N entries only; and,
    for the pages' side-by-side of the backward's designs, the fastest of each design. The
    forward's timings stay in the run's report: the ops take the forward from a ladder
    (FastNorm.FORWARD, python -m faster.ladder fits one to a run)."""
    table = {"backward": {}, "backward_designs": {}}
    for r in results:
        if r["op"] != op:
            continue
        if r["best_bwd"]:
            table["backward"][str(r["N"])] = table_entry_of(r["best_bwd"]["config"])
        designs = {}
        for c in sorted((c for c in r["bwd"] if "ms" in c), key=worst_pct, reverse=True):
            designs.setdefault(c["config"][0], table_entry_of(c["config"]))
        table["backward_designs"][str(r["N"])] = dict(sorted(designs.items()))
    return table


TABLE_KEYS = ("backward", "backward_designs")


def table_json(device, table, dtype, step):
    """The table file: one line per N, in order of N, so a diff shows which widths changed."""
    rows = "2**27 / N" if dtype == "bfloat16" else "2**26 / N"
    lines = [f'{{"device": {json.dumps(device)}, "dtype": "{dtype}", "rows": "{rows}", "step": {step},']
    keys = [k for k in TABLE_KEYS if table.get(k)]
    for i, key in enumerate(keys):
        entries = sorted(table[key].items(), key=lambda kv: int(kv[0]))
        body = ",\n".join(f"  {json.dumps(n)}: {json.dumps(c)}" for n, c in entries)
        lines.append(f' "{key}": {{\n{body}\n }}' + ("," if i < len(keys) - 1 else "}"))
    return "\n".join(lines) + "\n"


def write_table(tuned, op, out, device, dtype, step, update):
    """Write the op's table of this run under `out` (with --update, over the op's current one)
    and point the op at it, so that the side-by-side after the run uses it."""
    elt = torch.empty((), dtype=getattr(torch, dtype)).element_size()
    table = table_from(tuned, op)
    fast = fast_module(op)
    if update:
        current = json.loads(fast.OP.TUNED[elt].read_text(encoding="utf-8"))
        for key in TABLE_KEYS:
            table[key] = {**current.get(key, {}), **table[key]}
        # per design: a design this run did not time keeps its entry (--prior times only the
        # prior's best configurations, which may all be of one design)
        for n, designs in table["backward_designs"].items():
            kept = current.get("backward_designs", {}).get(n, {})
            table["backward_designs"][n] = dict(sorted({**kept, **designs}.items()))
    path = out / f"{op}-{fast.OP.TUNED[elt].name}"  # the name fast.py reads, with the op in front
    path.write_text(table_json(device, table, dtype, step), encoding="utf-8")
    fast.OP.TUNED[elt] = path
    fast.OP.reload()
    return path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--step", type=int, default=256)
    p.add_argument("--n-min", type=int, help="the narrowest N (default: --step, so that every N is a table entry)")
    p.add_argument("--budget-s", type=float, default=330, help="stop tuning new N after this many seconds")
    p.add_argument("--deadline-s", type=float, default=540, help="skip what is left after this many seconds")
    p.add_argument("--prior", help="tune.json of earlier runs, comma-separated: time only their 4 best "
                   "configurations again (and every candidate of a design they did not time)")
    p.add_argument("--prior-passes", default="fwd,bwd", help="the passes --prior applies to")
    p.add_argument("--fresh", default="", help="comma-separated designs to time in full despite --prior "
                   "(their kernel changed since the prior run); fwd:chunked names one pass's")
    p.add_argument("--ops", default=",".join(OPS), help="the ops to tune (--update keeps the others' tables)")
    p.add_argument("--providers-step", type=int, default=256, help="providers at every N that is a multiple of this")
    p.add_argument("--wait-pid", type=int, help="after compiling, wait for this process (tests on the same GPU)")
    p.add_argument("--workers", type=int, default=max(1, min(12, (os.cpu_count() or 2) - 2)))
    p.add_argument("--dtype", choices=("bfloat16", "float16", "float32"), default="bfloat16",
                   help="bfloat16 writes <op>-fast_tuned.json (16-bit inputs), float32 <op>-fast_tuned_fp32.json; "
                   "float16 (which the 16-bit table serves) with --check")
    p.add_argument("--check", action="store_true",
                   help="time the tables' own configurations at each N (no search, no tables written)")
    p.add_argument("--tables-only", action="store_true", help="stop once the tables are written")
    p.add_argument("--widths", help="comma-separated N to tune instead of every multiple of --step")
    p.add_argument("--probe", type=int, default=0,
                   help="time each candidate at N - PROBE too (a width its entry also serves: a partial "
                   "chunk, more padding) and keep the best of the worse of the two")
    p.add_argument("--update", action="store_true",
                   help="write the fast modules' current tables with the tuned widths' entries replaced")
    a = p.parse_args(argv)
    dtype = getattr(torch, a.dtype)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    ns = [int(n) for n in a.widths.split(",")] if a.widths else list(range(a.n_min or a.step, 16384 + 1, a.step))
    if a.prior:
        for prior in a.prior.split(","):
            load_prior(prior, tuple(a.prior_passes.split(",")))
    FRESH.update(filter(None, a.fresh.split(",")))
    global CHECK, PROBE
    CHECK, PROBE = a.check, a.probe
    ops = tuple(a.ops.split(","))
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
              "total_elements": TOTAL, "step": a.step}

    def save():
        (out / "tune.json").write_text(json.dumps(report, indent=1) + "\n")

    n_tasks, errors = precompile(ns, a.workers, dtype, ops)
    report["precompile"] = {"tasks": n_tasks, "errors": errors, "s": round(time.time() - t0, 1)}
    print(f"# precompiled {n_tasks} configurations in {time.time() - t0:.0f} s, {len(errors)} failed", flush=True)
    while a.wait_pid and Path(f"/proc/{a.wait_pid}").exists():
        time.sleep(0.5)  # nothing else on the GPU while timing
    report["copy_gbps"] = copy = copy_bandwidth_gb_per_s()["median"]
    tuned = []
    # the widths at the ends of each power-of-two range first, then the rest: a cut-short run
    # still covers the range
    order = sorted(ns, key=lambda n: (n % 1024 != 0, n))
    for n in order:
        if time.time() - t0 > a.budget_s:
            print(f"# budget reached before N={n}", flush=True)
            break
        for op in ops:
            r = tune_n(op, n, copy, dtype)
            tuned.append(r)
            bf, bb = r["best_fwd"], r["best_bwd"]
            print(f"{op[:3]} N={n:5d} fwd {bf['pct']:5.1f}% {bf['config']}  bwd {bb['pct']:5.1f}% {bb['config']}",
                  flush=True)
        report["tuned"] = tuned
        save()
    report["tune_s"] = round(time.time() - t0, 1)
    if a.check:
        save()
        return
    for op in ops:
        write_table(tuned, op, out, report["device"], a.dtype, a.step, a.update)
    if a.tables_only:
        save()
        return
    # the providers, with the new tables
    try:
        import liger_kernel  # noqa: F401
        others = ["torch", "liger"]
    except ImportError:
        others = ["torch"]
    report["providers"] = []
    for n in sorted({r["N"] for r in tuned if r["N"] % a.providers_step == 0}):
        if time.time() - t0 > a.deadline_s - 120:
            break
        for op in ops:
            report["providers"] += providers_at(op, n, copy, torch.bfloat16, ["fast", *others], plain=n % 512 == 0)
        save()
    print(f"# providers done at {time.time() - t0:.0f} s", flush=True)
    for n in OTHER_DTYPES_N:
        if time.time() - t0 > a.deadline_s - 100:
            break
        for op in ops:
            for dtype in (torch.float16, torch.float32):
                report["providers"] += providers_at(op, n, copy, dtype, ["fast", *others], plain=False)
    save()
    report["host"] = [row for op in ops for row in host_share(op)]
    save()
    print(f"# other dtypes and host share done at {time.time() - t0:.0f} s", flush=True)
    for n in COMPILE_N:
        if time.time() - t0 > a.deadline_s - 30:
            break
        for op in ops:
            report["providers"] += providers_at(op, n, copy, torch.bfloat16, ["compile"], plain=False)
        save()
    report["copy_gbps_end"] = copy_bandwidth_gb_per_s()["median"]
    report["total_s"] = round(time.time() - t0, 1)
    save()
    summary(report)


def summary(report):
    """One line per N: the fast path against the best other provider, GPU-bound, % of copy."""
    rows = [r for r in report["providers"] if "error" not in r and r["dtype"] == "bfloat16"]
    by = {}
    for r in rows:
        by.setdefault((r["op"], r["N"]), {})[r["provider"]] = r
    print(f"copy {report['copy_gbps']:.0f} GB/s; fast fwd / fwd+bwd GPU-bound (plain) vs best other")
    for (op, n), d in sorted(by.items()):
        f = d.get("fast")
        if not f:
            continue
        best = {k: max(((o[f"{k}_gpu_pct"], name) for name, o in d.items() if name != "fast"), default=(0, "-"))
                for k in ("fwd", "fwd_bwd")}
        plain = f" ({f['fwd_bwd_plain_pct']:.0f})" if "fwd_bwd_plain_pct" in f else ""
        print(f"{op[:3]} {n:5d} {f['fwd_gpu_pct']:5.1f} {f['fwd_bwd_gpu_pct']:5.1f}{plain} | "
              f"{best['fwd'][1]} {best['fwd'][0]:.1f} {best['fwd_bwd'][1]} {best['fwd_bwd'][0]:.1f}")
    for h in report.get("host", []):
        print("host", json.dumps({k: (round(v, 1) if isinstance(v, float) else v) for k, v in h.items()}))


if __name__ == "__main__":
    main()
