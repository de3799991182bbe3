"""Issue 21, third session: the staged LayerNorm backward with a third tile (SPLIT = 1), to read
its registers and spills for sm_90 without a GPU (ptxas -v). Generated from layernorm/fast.py's kernel:
every `if REST > 0:` block doubled for REST2. An experiment, not a kernel of the site."""
import sys
sys.path.insert(0, "snippets")
sys.path.insert(0, "notes/experiments")
import triton
import triton.language as tl
from layernorm.fast import ln_bwd_tile, ln_add_grads, ln_share_sums
from normkit.tiles import load_weight, pair_sums, per_row, share_tile
from faster.test_layouts import compile_staged
from ptxas_spills import ptxas_usage


@triton.jit(do_not_specialize=["M", "rows_per_program"])
def ln_bwd_three_tiles_kernel(
    X, DY, DX, W, Stats,   # as ln_fast_bwd_kernel
    Part,          # (GRAD_W + GRAD_B, groups, N) fp32: this group's sums in row `group`
    M, rows_per_program,
    N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
    SPLIT: tl.constexpr,   # programs that share each row: 1, or 2 for the widest rows
    TILE: tl.constexpr,    # a program's N / SPLIT columns held as a power-of-two tile
    REST2: tl.constexpr,
    RELOAD_W: tl.constexpr,  # load w at every step (L1) instead of holding it in registers
    REST: tl.constexpr,    # ... and a second, smaller one for the rest (0: none), so
                           # that registers follow N and not the next power of two
    ROWS: tl.constexpr,    # rows per step
    STAGES: tl.constexpr,  # steps of loads in flight, staged in shared memory
    HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr, GRAD_B: tl.constexpr,
    EARLY: tl.constexpr,   # add to dW and dB before the row sums (dy then need not
                           # stay in registers across their barrier), or after dx
):
    # SPLIT programs walk the same rows at the same time; each keeps dW and dB of its
    # own share of the columns, and reads the other share only for the row sums (its
    # sibling has just read it: from L2, not from memory)
    tl.static_assert(SPLIT == 1 or REST2 == 0, "the third tile: one program a row only")
    group = tl.program_id(0) // SPLIT
    groups = tl.num_programs(0) // SPLIT
    share = tl.program_id(0) % SPLIT
    WIDTH: tl.constexpr = (N + SPLIT - 1) // SPLIT
    cols_a, ok_a = share_tile(share, 0, TILE, WIDTH, N)
    w_a = load_weight(W, cols_a, ok_a, HAS_W)
    dw_a = tl.zeros([TILE], dtype=tl.float32)
    db_a = tl.zeros([TILE], dtype=tl.float32)
    if REST > 0:
        cols_b, ok_b = share_tile(share, TILE, REST, WIDTH, N)
        w_b = load_weight(W, cols_b, ok_b, HAS_W)
        dw_b = tl.zeros([REST], dtype=tl.float32)
        db_b = tl.zeros([REST], dtype=tl.float32)
    if REST2 > 0:
        cols_c, ok_c = share_tile(share, TILE + REST, REST2, WIDTH, N)
        w_c = load_weight(W, cols_c, ok_c, HAS_W)
        dw_c = tl.zeros([REST2], dtype=tl.float32)
        db_c = tl.zeros([REST2], dtype=tl.float32)
    if SPLIT == 2:
        o_a, o_ok_a = share_tile(1 - share, 0, TILE, WIDTH, N)
        wo_a = load_weight(W, o_a, o_ok_a, HAS_W)
        wo_b = wo_a  # the second tile's, when there is one
        if REST > 0:
            o_b, o_ok_b = share_tile(1 - share, TILE, REST, WIDTH, N)
            wo_b = load_weight(W, o_b, o_ok_b, HAS_W)

    first = group * rows_per_program
    end = tl.minimum(first + rows_per_program, M)
    n = tl.full([], N, tl.float32)
    # tl.range pipelines the loop: the loads of the next STAGES - 1 steps are copied
    # into shared memory while this step computes, so registers hold only one step
    for start in tl.range(first, end, ROWS, num_stages=STAGES):
        rows = start + tl.arange(0, ROWS)
        row_ok = rows < end
        rows64 = rows.to(tl.int64)[:, None]
        mean = per_row(tl.load(Stats + rows, mask=row_ok, other=0.0), ROWS)
        rstd = per_row(tl.load(Stats + M + rows, mask=row_ok, other=0.0), ROWS)
        if RELOAD_W:
            w_a = load_weight(W, cols_a, ok_a, HAS_W)
            if REST > 0:
                w_b = load_weight(W, cols_b, ok_b, HAS_W)
            if REST2 > 0:
                w_c = load_weight(W, cols_c, ok_c, HAS_W)
        xh_a, dy_a, g_a = ln_bwd_tile(X, DY, rows64, row_ok, cols_a, ok_a, mean, rstd,
                                      w_a, STRIDE_X, STRIDE_DY)
        if REST > 0:
            xh_b, dy_b, g_b = ln_bwd_tile(X, DY, rows64, row_ok, cols_b, ok_b, mean,
                                          rstd, w_b, STRIDE_X, STRIDE_DY)
        if REST2 > 0:
            xh_c, dy_c, g_c = ln_bwd_tile(X, DY, rows64, row_ok, cols_c, ok_c, mean,
                                          rstd, w_c, STRIDE_X, STRIDE_DY)
        if EARLY:
            dw_a, db_a = ln_add_grads(dw_a, db_a, dy_a, xh_a, GRAD_W, GRAD_B)
            if REST > 0:
                dw_b, db_b = ln_add_grads(dw_b, db_b, dy_b, xh_b, GRAD_W, GRAD_B)
            if REST2 > 0:
                dw_c, db_c = ln_add_grads(dw_c, db_c, dy_c, xh_c, GRAD_W, GRAD_B)
        if GRAD_X:
            s1, s2 = pair_sums(xh_a * g_a, g_a, ROWS)
            if REST > 0:
                t1, t2 = pair_sums(xh_b * g_b, g_b, ROWS)
                s1 += t1
                s2 += t2
            if REST2 > 0:
                u1, u2 = pair_sums(xh_c * g_c, g_c, ROWS)
                s1 += u1
                s2 += u2
            if SPLIT == 2:
                o1, o2 = ln_share_sums(X, DY, rows64, row_ok, mean, rstd, 1 - share,
                                       wo_a, wo_b, N, STRIDE_X, STRIDE_DY,
                                       WIDTH, TILE, REST)
                s1 += o1  # own + other == other + own: the group's programs agree
                s2 += o2
            c1 = tl.math.div_rn(s1, n)
            c2 = tl.math.div_rn(s2, n)
            dx = (g_a - (xh_a * c1 + c2)) * rstd
            tl.store(DX + rows64 * N + cols_a[None, :], dx.to(DX.dtype.element_ty),
                     mask=row_ok[:, None] & ok_a[None, :])
            if REST > 0:
                dx = (g_b - (xh_b * c1 + c2)) * rstd
                tl.store(DX + rows64 * N + cols_b[None, :], dx.to(DX.dtype.element_ty),
                         mask=row_ok[:, None] & ok_b[None, :])
            if REST2 > 0:
                dx = (g_c - (xh_c * c1 + c2)) * rstd
                tl.store(DX + rows64 * N + cols_c[None, :], dx.to(DX.dtype.element_ty),
                         mask=row_ok[:, None] & ok_c[None, :])
        if not EARLY:
            dw_a, db_a = ln_add_grads(dw_a, db_a, dy_a, xh_a, GRAD_W, GRAD_B)
            if REST > 0:
                dw_b, db_b = ln_add_grads(dw_b, db_b, dy_b, xh_b, GRAD_W, GRAD_B)
            if REST2 > 0:
                dw_c, db_c = ln_add_grads(dw_c, db_c, dy_c, xh_c, GRAD_W, GRAD_B)

    DW_PART = Part + group * N
    DB_PART = Part + ((groups if GRAD_W else 0) + group) * N
    if GRAD_W:
        tl.store(DW_PART + cols_a, dw_a.to(Part.dtype.element_ty), mask=ok_a)
        if REST > 0:
            tl.store(DW_PART + cols_b, dw_b.to(Part.dtype.element_ty), mask=ok_b)
        if REST2 > 0:
            tl.store(DW_PART + cols_c, dw_c.to(Part.dtype.element_ty), mask=ok_c)
    if GRAD_B:
        tl.store(DB_PART + cols_a, db_a.to(Part.dtype.element_ty), mask=ok_a)
        if REST > 0:
            tl.store(DB_PART + cols_b, db_b.to(Part.dtype.element_ty), mask=ok_b)
        if REST2 > 0:
            tl.store(DB_PART + cols_c, db_c.to(Part.dtype.element_ty), mask=ok_c)


def spills(n, tile, rest, rest2, warps=16, early=False, reload_w=False):
    """(registers, spill bytes) of the kernel for sm_90a, from Triton's own ptxas -v."""
    compiled = compile_staged(ln_bwd_three_tiles_kernel, n, tile, rest, warps, REST2=rest2,
                              RELOAD_W=reload_w, GRAD_B=True, EARLY=early)
    return ptxas_usage(compiled)


if __name__ == "__main__":
    for n, tiles in ((10240, (8192, 2048, 0)), (10496, (8192, 4096, 0)), (10496, (8192, 2048, 256)),
                     (11264, (8192, 2048, 1024)), (12288, (8192, 4096, 0))):
        for early in (False, True):
            for reload_w in (False, True):
                print(n, tiles, "EARLY" if early else "", "RELOAD_W" if reload_w else "",
                      spills(n, *tiles, early=early, reload_w=reload_w), flush=True)
