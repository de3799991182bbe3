"""Forward and backward bandwidth of the Triton LayerNorm against torch.nn.functional.layer_norm.

    python -m layernorm.benchmark            # the full sweep, printed as a table (CUDA only)
    python -m layernorm.benchmark --quick    # two sizes, to check the pipeline

The sweep is the official Triton tutorial's: M = 4096 rows of fp16, N from 1024 to 16384.
"""

import argparse
import sys

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit.bench import gb_per_s, median_call_ms

import torch
import torch.nn.functional as F

from layernorm.ops import group_size_for, layer_norm

M = 4096
DTYPE = torch.float16
EPS = 1e-5
SWEEP_N = [1024 * i for i in range(1, 17)]  # 1024, 2048, ..., 16384
QUICK_M = 256
QUICK_N = [1024, 4096]
PROVIDERS = {"triton": layer_norm, "torch": F.layer_norm}
MODES = ("forward", "backward")


def make_inputs(m, n, dtype=DTYPE, device="cuda", seed=0):
    gen = torch.Generator(device=device).manual_seed(seed)
    x = -2.3 + 0.5 * torch.randn((m, n), dtype=dtype, device=device, generator=gen)
    w = torch.rand((n,), dtype=dtype, device=device, generator=gen)
    b = torch.rand((n,), dtype=dtype, device=device, generator=gen)
    dy = 0.1 * torch.randn((m, n), dtype=dtype, device=device, generator=gen)
    # leaves that need gradients, as in training: the forward pass also records the graph
    return x.requires_grad_(), w.requires_grad_(), b.requires_grad_(), dy


# --8<-- [start:timing]
def time_forward(fn, x, w, b):
    """Median ms of one forward call: it reads x, writes y (2 * M * N elements)."""
    n = x.shape[-1]
    ms = median_call_ms(lambda: fn(x, (n,), w, b, EPS))
    return ms, gb_per_s(2 * x.numel() * x.element_size(), ms)


def time_backward(fn, x, w, b, dy):
    """Median ms of one backward pass: reads x and dy, writes dx
    (3 * M * N elements)."""
    y = fn(x, (x.shape[-1],), w, b, EPS)  # the graph is recorded once, not timed

    def backward():
        # returns the gradients instead of adding them into .grad: no accumulation
        torch.autograd.grad(y, (x, w, b), dy, retain_graph=True)

    ms = median_call_ms(backward)
    return ms, gb_per_s(3 * x.numel() * x.element_size(), ms)
# --8<-- [end:timing]


def measure(quick=False):
    """Time both providers in both modes over the sweep; a JSON-serializable dict."""
    if not torch.cuda.is_available():
        raise RuntimeError("the benchmark times CUDA kernels; it needs a CUDA GPU")
    m, ns = (QUICK_M, QUICK_N) if quick else (M, SWEEP_N)
    rows = []
    for n in ns:
        x, w, b, dy = make_inputs(m, n)
        for mode in MODES:
            for provider, fn in PROVIDERS.items():
                if mode == "forward":
                    ms, gbps = time_forward(fn, x, w, b)
                else:
                    ms, gbps = time_backward(fn, x, w, b, dy)
                rows.append({"mode": mode, "provider": provider, "N": n,
                             "ms": round(ms, 5), "gb_per_s": round(gbps, 1)})
        del x, w, b, dy
        torch.cuda.empty_cache()
    return {
        "M": m,
        "dtype": str(DTYPE).removeprefix("torch."),
        "eps": EPS,
        "n_values": ns,
        "group_size": {str(n): group_size_for(n) for n in ns},
        "bytes": {"forward": "2 * M * N * element_size", "backward": "3 * M * N * element_size"},
        "timing": "normkit.bench.median_call_ms: 20 warm-up calls, median of 50 samples of 20 calls",
        "rows": rows,
    }


def format_table(results):
    by_key = {(r["mode"], r["provider"], r["N"]): r for r in results["rows"]}
    lines = [f"M = {results['M']}, {results['dtype']}",
             f"{'mode':>8} {'N':>6} {'triton GB/s':>12} {'torch GB/s':>11} {'triton/torch':>13}"]
    for mode in MODES:
        for n in results["n_values"]:
            t, r = by_key[(mode, "triton", n)], by_key[(mode, "torch", n)]
            lines.append(f"{mode:>8} {n:>6} {t['gb_per_s']:>12.1f} {r['gb_per_s']:>11.1f} "
                         f"{t['gb_per_s'] / r['gb_per_s']:>12.2f}x")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="two sizes only")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA GPU: the benchmark times CUDA kernels and cannot run here", file=sys.stderr)
        return 1
    print(format_table(measure(quick=args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
