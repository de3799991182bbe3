"""Issue 39, item 1: the backward by residue classes (normkit.aligned.classes_config) against what
ran before at rows that do not start on 16 bytes (its fallback: the row design at odd N, the table's
configuration at rows on 4 or 8 bytes), and variants of its warps, programs, prefetch and lanes.

GPU time of one backward_rows call (dx, dW and dB, as autograd asks), plain calls back to back
(each moves hundreds of MB: the host is not the limit), % of the copy bandwidth measured in the same
run, M = 2**27 / N rows. Every variant's dx and dW are checked against the fallback's first.

    PYTHONPATH=snippets python3 notes/experiments/classes_backward.py --out classes.json
"""

import argparse
import json
import time

import torch

from layernorm import fast as ln
from normkit import aligned, bench
from rmsnorm import fast as rms

OPS = {"layernorm": ln, "rmsnorm": rms}
# the first run (notes/data/classes-backward-h100.*) had bf16 4097-4100, 8193, 8196, 3001, 12289,
# 16383 and fp32 4097, 8193; the second asks where the rule's edges are: narrower bf16 rows (lanes
# 2048), rows between 4096 and 8192 lanes, and fp32 at odd N (rows on 4 bytes) by width; the
# third (--widths) the 16384 lanes (bf16 10001-16383) and fp32 at 1024 and 16384 lanes
WIDTHS = {torch.bfloat16: (1025, 2049, 3001, 6001, 8193, 10001),
          torch.float32: (2049, 3001, 4097, 6001, 8193)}


def variants(config):
    """The rule's configuration, and variants of it."""
    kind, lanes, rows, warps, per_sm, prefetch, v, edges, fallback = config
    out = {"before": fallback, "classes": config}
    for w in (warps // 2, warps * 2):
        if 1 <= w <= 32:
            out[f"warps={w}"] = (kind, lanes, rows, w, max(1, 16 // w), prefetch, v, edges, fallback)
    out[f"prefetch={not prefetch}"] = (kind, lanes, rows, warps, per_sm, not prefetch, v, edges, fallback)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--budget-s", type=float, default=420)
    parser.add_argument("--widths", help="dtype:N,N;dtype:N (default: WIDTHS)")
    args = parser.parse_args()
    widths = WIDTHS if not args.widths else {
        getattr(torch, d): tuple(int(n) for n in ns.split(","))
        for d, ns in (part.split(":") for part in args.widths.split(";"))}
    t0 = time.time()
    copy = bench.copy_bandwidth_gb_per_s()["median"]
    print(f"copy {copy:.0f} GB/s", flush=True)
    results = []
    for dtype, ns in widths.items():
        for n in ns:
            for name, fast in OPS.items():
                if time.time() - t0 > args.budget_s:
                    break
                m = 2**27 // n
                g = torch.Generator(device="cuda").manual_seed(0)
                x = torch.randn(m, n, device="cuda", dtype=dtype, generator=g)
                dy = torch.randn(m, n, device="cuda", dtype=dtype, generator=g)
                w = torch.rand(n, device="cuda", dtype=dtype, generator=g) + 0.5
                params = (w, torch.randn_like(w)) if name == "layernorm" else (w,)
                _, stats = fast.OP.forward_rows(x, *params, 1e-5)
                fwd_ms = bench.median_call_ms(lambda: fast.OP.forward_rows(x, *params, 1e-5, save=False),
                                              5, 10, 5)
                # the classes at every width off 16 bytes (the rule takes them at odd N only);
                # "before": the table's configuration at rows on 4 or 8 bytes
                table = fast.OP.backward_config(n, x.element_size())
                v = aligned.vector(x.element_size())
                lanes = aligned.class_lanes(n, v)
                warps = min(32, max(1, lanes // 1024))  # the rule adopted after the first run
                base = ("classes", lanes, 1, warps, max(1, 16 // warps), lanes <= 8192, v,
                        aligned.class_edges(n, lanes, v),
                        table[-1] if table[0] == "classes" else table)
                ref = fast.OP.backward_rows(dy, x, w, stats, config=base[-1])
                n_bytes = 3 * m * n * x.element_size()
                for label, config in variants(base).items():
                    got = fast.OP.backward_rows(dy, x, w, stats, config=config)
                    err = max((a.float() - b.float()).abs().max().item() for a, b in
                              ((got[0], ref[0]), (got[1], ref[1])))
                    ms = bench.median_call_ms(lambda: fast.OP.backward_rows(dy, x, w, stats, config=config),
                                              5, 10, 5)
                    bwd = 100 * bench.gb_per_s(n_bytes, ms) / copy
                    both = 100 * bench.gb_per_s(5 * m * n * x.element_size(), ms + fwd_ms) / copy
                    row = {"op": name, "dtype": str(dtype), "N": n, "M": m, "variant": label,
                           "config": repr(config[:8]), "bwd_ms": ms, "fwd_ms": fwd_ms, "bwd_pct": bwd,
                           "fwdbwd_pct": both, "max_diff_vs_before": err}
                    results.append(row)
                    print(f"{name[:3]} {str(dtype)[6:]:8s} N={n:5d} {label:14s} bwd {bwd:5.1f}% "
                          f"fwd+bwd {both:5.1f}% diff {err:.2g}", flush=True)
                del x, dy, stats
                torch.cuda.empty_cache()
    json.dump({"copy_gb_per_s": copy, "results": results}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
