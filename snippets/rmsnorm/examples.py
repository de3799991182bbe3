"""The chapter's worked examples, computed by the code (and asserted by test_examples.py).

These are arithmetic, not measurements: they run in float64 on the CPU, no kernel involved.
"""

import torch
import triton

from normkit import words

from rmsnorm.ops import gamma_programs, scratch_bytes
from rmsnorm.reference import manual_backward, rmsnorm_reference

EPS = 1e-6


# --8<-- [start:worked_examples]
def two_values():
    """x = [3, 4]: the forward with gamma = [1, 1] and [2, 0.5],
    then dx for dy = [1, 2]."""
    x = torch.tensor([[3.0, 4.0]], dtype=torch.float64)
    ones = torch.ones(2, dtype=torch.float64)
    mean_sq = x.pow(2).mean().item()  # (9 + 16) / 2
    r = (mean_sq + EPS) ** -0.5
    y = rmsnorm_reference(x, ones, EPS)[0].tolist()
    y_gamma = rmsnorm_reference(
        x, torch.tensor([2.0, 0.5], dtype=torch.float64), EPS
    )[0].tolist()
    dy = torch.tensor([[1.0, 2.0]], dtype=torch.float64)
    dx, _ = manual_backward(x, ones, dy, EPS)
    mean_ux = (dy * ones * x).mean().item()  # (1*3 + 2*4) / 2
    return {
        "mean_sq": mean_sq,
        "r": r,
        "y": y,
        "y_gamma": y_gamma,
        "mean_ux": mean_ux,
        "dx": dx[0].tolist(),
    }


def row_of_ones(n=257):
    """A row of n ones: the right denominator N against the padded width BLOCK."""
    block = triton.next_power_of_2(n)
    right = (n / n + EPS) ** -0.5  # sum of squares n, divided by N
    wrong = (n / block + EPS) ** -0.5  # the same sum divided by BLOCK
    return {"n": n, "block": block, "y_right": right, "y_wrong": wrong}


def scratch(m, n):
    """Bytes of the fp32 PARTIAL buffer, and how many programs reduce it into dgamma."""
    return {
        "m": m,
        "n": n,
        "bytes": scratch_bytes(m, n),
        "mib": scratch_bytes(m, n) / 2**20,
        "gamma_programs": gamma_programs(n),
    }
# --8<-- [end:worked_examples]


def all_examples():
    return {
        "two_values": two_values(),
        "ones_257": row_of_ones(257),
        "ones_256": row_of_ones(256),
        "scratch_128x257": scratch(128, 257),
        "scratch_4096x4096": scratch(4096, 4096),
    }


def format_examples(ex=None, t=None):
    """The lines `python -m rmsnorm reference` and the notebook print, in the numbers and words of t
    (a normkit.words.Words; by default the reader's, words.reader(), which is English unless
    NORMKERNELS_LANGUAGE says otherwise). The inputs ([3, 4], gamma, eps) are written as code."""
    ex = ex or all_examples()
    t = t or words.reader()
    tv = ex["two_values"]
    lines = [
        "x = [3, 4], eps = 1e-6",
        f"  mean(x^2)                 = {t.number(tv['mean_sq'], 'g')}",
        f"  r = 1/sqrt(mean(x^2)+eps) = {t.number(tv['r'], '.6f')}",
        f"  y (gamma = [1, 1])        = {t.vector(tv['y'], '.6f')}",
        f"  y (gamma = [2, 0.5])      = {t.vector(tv['y_gamma'], '.6f')}",
        f"  dy = [1, 2]: mean(u*x)    = {t.number(tv['mean_ux'], 'g')}",
        f"  dx                        = {t.vector(tv['dx'], '.6f')}",
    ]
    for key in ("ones_257", "ones_256"):
        o = ex[key]
        lines.append(t("example_row_of_ones").format(
            n=o["n"], block=o["block"], right=t.number(o["y_right"], ".7f"), wrong=t.number(o["y_wrong"], ".7f")))
    for key in ("scratch_128x257", "scratch_4096x4096"):
        s = ex[key]
        lines.append(t("example_partial_size").format(
            shape=f"{s['m']}x{s['n']}", bytes=t.number(s["bytes"], "d"), kib=t.number(s["bytes"] / 1024, "g"),
            mib=t.number(s["mib"], "g"), programs=s["gamma_programs"]))
    return "\n".join(lines)
