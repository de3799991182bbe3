"""CPU checks of exchange_rows.py's lagged kernel (run 4), no GPU.

Default: Triton's interpreter runs the kernel with S = 1 (one program a row: its count reaches 1
at once; with S > 1 the interpreter, running programs one after another, would spin) on small
shapes, float32, against a float64 reference from the formulas; M not divisible by the groups, groups
past M (a group with no row) and groups with one row run the prologue, loop and epilogue apart.
--ptxas: registers a thread and spill bytes of both kernels for sm_90a at N = 32768 (Triton's ptxas),
to see which shares and warps fit one or two programs an SM.

    TRITON_INTERPRET=1 PYTHONPATH=snippets:notes/experiments python3 notes/experiments/exchange_rows_check.py
    PYTHONPATH=snippets:notes/experiments python3 notes/experiments/exchange_rows_check.py --ptxas
"""
import os
import sys

PTXAS_MODE = "--ptxas" in sys.argv
os.environ["TRITON_INTERPRET"] = "0" if PTXAS_MODE else "1"  # read when the kernels are defined

import torch  # noqa: E402
import triton  # noqa: E402

import exchange_rows  # noqa: E402


def reference(op, x, dy, w, eps=1e-5):
    """dx, dW (and dB) in float64, and the float32 Stats the kernel reads."""
    x, dy, w = x.double(), dy.double(), w.double()
    ln = op == "layernorm"
    mean = x.mean(1) if ln else torch.zeros(x.shape[0], dtype=torch.float64)
    rstd = 1 / torch.sqrt(((x - mean[:, None]) ** 2).mean(1) + eps)
    x_hat = (x - mean[:, None]) * rstd[:, None]
    g = dy * w
    c1 = (x_hat * g).mean(1, keepdim=True)
    c2 = g.mean(1, keepdim=True) if ln else 0.0
    dx = (g - (x_hat * c1 + c2)) * rstd[:, None]
    params = torch.stack([(dy * x_hat).sum(0), dy.sum(0)] if ln else [(dy * x_hat).sum(0)])
    stats = torch.stack([mean, rstd] if ln else [rstd]).float()
    return dx, params, stats


def interpreted():
    worst, cases = 0.0, 0
    gen = torch.Generator().manual_seed(0)
    for op in ("layernorm", "rmsnorm"):
        for n in (64, 100):
            for m in (1, 5, 7):
                for groups in (1, 3, 8):
                    for lagged, prefetch in ((True, False), (True, True), (False, True)):  # the old one too
                        x = torch.randn(m, n, generator=gen) + 0.5
                        dy = torch.randn(m, n, generator=gen)
                        w = torch.rand(n, generator=gen) + 0.5
                        dx_ref, params_ref, stats = reference(op, x, dy, w)
                        dx, params = exchange_rows.exchange_backward(
                            op, dy, x, w, stats, 1, 4, prefetch, groups=groups, cooperative=True, lagged=lagged)
                        err = exchange_rows.difference((dx, params), (dx_ref, params_ref))
                        worst, cases = max(worst, err), cases + 1
                        ok = err < 1e-5
                        if not ok:
                            print(f"FAIL {op} N={n} M={m} groups={groups} lagged={lagged} prefetch={prefetch}: "
                                  f"rel {err:.3g}")
                        assert ok
    print(f"{cases} cases passed, max relative error {worst:.3g}")


def ptxas():
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from ptxas_spills import ptxas_usage

    n = 32768
    for dtype in ("bf16", "fp32"):
        for op in ("layernorm", "rmsnorm"):
            for name, kernel, prefetch in (("old pf", exchange_rows.exchange_bwd_kernel, True),
                                           ("lag", exchange_rows.lagged_bwd_kernel, False),
                                           ("lag pf", exchange_rows.lagged_bwd_kernel, True)):
                for shares in (2, 4, 8):
                    for warps in (4, 8):
                        width = triton.cdiv(n, shares)
                        signature = {"X": f"*{dtype}", "DY": f"*{dtype}", "DX": f"*{dtype}", "W": f"*{dtype}",
                                     "Stats": "*fp32", "Part": "*fp32", "Sums": "*fp32", "Count": "*i32", "M": "i32"}
                        constants = dict(N=n, S=shares, WIDTH=width, TILE=triton.next_power_of_2(width),
                                         LN=op == "layernorm", PREFETCH=prefetch, MAX_SPIN=1 << 14)
                        signature.update({c: "constexpr" for c in constants})
                        aligned = {(i,): [["tt.divisibility", 16]] for i in range(8)}
                        compiled = triton.compile(ASTSource(kernel, signature, constants, aligned),
                                                  target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
                        regs, spills = ptxas_usage(compiled)
                        # programs an SM the register file holds (65536 a SM, 255 at most a thread)
                        fit = 65536 // (((regs + 7) // 8 * 8) * 32 * warps)
                        print(f"{dtype} {op[:3]} {name:6s} s{shares} w{warps}: {regs} regs, {spills} B spilled, "
                              f"{fit} an SM", flush=True)


if __name__ == "__main__":
    ptxas() if PTXAS_MODE else interpreted()
