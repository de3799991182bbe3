"""GPU time of the ScaleNorm kernel over a sweep of row widths N: what the GPU build measures.

    python -m scalenorm.benchmark            # the full sweep, printed (CUDA only)
    python -m scalenorm.benchmark --quick    # two widths, to check the pipeline

measure(quick) returns JSON-ready data; scripts/gpu_build.py stores it in
docs/data/scalenorm/measurements.json with its provenance, and report.py renders it.
Timing is normkit.bench's, the site's one protocol: GPU time from CUDA-graph replay, each figure
three repetitions in separate passes.
"""

import argparse
import sys

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit import bench

import torch

from scalenorm.ops import scale_norm

M = 4096
DTYPE = torch.float16
SWEEP_N = [1024, 2048, 4096, 8192, 16384]
QUICK_M, QUICK_N = 256, [1024, 4096]


def moved_bytes(m, n):
    """What one call moves: the input read once, the output written once."""
    return 2 * m * n * DTYPE.itemsize


def time_call(m, n, protocol):
    """One repetition: GPU µs per call, the inputs rotating through enough copies to miss the L2."""
    def make():
        x = torch.randn((m, n), dtype=DTYPE, device="cuda")
        return lambda: scale_norm(x)
    return bench.gpu_us(make, bench.rotating_copies(moved_bytes(m, n), protocol), protocol)


def measure(quick=False):
    if not torch.cuda.is_available():
        raise RuntimeError("the benchmark times CUDA kernels; it needs a CUDA GPU")
    protocol = bench.QUICK if quick else bench.PROTOCOL
    m, ns = (QUICK_M, QUICK_N) if quick else (M, SWEEP_N)
    figures = bench.measure_all({n: (lambda n=n: time_call(m, n, protocol)) for n in ns}, protocol)
    return {
        "M": m,
        "dtype": str(DTYPE).removeprefix("torch."),
        "protocol": bench.protocol_record(protocol),
        "rows": [{"N": n, "bytes": moved_bytes(m, n), "us": figures[n]} for n in ns],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="two widths only")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA GPU: the benchmark times CUDA kernels and cannot run here", file=sys.stderr)
        return 1
    for row in measure(quick=args.quick)["rows"]:
        print(f"N = {row['N']:>6}: {bench.figure_text(row['us'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
