"""What a figure lets a page say: its stated range, the digits that range supports, and verdicts.

A figure is normkit.bench's {"median", "low", "high", "runs"}. Its stated range is the range of its
repetitions, widened to at least REPRODUCIBILITY of the median on each side (what moved between
two builds of one commit); every number a page quotes is rounded to the place of that range, and
every comparison is read from two stated ranges:

    stated(fig, "gpu")                    -> (low, high)
    text(fig, "gpu", t)                   -> "480"         (478.57 ± 14: tens are the last sure digit)
    with_range(fig, "gpu", t, " µs")      -> "480 µs (460–500)" (the range rounded outwards)
    compare(a, b, "gpu")                  -> "lower", "higher" or "on_par"
    against(fig, 90.0, "gpu")             -> "met", "missed" or "within" (the target inside the range)

A comparison of two figures is decided only where their stated ranges are apart by MARGIN (below);
closer than that it is "on_par", whichever way the medians lie. A verdict that a rebuild's move
(EDGE) could turn keeps the one the previous build stated (`remembering`, below).
"""

import contextlib
import copy
import math

# How far one figure may move between two GPU builds of one commit: the range a page states is the
# repetitions' range, widened to at least this share of the median on each side. Measured
# (notes/timing.md): GPU time moved by at most 2.1 % (median 0.2 %) between two builds on the H200,
# and earlier builds on other machines by about 2 points of the copy bandwidth; the copy itself by
# 1.2 %; host costs by up to 1.6x between two builds on the same machine.
REPRODUCIBILITY = {"gpu": 0.03, "host": 0.6, "copy": 0.02}
# Host costs are compared within one build, repetition by repetition (the i-th runs of both were taken in
# the same pass, on the same host's state): the ratio of two host costs moved by 12 % between the two
# builds while each cost moved by up to 1.6x, so a host comparison reads their paired ratio, widened to
# at least this share on each side.
PAIRED_RATIO = {"host": 0.2}
# How far apart two stated ranges must be for compare() to say "lower" or "higher" (a page: "faster",
# "slower"), as a share of the lower range's top: one more floor (REPRODUCIBILITY; for host costs
# PAIRED_RATIO, on their paired ratio against 1); closer than that it says "on_par". Without it a pair
# whose ranges barely clear each other is decided by the build: between two builds of one commit
# (issue 37) the fast LayerNorm forward and the fast RMSNorm fwd+bwd at 32768x4096 against the fastest
# other provider went from "faster" to "on par", and the widths named between the entries changed,
# every GPU figure within a few percent; on the data committed then six pairs of GPU figures cleared
# each other by less than 1.1 %. What a rebuild moves is the gap between two ranges, so both figures
# at once: a GPU figure moved by at most 2.1 % (median 0.2 %, 95th percentile 0.8 %, notes/timing.md);
# two at their 95th percentile in opposite directions move a gap by 1.6 %, the largest move with a
# typical one by 2.3 %: under 3 %. A paired host ratio moved 12 % (20 % asked). So a comparison made
# with the margin keeps the other build's ranges apart unless both figures move by more than that.
# A margin moves the edge past what a rebuild moves; it cannot remove it: a gap within a rebuild's
# move of the margin can still turn (`scripts/compare_builds.py --edges` lists those of a build).
# Targets (against, under) keep the floor alone: a target is a number the page set, not a second
# figure that moves, and on the committed data a margin there moved the edge into the cluster of
# the fast paths' forward figures (95-97 % of copy against 90 %): in simulated rebuilds the sweep's
# count of forward targets met then turned in 24 of 24 instead of 2 (notes/gpu-build.md).
MARGIN = {"gpu": REPRODUCIBILITY["gpu"], "copy": REPRODUCIBILITY["copy"], "host": PAIRED_RATIO["host"]}


# How far one figure may move between two builds of one commit before a verdict that reads it counts as
# decided by the data alone (`remembering`, below), per side: a GPU time by the largest move measured
# between two builds (2.1 %; 95th percentile 0.8 %), which also covers a share of the copy bandwidth
# (a GPU time at its 95th percentile and the copy's 1.2 % together); the copy by its 1.2 % and more; a
# host cost by 10 %, so that a paired ratio of two may move by the 20 % asked of it (12 % seen).
EDGE = {"gpu": 0.02, "copy": 0.02, "host": 0.1}


def apart(high, low, kind):
    """True where a range ending at high lies under one starting at low by at least MARGIN[kind] of
    high: the gap compare() needs (both ends positive: times, shares, ratios)."""
    return low > high * (1 + MARGIN[kind])


def stated(fig, kind):
    """(low, high): the repetitions' range, at least ±REPRODUCIBILITY[kind] of the median."""
    margin = REPRODUCIBILITY[kind] * abs(fig["median"])
    return min(fig["low"], fig["median"] - margin), max(fig["high"], fig["median"] + margin)


def place(low, high):
    """Decimal places that a range supports: the place of half its width (negative: tens, hundreds)."""
    half = (high - low) / 2
    return -math.floor(math.log10(half)) if half > 0 else 2


def _half_up(x):
    return math.floor(x + 0.5)  # 2.5 -> 3, as a reader rounds (Python's round() gives 2)


def _round(value, places, how=_half_up):
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


def times_text(fig, kind, t):
    """A multiple with the digits its stated range supports, in the language's way: 1.2×, 1.2 倍."""
    if not _finite(fig):
        return "—"
    low, high = stated(fig, kind)
    places = place(low, high)
    return t.times(_round(fig["median"], places), f".{max(places, 0)}f")


def range_text(fig, kind, t):
    """The stated range, rounded outwards at the same place: "460–500" for 464.2 to 492.9."""
    if not _finite(fig):
        return "—"
    lo, hi, _ = _outward(*stated(fig, kind), t)
    return f"{lo}–{hi}"


def _outward(low, high, t):
    """A range's ends as text, rounded outwards at the same place, and that place."""
    places = place(low, high)
    if low > 0 and _round(low, places, math.floor) <= 0:
        places += 1  # a wide range of a positive figure: its low end one digit finer, never "0"
    lo = _digits(_round(low, places, math.floor), places, t)
    return lo, _digits(_round(high, places, math.ceil), places, t), places


def text_with_unit(fig, kind, t, unit):
    """text() followed by its unit, for a sentence: the language's "not measurable" where there is
    no number."""
    return text(fig, kind, t) + unit if _finite(fig) else t("unmeasurable")


def percent_text(fig, kind, t):
    """text() of a share, in percent as the language writes it: 97%."""
    return text_with_unit(fig, kind, t, t.percent_sign)


def fixed_cost_text(fig, t, unit="", with_spread=False):
    """A fitted fixed cost, with its range in a table (with_spread) or alone in a sentence. Where the
    fit's intercept is not positive (the time grew faster than the bytes, so the line says nothing about
    a fixed cost), a table writes "—" (its caption says why) and a sentence the language's "not measurable"."""
    if not (_finite(fig) and fig["median"] > 0):
        return "—" if with_spread else t("unmeasurable")
    return with_range(fig, "gpu", t, unit) if with_spread else text(fig, "gpu", t) + unit


def with_range(fig, kind, t, unit=""):
    return f"{text(fig, kind, t)}{unit}" + t.parenthesized(range_text(fig, kind, t))


def copy_text(fig, t):
    """The copy bandwidth as every page and table quotes it: the unit before the range
    ("4000 GB/s (3920–4080)"), so that no sentence nests it in parentheses or trails it."""
    return with_range(fig, "copy", t, " GB/s")


def transform(fig, fn):
    """The figure of fn(value) for a monotonic fn: a time becomes a bandwidth, a share, a ratio."""
    runs = [fn(r) for r in fig["runs"]]
    ends = sorted((fn(fig["low"]), fn(fig["high"])))
    out = {"median": fn(fig["median"]), "low": ends[0], "high": ends[1], "runs": runs}
    return _named(out, fig.get(ID))


def ratio(a, b):
    """a / b as a figure: its runs pair the repetitions, its range takes both ranges' ends."""
    runs = [x / y for x, y in zip(a["runs"], b["runs"])]
    out = {"median": a["median"] / b["median"], "low": a["low"] / b["high"], "high": a["high"] / b["low"],
           "runs": runs}
    return _named(out, f"{a[ID]} ÷ {b[ID]}" if ID in a and ID in b else None)


def stated_ratio(a, b, kind):
    """(median, low, high) of a / b, from the two stated ranges."""
    (a_lo, a_hi), (b_lo, b_hi) = stated(a, kind), stated(b, kind)
    return a["median"] / b["median"], a_lo / b_hi, a_hi / b_lo


def compare(a, b, kind):
    """"lower" where a's whole stated range lies under b's by MARGIN, "higher" above it, else "on_par"
    (or, on its edge, the previous build's verdict: `remembering`)."""
    return _remembered("compare", _compare, (a, b), kind)


def _compare(a, b, kind):
    """"lower" where a's whole stated range lies under b's by MARGIN, "higher" above it, else "on_par".

    Host costs (PAIRED_RATIO) are compared by the range of their paired ratio a / b against 1 instead."""
    if kind in PAIRED_RATIO:
        low, high = paired_range(a, b, kind)
        return "lower" if apart(high, 1, kind) else "higher" if apart(1, low, kind) else "on_par"
    (a_lo, a_hi), (b_lo, b_hi) = stated(a, kind), stated(b, kind)
    if apart(a_hi, b_lo, kind):
        return "lower"
    if apart(b_hi, a_lo, kind):
        return "higher"
    return "on_par"


def paired_range(a, b, kind):
    """The stated range of a / b from paired repetitions: their spread, at least ±PAIRED_RATIO[kind]."""
    r = ratio(a, b)
    margin = PAIRED_RATIO[kind] * r["median"]
    return min(min(r["runs"]), r["median"] - margin), max(max(r["runs"]), r["median"] + margin)


def speedup_range(fast, other, kind):
    """(low, high) of other / fast as the verdict on fast against other reads it: from the two stated
    ranges, or, for host costs, the inverse of the paired ratio fast / other. time_verdict says
    "faster" exactly where low clears 1 by MARGIN (low > 1 + MARGIN), "slower" where high < 1 / (1 + MARGIN)."""
    if kind in PAIRED_RATIO:
        low, high = paired_range(fast, other, kind)
        return 1 / high, 1 / low
    _, low, high = stated_ratio(other, fast, kind)
    return low, high


def speedup_text(fast, other, kind, t):
    """other / fast with the range its verdict reads (speedup_range), the range rounded outwards at the
    place of its half-width: "1.41× (1.33–1.50)", "0.45× (0.36–0.56)". What a sentence quotes beside
    "faster", "on par" or "slower", so that a reader can check the verdict against the rule."""
    return _multiple_text(other["median"] / fast["median"], *speedup_range(fast, other, kind), t)


def paired_text(a, b, t, kind="host"):
    """a / b with the range of its paired repetitions (paired_range), the range that under() reads:
    "2.1× (1.7–2.6)"."""
    return _multiple_text(a["median"] / b["median"], *paired_range(a, b, kind), t)


def _multiple_text(value, low, high, t):
    lo, hi, places = _outward(low, high, t)
    return t.times(_round(value, places), f".{max(places, 0)}f") + t.parenthesized(f"{lo}–{hi}")


def under(a, b, limit, kind="host"):
    """"met" where the stated range of a / b lies at or under limit, "missed" above it, else "within"
    (or, on its edge, the previous build's verdict: `remembering`)."""
    return _remembered("under", lambda x, y, k: _under(x, y, limit, k), (a, b), kind, limit)


def _under(a, b, limit, kind):
    low, high = paired_range(a, b, kind)
    if high <= limit:
        return "met"
    if low > limit:
        return "missed"
    return "within"


def time_verdict(time, other, kind):
    """The catalogue word for a time against another: "faster", "slower" or "on_par"."""
    return {"lower": "faster", "higher": "slower", "on_par": "on_par"}[compare(time, other, kind)]


def against(fig, target, kind):
    """"met" where the stated range lies at or above the target, "missed" under it, else "within"
    (or, on its edge, the previous build's verdict: `remembering`)."""
    return _remembered("against", lambda x, k: _against(x, target, k), (fig,), kind, target)


def _against(fig, target, kind):
    low, high = stated(fig, kind)
    if low >= target:
        return "met"
    if high < target:
        return "missed"
    return "within"


def fastest(figs):
    """The index of the figure with the lowest median; where another lies within EDGE of it (a rebuild
    could swap them), the one the previous build picked (`remembering`)."""
    best = min(range(len(figs)), key=lambda i: figs[i]["median"])
    ids = [fig.get(ID) for fig in figs]
    if _ledger is None or None in ids:
        return best
    key = " | ".join(["fastest", "gpu", *ids])
    e, low = EDGE["gpu"], figs[best]["median"]
    reachable = {ids[i] for i, fig in enumerate(figs) if fig["median"] * (1 - e) <= low * (1 + e)}
    kept = _ledger.prior.get(key)
    if len(reachable) > 1 and kept in reachable:
        best = ids.index(kept)
    _ledger.note(key, ids[best])
    return best


def typical(figs):
    """The median figure of a sweep (by median): what a headline quotes instead of an extreme point."""
    ordered = sorted(figs, key=lambda f: f["median"])
    return ordered[(len(ordered) - 1) // 2]


def edge_text(kind, t):
    """EDGE[kind], the move of a figure within which a verdict keeps the previous build's, as a page
    writes it: "2%"."""
    return t.percent(100 * EDGE[kind], "g")


def floor_quotes(t):
    """The reproducibility floors and the edges as a page quotes them: {"floor_gpu": "3%", "floor_host":
    "60%", ..., "edge_gpu": "2%", ...}."""
    return ({f"floor_{kind}": t.percent(100 * share, "g") for kind, share in REPRODUCIBILITY.items()}
            | {f"edge_{kind}": edge_text(kind, t) for kind in EDGE})


def protocol_text(record, t, what="gpu"):
    """The protocol sentence under a table, from the protocol record a data set stored."""
    words = {**record, "floor": t.number(100 * REPRODUCIBILITY[what], "g")}
    return t(f"protocol_{what}").format(**words)


def under_table(record, t, *notes, timings=("gpu",)):
    """The paragraphs under a table, as lines to join: its notes (sentences, a caption among them),
    then the protocol sentence of each timing its cells show ("gpu", "host")."""
    paragraphs = [*notes, *(protocol_text(record, t, what) for what in timings)]
    return [line for paragraph in paragraphs for line in ("", paragraph)]


# --- Verdicts on an edge: what a second build of the same code keeps ----------------------------------
# A verdict reads figures that every build measures anew, so one whose figures lie within a rebuild's
# move of its rule's edge can turn between two builds of one commit however the rule is drawn: a margin
# moves an edge, it cannot remove one (issue 37: five verdicts turned between the two builds of 5fd52fa,
# the margin notwithstanding). Such a verdict -- either reading is what the data support -- keeps the
# one the previous build stated; a verdict clear of its edge is decided by its rule alone, so a change
# that moves its figures by more than a rebuild does still shows. This is hysteresis, as a thermostat
# has: a verdict moves to the other side only once its figures are past the edge by EDGE.
#
# A verdict is known across builds by the identity of the figures it reads (`identify` names each figure
# of a measurements tree by its path, as scripts/compare_builds.py pairs them), the rule and its target.
# Figures a report makes itself (a fit, a sum) have no identity: their verdicts follow the rule alone.

ID = "id"  # where a figure of a measurements tree keeps its identity (identify)
FIGURE_KEYS = {"median", "low", "high", "runs"}
OUTCOME_FIELDS = {"error"}  # scalar fields of a list item that are outcomes of a run, not what was measured


def item_identity(item):
    """The label of a list item: its identifying scalar fields, in the item's order ("op=layernorm/N=4096")."""
    fields = [f"{key}={value}" for key, value in item.items()
              if key not in OUTCOME_FIELDS and isinstance(value, (str, int, bool)) and not isinstance(value, float)]
    return "/".join(fields)


def figures(node, path=()):
    """(path, figure) for every figure inside a measurements tree: the keys on the way to it and, for
    every list item on that way, its identifying fields (item_identity) or else its index."""
    if isinstance(node, dict):
        if FIGURE_KEYS <= node.keys():
            yield path, node
            return
        for key, value in node.items():
            yield from figures(value, path + (str(key),))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            label = item_identity(value) if isinstance(value, dict) else ""
            yield from figures(value, path + (label or f"[{index}]",))


def identify(tree):
    """A copy of a measurements tree whose every figure carries its path as its identity (ID)."""
    out = copy.deepcopy(tree)
    for path, fig in figures(out):
        fig[ID] = "/".join(path)
    return out


def _named(fig, name):
    if name is not None:
        fig[ID] = name
    return fig


def scaled(fig, factor):
    """The figure with every number multiplied by factor (its identity kept)."""
    return {**fig, "median": fig["median"] * factor, "low": fig["low"] * factor, "high": fig["high"] * factor,
            "runs": [r * factor for r in fig["runs"]]}


class Ledger:
    """The verdicts one render states, by key; the previous build's (prior), which a verdict on its
    edge keeps; and the keys decided twice with different readings in one render (their verdicts follow
    the rule, and none is written for the next build)."""

    def __init__(self, prior=None):
        self.prior = dict(prior or {})
        self.stated = {}
        self.clashes = set()

    def note(self, key, verdict):
        if self.stated.get(key, verdict) != verdict:
            self.clashes.add(key)
        self.stated[key] = verdict

    def verdicts(self):
        """What the next build keeps: {key: verdict}, sorted, the clashing keys left out."""
        return {key: self.stated[key] for key in sorted(self.stated) if key not in self.clashes}


_ledger = None


@contextlib.contextmanager
def remembering(prior=None):
    """Inside it, a verdict on its edge keeps prior's (a {key: verdict} of the previous build); yields
    the Ledger, whose verdicts() the build writes for the next one. Outside it, every verdict follows
    its rule alone (the tests, placeholder pages, synthetic renders)."""
    global _ledger
    previous, _ledger = _ledger, Ledger(prior)
    try:
        yield _ledger
    finally:
        _ledger = previous


def _remembered(name, rule, figs, kind, detail=""):
    """rule(*figs, kind); where EDGE's move of the figures could turn it, the previous build's verdict."""
    verdict = rule(*figs, kind)
    ids = [fig.get(ID) for fig in figs]
    if _ledger is None or None in ids:
        return verdict
    key = " | ".join([name, kind, *ids] + ([f"{detail:g}"] if detail != "" else []))
    e = EDGE[kind]
    # every rule here is monotonic in each figure: the two opposite moves bound what a rebuild reaches
    moves = ((1 + e, 1 - e), (1 - e, 1 + e))  # zip() takes the first factor alone for one figure
    reachable = {verdict} | {rule(*(scaled(f, m) for f, m in zip(figs, move)), kind) for move in moves}
    kept = _ledger.prior.get(key)
    if len(reachable) > 1 and kept in reachable:
        verdict = kept
    _ledger.note(key, verdict)
    return verdict


# --- What a page's verdict rests on: the basis the page test reads (tests/test_verdicts.py) -------------
# A verdict a page quotes ("faster", "met") is checked against the site's rule by a test that reads it with
# its figures: the report cites, beside each verdict quote, the ranges the verdict compared and the quotes
# that show its figures to the reader; render writes them to docs/data/<set>/basis.json.

_basis = None


@contextlib.contextmanager
def citing():
    """Inside it, cite() records what each verdict quote rests on; yields the {quote key: basis} dict."""
    global _basis
    previous, _basis = _basis, {}
    try:
        yield _basis
    finally:
        _basis = previous


def cite(key, figs, kind, shows, target=None):
    """Records, where citing() is on, what the verdict quote KEY rests on: against a target (one figure:
    its stated range), or a comparison of two figures (their stated ranges; for host costs the range of
    the paired speed-up that compare() reads), and SHOWS, the quote keys that put those figures on the page."""
    if _basis is None:
        return
    if target is not None:
        entry = {"rule": "against", "target": target, "ranges": [list(stated(figs[0], kind))]}
    elif kind in PAIRED_RATIO:
        entry = {"rule": "speedup", "ranges": [list(speedup_range(*figs, kind))]}
    else:
        entry = {"rule": "compare", "ranges": [list(stated(fig, kind)) for fig in figs]}
    _basis[key] = {**entry, "kind": kind, "shows": list(shows)}
