"""Issue 39, item 2: how many programs should share a row in the exchange of row sums?

The landed rung (normkit/exchange.py) gives every width up to 32768 S = 4 programs a row. At
20480 each share is 5120 columns in a tile of 8192 (a third of every tile masked off), at 24576
6144 in 8192; only at 32768 does a share fill its tile. This times S chosen so that a share is
a whole power of two (N / 4096 or N / 8192 programs a row) against S = 4, at one program an SM
with 8 warps and at two an SM with 4 warps, backward alone, % of copy for its 3MN bytes (plain
back-to-back calls, median of 10), checked against the chunked rung's results.

The kernel sums its row's S partial sums with tl.arange(0, S), which needs S to be a power of
two. The variant run here is the same kernel with that arange padded to the next power of two
and masked (a temporary copy of exchange.py's source, changed in those lines only, asserted).

    PYTHONPATH=snippets:notes/experiments python3 notes/experiments/exchange_shares.py --out x.json
"""

import importlib.util
import pathlib
import tempfile

import triton

from exchange_rung import OPS, parse, run  # this folder
from normkit import exchange

EDITS = (("    S: tl.constexpr,        # programs a row\n",
          "    S: tl.constexpr,        # programs a row\n    SP: tl.constexpr,\n"),
         ("pairs = tl.arange(0, S) * 2", "pairs = tl.arange(0, SP) * 2"),
         ("sums = tl.load(row_sync + pairs, mask=row < M,",
          "sums = tl.load(row_sync + pairs, mask=(row < M) & (pairs < 2 * S),"),
         ("sums_g = tl.load(row_sync + pairs + 1, mask=row < M,",
          "sums_g = tl.load(row_sync + pairs + 1, mask=(row < M) & (pairs < 2 * S),"))


def any_shares_module():
    """exchange.py's kernel taking any S, imported from a temporary file (Triton reads a
    kernel's source from its file)."""
    source = pathlib.Path(exchange.__file__).read_text()
    for old, new in EDITS:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    path = pathlib.Path(tempfile.mkdtemp()) / "exchange_any_shares.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("exchange_any_shares", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DESIGN = exchange.design  # the landed one, before main puts padded_design in its place


def padded_design(config, n_cols):
    return {**DESIGN(config, n_cols), "SP": triton.next_power_of_2(config[1])}


def variants(n):
    """S = 4 and the S that make a share a whole power of two, each at one program an SM
    with 8 warps and at two an SM with 4."""
    shares = sorted({4, *(n // w for w in (4096, 8192) if n % w == 0 and n // w >= 2)})
    return {f"s{s} w{w} sm{sm}": (exchange.KIND, s, 1, w, sm) for s in shares
            for w, sm in ((8, 1), (4, 2))}


if __name__ == "__main__":
    exchange.design = padded_design
    kernel = any_shares_module().backward
    for module in OPS.values():
        module.OP.BACKWARD[exchange.KIND] = kernel
    run(parse(widths="20480,24576,28672,32768", dtypes="bfloat16"), variants)
