"""Issue 21 experiment: LayerNorm's staged backward at 8448-16384 columns (GPU only).

A record of what was run, against the kernel as it was then (uncommitted, between 8a6ff4d
and the commit that adds this file): ln_fast_bwd_staged_kernel took three more constexprs,
HOLD_W, PAIRED and EARLY. The kernel since keeps the weight in registers (HOLD_W won),
always pairs the row sums (PAIRED won), and leaves EARLY to the tuner. Results:
notes/data/wide-ln-bwd-2.json (before the row sums became scalars), -3.json (after);
notes/fast-kernels.md says what they showed.

    cd snippets && python3 ../notes/experiments/wide_ln_bwd.py OUT.json

Times, GPU-bound (graph replay, faster.tune.graph_ms), staged configurations that the tuner
does not try (a second tile of one element a thread or less) and two kernel variants:
HOLD_W=False loads the weight at each step (from L1) instead of holding it in registers
beside dW and dB; PAIRED=True takes both row sums in one tl.reduce (one barrier, not two).
Every configuration's dx, dW, dB are checked against the default kernel's first.
"""

import json
import sys
from concurrent.futures import ProcessPoolExecutor

import normkit  # noqa: F401
import torch

from faster.benchmark import LN_EPS, _inputs
from faster.tune import graph_ms, pct, rows_for, staged_candidates
from layernorm import fast
from normkit.bench import copy_bandwidth_gb_per_s

WIDTHS = (2304, 4352, 6400, 8448, 9216, 10240, 12544, 16384)
VARIANTS = [dict(HOLD_W=h, PAIRED=p, EARLY=e) for h in (True, False) for p in (False, True)
            for e in (False, True)]
DEFAULT = dict(HOLD_W=True, PAIRED=False, EARLY=False)


class WithMeta:
    """fast.bwd_staged with extra compile-time constants."""

    def __init__(self, launcher, meta):
        self.launcher, self.meta = launcher, meta

    def __getitem__(self, grid):
        return lambda *a, **k: self.launcher[grid](*a, **k, **self.meta)


def configs(n):
    """One tile, and two tiles with the second as small as the columns allow (or twice
    that), at 4, 8, 16 warps; programs per SM: as many as fit, at most 2."""
    out = set()
    for split in (1, 2) if n > 4096 else (1,):
        width = -(-n // split)
        full = 1 << (width - 1).bit_length()
        for warps in (4, 8, 16):
            tiles = [(full, 0)]
            if full != width:
                left = width - full // 2
                rest = 1 << (left - 1).bit_length()
                tiles += [(full // 2, r) for r in (rest, 2 * rest) if r <= full // 2]
            for tile, rest in tiles:
                per_thread = (tile + rest) // (32 * warps)
                if not 2 <= per_thread <= 32:
                    continue
                shared = 3 * n * 4 if split == 2 else 3 * (tile + rest) * 4
                for per_sm in (2, 1):
                    if per_sm * shared <= 227 * 1024 and per_sm * warps <= 64:
                        out.add(("staged", tile, 1, warps, per_sm, split, 3, rest))
                        break
    return sorted(out)


def run(n, cfg, meta, x, w, b, dy, stats):
    fast.bwd_staged = WithMeta(ORIG, meta)
    try:
        return fast.backward_rows(dy, x, w, stats, config=cfg)
    finally:
        fast.bwd_staged = WithMeta(ORIG, DEFAULT)


def compile_one(task):
    n, cfg, meta = task
    x, w, b, dy, _ = _inputs("layernorm", 64, n, torch.bfloat16, grad=False)
    stats = fast.forward_rows(x, w, b, LN_EPS)[1]
    try:
        run(n, cfg, meta, x, w, b, dy, stats)
        torch.cuda.synchronize()
    except Exception as e:
        return f"{n} {cfg} {meta}: {type(e).__name__} {str(e)[:80]}"


ORIG = fast.bwd_staged
fast.bwd_staged = WithMeta(ORIG, DEFAULT)


def main(path):
    tasks = [(n, c, v) for n in WIDTHS for c in configs(n) for v in VARIANTS]
    with ProcessPoolExecutor(14, mp_context=__import__("multiprocessing").get_context("spawn")) as pool:
        errors = [e for e in pool.map(compile_one, tasks, chunksize=2) if e]
    copy = copy_bandwidth_gb_per_s()["median"]
    out = {"copy_gbps": copy, "errors": errors, "runs": []}
    for n in WIDTHS:
        m = rows_for(n)
        x, w, b, dy, _ = _inputs("layernorm", m, n, torch.bfloat16, grad=False)
        stats = fast.forward_rows(x, w, b, LN_EPS)[1]
        ref_dx, ref_p = fast.backward_rows(dy, x, w, stats)
        row_ms = graph_ms(lambda: fast.backward_rows(dy, x, w, stats))
        out["runs"].append({"N": n, "config": "table", "ms": row_ms,
                            "pct": pct(3 * m * n * 2, row_ms, copy)})
        for cfg in configs(n):
            for meta in VARIANTS:
                try:
                    dx, p = run(n, cfg, meta, x, w, b, dy, stats)
                    ok = bool(torch.allclose(dx.float(), ref_dx.float(), atol=2e-2, rtol=2e-2)
                              and torch.allclose(p, ref_p, atol=1e-1, rtol=1e-3))
                    ms = graph_ms(lambda: run(n, cfg, meta, x, w, b, dy, stats))
                    r = {"N": n, "config": list(cfg), **meta, "ms": ms, "ok": ok,
                         "pct": pct(3 * m * n * 2, ms, copy)}
                except Exception as e:
                    r = {"N": n, "config": list(cfg), **meta, "error": str(e)[:100]}
                out["runs"].append(r)
        best = sorted((r for r in out["runs"] if r["N"] == n and "pct" in r), key=lambda r: -r["pct"])
        for r in best[:6]:
            print(n, r["config"], r.get("HOLD_W"), r.get("PAIRED"), r.get("EARLY"), round(r["pct"], 1), r.get("ok"), flush=True)
        del x, w, b, dy, stats
        torch.cuda.empty_cache()
        out["kernels"] = resources()
        with open(path, "w") as f:
            json.dump(out, f, indent=1)


def resources():
    regs = []
    names = ORIG.kernel.arg_names
    for compiled, consts in ORIG.compiled.values():
        meta = dict(zip(names[len(names) - len(consts):], consts))
        regs.append({**{k: meta[k] for k in ("N", "SPLIT", "TILE", "REST", "STAGES", *DEFAULT)},
                     "warps": compiled.metadata.num_warps, "regs": compiled.n_regs,
                     "spills": compiled.n_spills})
    return regs


if __name__ == "__main__":
    main(sys.argv[1])
