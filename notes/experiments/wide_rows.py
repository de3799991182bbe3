"""Issue 39, item 2: rows past the tables' widest (16384), where the chunked designs take any N
with one untuned configuration each (FastNorm.WIDE), and whether there is a cliff at 16385.

For each op, width and pass (the forward alone, the backward alone: dx, dW and dB as autograd
asks), the WIDE configuration ("wide") and variants of its chunk, warps and programs per SM, and
for the backward the widest table entry's staged design split in more shares; at 16384 the configuration the ladder and the table give ("ours") for the level to compare with.
GPU time of plain calls back to back (each moves hundreds of MB: the host is not the limit), %
of the copy bandwidth measured in the same run, M = 2**27 / N rows, bf16. Every variant's output
is checked against the WIDE configuration's first.

    PYTHONPATH=snippets python3 notes/experiments/wide_rows.py --out wide.json
    PYTHONPATH=snippets python3 notes/experiments/wide_rows.py --check   # no GPU: each variant once, small M
"""

import argparse
import json
import time

import torch

from layernorm import fast as ln
from normkit import bench
from normkit.runtime import DEVICE
from normkit.tiles import staged_config
from rmsnorm import fast as rms

OPS = {"layernorm": ln, "rmsnorm": rms}
WIDTHS = (16384, 20480, 32768, 16385, 24576)  # run 3: --widths 20480,32768,24576,16385,16384


def variants(op, pass_, n, element_size):
    """The configuration past MAX_N of a pass (WIDE's forward, the backward's ladder rung:
    "wide"); for the backward (run 3) the chunked design with more
    rows a step (the running sums of dW and dB go through L2 once a step, not once a row),
    and the widest table entry's staged design in one share (the whole row staged) or two."""
    fast = OPS[op].OP
    base = fast.WIDE["forward"] if pass_ == "forward" else fast.wide_backward(n, element_size)
    out = {"wide": base}
    if pass_ == "forward":
        return out
    for rows in (2, 4):
        for chunk in (1024, 2048, 4096):
            for warps in (8, 16):
                out[f"rows={rows} chunk={chunk} w{warps}"] = ("chunked", chunk, rows, warps, 1)
    entry = fast.table_entry(fast.MAX_N, 2)
    if entry[0] == "staged":  # ["staged", ROWS, warps, per_sm, SPLIT, STAGES, TILES, EARLY]
        # the staged kernels read one other share for the row sums, so SPLIT is 1 or 2
        # (run 2's three to five shares left shares out)
        for split, stages in ((1, 1), (1, 2), (2, 2), (2, 3)):
            for warps in (8, 16):
                out[f"staged s{split} w{warps} st{stages} t2"] = staged_config(
                    n, entry[1], warps, entry[3], split, stages, 2, entry[7])
    return out


def inputs(op, n, m, dtype):
    g = torch.Generator(device=DEVICE).manual_seed(0)
    x = torch.randn(m, n, device=DEVICE, dtype=dtype, generator=g)
    dy = torch.randn(m, n, device=DEVICE, dtype=dtype, generator=g)
    w = torch.rand(n, device=DEVICE, dtype=dtype, generator=g) + 0.5
    params = (w, torch.randn_like(w)) if op == "layernorm" else (w,)
    return x, dy, w, params


def calls(op, n, m, dtype):
    """{pass: {label: a call with that configuration}}, and the outputs each call returns."""
    fast = OPS[op].OP
    x, dy, w, params = inputs(op, n, m, dtype)
    _, stats = fast.forward_rows(x, *params, 1e-5)
    out = {"forward": {}, "backward": {}}
    for pass_ in out:
        chosen = (fast.forward_config if pass_ == "forward" else fast.backward_config)(n, x.element_size())
        configs = variants(op, pass_, n, x.element_size()) | {"ours": chosen}
        for label, config in configs.items():
            if pass_ == "forward":
                out[pass_][label] = lambda c=config: fast.forward_rows(x, *params, 1e-5, config=c, save=False)[0]
            else:
                out[pass_][label] = lambda c=config: fast.backward_rows(dy, x, w, stats, config=c)[:2]
    return out, 2 * m * n * x.element_size(), 3 * m * n * x.element_size()


def difference(a, b):
    """The largest error of any output relative to its largest value (dx and dW apart: a
    row sum left out changes dx by a little, since random rows' sums are small)."""
    pairs = zip(a, b) if isinstance(a, tuple) else ((a, b),)
    return max((p.float() - q.float()).abs().max().item() / max(q.float().abs().max().item(), 1e-30)
               for p, q in pairs if p is not None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--budget-s", type=float, default=100)
    parser.add_argument("--check", action="store_true", help="each variant once at a few rows, untimed")
    parser.add_argument("--dtype", choices=("bfloat16", "float32"), default="bfloat16")
    parser.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    args = parser.parse_args()
    t0, results = time.time(), []
    copy = None if args.check else bench.copy_bandwidth_gb_per_s()["median"]
    for n in map(int, args.widths.split(",")):
        for op in OPS:
            if time.time() - t0 > args.budget_s:
                break
            m = 3 if args.check else 2**27 // n
            by_pass, fwd_bytes, bwd_bytes = calls(op, n, m, getattr(torch, args.dtype))
            for pass_, fns in by_pass.items():
                reference = fns["wide"]()
                for label, fn in fns.items():
                    try:
                        diff = difference(fn(), reference)
                    except Exception as e:  # a configuration the design refuses (shared memory)
                        print(f"{op[:3]} N={n} {pass_} {label}: {type(e).__name__} {str(e)[-200:]}", flush=True)
                        continue
                    row = {"op": op, "N": n, "pass": pass_, "variant": label, "diff": diff}
                    if not args.check:
                        ms = bench.median_call_ms(fn, 5, 10, 5)
                        n_bytes = fwd_bytes if pass_ == "forward" else bwd_bytes
                        row |= {"ms": ms, "pct": 100 * bench.gb_per_s(n_bytes, ms) / copy}
                    results.append(row)
                    print(f"{op[:3]} N={n:5d} {pass_:8s} {label:22s} "
                          + ("" if args.check else f"{row['pct']:5.1f}% ") + f"rel {diff:.2g}", flush=True)
    if args.out:
        json.dump({"copy_gb_per_s": copy, "dtype": args.dtype, "results": results}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
