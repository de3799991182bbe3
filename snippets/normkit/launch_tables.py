"""The launch configurations that come from data and rules: the tables a tuning run wrote
beside an op's module (its backward entries), a ladder's rung by width, and the row design's
default where an op has no table. normkit.fastop.FastNorm reads them; faster/ (the tuner, the
benchmark, the quotes) turns table entries into configurations with the same function."""

import json
from pathlib import Path

import triton

from normkit.tiles import staged_config


def backward_entry_config(entry, n_cols):
    """A backward table entry as a configuration, with what follows from N filled in."""
    if entry[0] == "staged":
        return staged_config(n_cols, *entry[1:])
    if entry[0] == "row":
        return ("row", triton.next_power_of_2(n_cols), *entry[1:])
    return tuple(entry)


def tables_beside(module_file):
    """The launch tables a tuning run (python -m faster.tune, notes/fast-kernels.md)
    writes beside an op's module: for 16-bit inputs (tuned in bf16, used for fp16 too)
    and for fp32."""
    here = Path(module_file)
    return {2: here.with_name("fast_tuned.json"),
            4: here.with_name("fast_tuned_fp32.json")}


def read_table(path):
    """A launch table as the tuning run wrote it. For every N that is a multiple of its
    step, the backward's entry, ["row", ROWS, num_warps, programs per SM, PREFETCH] or
      ["staged", ROWS, num_warps, programs per SM, SPLIT, STAGES, TILES, EARLY] or
      ["chunked", CHUNK, ROWS, num_warps, programs per SM],
    and the fastest entry of each backward design it timed (the pages compare them). (Tables
    tuned before the forward's ladder also hold forward entries, which nothing reads.)"""
    data = json.loads(path.read_text(encoding="utf-8"))
    table = {"backward": {int(n): tuple(c) for n, c in data["backward"].items()}}
    table["step"] = data["step"]
    table["backward_designs"] = {
        int(n): {d: tuple(c) for d, c in by_design.items()}
        for n, by_design in data.get("backward_designs", {}).items()}
    return table


def ladder_entry(ladder, n_cols):
    """The entry of a ladder's first rung (widest N, entry) at least n_cols wide."""
    return next(entry for widest, entry in ladder if n_cols <= widest)


def default_backward(n_cols, element_size):
    """Without a table: the row design, about 2 KiB of fp32 rows a warp."""
    block_n = triton.next_power_of_2(n_cols)
    rows = max(1, 1024 // block_n)
    num_warps = min(max(rows * block_n * 4 // 2048, 1), 16)
    return "row", block_n, rows, num_warps, 2, block_n * element_size < 32768
