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
Every body access is 16 bytes.

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
from normkit.aligned import edges_of, row_window


@triton.jit
def _body(lanes, s, N: tl.constexpr, V: tl.constexpr):
    group = (lanes // V) * V
    return (group >= s) & (group + V <= s + N)


@triton.jit(do_not_specialize=["M"])
def ln_fwd_window_chunked(X, Y, W_AT, B_AT, W, B, Stats, M, eps, N: tl.constexpr, CHUNK: tl.constexpr,
                          STEPS: tl.constexpr, V: tl.constexpr):
    rows = tl.program_id(0) + tl.arange(0, 1)
    row_ok = rows < M
    base, s = row_window(rows, N, V)
    cols_e, edge = edges_of(s, row_ok, N, V)
    x_e = tl.load(X + base + s + cols_e, mask=edge, other=0.0).to(tl.float32)
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
        # IEEE one a subroutine per element (lnwin-1: 52-55 % at every bf16 width)
        mean += tl.fdiv(d, tl.maximum(count, 1.0), ieee_rounding=False)
        m2 += d * (x - mean)
    mean_row = (tl.sum(mean * count, axis=1) + tl.sum(x_e, axis=1)) / N
    spread = mean - mean_row[:, None]
    xc_e = tl.where(edge, x_e - mean_row[:, None], 0.0)
    m2_row = tl.sum(m2 + count * spread * spread, axis=1) + tl.sum(xc_e * xc_e, axis=1)
    rstd = tl.rsqrt(m2_row / N + eps)

    frame = s * (STEPS * CHUNK)  # row s of the shifted tables
    for step in range(0, STEPS):
        lanes = step * CHUNK + lanes0
        body = _body(lanes, s, N, V) & row_ok[:, None]
        x = tl.load(X + base + lanes, mask=body, other=0.0, eviction_policy="evict_first").to(tl.float32)
        y = (x - mean_row[:, None]) * rstd[:, None]
        y *= tl.load(W_AT + frame + lanes, mask=body, other=0.0, eviction_policy="evict_last").to(tl.float32)
        y += tl.load(B_AT + frame + lanes, mask=body, other=0.0, eviction_policy="evict_last").to(tl.float32)
        tl.store(Y + base + lanes, y.to(Y.dtype.element_ty), mask=body)
    y_e = xc_e * rstd[:, None] * tl.load(W + cols_e, mask=edge, other=0.0).to(tl.float32)
    y_e += tl.load(B + cols_e, mask=edge, other=0.0).to(tl.float32)
    tl.store(Y + base + s + cols_e, y_e.to(Y.dtype.element_ty), mask=edge)
    tl.store(Stats + rows, mean_row, mask=row_ok)
    tl.store(Stats + M + rows, rstd, mask=row_ok)


def shifted(param, lanes, v, block):
    """normkit.aligned.shifted_params for tables of a whole number of chunks (not a power of two)."""
    out = param.new_empty((v, lanes))
    aligned.shift[(v, lanes // block)](param, out, N=param.numel(), LANES=lanes, BLOCK=block, num_warps=4)
    return out


def forward(x, w, b, eps=1e-5, chunk=2048, warps=8):
    """y and the (2, M) stats of LayerNorm over contiguous rows x (M, N), first row on 16 bytes."""
    m, n = x.shape
    v = aligned.vector(x.element_size())
    steps = triton.cdiv(n + v - 1, chunk)
    w_at, b_at = (shifted(p, steps * chunk, v, chunk) for p in (w, b))
    y = torch.empty_like(x)
    stats = torch.empty((2, m), dtype=torch.float32, device=x.device)
    ln_fwd_window_chunked[(m,)](x, y, w_at, b_at, w, b, stats, m, eps, N=n, CHUNK=chunk, STEPS=steps, V=v,
                                num_warps=warps)
    return y, stats


def check():
    for dtype in (torch.bfloat16, torch.float32):
        for n, chunk in ((257, 64), (1025, 256), (3, 64), (4099, 1024)):
            x = (torch.randn(5, n) * 3 + 40).to(dtype)  # an offset mean: Welford's reason
            w, b = torch.randn(n).to(dtype), torch.randn(n).to(dtype)
            y, stats = forward(x, w, b, chunk=chunk, warps=2)
            ref = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float())
            assert (y.float() - ref).abs().max() < (0.1 if dtype == torch.bfloat16 else 1e-4), (n, dtype)
            assert torch.allclose(stats[0], x.float().mean(1), atol=1e-3), (n, dtype)
    print("check: ok")


def bench(out=None):
    from faster.tune import graph_ms, pct, rows_for
    from layernorm import fast as ln
    from normkit.bench import copy_bandwidth_gb_per_s
    copy = copy_bandwidth_gb_per_s()["median"]
    print(f"copy {copy:.0f} GB/s")
    odd = [769, 1025, 2049, 2305, 4097, 5121, 8193, 8449, 10241, 12289, 16129]
    widths = {torch.bfloat16: odd[2:] + [8194], torch.float32: [4097, 16129]}
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
                   "table_config": list(ln.forward_config(n, x.element_size())), "window": 0.0}
            for chunk, warps in ((1024, 4), (2048, 4), (2048, 8), (4096, 4), (4096, 8)):
                try:
                    y = forward(x, w, b, chunk=chunk, warps=warps)[0]
                    assert (y.float() - ref).abs().max() < 0.1
                    p = pct(n_bytes, graph_ms(lambda: forward(x, w, b, chunk=chunk, warps=warps)), copy)
                except Exception as e:
                    print("  skip", n, chunk, warps, type(e).__name__, str(e)[:80])
                    continue
                if p > row["window"]:
                    row["window"], row["window_config"] = p, [chunk, warps]
            print(f"{row['dtype']:9s} N={n:5d} table {row['table']:5.1f} {row['table_config']}  "
                  f"window {row['window']:5.1f} {row.get('window_config')}", flush=True)
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
