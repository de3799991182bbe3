"""The launch configurations the tuner times at a width (faster.tune): the forward's designs and
grids, and the backward's row, staged and chunked designs, the staged ones only where their
pipeline fits an SM's shared memory (normkit.tiles.staged_shared)."""

import triton

from normkit.tiles import SHARED_BYTES, staged_config, staged_shared


def forward_candidates(op, n):
    block = triton.next_power_of_2(n)
    out = []
    for rows in (1, 2, 4, 8):
        for warps in (2, 4, 8, 16):
            per_thread = rows * block // (warps * 32)
            if rows * block <= 16384 and 4 <= per_thread <= 64:
                out.append(("row", block, rows, warps))
    if block >= 8192:  # chunks pay off once a row fills a program's registers
        # one row a program, 8 or 16 warps: what came within 3 % of the best in tune-13 (LayerNorm),
        # and all of RMSNorm's fastest chunked forwards in tune-11
        # (the walk pipelined through shared memory, tl.range(num_stages=3), lost by 1-18
        # points at every width of tune-14)
        for chunk in (1024, 2048, 4096, 8192):
            for warps in (8, 16):
                if chunk <= block and 4 <= chunk // (warps * 32) <= 32:
                    if op == "rmsnorm":
                        out.append(("chunked", chunk, 1, warps))
                        continue
                    # LayerNorm's tail: one more, masked, step of the walk, or a tile of its
                    # own (tune-17: +5-30 points with 8 warps, 20-30 fewer with 4096 columns
                    # and 16 warps, whose registers it doubles)
                    for tail_tile in (0, 1):
                        out.append(("chunked", chunk, 1, warps, tail_tile))
    return out


def backward_candidates(n, element_size=2):
    block = triton.next_power_of_2(n)
    out = []
    for rows in (1, 2, 4, 8):
        for warps in (4, 8, 16, 32):
            per_thread = rows * block // (warps * 32)
            if rows * block > 16384 or not 4 <= per_thread <= 32:
                continue
            for prefetch in (True, False):
                if prefetch and rows * block > 8192:
                    continue
                for per_sm in ((1, 2, 3) if rows * block >= 4096 else (2, 3, 4)):
                    out.append(("row", block, rows, warps, per_sm, prefetch))
    out += staged_candidates(n, element_size)
    if block >= 16384:  # rows past 8192 columns: dW (and dB) no longer fit the registers
        for chunk in (2048, 4096):
            for rows in (2, 4):
                for warps in (8, 16):
                    per_thread = rows * chunk // (warps * 32)
                    if rows * chunk <= 16384 and 8 <= per_thread <= 32:
                        for per_sm in (1, 2):
                            out.append(("chunked", chunk, rows, warps, per_sm))
    return out


MAX_WARPS_PER_SM = 64


def staged_candidates(n, element_size=2):
    """The pipelined backward: per program ROWS x (N / SPLIT) columns of dW (and dB) in
    registers, as one tile or two, STAGES steps of x and dy (the whole row, for the row
    sums) in shared memory; only grids whose programs are all resident at once. With two
    tiles, the weight gradients added before the row sums or after dx (registers)."""
    out = set()
    for split in (1, 2) if n > 4096 else (1,):
        for tiles in (1, 2):
            for rows in (1, 2, 4):
                for warps in (4, 8, 16, 32):
                    cfg = staged_config(n, rows, warps, 1, split, 3, tiles, False)
                    if warps == 32 and cfg[1] < 8192:
                        continue  # won nowhere in tune-8
                    cols = cfg[1] + cfg[7]  # TILE + REST
                    per_thread = rows * cols // (warps * 32)
                    if rows * cols > 16384 or not 2 <= per_thread <= 32:
                        continue
                    for per_sm in (1, 2, 3, 4):
                        if per_sm * warps > MAX_WARPS_PER_SM:
                            continue
                        fit = [s for s in (2, 3, 4)
                               if per_sm * staged_shared(rows, cols * split, s, element_size) <= SHARED_BYTES]
                        # two stages only where three do not fit (wide fp32 rows): beside
                        # three, two won nowhere in tune-8
                        for stages in [s for s in fit if s > 2] or fit:
                            for early in (False, True) if cfg[7] else (False,):
                                out.add(staged_config(n, rows, warps, per_sm, split, stages, tiles,
                                                      early))
    return sorted(out)
