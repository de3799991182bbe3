"""Issue 39, item 2: the exchange of row sums as it is written in snippets (normkit.exchange),
timed through the fast ops' own backward_rows against the chunked rung it replaces, and checked
against that rung's results. The ladder's configuration ("exchange", S, 1, num_warps, PER_SM)
and a few others, backward alone, % of copy for its 3MN bytes, plain back-to-back calls
(median of 10), bf16 and fp32.

    PYTHONPATH=snippets:notes/experiments python3 notes/experiments/exchange_rung.py --out x.json
"""

import argparse
import json
import time

import torch

from layernorm import fast as ln
from normkit import bench, exchange
from rmsnorm import fast as rms
from wide_rows import inputs  # this folder: the random rows and parameters of the wide-rows runs

OPS = {"layernorm": ln, "rmsnorm": rms}
VARIANTS = {"s4 w8 sm1": (exchange.KIND, 4, 1, 8, 1), "s8 w4 sm2": (exchange.KIND, 8, 1, 4, 2),
            "s8 w8 sm1": (exchange.KIND, 8, 1, 8, 1), "s4 w4 sm2": (exchange.KIND, 4, 1, 4, 2)}


def parse(widths="24576,32768,20480", dtypes="bfloat16,float32"):
    """The command line every exchange experiment takes (exchange_shares.py, exchange_pairs.py)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--budget-s", type=float, default=100)
    parser.add_argument("--widths", default=widths)
    parser.add_argument("--dtypes", default=dtypes)
    return parser.parse_args()


def run(args, variants_of, prepare=lambda fast, label: None):
    """Time, for each dtype, width and op while the budget lasts, the ladder's configuration,
    the chunked rung and variants_of(n) ({label: configuration}), each checked against the
    chunked rung; prepare(fast, label) runs before a label's calls (to swap a kernel in)."""
    t0, results = time.time(), []
    copy = bench.copy_bandwidth_gb_per_s()["median"]
    for dtype_name in args.dtypes.split(","):
        dtype = getattr(torch, dtype_name)
        for n in map(int, args.widths.split(",")):
            for op, module in OPS.items():
                if time.time() - t0 > args.budget_s:
                    break
                fast = module.OP
                m = 2**27 // n
                x, dy, w, params = inputs(op, n, m, dtype)
                _, stats = fast.forward_rows(x, *params, 1e-5)
                es = x.element_size()
                configs = {"ladder": fast.backward_config(n, es), "chunked": fast.wide_chunked(n, es),
                           **variants_of(n)}
                reference = fast.backward_rows(dy, x, w, stats, config=configs["chunked"])
                for label, config in configs.items():
                    prepare(fast, label)
                    def call(c=config):
                        return fast.backward_rows(dy, x, w, stats, config=c)
                    try:
                        got = call()
                        torch.cuda.synchronize()
                    except Exception as e:  # registers, resources, a refused cooperative grid
                        print(f"{op[:3]} {dtype_name} N={n} {label}: {type(e).__name__} {str(e)[-200:]}",
                              flush=True)
                        continue
                    rel = max((a.float() - b.float()).abs().max().item()
                              / max(b.float().abs().max().item(), 1e-30)
                              for a, b in zip(got, reference))
                    ms = bench.median_call_ms(call, 3, 10, 5)
                    pct = 100 * bench.gb_per_s(3 * m * n * es, ms) / copy
                    results.append({"op": op, "dtype": dtype_name, "N": n, "variant": label,
                                    "config": repr(config[:5]), "rel": rel, "ms": ms, "pct": pct})
                    print(f"{op[:3]} {dtype_name[:4]} N={n} {label:17s} {config[:5]} {pct:5.1f}% "
                          f"rel {rel:.2g}", flush=True)
                prepare(fast, None)
    if args.out:
        json.dump({"device": torch.cuda.get_device_name(), "copy_gb_per_s": copy, "results": results},
                  open(args.out, "w"), indent=1)


if __name__ == "__main__":
    run(parse(), lambda n: VARIANTS)
