"""Issue 39, item 2: the backward at rows off 16 bytes too wide for the classes, read by residue
class in chunks ("chunked by residue class"). Landed (fifth session of 2026-12-07) as
snippets/normkit/classes_chunked.py, without the strides and the weight table; this file keeps
the variants as they were timed.

At odd N in 16 bits (rows on 2 bytes) the classes backward (normkit.aligned.classes_config) holds
a row's whole window in registers, up to 16384 lanes, and falls behind at the widest of them;
past them (16385 on), and at every row off 16 bytes past the tables (16386, 16388), the backward
takes the chunked design, whose accesses Triton narrows to what the rows' alignment proves (2
bytes at odd N). H100, bf16, LayerNorm fwd+bwd: 59 % of copy at 12289, 49 at 16383, 26 at 16385.
Here the chunked design's two walks meet the classes' frame. Rows r and r + K start at
the same offset s inside their 16-byte window, K = 16 / the rows' alignment in bytes (8 for bf16
at odd N, 4 at N = 2 mod 4, 2 at N = 4 mod 8). A program owns rows of one class and takes ROWS
of them a step, as a (ROWS, CHUNK) tile; each row is read from its window's aligned start in
CHUNK-lane chunks whose masks are whole groups of G lanes (G elements in 16 bytes), so that the
loads and dx's stores are 16 bytes wide. The partial groups at either end of the row, and any
lanes past the last whole chunk when they are few, are the edges: a small tile of their own,
loaded once a step, element by element. Walk 1: the row sums (LayerNorm sum(x_hat g) and
sum(g), g = dy w; RMSNorm sum(x_hat g)), from memory, kept in L2 (evict_last). Walk 2: dx, and dW
(LayerNorm also dB) added into the program's running fp32 partial row in the class frame (window
lane l holds column l - s), from L2. The weight is read in the frame too: at column l - s
(an element a load, from L2), or, with the weight table, from row s of a (G, lanes) table of the
weight shifted by each s (normkit.aligned.shifted_params: 16-byte loads, one small launch a call).
The edges' dW and dB stay in registers and go into the partial row at the end. The host's
reduce reads each partial row shifted back by its class's s (and leaves out the rows of programs
without rows), so the partial rows are never rewritten.

Inputs: x and dy with contiguous columns and 16-byte aligned pointers, rows either N apart or a
slice whose row stride is congruent to N modulo G (both of them: every class then has one s for
x, dy and dx); anything else goes to the fast op's own backward_rows. The weight must be given
(LayerNorm: dW and dB, RMSNorm: dW, as backward_rows returns them by default).

Three modes, from the repository root:

    # correctness on Triton's interpreter (no GPU): a float64 oracle and the fast op's backward
    PYTHONPATH=snippets TRITON_INTERPRET=1 .venv/bin/python notes/experiments/classes_chunked.py --check
    # the kernel compiled for sm_90 without a GPU: access widths in the PTX, ptxas registers
    PYTHONPATH=snippets TRITON_INTERPRET=0 .venv/bin/python notes/experiments/classes_chunked.py --ptx
    # timing on a GPU: "ours" (the fast op's backward_rows) against the variants, JSON to --out
    PYTHONPATH=snippets:notes/experiments python3 notes/experiments/classes_chunked.py --out cc.json

Timing: for both ops at each width (--widths, --dtype, --variants), "ours" (backward_rows: the classes at
12289 and 16383, the chunked design past 16384) and the variants (variants(): chunk x rows a step
x warps, the weight table), each variant's programs an SM lowered to what its registers let an SM
hold at once (resident, after its first call compiled it). GPU time of plain calls back to back
(each moves hundreds of MB: the host is not the limit), % of the copy bandwidth measured in the
same run for the backward's 3 M N elements, M = 2**27 / N rows; fwd+bwd adds the fast forward's
time and 2 M N elements. Every variant is checked against "ours" (relative difference). The run
stops starting an op and width after --budget-s and writes the JSON after each.
"""

import argparse
import contextlib
import functools
import json
import os
import re
import subprocess
import tempfile
import time

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import torch
import triton
import triton.language as tl

from layernorm import fast as ln
from normkit import aligned, bench
from normkit.aligned import edge_columns, whole_groups
from normkit.classes_chunked import centred, class_stats, dx_of, frame as walk_frame
from normkit.direct_launch import DirectLauncher
from normkit.fastop import backward_grid, sm_count
from normkit.tiles import add_to_running, pair_sums, row_sum
from rmsnorm import fast as rms

OPS = {"layernorm": ln, "rmsnorm": rms}
WIDTHS = (12289, 16383, 16385, 20481, 24577, 32769, 16386, 16388)


@triton.jit
def class_of(pid, M, rows_per_program, N: tl.constexpr, K: tl.constexpr, G: tl.constexpr):
    """A program's residue class c (rows c, c + K, c + 2K, ... all start s lanes into their
    16-byte window), its block [first, end) of the class's rows (counted in steps of K rows)
    and s."""
    c = pid % K
    first = (pid // K) * rows_per_program
    end = tl.minimum(first + rows_per_program, (M - c + K - 1) // K)
    return c, first, end, (c * N) % G


@triton.jit
def weight_in_frame(W, W_AT, lanes, s, body, BODY: tl.constexpr, TABLE: tl.constexpr):
    """The weight at the window's lanes (column lane - s) in fp32: from row s of the shifted
    table (16-byte loads), or from W itself (aligned as the row is not: element loads from L2)."""
    if TABLE:
        w = tl.load(W_AT + s * BODY + lanes, mask=body, other=0.0, eviction_policy="evict_last")
    else:
        w = tl.load(W + lanes - s, mask=body, other=0.0, eviction_policy="evict_last")
    return w.to(tl.float32)


@triton.jit
def chunk_in_frame(X, DY, W, W_AT, k64, row_ok, c0, s, STEP_X: tl.constexpr,
                   STEP_DY: tl.constexpr, N: tl.constexpr, G: tl.constexpr,
                   CHUNK: tl.constexpr, BODY: tl.constexpr, TABLE: tl.constexpr,
                   POLICY: tl.constexpr):
    """One chunk of a step's rows in the class frame, as both walks read it: its lanes, which
    of them lie in the row (body) and the step's mask, x and dy in fp32 and g = dy w. POLICY:
    walk 1 keeps x and dy in L2 for walk 2 (evict_last), walk 2 reads them a last time."""
    lanes = c0 + tl.arange(0, CHUNK)
    body = whole_groups(lanes, s, N, G)
    mask = row_ok[:, None] & body[None, :]
    x = tl.load(X + k64 * STEP_X + lanes[None, :], mask=mask, other=0.0, eviction_policy=POLICY)
    dy = tl.load(DY + k64 * STEP_DY + lanes[None, :], mask=mask, other=0.0,
                 eviction_policy=POLICY).to(tl.float32)
    g = dy * weight_in_frame(W, W_AT, lanes, s, body, BODY, TABLE)[None, :]
    return lanes, body, mask, x.to(tl.float32), dy, g


@triton.jit(do_not_specialize=["M", "rows_per_program"])
def classes_chunked_bwd_kernel(
    X, DY, DX,     # (M, N): x and dy rows STRIDE_X / STRIDE_DY apart, dx contiguous
    W,             # (N,) weight
    W_AT,          # (G, BODY): row s the weight shifted s lanes in (read with TABLE)
    Stats,         # LayerNorm (2, M) fp32 mean then rstd; RMSNorm (1, M) rstd
    Part,          # (parts, programs, FRAME) fp32: program pid's running dW (and dB) in
                   # its class's frame, row pid of each part
    M, rows_per_program,
    N: tl.constexpr, STRIDE_X: tl.constexpr, STRIDE_DY: tl.constexpr,
    K: tl.constexpr,       # residue classes: rows r and r + K start alike
    G: tl.constexpr,       # elements in 16 bytes: the window's groups
    CHUNK: tl.constexpr,   # lanes per step of the walks
    BODY: tl.constexpr,    # lanes walked: whole chunks; the rest of the row is in the edges
    FRAME: tl.constexpr,   # lanes of a partial row: the window's N + G - 1 or BODY
    EDGES: tl.constexpr,   # lanes of the edges' tile
    ROWS: tl.constexpr,    # rows of the class per step
    LN: tl.constexpr,      # LayerNorm (mean, dB) or RMSNorm
    TABLE: tl.constexpr,   # the weight from W_AT, not W
):
    pid = tl.program_id(0)
    c, first, end, s = class_of(pid, M, rows_per_program, N, K, G)
    # to row c's window: c * stride = s modulo G for all three tensors (the host checks the
    # strides), so each start is aligned and the next row of the class is K rows on
    X += tl.multiple_of(c * STRIDE_X - s, G)
    DY += tl.multiple_of(c * STRIDE_DY - s, G)
    DX += tl.multiple_of(c * N - s, G)
    STEP_X: tl.constexpr = K * STRIDE_X
    STEP_DY: tl.constexpr = K * STRIDE_DY
    STEP_DX: tl.constexpr = K * N
    DW_PART = Part + pid * FRAME
    DB_PART = Part + (tl.num_programs(0) + pid) * FRAME
    cols_e, in_row_e = edge_columns(s, N, BODY, G, EDGES)
    w_e = tl.load(W + cols_e, mask=in_row_e, other=0.0).to(tl.float32)
    # the edges' dW and dB: in registers, into the partial row once at the end
    dw_e = tl.zeros([EDGES], dtype=tl.float32)
    db_e = tl.zeros([EDGES], dtype=tl.float32)
    n = tl.full([], N, tl.float32)

    start = first
    while start < end:
        k = start + tl.arange(0, ROWS)  # places in the class
        row_ok = k < end
        k64 = k.to(tl.int64)[:, None]  # int64: M * N may pass 2**31
        mean, rstd = class_stats(Stats, M, c + k * K, row_ok, ROWS, LN)

        # the edges first: their loads are in flight during walk 1
        mask_e = row_ok[:, None] & in_row_e[None, :]
        at_e = s + cols_e[None, :]
        x_e = tl.load(X + k64 * STEP_X + at_e, mask=mask_e, other=0.0).to(tl.float32)
        dy_e = tl.load(DY + k64 * STEP_DY + at_e, mask=mask_e, other=0.0).to(tl.float32)
        g_e = dy_e * w_e[None, :]

        # walk 1: the row sums, per lane, from memory; evict_last keeps x and dy in L2 for
        # walk 2. Lanes outside the row have g = 0: they add nothing
        a = tl.zeros([ROWS, CHUNK], dtype=tl.float32)  # (x - mean) g
        b = tl.zeros([ROWS, CHUNK], dtype=tl.float32)  # g (LayerNorm)
        for c0 in range(0, BODY, CHUNK):
            _, _, _, x, _, g = chunk_in_frame(X, DY, W, W_AT, k64, row_ok, c0, s, STEP_X,
                                              STEP_DY, N, G, CHUNK, BODY, TABLE, "evict_last")
            a += centred(x, mean, LN) * g
            if LN:
                b += g
        # rounded divisions, as the fast kernels: rstd amplifies any ulp
        if LN:
            s1, s2 = pair_sums(a, b, ROWS)
            t1, t2 = pair_sums(centred(x_e, mean, LN) * g_e, g_e, ROWS)
            c1 = tl.math.div_rn((s1 + t1) * rstd, n)
            c2 = tl.math.div_rn(s2 + t2, n)
        else:
            c1 = tl.math.div_rn((row_sum(a, ROWS) + row_sum(x_e * g_e, ROWS)) * rstd, n)
            c2 = 0.0  # dx_of reads it for LayerNorm only

        xh_e = centred(x_e, mean, LN) * rstd
        dx_e = dx_of(g_e, xh_e, c1, c2, rstd, LN)
        tl.store(DX + k64 * STEP_DX + at_e, dx_e.to(DX.dtype.element_ty), mask=mask_e)
        dw_e += tl.sum(dy_e * xh_e, axis=0)
        if LN:
            db_e += tl.sum(dy_e, axis=0)

        # walk 2: dx, and the step's dW (dB) added to the running partial row in the frame.
        # x and dy from L2 (evict_first: last use); the first step writes instead of adding
        for c0 in range(0, BODY, CHUNK):
            lanes, body, mask, x, dyf, g = chunk_in_frame(
                X, DY, W, W_AT, k64, row_ok, c0, s, STEP_X, STEP_DY, N, G, CHUNK, BODY, TABLE,
                "evict_first")
            x_hat = centred(x, mean, LN) * rstd
            dx = dx_of(g, x_hat, c1, c2, rstd, LN)
            tl.store(DX + k64 * STEP_DX + lanes[None, :], dx.to(DX.dtype.element_ty), mask=mask)
            old = body & (start > first)
            add_to_running(DW_PART, lanes, body, old, tl.sum(dyf * x_hat, axis=0))
            if LN:
                add_to_running(DB_PART, lanes, body, old, tl.sum(dyf, axis=0))
        # the next step reads the running sums back: every store of this step before
        tl.debug_barrier()
        start += ROWS

    # the edges' lanes of the frame (s + column), which the body never writes
    tl.store(DW_PART + s + cols_e, dw_e, mask=in_row_e)
    if LN:
        tl.store(DB_PART + s + cols_e, db_e, mask=in_row_e)


@triton.jit
def sum_class_partials_kernel(
    Part,      # (parts, P, FRAME) fp32, row p in the frame of program p's class
    Out,       # (parts, N) in the parameters' dtype
    P, M, rows_per_program,
    N: tl.constexpr, FRAME: tl.constexpr, K: tl.constexpr, G: tl.constexpr,
    BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # column j of program p's partial row is at lane j + s(p); programs whose block of their
    # class's rows is empty never wrote theirs
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    Part += tl.program_id(1) * P * FRAME
    acc = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    for p in range(0, P, BLOCK_P):
        r = p + tl.arange(0, BLOCK_P)
        c = r % K
        used = (r < P) & ((r // K) * rows_per_program < (M - c + K - 1) // K)
        shift = (c * N) % G
        mask = used[:, None] & (cols < N)[None, :]
        acc += tl.load(Part + r[:, None] * FRAME + shift[:, None] + cols[None, :], mask=mask,
                       other=0.0)
    total = tl.sum(acc, axis=0).to(Out.dtype.element_ty)
    tl.store(Out + tl.program_id(1) * N + cols, total, mask=cols < N)


backward_kernel = DirectLauncher(classes_chunked_bwd_kernel)
sum_partials = DirectLauncher(sum_class_partials_kernel)


def classes(n_cols, element_size):
    """(K, G): residue classes of rows, elements in 16 bytes."""
    return (aligned.VECTOR_BYTES // aligned.row_alignment(n_cols, element_size),
            aligned.vector(element_size))


def readable(x, dy, g):
    """Whether the kernel reads these rows: contiguous columns, 16-byte aligned pointers, and
    row strides that give each class one s for x, dy and dx (congruent to N modulo G)."""
    n = x.shape[1]
    return (x.stride(1) == 1 and dy.stride(1) == 1
            and (x.data_ptr() | dy.data_ptr()) % aligned.VECTOR_BYTES == 0
            and x.stride(0) % g == n % g and dy.stride(0) % g == n % g)


def classes_chunked_backward(op, dy, x, w, stats, chunk=2048, rows=1, warps=8, per_sm=2,
                             weight_table=False, programs=None):
    """dx and the (parts, N) parameter gradients (LayerNorm dW, dB; RMSNorm dW, in the weight's
    dtype), as the fast op's backward_rows returns them, from the stats its forward_rows saved.
    per_sm programs an SM in all (programs overrides the count), split over the classes;
    weight_table: the weight from a shifted table. Inputs the kernel cannot read: backward_rows."""
    m, n = x.shape
    k, g = classes(n, x.element_size())
    if not readable(x, dy, g):
        return OPS[op].OP.backward_rows(dy, x, w, stats)
    body, frame, edges = walk_frame(n, g, chunk, max(1, 32 * warps // rows))
    total = programs or sm_count(x.device.index) * per_sm
    groups, rows_per_program = backward_grid(triton.cdiv(m, k), rows, max(1, total // k))
    p = groups * k
    parts = 2 if op == "layernorm" else 1
    dx = torch.empty((m, n), dtype=x.dtype, device=x.device)
    part = torch.empty((parts, p, frame), dtype=torch.float32, device=x.device)
    w_at = aligned.shifted_params(w, body, g) if weight_table else w
    backward_kernel[(p,)](x, dy, dx, w, w_at, stats, part, m, rows_per_program,
                          N=n, STRIDE_X=x.stride(0), STRIDE_DY=dy.stride(0), K=k, G=g,
                          CHUNK=chunk, BODY=body, FRAME=frame, EDGES=edges, ROWS=rows,
                          LN=op == "layernorm", TABLE=weight_table, num_warps=warps)
    out = torch.empty((parts, n), dtype=w.dtype, device=x.device)
    block_n = 64 if n > 2048 else 32
    sum_partials[(triton.cdiv(n, block_n), parts)](part, out, p, m, rows_per_program, N=n,
                                                    FRAME=frame, K=k, G=g, BLOCK_P=32,
                                                    BLOCK_N=block_n, num_warps=4)
    return dx, out


def difference(a, b):
    """The largest error of dx and of the parameter rows, each relative to its largest value
    (NaN if any output holds one: torch's max keeps it where Python's would drop it)."""
    return torch.stack([(p.float() - q.float()).abs().max() / q.float().abs().max().clamp_min(1e-30)
                        for p, q in zip(a, b)]).max().item()


# --- the check: Triton's interpreter, small shapes -------------------------------------------

def oracle(op, dy, x, w, stats):
    """dx and the parameter rows in float64 from the formulas and the saved stats."""
    x, dy, w, stats = (t.double() for t in (x, dy, w, stats))
    if op == "layernorm":
        mean, rstd = stats[0][:, None], stats[1][:, None]
        x_hat = (x - mean) * rstd
    else:
        rstd = stats[0][:, None]
        x_hat = x * rstd
    g = dy * w
    dx = g - x_hat * (x_hat * g).mean(1, keepdim=True)
    if op == "layernorm":
        dx -= g.mean(1, keepdim=True)
        return dx * rstd, torch.stack([(dy * x_hat).sum(0), dy.sum(0)])
    return dx * rstd, (dy * x_hat).sum(0)[None]


TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}  # normkit.testing's
# (chunk, rows, warps, weight table, programs) cycled over the cases: warps set the edges'
# tile (one lane a thread), so 1 warp sends the lanes past the last whole chunk into a
# partial chunk where 4 put them in the edges; 24 programs give a class several blocks
# (and, at M = 37, an empty one)
SETTINGS = ((64, 1, 1, False, None), (128, 2, 4, True, None), (64, 4, 1, True, 24),
            (128, 1, 4, False, 24), (64, 2, 4, False, 40))


def check_inputs(op, m, n, dtype, stride=None, seed=0):
    """x, dy (both of row stride `stride`, a slice of wider rows when it is more than n), the
    weight and the forward's stats."""
    gen = torch.Generator().manual_seed(seed)
    width = stride or n
    x = (torch.randn(m, width, generator=gen) * 2 + 3).to(dtype)[:, :n]
    dy = torch.randn(m, width, generator=gen).to(dtype)[:, :n]
    w = (torch.rand(n, generator=gen) + 0.5).to(dtype)
    params = (w, torch.randn(n, generator=gen).to(dtype)) if op == "layernorm" else (w,)
    _, stats = OPS[op].OP.forward_rows(x, *params, 1e-5)
    return x, dy, w, stats


@contextlib.contextmanager
def nan_filled_empty():
    """torch.empty filled with NaN: an element a kernel forgets to write, or a partial row the
    reduce should leave out, shows (normkit.testing.poison_allocator does it on a GPU)."""
    empty = torch.empty

    def poisoned(*args, **kwargs):
        out = empty(*args, **kwargs)
        return out.fill_(float("nan")) if out.is_floating_point() else out
    torch.empty = poisoned
    try:
        yield
    finally:
        torch.empty = empty


def check_case(op, m, n, dtype, setting, stride=None):
    """Errors against the oracle and against backward_rows; raises past the dtype's tolerance."""
    chunk, rows, warps, table, programs = setting
    x, dy, w, stats = check_inputs(op, m, n, dtype, stride)
    with nan_filled_empty():
        got = classes_chunked_backward(op, dy, x, w, stats, chunk, rows, warps, 1, table, programs)
    exact = oracle(op, dy, x, w, stats)
    ours = OPS[op].OP.backward_rows(dy, x, w, stats)
    errors = difference(got, exact), difference(got, ours)
    path = "kernel" if readable(x, dy, aligned.vector(x.element_size())) else "fallback"
    k, _ = classes(n, x.element_size())
    print(f"{op[:3]} {str(dtype)[6:]:8s} N={n} K={k} stride={x.stride(0)} {path:8s} "
          f"chunk={chunk} rows={rows} warps={warps} table={int(table)} programs={programs}: "
          f"vs float64 {errors[0]:.2g}, vs backward_rows {errors[1]:.2g}", flush=True)
    assert max(errors) <= TOL[dtype], (op, n, dtype, setting, stride, errors)


def check():
    # odd N (rows on 2 bytes in 16 bits, 4 in fp32), N = 2 mod 4 (4 bytes in 16 bits, 8 in
    # fp32), N = 4 mod 8 (8 bytes; 16 in fp32), N = 8 mod 16 (16 bytes in 16 bits)
    widths = (257, 259, 263, 301, 258, 262, 260, 264)
    cases = 0
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for i, n in enumerate(widths):
            for op in OPS:
                check_case(op, 37, n, dtype, SETTINGS[(i + cases) % len(SETTINGS)])
                cases += 1
    # slices of wider rows: strides congruent to N modulo G (the kernel), and not (the fallback)
    for op in OPS:
        for n, stride in ((257, 273), (258, 274), (301, 317), (257, 258)):
            check_case(op, 37, n, torch.bfloat16, SETTINGS[cases % len(SETTINGS)], stride)
            cases += 1
    check_case("rmsnorm", 5, 257, torch.bfloat16, (64, 4, 1, False, 40))  # M below K
    print(f"check: {cases + 1} cases ok")


# --- the PTX: compiled for sm_90 without a GPU -----------------------------------------------

PTXAS = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")


def compile_sm90(op, n, dtype, chunk, rows, warps, table):
    """The kernel compiled for sm_90 at rows of n, every pointer 16-byte aligned."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    es = {"bf16": 2, "fp16": 2, "fp32": 4}[dtype]
    k, g = classes(n, es)
    body, frame, edges = walk_frame(n, g, chunk, max(1, 32 * warps // rows))
    kernel = classes_chunked_bwd_kernel
    constants = dict(N=n, STRIDE_X=n, STRIDE_DY=n, K=k, G=g, CHUNK=chunk, BODY=body, FRAME=frame,
                     EDGES=edges, ROWS=rows, LN=op == "layernorm", TABLE=table)
    pointers = {"X": dtype, "DY": dtype, "DX": dtype, "W": dtype, "W_AT": dtype, "Stats": "fp32",
                "Part": "fp32"}
    signature = {**{a: f"*{t}" for a, t in pointers.items()}, "M": "i32",
                 "rows_per_program": "i32", **{c: "constexpr" for c in constants}}
    hints = {(kernel.arg_names.index(a),): [["tt.divisibility", 16]] for a in pointers}
    return triton.compile(ASTSource(kernel, signature, constants, hints),
                          target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})


def ptxas_usage(ptx):
    """(registers a thread, spill-store bytes) for sm_90a, from ptxas -v."""
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(ptx)
    out = subprocess.run([PTXAS, "-arch=sm_90a", "-v", f.name, "-o", os.devnull],
                         capture_output=True, text=True).stderr
    os.unlink(f.name)
    spilled = re.search(r"(\d+) bytes spill stores", out)
    registers = int(re.search(r"Used (\d+) registers", out).group(1))
    return registers, int(spilled.group(1)) if spilled else 0


def accesses_by_line(ptx):
    """{(line of this file, global access without its cache hints): count} in the PTX: an
    access belongs to the innermost line of this file its .loc names (a helper's call site)."""
    counts, line = {}, None
    for text in ptx.splitlines():
        if text.lstrip().startswith(".loc"):
            here = re.findall(re.escape(os.path.basename(__file__)) + r":(\d+)", text)
            line = int(here[-1]) if here else line
            continue
        access = re.search(r"\b(?:ld|st)\.global\S*", text)
        if access:
            kind = re.sub(r"\.L[12]::\w+", "", access.group(0))
            counts[line, kind] = counts.get((line, kind), 0) + 1
    return counts


def show_ptx(n=16385, dtype="bf16"):
    """Registers, spills and global accesses (kind x count) of every timed variant at one width,
    and for two the accesses by source line: x, dy and dx should be v4 (16 bytes a thread)."""
    source = open(__file__).read().splitlines()
    for op in OPS:
        for label, (chunk, rows, warps, _, table) in variants().items():
            t0 = time.time()
            ptx = compile_sm90(op, n, dtype, chunk, rows, warps, table).asm["ptx"]
            regs, spills = ptxas_usage(ptx)
            accesses = accesses_by_line(ptx)
            kinds = {}
            for (_, kind), count in accesses.items():
                kinds[kind] = kinds.get(kind, 0) + count
            widths = ", ".join(f"{kind[:2]}.{kind[10:]} x{count}"
                               for kind, count in sorted(kinds.items()))
            print(f"{op[:3]} {dtype} N={n} {label:18s} {regs:3d} registers, {spills:3d} bytes "
                  f"spilled ({time.time() - t0:.1f} s): {widths}", flush=True)
            if op == "layernorm" and label in ("c2048 r1 w8", "c2048 r1 w8 table"):
                for (line, kind), count in sorted(accesses.items()):
                    print(f"    {kind:18s} x{count:<3d} line {line}: "
                          f"{source[line - 1].strip()[:64]}")


# --- the timing: a GPU ------------------------------------------------------------------------

def variants():
    """{label: (chunk, rows, warps, programs an SM at most, weight table)}: one row a step in
    chunks of 2048 and 4096 with 4, 8 and 16 warps (16 warps an SM; 2048 lanes at 16 warps are
    4 elements a thread, 8-byte accesses in 16 bits), two and four rows a step with 8 warps (two
    programs an SM), and the weight table at one and four rows. The configuration whose
    registers spill at 16385 bf16 (--ptx: LayerNorm, 4096 lanes x 4 rows) is left out."""
    out = {}
    for chunk in (2048, 4096):
        for warps in (4, 8, 16):
            out[f"c{chunk} r1 w{warps}"] = (chunk, 1, warps, 16 // warps, False)
    for rows, chunks in ((2, (2048, 4096)), (4, (1024, 2048))):
        for chunk in chunks:
            out[f"c{chunk} r{rows} w8"] = (chunk, rows, 8, 2, False)
    out["c2048 r1 w8 table"] = (2048, 1, 8, 2, True)
    out["c2048 r4 w8 table"] = (2048, 4, 8, 2, True)
    return out


def resident(compiled, warps):
    """Programs of a compiled kernel an SM holds at once, by its registers (allocated 8 at a
    time a thread), threads and shared memory: a persistent grid larger than this would run
    its last programs after the others."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    threads = 32 * warps
    regs = -(-compiled.n_regs // 8) * 8
    by_regs = getattr(props, "regs_per_multiprocessor", 65536) // (regs * threads)
    by_threads = props.max_threads_per_multi_processor // threads
    by_shared = props.shared_memory_per_multiprocessor // max(1, compiled.metadata.shared + 1024)
    return max(1, min(by_regs, by_threads, by_shared))


def last_compiled():
    """The backward kernel compiled last (the DirectLauncher keeps them in order): a variant's,
    right after its first call."""
    return next(reversed(backward_kernel.compiled.values()))[0]


def time_width(op, n, m, dtype, copy, labels=None):
    """One op at one width, m rows: "ours" and every variant (those labels name, when given), as
    result rows. A variant's programs an SM are lowered to what fits (resident) after its first
    call compiled it."""
    from wide_rows import inputs  # this folder: the wide-rows runs' random rows and parameters

    fast = OPS[op].OP
    x, dy, w, params = inputs(op, n, m, dtype)
    _, stats = fast.forward_rows(x, *params, 1e-5)
    fwd_ms = bench.median_call_ms(lambda: fast.forward_rows(x, *params, 1e-5, save=False), 3, 10, 5)
    es = x.element_size()
    reference = fast.backward_rows(dy, x, w, stats)
    results = []
    timed = {label: config for label, config in variants().items()
             if labels is None or label in labels}
    for label, config in {"ours": None, **timed}.items():
        row = {"op": op, "N": n, "M": m, "dtype": str(dtype)[6:], "variant": label,
               "config": config or repr(fast.backward_config(n, es))}
        try:
            if config is None:
                run = functools.partial(fast.backward_rows, dy, x, w, stats)
                row["diff"] = difference(run(), reference)
            else:
                chunk, rows, warps, per_sm, table = config
                row["diff"] = difference(classes_chunked_backward(
                    op, dy, x, w, stats, chunk, rows, warps, per_sm, table), reference)
                compiled = last_compiled()
                row |= {"regs": compiled.n_regs, "spills": compiled.n_spills,
                        "per_sm": min(per_sm, resident(compiled, warps))}
                run = functools.partial(classes_chunked_backward, op, dy, x, w, stats, chunk,
                                        rows, warps, row["per_sm"], table)
        except Exception as e:  # a configuration that does not compile or launch (resources)
            print(f"{op[:3]} N={n} {label}: {type(e).__name__} {str(e)[-200:]}", flush=True)
            continue
        ms = bench.median_call_ms(run, 3, 10, 5)
        row |= {"ms": ms, "fwd_ms": fwd_ms, "pct": 100 * bench.gb_per_s(3 * m * n * es, ms) / copy,
                "fwdbwd_pct": 100 * bench.gb_per_s(5 * m * n * es, ms + fwd_ms) / copy}
        results.append(row)
        print(f"{op[:3]} N={n:5d} {label:18s} bwd {row['pct']:5.1f}% "
              f"fwd+bwd {row['fwdbwd_pct']:5.1f}% rel {row['diff']:.2g}"
              + (f"  {row['regs']} regs, {row['per_sm']} an SM" if config else ""), flush=True)
    del x, dy, stats
    torch.cuda.empty_cache()
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--budget-s", type=float, default=150)
    parser.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    parser.add_argument("--dtype", choices=("bfloat16", "float16", "float32"), default="bfloat16")
    parser.add_argument("--variants", help="comma-separated labels of variants() to time (all)")
    parser.add_argument("--check", action="store_true", help="correctness on the interpreter")
    parser.add_argument("--ptx", action="store_true", help="compile for sm_90, no GPU")
    args = parser.parse_args()
    if args.check:
        return check()
    if args.ptx:
        return show_ptx()
    t0, results = time.time(), []
    copy = bench.copy_bandwidth_gb_per_s()["median"]
    print(f"{torch.cuda.get_device_name()}: copy {copy:.0f} GB/s", flush=True)
    pairs = [(n, op) for n in map(int, args.widths.split(",")) for op in OPS]
    for i, (n, op) in enumerate(pairs):
        if time.time() - t0 > args.budget_s:
            print(f"budget spent: {len(pairs) - i} op and width pairs left out", flush=True)
            break
        labels = args.variants.split(",") if args.variants else None
        results += time_width(op, n, 2**27 // n, getattr(torch, args.dtype), copy, labels)
        if args.out:  # after every pair: a run cut short keeps what it measured
            with open(args.out, "w") as f:
                json.dump({"device": torch.cuda.get_device_name(), "copy_gb_per_s": copy,
                           "dtype": args.dtype, "results": results}, f, indent=1)

if __name__ == "__main__":
    main()
