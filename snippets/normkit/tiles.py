"""Column tiles for the staged backward kernels of both chapters (layernorm/fast.py,
rmsnorm/fast.py): a program's share of a row's columns, held as power-of-two tiles."""

import triton
import triton.language as tl


# --8<-- [start:tiles]
@triton.jit
def share_tile(share, OFFSET: tl.constexpr, SIZE: tl.constexpr, WIDTH: tl.constexpr,
               N: tl.constexpr):
    """Columns OFFSET + [0, SIZE) of share `share` (WIDTH columns each), and a mask."""
    lanes = OFFSET + tl.arange(0, SIZE)
    cols = share * WIDTH + lanes
    return cols, (lanes < WIDTH) & (cols < N)


@triton.jit
def load_weight(W, cols, ok, HAS_W: tl.constexpr):
    """The weight at cols in fp32, or ones without a weight (dy * 1.0 folds away)."""
    if HAS_W:
        return tl.load(W + cols, mask=ok, other=0.0).to(tl.float32)
    else:
        return tl.full(cols.shape, 1.0, tl.float32)
# --8<-- [end:tiles]


def staged_config(n_cols, rows, num_warps, per_sm, split, stages, tiles):
    """The staged backward's configuration, ("staged", TILE, ROWS, num_warps, per_sm,
    SPLIT, STAGES, REST), from a launch table's entry: each of the `split` programs of a
    row owns N / SPLIT columns, held as one power-of-two tile (tiles=1) or as two
    (tiles=2: 4352 = 4096 + 256), the second at least 2 elements (4 bytes) a thread."""
    width = triton.cdiv(n_cols, split)
    tile = triton.next_power_of_2(width)
    rest = 0
    if tiles == 2 and tile != width:
        tile //= 2
        rest = max(triton.next_power_of_2(width - tile), 64 * num_warps // rows)
        rest = min(tile, rest)
    return "staged", tile, rows, num_warps, per_sm, split, stages, rest
