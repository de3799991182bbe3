"""Column tiles for the staged backward kernels of both chapters (layernorm/fast.py,
rmsnorm/fast.py): a program's share of a row's columns, held as power-of-two tiles."""

import triton
import triton.language as tl


# A row's share starts a whole number of these columns in: N / SPLIT itself would start the
# second share of an aligned 16136-column bf16 row 8 bytes off 16, and every access to that
# share would narrow (notes/fast-kernels.md, seventh session)
SHARE_COLUMNS = tl.constexpr(64)


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


@triton.jit
def _add_pair(a1, b1, a2, b2):
    return a1 + a2, b1 + b2


@triton.jit
def row_sum(a, ROWS: tl.constexpr):
    """The row sums of a (ROWS, tile) block, shaped to broadcast over such blocks: for
    one row a scalar, which has no layout, so that each tile keeps its own (a (1,) sum
    would tie every tile to one layout, converted through shared memory at each step)"""
    return per_row(tl.sum(a, axis=1), ROWS)


@triton.jit
def pair_sums(a, b, ROWS: tl.constexpr):
    """row_sum of two blocks in one reduction: one barrier, not two"""
    s, t = tl.reduce((a, b), 1, _add_pair)
    return per_row(s, ROWS), per_row(t, ROWS)


@triton.jit
def rows_of(v, ROWS: tl.constexpr):
    """per_row's values back as a (ROWS,) tensor, to store one per row"""
    return tl.reshape(v + tl.zeros([ROWS, 1], tl.float32), [ROWS])


@triton.jit
def per_row(v, ROWS: tl.constexpr):
    """Values loaded one per row, shaped as row_sum shapes its sums"""
    if ROWS == 1:
        return tl.sum(v, axis=0)
    else:
        return v[:, None]
# --8<-- [end:tiles]


def two_tiles(width, rows, num_warps):
    """`width` columns as a power-of-two tile and a smaller one for the rest (0 when
    width is a power of two): 4352 = 4096 + 256; the second at least 2 elements (4
    bytes) a thread, so that its loads stay vectorized."""
    tile = triton.next_power_of_2(width)
    if tile == width:
        return tile, 0
    tile //= 2
    rest = max(triton.next_power_of_2(width - tile), 64 * num_warps // rows)
    return tile, min(tile, rest)


def share_width(n_cols, split):
    """The columns of each share of a row but the last: N / SPLIT, rounded up to whole
    SHARE_COLUMNS (the staged kernels' WIDTH)."""
    return triton.cdiv(n_cols, split * SHARE_COLUMNS.value) * SHARE_COLUMNS.value


def forward_entry_config(entry, n_cols):
    """A forward table entry as a configuration, with what follows from N filled in
    (a row entry's BLOCK_N)."""
    if entry[0] == "row":
        return ("row", triton.next_power_of_2(n_cols), *entry[1:])
    return tuple(entry)


def staged_config(n_cols, rows, num_warps, per_sm, split, stages, tiles, early):
    """The staged backward's configuration, ("staged", TILE, ROWS, num_warps, per_sm,
    SPLIT, STAGES, REST, EARLY), from a launch table's entry: each of the `split`
    programs of a row owns share_width(N, SPLIT) columns (the last the rest), held as one power-of-two tile (tiles=1) or
    as two_tiles (tiles=2); early: the weight gradients are added before the row sums,
    not after dx."""
    width = share_width(n_cols, split)
    tile, rest = (two_tiles(width, rows, num_warps) if tiles == 2
                  else (triton.next_power_of_2(width), 0))
    return "staged", tile, rows, num_warps, per_sm, split, stages, rest, bool(early)
