"""Rows that do not start on 16 bytes, read 16 bytes at a time (both chapters' fast forwards).

Row r of an (M, N) tensor starts at element r * N. Unless N * element size is a multiple of 16,
Triton cannot prove any row's start aligned and narrows every access to what it can prove (two
bytes at odd bf16 widths: notes/fast-kernels.md, seventh session). Read instead from the aligned
address at or below the row's start: with V elements to 16 bytes, the row starts s = r * N % V
lanes into its window, the window's groups of V lanes that lie wholly inside the row are its body
(one mask value per group: 16-byte loads and stores), and the at most 2 (V - 1) columns in the
partial groups at either end are its edges, a small tensor of their own. The weight in the body's
frame moves with s: it is read from a table of the weight shifted by each s (shifted_params),
built once a call, so that its loads are 16 bytes too. RMSNorm's fast forward holds a row's whole
window in registers (window_config says where). LayerNorm's walks it in chunks (walk_config): held
whole beside the centred row, the weight and the bias, its window left one program an SM and
measured behind the table's designs at most odd widths (notes/fast-kernels.md, eighth session).

The backward reads rows of odd N and moderate width by residue class (classes_config says
which and how).
"""

import math

import triton
import triton.language as tl

from normkit.direct_launch import DirectLauncher
from normkit.tiles import load_weight

VECTOR_BYTES = 16  # the widest load a thread issues


def row_alignment(n_cols, element_size):
    """The bytes every row of n_cols elements starts on, at most VECTOR_BYTES: rows start at
    row * n_cols elements, so at the largest power of two that divides a row's bytes."""
    n_bytes = n_cols * element_size
    return min(VECTOR_BYTES, n_bytes & -n_bytes)


def one_element_accesses(n_cols, element_size):
    """Whether a row design's every access moves one element: rows start on the element's size
    (odd N)."""
    return row_alignment(n_cols, element_size) <= element_size


def vector(element_size):
    """Elements in VECTOR_BYTES: V."""
    return VECTOR_BYTES // element_size


def window(n_cols, element_size):
    """Lanes of a row's window: the row starts up to V - 1 lanes in."""
    return triton.next_power_of_2(n_cols + vector(element_size) - 1)


# Below this many bytes a call is launch-bound and the weight table's launch costs more than the
# narrow accesses save: a rule (the launch is a few µs; these bytes take about 2 µs at 4 TB/s)
WINDOW_MIN_BYTES = 2**23
# Measured, not derived (notes/data/cliff-4-*.json, RMSNorm, bf16 and fp32): the window was ahead
# of the table's design at every odd N above this many columns (by 9 to 47 points), and behind
# at some below it (1025 bf16, 2049 and 2305 fp32), and behind wherever the table's design moves
# two elements an access or more (N even)
WINDOW_MIN_COLS = 4096
# Measured (notes/data/offset-rows-1-h100.json, bf16, H100): with 8 warps the window came within
# 2 points of copy of the best of 4, 8 and 16 at 4097, 8193 and 12289 columns; the ladder's 16
# warps lost 28 points at 4097
WINDOW_WARPS = 8


def window_config(config, n_cols, element_size, max_lanes):
    """RMSNorm's forward configuration for rows of n_cols: ("aligned", LANES, ROWS,
    WINDOW_WARPS, the ladder's configuration) where the ladder's design would move one element
    an access, the row is wider than WINDOW_MIN_COLS and its window fits max_lanes, with the
    entry's rows (one for a chunked entry); else the configuration as it is."""
    lanes = window(n_cols, element_size)
    if (not one_element_accesses(n_cols, element_size) or n_cols <= WINDOW_MIN_COLS
            or lanes > max_lanes):
        return config
    rows = config[2] if config[0] == "row" else 1
    return "aligned", lanes, rows, WINDOW_WARPS, config


# Measured (notes/data/cliff-7-*.json against cliff-5, LayerNorm at odd N): in 16 bits the walk
# was ahead of the table's designs at every width tried above 2048 columns (by 8 to 56 points)
# and behind at 769 and 1025 (14 to 26). In fp32 it was ahead of them above 8193, but the
# offset rule's chunks (OFFSET_FP32) are ahead of the walk: fp32 rows are not walked
WALK_MIN_COLS = {2: 2048}


def walk_config(config, n_cols, element_size):
    """LayerNorm's forward configuration for rows of n_cols: ("aligned", CHUNK, 1, num_warps,
    the table's configuration) where the table's design would move one element an access and
    the row is wider than WALK_MIN_COLS of its element size, else the configuration as it is. The walk takes about
    four steps: CHUNK is the power of two nearest N / 4, from 1024 to 4096 lanes, and a warp
    holds 256 of them, at most 8 warps. A rule, not tuned: of the chunks and warps that
    notes/data/lnwin-3.json timed at odd widths from 2049 to 16129, it takes the fastest or
    one within 6 points of it in bf16 (8193: 76 against 81 % with 4 warps), 8 in fp32."""
    if (not one_element_accesses(n_cols, element_size)
            or n_cols <= WALK_MIN_COLS.get(element_size, n_cols)):
        return config
    chunk = min(4096, max(1024, 1 << round(math.log2(n_cols / 4))))
    return "aligned", chunk, 1, min(8, chunk // 256), config


def walk_lanes(n_cols, chunk):
    """Lanes of the tables a walk reads its weight and bias from: from lane V on, whole chunks
    past the row's end (N - 1 columns after the first group's first), and one more."""
    return (triton.cdiv(n_cols - 1, chunk) + 1) * chunk


# Measured (notes/data/offset-rows-1-h100.json, bf16, H100): the ladder's rungs are fitted at rows
# on 16 bytes. At rows on 2, 4 or 8 bytes that no aligned design reads, 2048-element chunks with
# 16 warps came ahead of the ladder's chunked rungs and of its row rung above 8192 lanes at all
# 16 op and width pairs tried, by 0.2 to 28 points of copy (LayerNorm 8194: 90 against 62;
# RMSNorm 8194: 94 against 68), and within 5.3 points of the best of the row and chunked grid at
# 14 (RMSNorm 16383 and 16385: 6 and 10). Narrower row rungs were ahead (LayerNorm 4098: 90
# against 79)
OFFSET_CHUNK, OFFSET_WARPS, OFFSET_ROW_MAX_LANES = 2048, 16, 8192
# Measured in fp32 (notes/data/offset-rows-fp32-{1,2,3}-h100.json, three runs, H100), LayerNorm
# at rows on 4 and 8 bytes: 8192-element chunks with 8 warps and the tail tile came ahead of the
# ladder's rungs and the walk at 4097, 4098, 8193, 8194, 12289 and 16383 (4097: 87 to 92 % of
# copy against 59 to 61; 12289: 89 against 76), and within 2 points at 12290 (91 against 92).
# RMSNorm's fp32 configurations were at 88 or more at those widths but 16383: they stay
OFFSET_FP32 = ("chunked", 8192, 1, 8, 1)


def offset_config(config, n_cols, element_size, chunked):
    """The forward's configuration for rows that start off 16 bytes: chunked[element_size]
    (the op's chunked design: OFFSET_CHUNK and OFFSET_WARPS in 16 bits) in place of a
    chunked configuration or a row one wider than OFFSET_ROW_MAX_LANES, else the
    configuration as it is (always for an element size `chunked` does not name)."""
    if element_size not in chunked or row_alignment(n_cols, element_size) == VECTOR_BYTES:
        return config
    if config[0] == "chunked" or (config[0] == "row" and config[1] > OFFSET_ROW_MAX_LANES):
        return chunked[element_size]
    return config


# the widest rows whose next row a row backward prefetches: above, the prefetch spills (the
# row rule's and the classes' alike)
PREFETCH_MAX_LANES = 8192


def narrow_row_config(n_cols):
    """The row backward for rows whose every access moves one element, the fallback of
    the classes backward for an input it cannot read: the whole row in registers at 16
    elements a thread and 16 warps an SM (notes/data/cliff-3: near the best row
    configurations at odd bf16 widths), prefetching the next row up to
    PREFETCH_MAX_LANES. The staged copies into shared memory (cp.async) would
    move one element each too, or none at all (notes/data/cliff-4)."""
    block_n = triton.next_power_of_2(n_cols)
    num_warps = min(32, max(1, block_n // 512))
    return "row", block_n, 1, num_warps, max(1, 16 // num_warps), block_n <= PREFETCH_MAX_LANES


def class_lanes(n_cols, v):
    """The lanes a classes backward holds of a row's window (N + V - 1 lanes from the
    aligned start): the power of two at or above it, or the one below when the rest is
    at most V lanes, which the edges then carry (4097 bf16: 4096 lanes, not 8192)."""
    span = n_cols + v - 1
    below = 1 << (span.bit_length() - 1)
    return below if span - below <= v else triton.next_power_of_2(span)


def class_edges(n_cols, lanes, v):
    """Lanes of the edges' tile: V for the head's partial group, then the tail, at most
    V - 1 columns, or all past the body's LANES lanes."""
    return triton.next_power_of_2(v + max(v - 1, n_cols + v - 1 - lanes))


# Measured (notes/data/classes-backward-h100.*, -2-h100.*, -3-h100.*), by element size: the lanes
# where the classes were ahead of the row rule at odd N. In 16 bits from 1024 lanes (1025: 78
# against 72 % of copy) to 16384, there with 8 warps (12289: 46 against 37; 16 or 32 warps were
# behind). In fp32, whose rows start on 4 bytes, from 4096 lanes (3001: 92 against 84; 6001: 91
# against 65) to 8192 (16384 not tried), level or behind below (2049: 84 against 90) and 2
# points behind at 4097, the one width of the four tried from 4096 lanes where the row rule
# came first
CLASS_LANES = {2: (1024, 16384), 4: (4096, 8192)}
# the classes' warps: one per 1024 lanes, at most this many
CLASS_WARPS = 8


def classes_config(config, n_cols, element_size):
    """The backward where rows start on the element's size (odd N) and the classes measured
    ahead (CLASS_LANES): ("classes", LANES, ROWS, num_warps, per_sm, PREFETCH, V, EDGES,
    fallback); elsewhere at odd N the row rule (narrow_row_config), and the table's
    configuration as it is at every other N. Rows r and r + V start the same s lanes
    into their 16-byte window, so a program that owns rows of one residue class reads
    each from its window's aligned start in 16-byte accesses, keeps the weight and its
    sums in that frame, and writes them back once. One warp per 1024 lanes, at most
    CLASS_WARPS: 8 warps measured 8 to 30 points slower at 4096 lanes, and 16 warps 1 to
    35 points slower than 8 at 16384 (notes/issue-39.md). 16-bit rows up to
    PREFETCH_MAX_LANES prefetch the next row; fp32 rows do not (without, they
    were level or ahead for 7 of the 8 op and width pairs tried). The row rule is also the
    fallback for an input the classes cannot read (rows not N apart, a pointer off 16
    bytes). Rows on 4 or 8 bytes in 16 bits keep the table's staged entries, which move 4
    or 8 bytes an access and measured ahead of the classes there."""
    if not one_element_accesses(n_cols, element_size):
        return config
    v = vector(element_size)
    lanes = class_lanes(n_cols, v)
    low, high = CLASS_LANES.get(element_size, (0, 0))
    if not low <= lanes <= high:
        return narrow_row_config(n_cols)
    num_warps = min(CLASS_WARPS, max(1, lanes // 1024))
    prefetch = element_size == 2 and lanes <= PREFETCH_MAX_LANES
    return ("classes", lanes, 1, num_warps, 16 // num_warps, prefetch, v,
            class_edges(n_cols, lanes, v), narrow_row_config(n_cols))


# --8<-- [start:aligned_rows]
@triton.jit
def row_window(rows, N: tl.constexpr, V: tl.constexpr):
    """Where the window of each of `rows` starts (aligned, as a (ROWS, 1) column),
    and how far into it the row starts (the same shape)."""
    start = rows.to(tl.int64) * N  # int64: M * N may pass 2**31
    s = start % V
    return tl.multiple_of(start - s, V)[:, None], s[:, None]


@triton.jit
def whole_groups(lanes, s, N: tl.constexpr, V: tl.constexpr):
    """Which of a window's lanes lie in groups of V wholly inside a row that starts s
    lanes in: one mask value per group, so the accesses stay 16 bytes wide."""
    group = (lanes // V) * V
    return (group >= s) & (group + V <= s + N)


@triton.jit
def body_of(lanes, s, row_ok, N: tl.constexpr, V: tl.constexpr):
    """whole_groups of the window's `lanes` (a (1, L) row) for each row of a step."""
    return whole_groups(lanes, s, N, V) & row_ok[:, None]


@triton.jit
def edges_of(s, row_ok, N: tl.constexpr, V: tl.constexpr, E: tl.constexpr,
             FIRST: tl.constexpr):
    """The columns outside the body, (ROWS, E), E >= 2V: the first V lanes for the
    head, the next V for the tail, and which of them are in the row. FIRST: the
    body's first lane (0, or V when the first group is always an edge)."""
    e = tl.arange(0, E)[None, :]
    # [0, head): before the body's first whole group (shared with the row before)
    head = tl.minimum(tl.maximum(FIRST, (s + V - 1) // V * V) - s, N)
    tail = tl.maximum(((s + N) // V) * V - s, head)  # [tail, N): with the row after
    cols = tl.where(e < V, e, tail + e - V)
    return cols, tl.where(e < V, e < head, (e < 2 * V) & (cols < N)) & row_ok[:, None]
# --8<-- [end:aligned_rows]


# --8<-- [start:row_classes]
@triton.jit
def class_block(pid, M, rows_per_program, N: tl.constexpr, K: tl.constexpr,
                V: tl.constexpr):
    """The rows a program owns, by residue class: rows c, c + K, c + 2K, ... all start
    the same s lanes into their 16-byte window (c = pid % K; K = V at odd N). Returns c,
    the block [first, end) of the class's rows it owns (counted in steps of K rows), the
    offset of row c's window (aligned: a multiple of V) and s."""
    c = pid % K
    first = (pid // K) * rows_per_program
    end = tl.minimum(first + rows_per_program, (M - c + K - 1) // K)
    s = (c * N) % V
    return c, first, end, tl.multiple_of(c * N - s, V), s


@triton.jit
def edge_columns(s, N: tl.constexpr, LANES: tl.constexpr, V: tl.constexpr,
                 EDGES: tl.constexpr):
    """The row's columns outside the whole groups of a class frame's LANES lanes, at
    most EDGES (the partial group at the head, then the tail from the body's end or the
    frame's), and which of the edge lanes hold one."""
    e = tl.arange(0, EDGES)
    head = tl.minimum((V - s) % V, N)
    tail = tl.maximum(tl.minimum((s + N) // V * V, LANES) - s, head)
    cols_e = tl.where(e < V, e, tail + e - V)
    return cols_e, tl.where(e < V, e < head, cols_e < N)


@triton.jit
def class_columns(s, N: tl.constexpr, LANES: tl.constexpr, V: tl.constexpr,
                  EDGES: tl.constexpr):
    """A class's frame, the same for each of its rows: the window's LANES lanes and
    its body (the groups of V lanes wholly inside the row: 16-byte accesses), then the
    edges (edge_columns)."""
    lanes = tl.arange(0, LANES)
    cols_e, edge = edge_columns(s, N, LANES, V, EDGES)
    return lanes, whole_groups(lanes, s, N, V), cols_e, edge


@triton.jit
def class_frame(X, DY, DX, W, M, rows_per_program, N: tl.constexpr, LANES: tl.constexpr,
                V: tl.constexpr, EDGES: tl.constexpr, HAS_W: tl.constexpr):
    """What a classes backward program works in (class_block, class_columns): its class
    c, its block [first, end) of the class's rows, the three row pointers moved to
    row c's window, s, the frame's lanes, body, edge columns and mask, and the weight
    in the frame (body and edges), loaded once."""
    c, first, end, window, s = class_block(tl.program_id(0), M, rows_per_program, N, V,
                                           V)
    lanes, body, cols_e, edge = class_columns(s, N, LANES, V, EDGES)
    w = load_weight(W, lanes - s, body, HAS_W)
    w_e = load_weight(W, cols_e, edge, HAS_W)
    return (c, first, end, X + window, DY + window, DX + window, s, lanes, body, cols_e,
            edge, w, w_e)
# --8<-- [end:row_classes]

@triton.jit
def load_edges(X, DY, rows64, row_ok, s, cols_e, edge, STEP: tl.constexpr):
    """x and dy in fp32 at the edge columns of a step's rows (rows64: their places in
    the class, a column), where they are in the row, and their offsets (dx's too)."""
    mask = row_ok[:, None] & edge[None, :]
    at = rows64 * STEP + s + cols_e[None, :]
    x = tl.load(X + at, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(DY + at, mask=mask, other=0.0).to(tl.float32)
    return x, dy, mask, at


@triton.jit
def store_frame(PART, lanes, s, body, cols_e, edge, sums, sums_e):
    """A class's sums back in the row's columns, once: the body's lane l holds column
    l - s, the edges' lanes their own columns."""
    tl.store(PART + lanes - s, sums.to(PART.dtype.element_ty), mask=body)
    tl.store(PART + cols_e, sums_e.to(PART.dtype.element_ty), mask=edge)



@triton.jit
def shift_kernel(P, OUT, N: tl.constexpr, LANES: tl.constexpr, BLOCK: tl.constexpr):
    """OUT[k, l] = P[l - k] where 0 <= l - k < N, else 0: row k is P in the frame of a row
    that starts k lanes into its window."""
    k = tl.program_id(0)
    lanes = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    cols = lanes - k
    p = tl.load(P + cols, mask=(cols >= 0) & (cols < N), other=0.0)
    tl.store(OUT + k * LANES + lanes, p, mask=lanes < LANES)


shift = DirectLauncher(shift_kernel)


def shifted_params(param, lanes, v):
    """(V, lanes) copies of a (N,) parameter, row k shifted k lanes in (shift_kernel); None for
    None."""
    if param is None:
        return None
    out = param.new_empty((v, lanes))
    block = min(triton.next_power_of_2(lanes), 4096)
    shift[(v, triton.cdiv(lanes, block))](param, out, N=param.numel(), LANES=lanes, BLOCK=block,
                                          num_warps=4)
    return out
