"""The accuracy campaign: 72 cases each for y, dx and dgamma, against the reference."""

import itertools
from dataclasses import dataclass

import torch

from normkit.runtime import DEVICE
from rmsnorm.ops import rms_norm
from rmsnorm.reference import manual_backward, rmsnorm_reference

# --8<-- [start:campaign]
# Declared before anything is measured, and never loosened afterwards.
TOLERANCES = {
    torch.float32: {"atol": 1e-5, "rtol": 1e-4},
    torch.float16: {"atol": 3e-3, "rtol": 3e-3},
}
ROWS = (1, 17, 128)  # one row, an odd count, a batch
COLS = (1, 255, 256, 257, 1000, 4096)  # around a power of two, and the widest allowed
DTYPES = (torch.float32, torch.float16)
SEEDS = (0, 1)
QUANTITIES = ("y", "dx", "dgamma")


@dataclass(frozen=True)
class Case:
    m: int
    n: int
    dtype: torch.dtype
    seed: int


def campaign_cases():
    """3 M x 6 N x 2 dtypes x 2 seeds = 72 cases."""
    return [Case(*c) for c in itertools.product(ROWS, COLS, DTYPES, SEEDS)]


def compare(got, want, dtype):
    """Every element must satisfy |got - want| <= atol + rtol * |want|."""
    tol = TOLERANCES[dtype]
    got, want = got.double(), want.double()
    err = (got - want).abs()
    allowed = tol["atol"] + tol["rtol"] * want.abs()
    bad = ~(err <= allowed)  # a NaN counts as bad
    return {
        "max_abs_err": err.max().item(),
        "worst_ratio": (err / allowed).max().item(),
        "bad_elements": int(bad.sum().item()),
    }
# --8<-- [end:campaign]


def make_inputs(case, device=DEVICE):
    gen = torch.Generator().manual_seed(1000 * case.seed + 7 * case.m + case.n)
    scale = 1.0 + 3.0 * case.seed  # the second seed also stretches the values
    x = scale * torch.randn(case.m, case.n, generator=gen)
    gamma = 1.0 + 0.5 * torch.randn(case.n, generator=gen)
    dy = torch.randn(case.m, case.n, generator=gen)
    return tuple(t.to(device=device, dtype=case.dtype) for t in (x, gamma, dy))


# --8<-- [start:run_case]
def run_case(case, device=DEVICE):
    x, gamma, dy = make_inputs(case, device)
    xk = x.clone().requires_grad_()
    gk = gamma.clone().requires_grad_()
    y = rms_norm(xk, gk)  # the kernel path, through autograd
    dx, dgamma = torch.autograd.grad(y, (xk, gk), dy)
    y_ref = rmsnorm_reference(x, gamma)
    dx_ref, dgamma_ref = manual_backward(x, gamma, dy)
    return {
        "y": compare(y, y_ref, case.dtype),
        "dx": compare(dx, dx_ref, case.dtype),
        "dgamma": compare(dgamma, dgamma_ref, case.dtype),
    }
# --8<-- [end:run_case]


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def run_campaign(cases=None, device=DEVICE):
    """Run the cases and summarise per quantity and dtype. JSON-serialisable."""
    cases = campaign_cases() if cases is None else list(cases)
    return summarise(cases, [run_case(case, device) for case in cases])


def summarise(cases, results):
    """The campaign's summary per quantity and dtype, from each case's result (run_case's)."""
    summary = {}
    failures = []
    for case, result in zip(cases, results):
        for q in QUANTITIES:
            key = f"{q}/{dtype_name(case.dtype)}"
            s = summary.setdefault(key, {"quantity": q, "dtype": dtype_name(case.dtype), "cases": 0,
                                         "failed_cases": 0, "max_abs_err": 0.0, "worst_ratio": 0.0,
                                         **TOLERANCES[case.dtype]})
            r = result[q]
            s["cases"] += 1
            s["max_abs_err"] = max(s["max_abs_err"], r["max_abs_err"])
            s["worst_ratio"] = max(s["worst_ratio"], r["worst_ratio"])
            if r["bad_elements"]:
                s["failed_cases"] += 1
                failures.append({"quantity": q, "m": case.m, "n": case.n, "dtype": dtype_name(case.dtype),
                                 "seed": case.seed, "bad_elements": r["bad_elements"]})
    return {
        "cases": len(cases),
        "shapes": {"M": sorted({c.m for c in cases}), "N": sorted({c.n for c in cases})},
        "per_quantity_dtype": [summary[k] for k in sorted(summary, key=_order)],
        "failures": failures,
        "passed": not failures,
    }


def _order(key):
    q, d = key.split("/")
    return (QUANTITIES.index(q), d != "float32")


def format_campaign(result, quantity=None):
    lines = [f"{result['cases']} cases: M in {result['shapes']['M']}, N in {result['shapes']['N']}"]
    for s in result["per_quantity_dtype"]:
        if quantity and s["quantity"] != quantity:
            continue
        lines.append(
            f"  {s['quantity']:<6} {s['dtype']:<7} atol={s['atol']:g} rtol={s['rtol']:g}  "
            f"max |err| = {s['max_abs_err']:.3e}  worst err/allowed = {s['worst_ratio']:.3f}  "
            f"failed cases {s['failed_cases']}/{s['cases']}"
        )
    shown = [f for f in result["failures"] if not quantity or f["quantity"] == quantity]
    for f in shown:
        lines.append(f"  FAIL {f}")
    lines.append("PASS: every element within tolerance" if not shown else f"FAIL: {len(shown)} case(s) out of tolerance")
    return "\n".join(lines)


def interpreter_cases():
    """The CPU subset the interpreter runs in tests: seed 0 and M*N <= 40,000 (30 of the 72).

    The full 72 run on the GPU (and on the CPU with `python -m rmsnorm check-forward`).
    """
    return [c for c in campaign_cases() if c.seed == 0 and c.m * c.n <= 40_000]
