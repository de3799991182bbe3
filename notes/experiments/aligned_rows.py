"""Rows that do not start on 16 bytes (issue 21's cliffs, notes/fast-kernels.md, seventh session):
can a kernel keep 16-byte accesses by reading each row as an aligned body and two small edges?

A row r of an (M, N) tensor starts at a = r * N elements. With V = 16 // element size, the row's
start lies s = a % V elements past an aligned address. Lane l of a tile reads element a - s + l
(aligned: `tl.multiple_of`), so lanes [s, s + N) are the row; the lanes' groups of V that lie
wholly inside the row are the body (one mask per group: 16-byte loads and stores), and the at most
2 (V - 1) columns in the partial groups at either end are read, summed and written as a small
tensor of their own (the edges), never touching a neighbour's columns.

- forward (LayerNorm, one row a program): the weight and bias in the body's frame are read at
  columns l - s, which are not aligned: either plainly (WSHIFT=0), or from a (V, LANES) table of
  the weight shifted by each s, built once (WSHIFT=1), to see what the weight's loads cost;
- backward (RMSNorm, persistent, rows staged through shared memory): the frame of dW must not
  move from row to row, so each program takes the rows of one class r % P (P = V / gcd(N, V)):
  all of them share s.

The edges either as a small tensor of their own (its sums reduced apart) or folded into the tile by
a second load and store of the partial groups' lanes, one element each (narrow, but switched off in
every other lane: one reduction; compiled for sm_90 at 4097, 32 such loads a thread beside the
body's 16-byte ones).

Run on the GPU from the repository root (PYTHONPATH=snippets, `--out FILE` for JSON); prints % of
the copy bandwidth of the fast kernels' own configuration and of each variant at widths that are and
are not multiples of 8. TRITON_INTERPRET=1 with --check: a small correctness check of every variant
against PyTorch on the CPU."""

import math
import sys

import normkit  # noqa: F401
import torch
import triton
import triton.language as tl


@triton.jit
def _edges(s, N: tl.constexpr, V: tl.constexpr):
    """The columns of a row's partial groups (first V lanes: the head, then the tail) and
    which of them are in the row."""
    e = tl.arange(0, 2 * V)
    head = (V - s) % V  # columns [0, head) lie in the first, partial group
    tail = ((s + N) // V) * V - s  # columns [tail, N) lie in the last, partial group
    cols = tl.where(e < V, e, tail + e - V)
    ok = tl.where(e < V, e < head, cols < N)
    return cols, ok


@triton.jit
def _body(s, LANES: tl.constexpr, N: tl.constexpr, V: tl.constexpr):
    """The tile's lanes and which groups of V lie wholly in the row (one value per group)."""
    lanes = tl.arange(0, LANES)
    group = (lanes // V) * V
    return lanes, (group >= s) & (group + V <= s + N)


@triton.jit
def _partial(lanes, body, s, N: tl.constexpr):
    """The row's lanes in the partial groups at its ends (one value per lane: narrow accesses,
    but all other lanes' are switched off)."""
    return (lanes >= s) & (lanes < s + N) & ~body


@triton.jit
def _edge_sum(X, a, s, mean, N: tl.constexpr, V: tl.constexpr, POWER: tl.constexpr):
    """The sum of (x - mean) ** POWER over a row's edge columns, read one scalar at a time
    (scalars have no layout: no reduction across the program's warps)."""
    head = (V - s) % V
    tail = ((s + N) // V) * V - s
    total = 0.0
    for i in tl.static_range(V):
        h = tl.load(X + a + i, mask=i < head, other=0.0).to(tl.float32)
        t = tl.load(X + a + tail + i, mask=tail + i < N, other=0.0).to(tl.float32)
        if POWER == 1:
            total += h + t
        else:
            total += tl.where(i < head, (h - mean) * (h - mean), 0.0)
            total += tl.where(tail + i < N, (t - mean) * (t - mean), 0.0)
    return total


@triton.jit
def _edge_store(X, Y, W, B, a, s, mean, rstd, N: tl.constexpr, V: tl.constexpr):
    head = (V - s) % V
    tail = ((s + N) // V) * V - s
    for i in tl.static_range(2 * V):
        if i < V:
            c = i + tl.zeros([], tl.int64)
            ok = i < head
        else:
            c = tail + (i - V)
            ok = c < N
        x = tl.load(X + a + c, mask=ok, other=0.0).to(tl.float32)
        w = tl.load(W + c, mask=ok, other=0.0).to(tl.float32)
        b = tl.load(B + c, mask=ok, other=0.0).to(tl.float32)
        tl.store(Y + a + c, ((x - mean) * rstd * w + b).to(Y.dtype.element_ty), mask=ok)


@triton.jit
def ln_fwd_aligned(X, Y, W, B, Wsh, Bsh, Stats, M, eps, N: tl.constexpr, LANES: tl.constexpr,
                   V: tl.constexpr, WSHIFT: tl.constexpr, EDGES: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    a = row * N
    s = a % V
    base = tl.multiple_of(a - s, V)
    lanes, body = _body(s, LANES, N, V)
    x = tl.load(X + base + lanes, mask=body, other=0.0).to(tl.float32)
    if EDGES == "folded":  # a second, narrow load of the partial groups' lanes
        edge = _partial(lanes, body, s, N)
        x += tl.load(X + base + lanes, mask=edge, other=0.0).to(tl.float32)
        row = body | edge
        mean = tl.sum(x, axis=0) / N
        xc = tl.where(row, x - mean, 0.0)
        rstd = tl.rsqrt(tl.sum(xc * xc, axis=0) / N + eps)
    elif EDGES == "tensor":  # the edges as one small tensor
        cols_e, ok_e = _edges(s, N, V)
        x_e = tl.load(X + a + cols_e, mask=ok_e, other=0.0).to(tl.float32)
        mean = (tl.sum(x, axis=0) + tl.sum(x_e, axis=0)) / N
        xc_e = tl.where(ok_e, x_e - mean, 0.0)
        xc = tl.where(body, x - mean, 0.0)
        rstd = tl.rsqrt((tl.sum(xc * xc, axis=0) + tl.sum(xc_e * xc_e, axis=0)) / N + eps)
    else:  # "scalars": the edges one scalar at a time
        mean = (tl.sum(x, axis=0) + _edge_sum(X, a, s, 0.0, N, V, 1)) / N
        xc = tl.where(body, x - mean, 0.0)
        rstd = tl.rsqrt((tl.sum(xc * xc, axis=0) + _edge_sum(X, a, s, mean, N, V, 2)) / N + eps)
    # the shifted table holds zeros outside the row: with folded edges its loads take every group
    # that touches the row, one mask value per group
    touches = body
    if EDGES == "folded":
        groups = (lanes // V) * V
        touches = (groups + V > s) & (groups < s + N)
    if WSHIFT:
        shifted = tl.multiple_of(s * LANES, V)
        w = tl.load(Wsh + shifted + lanes, mask=touches, other=0.0).to(tl.float32)
        b = tl.load(Bsh + shifted + lanes, mask=touches, other=0.0).to(tl.float32)
    else:
        in_row = body
        if EDGES == "folded":
            in_row = (lanes >= s) & (lanes < s + N)
        w = tl.load(W + lanes - s, mask=in_row, other=0.0).to(tl.float32)
        b = tl.load(B + lanes - s, mask=in_row, other=0.0).to(tl.float32)
    y = (xc * rstd * w + b).to(Y.dtype.element_ty)
    tl.store(Y + base + lanes, y, mask=body)
    if EDGES == "folded":
        tl.store(Y + base + lanes, y, mask=edge)
    elif EDGES == "tensor":
        w_e = tl.load(W + cols_e, mask=ok_e, other=0.0).to(tl.float32)
        b_e = tl.load(B + cols_e, mask=ok_e, other=0.0).to(tl.float32)
        tl.store(Y + a + cols_e, (xc_e * rstd * w_e + b_e).to(Y.dtype.element_ty), mask=ok_e)
    else:
        _edge_store(X, Y, W, B, a, s, mean, rstd, N, V)
    tl.store(Stats + row, mean)
    tl.store(Stats + M + row, rstd)


@triton.jit
def rms_bwd_aligned(X, DY, DX, W, Rstd, Part, M, rows_per_group, N: tl.constexpr,
                    LANES: tl.constexpr, V: tl.constexpr, P: tl.constexpr, STAGES: tl.constexpr,
                    EDGES: tl.constexpr = "tensor"):
    # EDGES: "tensor" (a small tensor of their own), "folded" (into the tile); "none" computes
    # wrong results, a timing probe of what the edges cost
    k = tl.program_id(0) % P  # this program's class of rows: r % P == k, all with one s
    group = tl.program_id(0) // P
    first = group * rows_per_group
    end = tl.minimum(first + rows_per_group, M)
    s = (k * N) % V
    lanes, body = _body(s, LANES, N, V)
    edge = _partial(lanes, body, s, N)
    cols_e, ok_e = _edges(s, N, V)
    # once a program: any access width will do (with folded edges, the edge lanes too)
    mine = body
    if EDGES == "folded":
        mine = body | edge
    w = tl.load(W + lanes - s, mask=mine, other=0.0).to(tl.float32)
    w_e = tl.load(W + cols_e, mask=ok_e, other=0.0).to(tl.float32)
    dw = tl.zeros([LANES], tl.float32)
    dw_e = tl.zeros([2 * V], tl.float32)
    start = first + (k - first % P + P) % P
    for r in tl.range(start, end, P, num_stages=STAGES):
        a = (r + tl.arange(0, 1)).to(tl.int64) * N  # a (1,) tensor: r may be a Python int
        base = tl.multiple_of(a - s, V)
        rstd = tl.load(Rstd + r)
        x = tl.load(X + base + lanes, mask=body, other=0.0).to(tl.float32)
        dy = tl.load(DY + base + lanes, mask=body, other=0.0).to(tl.float32)
        if EDGES == "folded":  # the partial groups' lanes by a second, narrow load
            x += tl.load(X + base + lanes, mask=edge, other=0.0).to(tl.float32)
            dy += tl.load(DY + base + lanes, mask=edge, other=0.0).to(tl.float32)
        x_hat, g = x * rstd, dy * w
        if EDGES == "folded":
            c = tl.sum(x_hat * g, axis=0) / N
            tl.store(DX + base + lanes, ((g - x_hat * c) * rstd).to(DX.dtype.element_ty), mask=edge)
        elif EDGES == "tensor":
            x_e = tl.load(X + a + cols_e, mask=ok_e, other=0.0).to(tl.float32)
            dy_e = tl.load(DY + a + cols_e, mask=ok_e, other=0.0).to(tl.float32)
            x_hat_e, g_e = x_e * rstd, dy_e * w_e
            c = (tl.sum(x_hat * g, axis=0) + tl.sum(x_hat_e * g_e, axis=0)) / N
            tl.store(DX + a + cols_e, ((g_e - x_hat_e * c) * rstd).to(DX.dtype.element_ty), mask=ok_e)
            dw_e += dy_e * x_hat_e
        else:
            c = tl.sum(x_hat * g, axis=0) / N
        tl.store(DX + base + lanes, ((g - x_hat * c) * rstd).to(DX.dtype.element_ty), mask=body)
        dw += dy * x_hat
    part = Part + tl.program_id(0).to(tl.int64) * N
    tl.store(part + lanes - s, dw, mask=mine)
    if EDGES == "tensor":
        tl.store(part + cols_e, dw_e, mask=ok_e)


def vector(x):
    return 16 // x.element_size()


def lanes_for(n, V):
    """Lanes a row's window needs: a misaligned row starts up to V - 1 lanes in."""
    return triton.next_power_of_2(n if n % V == 0 else n + V - 1)


def shifted_params(w, b, lanes):
    """Row s holds w[l - s] at lane l (WSHIFT=1)."""
    N, V = w.numel(), vector(w)
    idx = torch.arange(lanes, device=w.device)[None, :] - torch.arange(V, device=w.device)[:, None]
    ok = (idx >= 0) & (idx < N)
    return [torch.where(ok, p[idx.clamp(0, N - 1)], 0).contiguous() for p in (w, b)]


def ln_forward(x, w, b, eps=1e-5, shifted=None, warps=8, edges="tensor"):
    """shifted: shifted_params(w, b, lanes), built once (outside the timing)."""
    M, N = x.shape
    V = vector(x)
    y, stats = torch.empty_like(x), torch.empty(2 * M, device=x.device)
    wsh, bsh = shifted or (w, b)
    ln_fwd_aligned[(M,)](x, y, w, b, wsh, bsh, stats, M, eps, N=N, LANES=lanes_for(N, V), V=V,
                         WSHIFT=int(shifted is not None), EDGES=edges, num_warps=warps)
    return y, stats


def rms_backward(dy, x, w, rstd, programs, warps=8, stages=3, edges="tensor"):
    M, N = x.shape
    V = vector(x)
    P = V // math.gcd(N, V)
    groups = max(1, programs // P)
    rows_per_group = triton.cdiv(M, groups)
    part = torch.empty((groups * P, N), device=x.device, dtype=torch.float32)
    dx = torch.empty_like(x)
    rms_bwd_aligned[(groups * P,)](x, dy, dx, w, rstd, part, M, rows_per_group, N=N,
                                   LANES=lanes_for(N, V), V=V, P=P,
                                   STAGES=stages, EDGES=edges, num_warps=warps)
    return dx, part.sum(0).to(w.dtype)


def check():
    """Against PyTorch in fp32, on small shapes (runs under the interpreter too)."""
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for n in (37, 64, 66, 100, 129):
        for dtype in (torch.bfloat16, torch.float32):
            x = torch.randn(13, n, device=dev, dtype=dtype)
            w, b = torch.randn(n, device=dev, dtype=dtype), torch.randn(n, device=dev, dtype=dtype)
            shifted = shifted_params(w, b, lanes_for(n, vector(x)))
            ref = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float())
            for sh in (None, shifted):
                for edges in ("tensor", "scalars", "folded"):
                    y, _ = ln_forward(x, w, b, shifted=sh, warps=1, edges=edges)
                    assert (y.float() - ref).abs().max() < 5e-2, (n, dtype, edges)
            xr = x.float().requires_grad_()
            wr = w.float().requires_grad_()
            dy = torch.randn_like(x)
            yr = torch.nn.functional.rms_norm(xr, (n,), wr, 1e-6)
            yr.backward(dy.float())
            rstd = torch.rsqrt(x.float().pow(2).mean(1) + 1e-6)
            for edges in ("tensor", "folded"):
                dx, dw = rms_backward(dy, x, w, rstd, programs=16, warps=1, stages=2, edges=edges)
                assert (dx.float() - xr.grad).abs().max() < 5e-2 * xr.grad.abs().max(), (n, dtype, edges)
                assert (dw.float() - wr.grad).abs().max() < 5e-2 * wr.grad.abs().max(), (n, dtype, edges)
    print("check: ok")


def best_of(step, configs, bytes_moved, copy, check):
    """The best % of copy over configs (each checked first) and its configuration."""
    from faster.tune import graph_ms, pct
    best, arg = 0.0, None
    for cfg in configs:
        try:
            check(step(*cfg))
            p = pct(bytes_moved, graph_ms(lambda: step(*cfg)), copy)
        except Exception as e:  # out of shared memory
            print("  skip", cfg, type(e).__name__, str(e)[:80])
            continue
        if p > best:
            best, arg = p, cfg
    return best, arg


def bench(out=None):
    """% of copy of the fast kernels' own configuration and of each prototype variant (the best over a
    few warps and stages), per width; with --out FILE, also as JSON. Forward: the weight read at
    column l - s (w) or from the shifted table (wsh), the edges as a small tensor or folded into the
    tile; backward: the edges as a small tensor, folded, or none at all (wrong results: what the
    edges cost)."""
    from faster.tune import graph_ms, pct, rows_for
    from layernorm import fast as ln
    from normkit.bench import copy_bandwidth_gb_per_s
    from rmsnorm import fast as rms
    copy = copy_bandwidth_gb_per_s()["median"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"copy {copy:.0f} GB/s")
    widths = {torch.bfloat16: [2048, 2049, 4096, 4097, 4098, 4100, 8192, 8193], torch.float32: [4097]}
    results = []
    for dtype, ns in widths.items():
        elt = torch.empty((), dtype=dtype).element_size()
        for n in ns:
            m = rows_for(n, dtype)
            x = torch.randn(m, n, device="cuda", dtype=dtype)
            w, b = torch.randn(n, device="cuda", dtype=dtype), torch.randn(n, device="cuda", dtype=dtype)
            dy = torch.randn_like(x)
            fwd_bytes, bwd_bytes = 2 * m * n * elt, 3 * m * n * elt
            row = {"dtype": str(dtype)[6:], "N": n}
            if "--bwd-only" not in sys.argv:
                row["fwd fast"] = pct(fwd_bytes, graph_ms(lambda: ln.forward_rows(x, w, b, 1e-5)), copy)
                ref = ln.forward_rows(x, w, b, 1e-5)[0].float()
                shifted = shifted_params(w, b, lanes_for(n, vector(x)))

                def agrees(out):
                    assert (out[0].float() - ref).abs().max() < 0.1

                for name, sh, edges in (("w/tensor", None, "tensor"), ("w/folded", None, "folded"),
                                        ("wsh/tensor", shifted, "tensor"), ("wsh/folded", shifted, "folded")):
                    row[f"fwd {name}"], row[f"fwd {name} cfg"] = best_of(
                        lambda warps: ln_forward(x, w, b, shifted=sh, warps=warps, edges=edges),
                        [(4,), (8,), (16,)], fwd_bytes, copy, agrees)
            _, rstd = rms.forward_rows(x, w, 1e-6)
            row["bwd fast"] = pct(bwd_bytes, graph_ms(lambda: rms.backward_rows(dy, x, w, rstd)), copy)
            ref_dx = rms.backward_rows(dy, x, w, rstd)[0].float()

            def agrees_dx(out):
                assert (out[0].float() - ref_dx).abs().max() < 0.1 * ref_dx.abs().max()

            for edges in ("tensor", "folded", "none"):
                row[f"bwd {edges}"], row[f"bwd {edges} cfg"] = best_of(
                    lambda warps, stages: rms_backward(dy, x, w, rstd, sms, warps, stages, edges),
                    [(8, 2), (8, 3), (16, 2), (16, 3)], bwd_bytes, copy,
                    agrees_dx if edges != "none" else (lambda out: None))
            print("  ".join(f"{k} {v:5.1f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items()
                            if not k.endswith("cfg")), flush=True)
            results.append(row)
            del x, dy
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
