"""Issue 39, items 2 and 3: the forward at rows that start off 16 bytes, where the ladder's rungs
(FastNorm.FORWARD, fitted at 16-byte widths) fell behind the old tables in the build of 53ee0da
(bf16, H100: LayerNorm 8194 at 67 % of copy against 93, RMSNorm 4097 at 67 against 97, 8194 at 70
against 94).

For each op and width, the configuration the op chooses ("ours") and a grid of the row and chunked
designs (chunk, warps, LayerNorm's tail tile); at odd widths also the aligned designs (RMSNorm's
window, LayerNorm's walk) with other warps. Forward alone, GPU time of plain calls back to back
(each moves hundreds of MB), % of the copy bandwidth measured in the same run, M = 2**27 / N rows,
bf16 or --dtype float32. Every variant's output is checked against the first's. Widths in the order of interest; the
run stops starting new ones after --budget-s and writes what it has after each width.

    PYTHONPATH=snippets python3 notes/experiments/offset_rows.py --out offset.json
    PYTHONPATH=snippets python3 notes/experiments/offset_rows.py --check   # no GPU: each once, small M
"""

import argparse
import json
import time

import torch

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import triton
from layernorm import fast as ln
from normkit import aligned, bench
from normkit.runtime import DEVICE
from rmsnorm import fast as rms

OPS = {"layernorm": ln, "rmsnorm": rms}
# rows on 4 bytes, 8 bytes, then odd (2 bytes); past 16384 the WIDE configuration
WIDTHS = (8194, 4098, 4097, 12290, 8196, 8193, 4100, 16386, 6146, 12289, 16383, 16385, 10242)
DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32}


def grid(op, n):
    """{label: forward configuration} of the row and chunked designs at width n."""
    block = triton.next_power_of_2(n)
    out = {f"row w{w}": ("row", block, 1, w) for w in (8, 16)}
    tails = (0, 1) if op == "layernorm" else (None,)
    for chunk in (2048, 4096, 8192):
        for w in (8, 16):
            for t in tails:
                label = f"chunk {chunk} w{w}" + ("" if t is None else f" t{t}")
                out[label] = ("chunked", chunk, 1, w) + (() if t is None else (t,))
    return out


def aligned_grid(op, n, ours):
    """At odd widths, the aligned design with other warps (and LayerNorm's walk with other chunks)."""
    if ours[0] != "aligned":
        return {}
    fallback = ours[4]
    if op == "rmsnorm":
        return {f"window w{w}": ("aligned", ours[1], ours[2], w, fallback) for w in (4, 8, 16)}
    return {f"walk {c} w{w}": ("aligned", c, 1, w, fallback) for c in (2048, 4096) for w in (4, 8, 16)}


def difference(a, b):
    return (a.float() - b.float()).abs().max().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--budget-s", type=float, default=150)
    parser.add_argument("--check", action="store_true", help="each variant once at a few rows, untimed")
    parser.add_argument("--dtype", choices=DTYPES, default="bfloat16")
    parser.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    args = parser.parse_args()
    dtype = DTYPES[args.dtype]
    t0, results = time.time(), []
    copy = None if args.check else bench.copy_bandwidth_gb_per_s()["median"]
    for n in map(int, args.widths.split(",")):
        if time.time() - t0 > args.budget_s:
            break
        for op, module in OPS.items():
            fast = module.OP
            m = 3 if args.check else 2**27 // n
            g = torch.Generator(device=DEVICE).manual_seed(0)
            x = torch.randn(m, n, device=DEVICE, dtype=dtype, generator=g)
            w = torch.rand(n, device=DEVICE, dtype=x.dtype, generator=g) + 0.5
            params = (w, torch.randn_like(w)) if op == "layernorm" else (w,)
            ours = fast.forward_config(n, x.element_size())
            configs = {"ours": ours} | grid(op, n) | aligned_grid(op, n, ours)
            reference = None
            for label, config in configs.items():
                fn = lambda c=config: fast.forward_rows(x, *params, 1e-5, config=c, save=False)[0]
                try:
                    y = fn()
                except Exception as e:  # a configuration the design refuses (too many registers)
                    print(f"{op[:3]} N={n} {label}: {type(e).__name__} {str(e)[-300:]}", flush=True)
                    continue
                reference = y if reference is None else reference
                row = {"op": op, "N": n, "dtype": args.dtype, "variant": label, "config": list(config[:4]),
                       "diff": difference(y, reference)}
                if not args.check:
                    ms = bench.median_call_ms(fn, 5, 10, 5)
                    row |= {"ms": ms, "pct": 100 * bench.gb_per_s(2 * m * n * x.element_size(), ms) / copy}
                results.append(row)
                print(f"{op[:3]} N={n:5d} {label:16s} " + ("" if args.check else f"{row['pct']:5.1f}% ")
                      + f"diff {row['diff']:.2g}", flush=True)
        if args.out:
            json.dump({"device": torch.cuda.get_device_name() if not args.check else None,
                       "copy_gb_per_s": copy, "results": results}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
