"""The backward for wide rows that do not start on 16 bytes: the chunked design's two walks,
by residue class (both fast ops; FastNorm.wide_backward picks it past their tables).

Rows r and r + K start the same s lanes into their 16-byte window, K = 16 / the bytes the
rows start on (8 for 16-bit rows of odd N, 4 at N = 2 mod 4, 2 at N = 4 mod 8). A program
owns rows of one class, as the classes backward does (normkit.aligned.classes_config), but
walks them in CHUNK-lane chunks instead of holding a whole window: its tiles do not grow with
N. Each chunk is read from the window's aligned start with masks that are whole groups of G
lanes (G elements in 16 bytes), so x, dy and dx move 16 bytes an access; the partial groups at
either end of the row, and the lanes past the last whole chunk when they are few, are the
edges, a small tile loaded once a step. Walk 1 sums a row's x_hat g (and g for LayerNorm; g =
dy w) from memory and keeps x and dy in L2; walk 2 writes dx and adds the step's dW (and dB)
to the program's running partial row, which stays in the class's frame (lane l holds column
l - s) so that those accesses are 16 bytes too. The reduce reads each partial row shifted back
by its class's s.

The chunked design (each op's fast_backward.py) reads such rows as Triton proves them
aligned: at odd N in 16 bits an element an access. Past 16384 this one measured ahead of it
wherever those accesses move few elements (notes/data/classes-chunked-*.json; each op's WIDE
entry says how few); below, the classes hold whole rows and stay ahead. It reads rows N apart
from 16-byte-aligned pointers; anything else takes the configuration's fallback, the chunked
design.
"""

import triton
import triton.language as tl

from normkit.aligned import (VECTOR_BYTES, class_block, edge_columns, load_edges, row_alignment,
                             vector, whole_groups)
from normkit.direct_launch import DirectLauncher
from normkit.tiles import add_to_running, load_weight, pair_sums, per_row, row_sum

KIND = "classes_chunked"


# --8<-- [start:classes_chunked_kernel]
@triton.jit
def class_stats(Stats, M, rows, row_ok, ROWS: tl.constexpr, CENTRED: tl.constexpr):
    """A step's saved mean (LayerNorm; 0 for RMSNorm, unread) and rstd, per_row."""
    if CENTRED:
        mean = tl.load(Stats + rows, mask=row_ok, other=0.0)
        rstd = tl.load(Stats + M + rows, mask=row_ok, other=0.0)
    else:
        mean = tl.zeros([ROWS], tl.float32)
        rstd = tl.load(Stats + rows, mask=row_ok, other=0.0)
    return per_row(mean, ROWS), per_row(rstd, ROWS)


@triton.jit
def centred(x, mean, CENTRED: tl.constexpr):
    """x - mean for LayerNorm, x for RMSNorm."""
    if CENTRED:
        return x - mean
    else:
        return x


@triton.jit
def chunk_in_frame(X, DY, W, k64, row_ok, c0, s, STEP: tl.constexpr, N: tl.constexpr,
                   G: tl.constexpr, CHUNK: tl.constexpr, HAS_W: tl.constexpr,
                   POLICY: tl.constexpr):
    """One chunk of a step's rows in the class frame, as both walks read it: its
    lanes, which of them lie in the row (body) and the step's mask, x and dy in fp32
    and g = dy w. POLICY: walk 1 keeps x and dy in L2 for walk 2 (evict_last), walk 2
    reads them a last time."""
    lanes = c0 + tl.arange(0, CHUNK)
    body = whole_groups(lanes, s, N, G)
    mask = row_ok[:, None] & body[None, :]
    at = k64 * STEP + lanes[None, :]
    x = tl.load(X + at, mask=mask, other=0.0, eviction_policy=POLICY).to(tl.float32)
    dy = tl.load(DY + at, mask=mask, other=0.0, eviction_policy=POLICY).to(tl.float32)
    # the weight at column lane - s: an element a load, from L2 (every row reads it)
    g = dy * load_weight(W, lanes - s, body, HAS_W)[None, :]
    return lanes, body, mask, x, dy, g


@triton.jit
def dx_of(g, x_hat, c1, c2, rstd, CENTRED: tl.constexpr):
    """dx from g = dy w, x_hat and the row means c1 = mean(x_hat g) and (LayerNorm) c2 =
    mean(g)."""
    if CENTRED:
        return (g - (x_hat * c1 + c2)) * rstd
    else:
        return (g - x_hat * c1) * rstd


@triton.jit(do_not_specialize=["M", "rows_per_program"])
def classes_chunked_bwd_kernel(
    X, DY, DX,     # (M, N) rows N apart from 16-byte-aligned pointers
    W,             # (N,) weight (unread without HAS_W)
    Stats,         # fp32: LayerNorm (2, M) mean then rstd, RMSNorm (1, M) rstd
    Part,          # (GRAD_W + GRAD_B, programs, FRAME) fp32: program pid's running dW
                   # (then dB) in its class's frame, row pid of each part
    M, rows_per_program,
    N: tl.constexpr,
    K: tl.constexpr,        # residue classes: rows r and r + K start alike
    G: tl.constexpr,        # elements in 16 bytes: the window's groups
    CHUNK: tl.constexpr,    # lanes per step of the walks
    BODY: tl.constexpr,     # lanes walked, whole chunks; the rest of the row: edges
    FRAME: tl.constexpr,    # lanes of a partial row
    EDGES: tl.constexpr,    # lanes of the edges' tile
    ROWS: tl.constexpr,     # rows of the class per step
    CENTRED: tl.constexpr,  # LayerNorm: x - mean, and the sum of g
    HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr, GRAD_B: tl.constexpr,
):
    pid = tl.program_id(0)
    c, first, end, window, s = class_block(pid, M, rows_per_program, N, K, G)
    X += window  # row c's window: aligned, and the class's next row is K rows on
    DY += window
    DX += window
    STEP: tl.constexpr = K * N
    DW_PART = Part + pid * FRAME
    DB_PART = Part + ((tl.num_programs(0) if GRAD_W else 0) + pid) * FRAME
    cols_e, in_row_e = edge_columns(s, N, BODY, G, EDGES)
    w_e = load_weight(W, cols_e, in_row_e, HAS_W)
    # the edges' dW and dB: in registers, into the partial rows once at the end
    dw_e = tl.zeros([EDGES], dtype=tl.float32)
    db_e = tl.zeros([EDGES], dtype=tl.float32)
    n = tl.full([], N, tl.float32)
    if first >= end:  # a program without rows (a class of few): zero partial rows
        for c0 in range(0, BODY, CHUNK):
            lanes = c0 + tl.arange(0, CHUNK)
            body = whole_groups(lanes, s, N, G)
            if GRAD_W:
                tl.store(DW_PART + lanes, tl.zeros([CHUNK], tl.float32), mask=body)
            if GRAD_B:
                tl.store(DB_PART + lanes, tl.zeros([CHUNK], tl.float32), mask=body)

    start = first
    while start < end:
        k = start + tl.arange(0, ROWS)  # places in the class
        row_ok = k < end
        k64 = k.to(tl.int64)[:, None]  # int64: M * N may pass 2**31
        mean, rstd = class_stats(Stats, M, c + k * K, row_ok, ROWS, CENTRED)
        # the edges first: their loads are in flight during walk 1
        x_e, dy_e, mask_e, at_e = load_edges(X, DY, k64, row_ok, s, cols_e, in_row_e,
                                             STEP)
        g_e = dy_e * w_e[None, :]
        xh_e = centred(x_e, mean, CENTRED) * rstd
        c2 = 0.0  # dx_of takes it, and reads it for LayerNorm only
        if GRAD_X:
            # walk 1: the row sums, per lane, from memory; lanes outside the row add 0
            a = tl.zeros([ROWS, CHUNK], dtype=tl.float32)  # (x - mean) g
            b = tl.zeros([ROWS, CHUNK], dtype=tl.float32)  # g (LayerNorm)
            for c0 in range(0, BODY, CHUNK):
                _, _, _, x, _, g = chunk_in_frame(X, DY, W, k64, row_ok, c0, s, STEP,
                                                  N, G, CHUNK, HAS_W, "evict_last")
                a += centred(x, mean, CENTRED) * g
                if CENTRED:
                    b += g
            # rounded divisions, as the other designs': rstd amplifies any ulp
            if CENTRED:
                s1, s2 = pair_sums(a, b, ROWS)
                t1, t2 = pair_sums(centred(x_e, mean, CENTRED) * g_e, g_e, ROWS)
                c1 = tl.math.div_rn((s1 + t1) * rstd, n)
                c2 = tl.math.div_rn(s2 + t2, n)
            else:
                t1 = row_sum(x_e * g_e, ROWS)
                c1 = tl.math.div_rn((row_sum(a, ROWS) + t1) * rstd, n)
            dx_e = dx_of(g_e, xh_e, c1, c2, rstd, CENTRED)
            tl.store(DX + at_e, dx_e.to(DX.dtype.element_ty), mask=mask_e)
        if GRAD_W:
            dw_e += tl.sum(dy_e * xh_e, axis=0)
        if GRAD_B:
            db_e += tl.sum(dy_e, axis=0)

        # walk 2: dx, and the step's dW (dB) added to the running partial rows in the
        # frame, x and dy from L2 (evict_first: last use); the first step writes instead
        # of adding
        for c0 in range(0, BODY, CHUNK):
            lanes, body, mask, x, dy, g = chunk_in_frame(
                X, DY, W, k64, row_ok, c0, s, STEP, N, G, CHUNK, HAS_W, "evict_first")
            x_hat = centred(x, mean, CENTRED) * rstd
            if GRAD_X:
                dx = dx_of(g, x_hat, c1, c2, rstd, CENTRED)
                tl.store(DX + k64 * STEP + lanes[None, :], dx.to(DX.dtype.element_ty),
                         mask=mask)
            old = body & (start > first)
            if GRAD_W:
                add_to_running(DW_PART, lanes, body, old, tl.sum(dy * x_hat, axis=0))
            if GRAD_B:
                add_to_running(DB_PART, lanes, body, old, tl.sum(dy, axis=0))
        # the next step reads the running sums back: every store of this step before
        tl.debug_barrier()
        start += ROWS

    # the edges' lanes of the frame (s + column), which the body never writes
    if GRAD_W:
        tl.store(DW_PART + s + cols_e, dw_e, mask=in_row_e)
    if GRAD_B:
        tl.store(DB_PART + s + cols_e, db_e, mask=in_row_e)
# --8<-- [end:classes_chunked_kernel]


@triton.jit
def sum_class_partials_kernel(
    Part,   # (parts, P, FRAME) fp32: row p in the frame of program p's class
    Out,    # (parts, N) in the parameters' dtype
    P, N,
    FRAME: tl.constexpr, K: tl.constexpr, G: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # normkit.fastop.sum_partials_kernel, but column j of program p's partial row is at
    # lane j + s, its class's offset (p % K) * N % G
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    Part += tl.program_id(1) * P * FRAME
    acc = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    for p in range(0, P, BLOCK_P):
        r = p + tl.arange(0, BLOCK_P)
        s = (r % K) * N % G
        mask = (r < P)[:, None] & (cols < N)[None, :]
        acc += tl.load(Part + r[:, None] * FRAME + s[:, None] + cols[None, :], mask=mask,
                       other=0.0)
    total = tl.sum(acc, axis=0).to(Out.dtype.element_ty)
    tl.store(Out + tl.program_id(1) * N + cols, total, mask=cols < N)


backward = DirectLauncher(classes_chunked_bwd_kernel)
sum_class_partials = DirectLauncher(sum_class_partials_kernel)


def config(walk, n_cols, element_size, fallback):
    """The backward for rows of n_cols that start off 16 bytes, as a walk (CHUNK, ROWS,
    num_warps, programs per SM, FEWER) takes them: ("classes_chunked", CHUNK, ROWS, num_warps,
    per_sm, G, K, fallback), with K residue classes and G elements in 16 bytes, where the
    fallback (the chunked design, also for inputs the walk cannot read) would move fewer than
    FEWER elements an access; else the fallback."""
    *launch, fewer = walk
    alignment = row_alignment(n_cols, element_size)
    if alignment // element_size >= fewer:
        return fallback
    return (KIND, *launch, vector(element_size), VECTOR_BYTES // alignment, fallback)


def frame(n_cols, g, chunk, threads):
    """(BODY, FRAME, EDGES): the lanes walked (whole chunks), a partial row's lanes, the edges'
    tile. A row reaches lane N + G - 2 of its window; the lanes past the last whole chunk go in
    the edges when the edges' tile (at least one lane a thread, to hold no copies) has room for
    them, else in one more, partial, chunk."""
    window = n_cols + g - 1
    edges = max(2 * g, triton.next_power_of_2(threads))
    body = window // chunk * chunk
    if body == 0 or window - body > edges - g:
        body += chunk
    edges = max(edges, triton.next_power_of_2(g + max(g - 1, window - body)))
    return body, max(body, triton.cdiv(window, 4) * 4), edges  # 16-byte rows of fp32


def design(config, n_cols, centred):
    """The kernel's constants for a configuration (the launch adds N, ROWS, flags, warps)."""
    _, chunk, rows, num_warps, _, g, k, _ = config
    body, lanes, edges = frame(n_cols, g, chunk, max(1, 32 * num_warps // rows))
    return {"K": k, "G": g, "CHUNK": chunk, "BODY": body, "FRAME": lanes, "EDGES": edges,
            "CENTRED": centred}
