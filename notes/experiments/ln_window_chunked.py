"""LayerNorm's forward at rows that start off 16 bytes (issue 21, notes/fast-kernels.md, eighth
session): the aligned window of normkit.aligned walked in chunks instead of held whole.

The window kernel the seventh session wrote held a power-of-two window of the row in registers
(16384 lanes for 8193 columns) beside the centred row and the hoisted weight and bias: 108-152
registers, one program an SM, and behind the table's designs at most odd widths (cliff-4). Here
the window is walked in CHUNK lanes at a time, like ln_fast_fwd_chunked_kernel: walk 1 keeps each
lane's Welford mean and squared deviations (a lane's count is how many of its chunks' groups lay
wholly in the row), the edges (at most 2 (V - 1) columns of the partial groups) are a small tensor
held in registers, Chan's merge gives the row's statistics, and walk 2 re-reads the row from L2,
normalizes and stores, with the weight and bias read from the shifted tables (normkit.aligned).
Every body access is 16 bytes. Two walks: "per-lane" (ln_fwd_window_chunked: each lane counts the
groups it saw in the row; lnwin-1 and lnwin-2 measured it) and "uniform" (ln_fwd_window_uniform:
the walk starts at lane V, so a lane is in the row at every step until the row's end and its count
is the step number, as in the table's chunked kernel). Registers for sm_90 at 8193 bf16 (ptxas,
offline): per-lane 64 at (CHUNK 1024, 4 warps), uniform 48, 40 at (2048, 8), 60 at (4096, 8); the
table's chunked kernel at 8194 (2048, 8): 40.

Run on the GPU from the repository root (PYTHONPATH=snippets; `--out FILE` for JSON): % of the copy
bandwidth of layer_norm_fast's forward (the table's designs) and of this kernel, best over CHUNK and
warps, the weight tables' launch included. TRITON_INTERPRET=1 with --check: a correctness check
against PyTorch on the CPU."""

import sys

import normkit  # noqa: F401
import torch
import triton
import triton.language as tl

from normkit import aligned
from normkit.aligned import row_window


@triton.jit
def _body(lanes, s, N: tl.constexpr, V: tl.constexpr):
    group = (lanes // V) * V
    return (group >= s) & (group + V <= s + N)


@triton.jit
def _edges(s, row_ok, N: tl.constexpr, V: tl.constexpr, E: tl.constexpr, HEAD_GROUP: tl.constexpr):
    """normkit.aligned.edges_of over E >= 2V lanes, one a thread (E = the program's threads): a
    (1, 2V) tensor is replicated in every thread, with its 64-bit addresses (64 registers at 4
    warps; 48 here at 8193 bf16 from 64). HEAD_GROUP: the first group is an edge even when the
    row starts on it (the uniform walk starts at lane V)."""
    e = tl.arange(0, E)[None, :]
    # [0, head) share a group with the row before (or, with HEAD_GROUP, lie in the first group)
    head = V - s if HEAD_GROUP else tl.minimum((V - s) % V, N)
    tail = tl.maximum(((s + N) // V) * V - s, head)  # [tail, N): with the row after
    cols = tl.where(e < V, e, tail + e - V)
    return cols, tl.where(e < V, e < head, (e < 2 * V) & (cols < N)) & row_ok[:, None]


@triton.jit
def _finish(X, Y, W_AT, B_AT, W, B, Stats, M, eps, rows, row_ok, base, s, lanes0, frame, mean, m2, count,
            N: tl.constexpr, V: tl.constexpr, E: tl.constexpr, HEAD_GROUP: tl.constexpr, CHUNK: tl.constexpr,
            STEPS: tl.constexpr):
    """After walk 1 (each lane's mean, squared deviations and count): the edges, loaded now and
    stored before walk 2 so that no register holds them across a walk; Chan's merge into the
    row's mean and rstd; walk 2, which normalizes from L2 with the shifted tables' row s
    (`frame`); the statistics."""
    cols_e, edge = _edges(s, row_ok, N, V, E, HEAD_GROUP)
    x_e = tl.load(X + base + s + cols_e, mask=edge, other=0.0).to(tl.float32)
    mean_row = (tl.sum(mean * count, axis=1) + tl.sum(x_e, axis=1)) / N
    spread = mean - mean_row[:, None]
    xc_e = tl.where(edge, x_e - mean_row[:, None], 0.0)
    m2_row = tl.sum(m2 + count * spread * spread, axis=1) + tl.sum(xc_e * xc_e, axis=1)
    rstd = tl.rsqrt(m2_row / N + eps)
    y_e = xc_e * rstd[:, None] * tl.load(W + cols_e, mask=edge, other=0.0).to(tl.float32)
    y_e += tl.load(B + cols_e, mask=edge, other=0.0).to(tl.float32)
    tl.store(Y + base + s + cols_e, y_e.to(Y.dtype.element_ty), mask=edge)

    for step in range(0, STEPS):
        lanes = step * CHUNK + lanes0
        body = _body(lanes, s, N, V) & row_ok[:, None]
        x = tl.load(X + base + lanes, mask=body, other=0.0, eviction_policy="evict_first").to(tl.float32)
        y = (x - mean_row[:, None]) * rstd[:, None]
        y *= tl.load(W_AT + frame + lanes, mask=body, other=0.0, eviction_policy="evict_last").to(tl.float32)
        y += tl.load(B_AT + frame + lanes, mask=body, other=0.0, eviction_policy="evict_last").to(tl.float32)
        tl.store(Y + base + lanes, y.to(Y.dtype.element_ty), mask=body)
    tl.store(Stats + rows, mean_row, mask=row_ok)
    tl.store(Stats + M + rows, rstd, mask=row_ok)


@triton.jit(do_not_specialize=["M"])
def ln_fwd_window_chunked(X, Y, W_AT, B_AT, W, B, Stats, M, eps, N: tl.constexpr, CHUNK: tl.constexpr,
                          STEPS: tl.constexpr, V: tl.constexpr, E: tl.constexpr):
    rows = tl.program_id(0) + tl.arange(0, 1)
    row_ok = rows < M
    base, s = row_window(rows, N, V)
    lanes0 = tl.arange(0, CHUNK)[None, :]

    mean = tl.zeros([1, CHUNK], dtype=tl.float32)
    m2 = tl.zeros([1, CHUNK], dtype=tl.float32)
    count = tl.zeros([1, CHUNK], dtype=tl.float32)
    for step in range(0, STEPS):
        lanes = step * CHUNK + lanes0
        body = _body(lanes, s, N, V) & row_ok[:, None]
        x = tl.load(X + base + lanes, mask=body, other=0.0, eviction_policy="evict_last").to(tl.float32)
        count += body.to(tl.float32)
        d = tl.where(body, x - mean, 0.0)
        # a lane's own count: the approximate division (2 ulp) costs a few instructions, the
        # IEEE one a subroutine per element (lnwin-1 and lnwin-2 measured the same)
        mean += tl.fdiv(d, tl.maximum(count, 1.0), ieee_rounding=False)
        m2 += d * (x - mean)
    _finish(X, Y, W_AT, B_AT, W, B, Stats, M, eps, rows, row_ok, base, s, lanes0, s * (STEPS * CHUNK),
            mean, m2, count, N, V, E, False, CHUNK, STEPS)


@triton.jit(do_not_specialize=["M"])
def ln_fwd_window_uniform(X, Y, W_AT, B_AT, W, B, Stats, M, eps, N: tl.constexpr, CHUNK: tl.constexpr,
                          STEPS: tl.constexpr, TABLE: tl.constexpr, V: tl.constexpr, E: tl.constexpr,
                          STAGES: tl.constexpr):
    """The walk from lane V on, the first group always an edge: every lane of the walk is in
    the row until it passes the row's end, so a lane's count is the step number (one scalar
    reciprocal a step, as ln_fast_fwd_chunked_kernel) and no count is carried."""
    rows = tl.program_id(0) + tl.arange(0, 1)
    row_ok = rows < M
    base, s = row_window(rows, N, V)
    lanes0 = V + tl.arange(0, CHUNK)[None, :]

    mean = tl.zeros([1, CHUNK], dtype=tl.float32)
    m2 = tl.zeros([1, CHUNK], dtype=tl.float32)
    for step in tl.range(0, STEPS, num_stages=STAGES):  # STAGES > 1: cp.async into shared memory
        lanes = step * CHUNK + lanes0
        body = _body(lanes, s, N, V) & row_ok[:, None]  # from lane V on, a group never starts below s
        x = tl.load(X + base + lanes, mask=body, other=0.0, eviction_policy="evict_last").to(tl.float32)
        d = tl.where(body, x - mean, 0.0)
        mean += d * (1.0 / (step + 1))
        m2 += d * (x - mean)
    # steps whose group was in the row: the walk's groups leave it once, at its end
    left = s + N - V - (lanes0 // V) * V
    count = tl.where(left < 0, 0, left // CHUNK + 1).to(tl.float32)
    _finish(X, Y, W_AT, B_AT, W, B, Stats, M, eps, rows, row_ok, base, s, lanes0, s * TABLE,
            mean, m2, count, N, V, E, True, CHUNK, STEPS)


def shifted(param, lanes, v, block):
    """normkit.aligned.shifted_params for tables of a whole number of chunks (not a power of two)."""
    out = param.new_empty((v, lanes))
    aligned.shift[(v, lanes // block)](param, out, N=param.numel(), LANES=lanes, BLOCK=block, num_warps=4)
    return out


def forward(x, w, b, eps=1e-5, chunk=2048, warps=8, walk="per-lane", maxnreg=None, stages=1):
    """y and the (2, M) stats of LayerNorm over contiguous rows x (M, N), first row on 16 bytes.
    walk: "per-lane" (ln_fwd_window_chunked) or "uniform" (ln_fwd_window_uniform, its walk 1
    pipelined over `stages`)."""
    m, n = x.shape
    v = aligned.vector(x.element_size())
    y = torch.empty_like(x)
    stats = torch.empty((2, m), dtype=torch.float32, device=x.device)
    options = dict(num_warps=warps, **({"maxnreg": maxnreg} if maxnreg else {}))
    if walk == "uniform":
        steps = triton.cdiv(n - 1, chunk)
        table = (steps + 1) * chunk  # lanes up to V + steps * chunk
        w_at, b_at = (shifted(p, table, v, chunk) for p in (w, b))
        ln_fwd_window_uniform[(m,)](x, y, w_at, b_at, w, b, stats, m, eps, N=n, CHUNK=chunk, STEPS=steps,
                                    TABLE=table, V=v, E=max(2 * v, 32 * warps), STAGES=stages, **options)
        return y, stats
    steps = triton.cdiv(n + v - 1, chunk)
    w_at, b_at = (shifted(p, steps * chunk, v, chunk) for p in (w, b))
    ln_fwd_window_chunked[(m,)](x, y, w_at, b_at, w, b, stats, m, eps, N=n, CHUNK=chunk, STEPS=steps, V=v,
                                E=max(2 * v, 32 * warps), **options)
    return y, stats


def check():
    for walk in ("per-lane", "uniform"):
        for dtype in (torch.bfloat16, torch.float32):
            for n, chunk in ((257, 64), (1025, 256), (24, 16), (4099, 1024), (4096, 1024)):
                x = (torch.randn(5, n) * 3 + 40).to(dtype)  # an offset mean: Welford's reason
                w, b = torch.randn(n).to(dtype), torch.randn(n).to(dtype)
                y, stats = forward(x, w, b, chunk=chunk, warps=2, walk=walk, stages=2 if walk == "uniform" else 1)
                ref = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float())
                assert (y.float() - ref).abs().max() < (0.1 if dtype == torch.bfloat16 else 1e-4), (walk, n, dtype)
                assert torch.allclose(stats[0], x.float().mean(1), atol=1e-3), (walk, n, dtype)
    print("check: ok")


# (walk, CHUNK, warps, maxnreg, stages of walk 1) timed at each width
VARIANTS = [("per-lane", 1024, 4, None, 1), ("per-lane", 2048, 8, None, 1), ("uniform", 1024, 4, None, 1),
            ("uniform", 2048, 4, None, 1), ("uniform", 2048, 8, None, 1), ("uniform", 4096, 8, None, 1),
            ("uniform", 1024, 4, 40, 1), ("uniform", 1024, 4, None, 3), ("uniform", 2048, 8, None, 3)]


def bench(out=None):
    """% of copy of layer_norm_fast's forward and of each variant, per width (N = 8192: rows on 16
    bytes, the walk's cost without the window's)."""
    from faster.tune import graph_ms, pct, rows_for
    from layernorm import fast as ln
    from normkit.bench import copy_bandwidth_gb_per_s
    copy = copy_bandwidth_gb_per_s()["median"]
    print(f"copy {copy:.0f} GB/s")
    widths = {torch.bfloat16: [8192, 4097, 8193, 10241, 12289, 16129, 2049, 8194],
              torch.float32: [8193, 16129]}
    results = []
    for dtype, ns in widths.items():
        for n in ns:
            m = rows_for(n, dtype)
            x = torch.randn(m, n, device="cuda", dtype=dtype)
            w, b = torch.randn(n, device="cuda", dtype=dtype), torch.randn(n, device="cuda", dtype=dtype)
            n_bytes = 2 * m * n * x.element_size()
            ref = ln.forward_rows(x, w, b, 1e-5)[0].float()
            row = {"dtype": str(dtype)[6:], "N": n,
                   "table": pct(n_bytes, graph_ms(lambda: ln.forward_rows(x, w, b, 1e-5)), copy),
                   "table_config": list(ln.forward_config(n, x.element_size())), "variants": {}}
            for walk, chunk, warps, maxnreg, stages in VARIANTS:
                kw = dict(chunk=chunk, warps=warps, walk=walk, maxnreg=maxnreg, stages=stages)
                try:
                    assert (forward(x, w, b, **kw)[0].float() - ref).abs().max() < 0.1
                    row["variants"][f"{walk} {chunk} {warps} {maxnreg} {stages}"] = pct(
                        n_bytes, graph_ms(lambda: forward(x, w, b, **kw)), copy)
                except Exception as e:
                    print("  skip", n, kw, type(e).__name__, str(e)[:80])
            print(f"{row['dtype']:9s} N={n:5d} table {row['table']:5.1f}  " + "  ".join(
                f"{k}: {v:5.1f}" for k, v in row["variants"].items()), flush=True)
            results.append(row)
            del x
            torch.cuda.empty_cache()
    if out:
        import json
        with open(out, "w") as f:
            json.dump({"copy_gbps": copy, "device": torch.cuda.get_device_name(), "rows": results}, f, indent=1)


if __name__ == "__main__":
    if "--check" in sys.argv:
        check()
    else:
        bench(sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None)
