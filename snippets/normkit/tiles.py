"""Column tiles for the staged backward kernels of both chapters (layernorm/fast.py,
rmsnorm/fast.py): a program's share of a row's columns, held as power-of-two tiles."""

import triton
import triton.language as tl


# A row's share starts a whole number of these columns in: N / SPLIT itself would start
# the second share of an aligned 16136-column bf16 row 8 bytes off 16, and every access
# to that share would narrow (notes/fast-kernels.md, seventh session)
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
def share_columns(share, W, N: tl.constexpr, WIDTH: tl.constexpr, TILE: tl.constexpr,
                  REST: tl.constexpr, HAS_W: tl.constexpr):
    """A share's columns, held as a TILE and a REST tile: each one's columns, mask and
    weight (without a REST tile, the second three repeat the first, unused)."""
    cols_a, ok_a = share_tile(share, 0, TILE, WIDTH, N)
    w_a = load_weight(W, cols_a, ok_a, HAS_W)
    if REST > 0:
        cols_b, ok_b = share_tile(share, TILE, REST, WIDTH, N)
        return cols_a, ok_a, w_a, cols_b, ok_b, load_weight(W, cols_b, ok_b, HAS_W)
    else:
        return cols_a, ok_a, w_a, cols_a, ok_a, w_a


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


@triton.jit
def row_block(X, M, N: tl.constexpr, STRIDE: tl.constexpr, BLOCK_N: tl.constexpr,
              ROWS: tl.constexpr):
    """A forward program's ROWS rows, whole, in fp32: the rows, which are below M, the
    columns, which are in the row, the (ROWS, BLOCK_N) mask, the rows as int64 offsets
    (M * N may pass 2**31), and x."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    rows64 = rows.to(tl.int64)[:, None]
    x = tl.load(X + rows64 * STRIDE + cols[None, :], mask=mask, other=0.0)
    return rows, rows < M, cols, cols < N, mask, rows64, x.to(tl.float32)


@triton.jit
def block_of_rows(block, rows_per_program, M):
    """The contiguous block of rows a program (or a group of programs) owns: [first,
    end)."""
    first = block * rows_per_program
    return first, tl.minimum(first + rows_per_program, M)


@triton.jit
def step_rows(start, end, col_ok, ROWS: tl.constexpr):
    """A step's rows [start, start + ROWS) of a block ending at end: the rows, which of
    them are in the block, the (ROWS, columns) mask, and the rows as int64 offsets (a
    column)."""
    rows = start + tl.arange(0, ROWS)
    row_ok = rows < end
    return rows, row_ok, row_ok[:, None] & col_ok[None, :], rows.to(tl.int64)[:, None]


@triton.jit
def load_rows(X, DY, start, end, cols, col_ok, STRIDE_X: tl.constexpr,
              STRIDE_DY: tl.constexpr, ROWS: tl.constexpr, EVICT: tl.constexpr):
    """x and dy of the rows [start, start + ROWS) below end, at cols, as stored."""
    _, _, mask, rows64 = step_rows(start, end, col_ok, ROWS)
    x = tl.load(X + rows64 * STRIDE_X + cols[None, :], mask=mask, other=0.0,
                eviction_policy=EVICT)
    dy = tl.load(DY + rows64 * STRIDE_DY + cols[None, :], mask=mask, other=0.0,
                 eviction_policy=EVICT)
    return x, dy


@triton.jit
def backward_rows_start(X, DY, W, M, rows_per_program, N: tl.constexpr,
                        BLOCK_N: tl.constexpr, STRIDE_X: tl.constexpr,
                        STRIDE_DY: tl.constexpr, ROWS: tl.constexpr,
                        PREFETCH: tl.constexpr, HAS_W: tl.constexpr):
    """A backward row design's program set-up: a whole row's columns, which are in
    the row, the weight there (ones without one; loaded once for all the program's
    rows), its block of rows [start, end), and the first step's x and dy (see
    first_loads)."""
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    w = load_weight(W, cols, col_ok, HAS_W)
    first, end = block_of_rows(tl.program_id(0), rows_per_program, M)
    start, x, dy = first_loads(X, DY, first, end, cols, col_ok, STRIDE_X, STRIDE_DY, ROWS,
                               PREFETCH)
    return cols, col_ok, w, start, end, x, dy


@triton.jit
def first_loads(X, DY, first, end, cols, col_ok, STRIDE_X: tl.constexpr,
                STRIDE_DY: tl.constexpr, ROWS: tl.constexpr, PREFETCH: tl.constexpr):
    """Where the row loop starts, and the first step's x and dy when it prefetches (else
    zeros that step_loads replaces before anything reads them)."""
    if PREFETCH:
        x, dy = load_rows(X, DY, first, end, cols, col_ok, STRIDE_X, STRIDE_DY, ROWS,
                          "")
        return first, x, dy
    else:
        zeros = tl.zeros([ROWS, cols.shape[0]], X.dtype.element_ty)
        return first, zeros, zeros.to(DY.dtype.element_ty)


@triton.jit
def step_loads(X, DY, x, dy, start, end, cols, col_ok, STRIDE_X: tl.constexpr,
               STRIDE_DY: tl.constexpr, ROWS: tl.constexpr, PREFETCH: tl.constexpr):
    """A step of the row loop: step_rows, this step's x and dy, and the next step's.
    With PREFETCH this step's came with the step before (x, dy) and the next step's
    loads go out now, to arrive while this step computes; without, this step loads its
    own and the next step's are the same."""
    rows, row_ok, mask, rows64 = step_rows(start, end, col_ok, ROWS)
    if PREFETCH:
        x_next, dy_next = load_rows(X, DY, start + ROWS, end, cols, col_ok, STRIDE_X,
                                    STRIDE_DY, ROWS, "")
        return rows, row_ok, mask, rows64, x, dy, x_next, dy_next
    else:
        x, dy = load_rows(X, DY, start, end, cols, col_ok, STRIDE_X, STRIDE_DY, ROWS,
                          "")
        return rows, row_ok, mask, rows64, x, dy, x, dy


@triton.jit
def times_weight(g, W, cols, col_ok, HAS_W: tl.constexpr):
    """g times the weight at cols, kept in L2 (every row reads it); g without a
    weight."""
    if HAS_W:
        g *= tl.load(W + cols, mask=col_ok, other=0.0,
                     eviction_policy="evict_last").to(tl.float32)[None, :]
    return g


@triton.jit
def add_to_running(PART, cols, col_ok, old, value):
    """PART[cols] += value, a program's running sum in its own row of PART: where old is
    false (the first step) it writes instead of adding."""
    total = tl.load(PART + cols, mask=old, other=0.0,
                    eviction_policy="evict_last") + value
    tl.store(PART + cols, total, mask=col_ok)


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
    programs of a row owns share_width(N, SPLIT) columns (the last the rest), held as
    one power-of-two tile (tiles=1) or as two_tiles (tiles=2); early: the weight
    gradients are added before the row sums, not after dx. A row has one or two shares:
    each program adds the other share's row sums to its own (`SPLIT == 2` in the kernels),
    so a third share's would go missing."""
    if split not in (1, 2):
        raise ValueError(f"the staged backward splits a row in 1 or 2 shares, not {split}")
    width = share_width(n_cols, split)
    tile, rest = (two_tiles(width, rows, num_warps) if tiles == 2
                  else (triton.next_power_of_2(width), 0))
    return "staged", tile, rows, num_warps, per_sm, split, stages, rest, bool(early)


# The staged backward past the tables' widest row (each op's WIDE["backward"] ladder, by
# element size): two shares of 8 warps, each share in two tiles; 3 pipeline stages in
# 16 bits, 2 in fp32, whose steps are twice the bytes (notes/data/wide-rows-3-h100.json)
WIDE_STAGED = {2: ("staged", 1, 8, 1, 2, 3, 2, False), 4: ("staged", 1, 8, 1, 2, 2, 2, False)}


# What a staged backward program keeps in shared memory: the rule the tuner fits its candidates
# by (faster.tune), the plans check a GPU against (normkit.fastop) and the pages quote;
# faster/test_tune.py checks it against what the compiler allocates (at most 1 KiB more)
SHARED_BYTES = 227 * 1024  # an H200 SM's shared memory, all of it for one program at most
SHARED_SLACK = 1024  # barriers and scratch the compiler adds to the rule's count


def staged_shared(rows, row_cols, stages, element_size):
    """Shared memory of a staged program: Triton's pipeliner keeps STAGES - 1 steps of
    x and dy there (the step being computed is in registers): the compiled kernels of
    tune-18 use 16,440 bytes at N = 1024, fp32, 3 stages, and 24,636 with 4."""
    return (stages - 1) * rows * row_cols * 2 * element_size


def staged_config_shared(config, element_size):
    """staged_shared of a staged configuration: a program stages its share and the other's."""
    _, tile, rows, _, _, split, stages, rest, _ = config
    return staged_shared(rows, (tile + rest) * split, stages, element_size)
