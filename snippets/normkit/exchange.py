"""The backward for wide rows on 16 bytes past the staged design: S programs share a row and
exchange its sums (both fast ops; FastNorm.wide_backward picks it from WIDE's ladder).

A row's dx needs two sums over all N columns (RMSNorm: sum(x_hat g); LayerNorm also sum(g)).
The staged design holds a row in two programs' shared memory; past what they hold, the chunked
design reads the row twice, the second time from L2. Here each of S programs holds its share
of the row in registers, adds it up, publishes its partial sums and adds 1 to the row's count
(release), then waits until the count reaches S (acquire) and reads the S partial sums back:
x and dy are read once. The next row's share is loaded before the wait, so its loads are in
flight while the program waits. dW and dB stay in registers for the program's columns over
all its rows and are written once, a partial row a group of S programs.

A program waits on the others of its row, so every program must be resident at once: the
grid is at most PER_SM programs an SM and is launched cooperatively: the driver refuses a grid
that could not all be resident (a GPU shared under MPS may hold fewer programs than its SM
count says), and from then on the op takes the chunked design on that GPU (refused).
Triton's interpreter runs programs one after another, so there S programs could never meet:
the plans take the chunked design there too (runs_here), and the kernel is tested with S = 1
(notes/experiments/exchange_rows.py for the runs that chose it).
"""

import triton
import triton.language as tl

from normkit.direct_launch import DirectLauncher
from normkit.runtime import INTERPRETED
from normkit.tiles import load_weight, share_tile, share_width

KIND = "exchange"


# --8<-- [start:exchange_kernel]
@triton.jit
def load_share(X, DY, row, M, cols, ok, STRIDE_X: tl.constexpr,
               STRIDE_DY: tl.constexpr):
    """A program's share of row `row` of x and dy (zeros past the last row)."""
    at, mask = row.to(tl.int64), ok & (row < M)
    x = tl.load(X + at * STRIDE_X + cols, mask=mask, other=0.0)
    return x, tl.load(DY + at * STRIDE_DY + cols, mask=mask, other=0.0)


@triton.jit(do_not_specialize=["M", "rows_per_program"])
def exchange_bwd_kernel(
    X, DY, DX,     # (M, N) rows, x's STRIDE_X and dy's STRIDE_DY apart; dx contiguous
    W,             # (N,) weight (unread without HAS_W)
    Stats,         # fp32: LayerNorm (2, M) mean then rstd, RMSNorm (1, M) rstd
    Part,          # (GRAD_W + GRAD_B, groups, N) fp32: each group's dW (then dB) row
    M, rows_per_program,    # rows_per_program: a group's rows, groups apart
    Sync,          # (M, 2 S + 1) fp32 zeros: a row's S pairs of partial sums, its count
    N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
    S: tl.constexpr,        # programs a row
    WIDTH: tl.constexpr,    # columns a share
    TILE: tl.constexpr,     # WIDTH, up to a power of two
    CENTRED: tl.constexpr,  # LayerNorm: x - mean, and the sum of g
    HAS_W: tl.constexpr,
    GRAD_X: tl.constexpr, GRAD_W: tl.constexpr, GRAD_B: tl.constexpr,
):
    pid = tl.program_id(0)
    groups = tl.num_programs(0) // S
    share, group = pid % S, pid // S  # the S programs of a group are neighbours
    cols, ok = share_tile(share, 0, TILE, WIDTH, N)
    w = load_weight(W, cols, ok, HAS_W)
    dw = tl.zeros([TILE], dtype=tl.float32)
    db = tl.zeros([TILE], dtype=tl.float32)
    n = tl.full([], N, tl.float32)
    pairs = tl.arange(0, S) * 2
    row = group
    x, dy = load_share(X, DY, row, M, cols, ok, STRIDE_X, STRIDE_DY)
    for _ in range(rows_per_program):
        if CENTRED:
            mean = tl.load(Stats + row, mask=row < M, other=0.0)
            rstd = tl.load(Stats + M + row, mask=row < M, other=0.0)
        else:
            mean = 0.0
            rstd = tl.load(Stats + row, mask=row < M, other=0.0)
        x_hat = tl.where(ok, (x.to(tl.float32) - mean) * rstd, 0.0)
        dyf = dy.to(tl.float32)
        g = dyf * w
        row_sync = Sync + row.to(tl.int64) * (2 * S + 1)
        if GRAD_X:
            tl.store(row_sync + 2 * share, tl.sum(x_hat * g, axis=0), mask=row < M)
            if CENTRED:
                tl.store(row_sync + 2 * share + 1, tl.sum(g, axis=0), mask=row < M)
            tl.debug_barrier()  # every thread's stores before the count publishes them
            if row < M:
                tl.atomic_add(row_sync + 2 * S, 1.0, sem="release")
        # the next row's share on its way while this one waits
        nxt = row + groups
        x, dy = load_share(X, DY, nxt, M, cols, ok, STRIDE_X, STRIDE_DY)
        if GRAD_X:
            if row < M:
                # every program of the row is resident (a cooperative launch): it ends
                arrived = tl.atomic_add(row_sync + 2 * S, 0.0, sem="acquire")
                while arrived < S:
                    arrived = tl.atomic_add(row_sync + 2 * S, 0.0, sem="acquire")
            tl.debug_barrier()
            # rounded divisions, as the other designs': rstd amplifies any ulp
            sums = tl.load(row_sync + pairs, mask=row < M, other=0.0, volatile=True)
            c1 = tl.math.div_rn(tl.sum(sums, axis=0), n)  # mean(x_hat g)
            if CENTRED:
                sums_g = tl.load(row_sync + pairs + 1, mask=row < M, other=0.0,
                                 volatile=True)
                c2 = tl.math.div_rn(tl.sum(sums_g, axis=0), n)  # mean(g)
                dx = (g - (x_hat * c1 + c2)) * rstd
            else:
                dx = (g - x_hat * c1) * rstd
            tl.store(DX + row.to(tl.int64) * N + cols, dx.to(DX.dtype.element_ty),
                     mask=ok & (row < M))
        if GRAD_W:
            dw += dyf * x_hat
        if GRAD_B:
            db += dyf
        row = nxt
    if GRAD_W:
        tl.store(Part + group * N + cols, dw, mask=ok)
    if GRAD_B:
        tl.store(Part + ((groups if GRAD_W else 0) + group) * N + cols, db, mask=ok)
# --8<-- [end:exchange_kernel]


backward = DirectLauncher(exchange_bwd_kernel)


def design(config, n_cols):
    """The kernel's constants for a configuration ("exchange", S, 1, num_warps, PER_SM):
    each of S shares the staged design's share_width(N, S) columns (the last the rest)."""
    shares = config[1]
    width = share_width(n_cols, shares)
    return {"S": shares, "WIDTH": width, "TILE": triton.next_power_of_2(width),
            "launch_cooperative_grid": True}


# the GPUs (device indices) whose driver refused the exchange's cooperative grid
REFUSED = set()


def refused(error, device_index):
    """Whether `error`, raised by the exchange's launch, is the driver refusing a cooperative
    grid too large to be resident at once (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, which
    leaves the context usable); if so, the GPU is remembered in REFUSED."""
    if "cooperative launch" not in str(error):
        return False
    REFUSED.add(device_index)
    return True


def runs_here(device_index):
    """Whether a row's S programs can meet on this device: not under the interpreter, which
    runs them one at a time, nor on a GPU whose driver refused the grid."""
    return not INTERPRETED and device_index not in REFUSED


def sync_numel(M, shares):
    """Elements of the zeroed fp32 buffer a call's programs meet in."""
    return M * (2 * shares + 1)


# the rung of both ops' WIDE ladders for rows on 16 bytes past their staged rung: four
# programs a row, 8 warps, one program an SM, so that any GPU that runs the kernel holds the
# whole grid at once; past 32768 a share would spill (fp32 LayerNorm rows spill 136 bytes at
# 32768 on sm_90, and still measure well ahead). Backward alone, % of copy, against the
# chunked rung (notes/data/exchange-rung-1-h100.txt and -2-, two runs): at 32768 bf16 54-63
# against 36-38, fp32 63-84 against 47-48; at 24576 fp32 69-78 against 48-55
WIDE_RUNG = (32768, (KIND, 4, 1, 8, 1))
