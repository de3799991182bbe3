"""What a figure lets a page say: its stated range, the digits that range supports, and verdicts.

A figure is normkit.bench's {"median", "low", "high", "runs"}. Its stated range is the range of its
repetitions, widened to at least bench.REPRODUCIBILITY of the median on each side (what moved between
two builds of one commit); every number a page quotes is rounded to the place of that range, and
every comparison is read from two stated ranges:

    stated(fig, "gpu")                    -> (low, high)
    text(fig, "gpu", t)                   -> "480"         (478.57 ± 14: tens are the last sure digit)
    with_range(fig, "gpu", t, " µs")      -> "480 µs (460–500)" (the range rounded outwards)
    compare(a, b, "gpu")                  -> "lower", "higher" or "on_par"
    against(fig, 90.0, "gpu")             -> "met", "missed" or "within" (the target inside the range)
"""

import math

from normkit.bench import REPRODUCIBILITY


def stated(fig, kind):
    """(low, high): the repetitions' range, at least ±REPRODUCIBILITY[kind] of the median."""
    margin = REPRODUCIBILITY[kind] * abs(fig["median"])
    return min(fig["low"], fig["median"] - margin), max(fig["high"], fig["median"] + margin)


def place(low, high):
    """Decimal places that a range supports: the place of half its width (negative: tens, hundreds)."""
    half = (high - low) / 2
    return -math.floor(math.log10(half)) if half > 0 else 2


def _round(value, places, how=round):
    unit = 10.0 ** -places
    # the quotient first rounded to 9 places: 9.7 / 0.1 is 96.99999999999999, which floor() would
    # otherwise take to 96
    return how(round(value / unit, 9)) * unit


def _digits(value, places, t):
    return t.number(_round(value, places), f".{max(places, 0)}f")


def _finite(fig):
    return all(math.isfinite(fig[k]) for k in ("median", "low", "high"))


def text(fig, kind, t):
    """The median with the digits its stated range supports ("—" for a fit that found no slope)."""
    if not _finite(fig):
        return "—"
    low, high = stated(fig, kind)
    return _digits(fig["median"], place(low, high), t)


def range_text(fig, kind, t):
    """The stated range, rounded outwards at the same place: "460–500" for 464.2 to 492.9."""
    if not _finite(fig):
        return "—"
    low, high = stated(fig, kind)
    places = place(low, high)
    lo = _digits(_round(low, places, math.floor), places, t)
    hi = _digits(_round(high, places, math.ceil), places, t)
    return f"{lo}–{hi}"


def text_with_unit(fig, kind, t, unit):
    """text() followed by its unit, or "—" alone where there is no number."""
    value = text(fig, kind, t)
    return value if value == "—" else value + unit


def with_range(fig, kind, t, unit=""):
    return f"{text(fig, kind, t)}{unit} ({range_text(fig, kind, t)})"


def transform(fig, fn):
    """The figure of fn(value) for a monotonic fn: a time becomes a bandwidth, a share, a ratio."""
    runs = [fn(r) for r in fig["runs"]]
    ends = sorted((fn(fig["low"]), fn(fig["high"])))
    return {"median": fn(fig["median"]), "low": ends[0], "high": ends[1], "runs": runs}


def ratio(a, b):
    """a / b as a figure: its runs pair the repetitions, its range takes both ranges' ends."""
    runs = [x / y for x, y in zip(a["runs"], b["runs"])]
    return {"median": a["median"] / b["median"], "low": a["low"] / b["high"], "high": a["high"] / b["low"],
            "runs": runs}


def stated_ratio(a, b, kind):
    """(median, low, high) of a / b, from the two stated ranges."""
    (a_lo, a_hi), (b_lo, b_hi) = stated(a, kind), stated(b, kind)
    return a["median"] / b["median"], a_lo / b_hi, a_hi / b_lo


def compare(a, b, kind):
    """"lower" where a's whole stated range lies under b's, "higher" above it, else "on_par"."""
    (a_lo, a_hi), (b_lo, b_hi) = stated(a, kind), stated(b, kind)
    if a_hi < b_lo:
        return "lower"
    if a_lo > b_hi:
        return "higher"
    return "on_par"


def against(fig, target, kind):
    """"met" where the stated range lies at or above the target, "missed" under it, else "within"."""
    low, high = stated(fig, kind)
    if low >= target:
        return "met"
    if high < target:
        return "missed"
    return "within"


def typical(figs):
    """The median figure of a sweep (by median): what a headline quotes instead of an extreme point."""
    ordered = sorted(figs, key=lambda f: f["median"])
    return ordered[(len(ordered) - 1) // 2]


def floor_quotes(t):
    """The reproducibility floors as a page quotes them: {"floor_gpu": "3%", "floor_host": "25%", ...}."""
    return {f"floor_{kind}": t.number(100 * share, "g") + "%" for kind, share in REPRODUCIBILITY.items()}


def protocol_text(record, t, what="gpu"):
    """The protocol sentence under a table, from the protocol record a data set stored."""
    words = {**record, "floor": t.number(100 * REPRODUCIBILITY[what], "g")}
    return t(f"protocol_{what}").format(**words)
