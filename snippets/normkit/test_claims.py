"""normkit.claims and the pure parts of normkit.bench (figure, fixed_cost_fit, figure_text): what a
figure lets a page say. No CUDA. Every figure here is SYNTHETIC, made up to test the arithmetic and
the wording only: none of it is a measurement and none of it is ever published."""

import math

import pytest

from normkit import bench, claims
from normkit.words import Words

EN, ZH, VI = Words("en"), Words("zh"), Words("vi")


def fig(median, low, high, runs=None):
    """A SYNTHETIC figure; its runs are (low, median, high) unless given."""
    return {"median": median, "low": low, "high": high, "runs": list(runs or (low, median, high))}


# --- bench.figure, bench.figure_text, bench.protocol_record -------------------------------------------------

def test_figure_is_the_median_and_the_range_of_its_runs_in_their_order():
    assert bench.figure([3.0, 1.0, 2.0]) == {"median": 2.0, "low": 1.0, "high": 3.0, "runs": [3.0, 1.0, 2.0]}
    assert bench.figure([5.0]) == {"median": 5.0, "low": 5.0, "high": 5.0, "runs": [5.0]}


def test_figure_text_prints_the_median_and_the_range_with_two_decimals():
    assert bench.figure_text(fig(11.434, 11.361, 11.539)) == "11.43 µs (11.36–11.54)"
    assert bench.figure_text(fig(4227.3035, 4208.2436, 4229.3015), "GB/s") == "4227.30 GB/s (4208.24–4229.30)"
    assert bench.figure_text(fig(11.434, 11.361, 11.539), t=Words("vi")) == "11,43 µs (11,36–11,54)"


def test_protocol_record_is_the_protocols_counts_and_the_rotation():
    assert bench.protocol_record(bench.QUICK) == {"warmup_calls": 2, "samples": 3, "calls_per_sample": 2,
                                                  "repeats": 3, "host_calls": 5, "max_copies": 2}
    assert bench.protocol_record(bench.QUICK, copies=2)["copies"] == 2
    assert bench.protocol_record(bench.PROTOCOL)["repeats"] == 3


# --- stated ranges and their digits ---------------------------------------------------------------------

def test_stated_range_is_the_runs_range_widened_to_the_floor():
    # median 100, runs within ±0.1: the floor widens it to ±3 (GPU), ±60 (host), ±2 (copy)
    tight = fig(100.0, 99.9, 100.1)
    assert claims.stated(tight, "gpu") == pytest.approx((97.0, 103.0))
    assert claims.stated(tight, "host") == pytest.approx((40.0, 160.0))
    assert claims.stated(tight, "copy") == pytest.approx((98.0, 102.0))
    # runs wider than the floor are kept as they are
    wide = fig(10.0, 8.0, 13.0)
    assert claims.stated(wide, "gpu") == (8.0, 13.0)


def test_place_is_the_place_of_half_the_width():
    assert claims.place(97.0, 103.0) == 0      # half width 3: units
    assert claims.place(464.21, 492.93) == -1  # half width 14.4: tens
    assert claims.place(0.9, 1.3) == 1         # half width 0.2: tenths
    assert claims.place(1.94, 2.06) == 2       # half width 0.06: hundredths
    assert claims.place(5.0, 5.0) == 2         # no width at all: two places


def test_digits_follow_the_stated_range():
    # 478.57 with runs ±14 (the floor adds little: ±14.36): tens are the last sure digit; the range
    # is rounded outwards at the tens, 464.2 down to 460 and 492.9 up to 500
    f = fig(478.57, 478.57 - 14, 478.57 + 14)
    assert claims.text(f, "gpu", EN) == "480"
    assert claims.range_text(f, "gpu", EN) == "460–500"
    assert claims.with_range(f, "gpu", EN, " µs") == "480 µs (460–500)"


def test_the_reproducibility_floor_widens_a_tight_range():
    # the runs alone (±0.1) would support two decimals; the GPU floor (±3) leaves the units, the host
    # floor (±25) the tens
    tight = fig(100.0, 99.9, 100.1)
    assert claims.with_range(tight, "gpu", EN) == "100 (97–103)"
    assert claims.with_range(tight, "host", EN) == "100 (40–160)"


def test_numbers_take_the_languages_format():
    # median 12.345, runs within the floor: stated 11.975–12.715, half width 0.37: one decimal
    f = fig(12.345, 12.3, 12.4)
    assert claims.with_range(f, "gpu", EN, " µs") == "12.3 µs (11.9–12.8)"
    assert claims.with_range(f, "gpu", VI, " µs") == "12,3 µs (11,9–12,8)"  # Vietnamese: decimal comma
    assert claims.with_range(f, "gpu", ZH) == "12.3（11.9–12.8）"  # Chinese: full-width, no space
    # large numbers: Vietnamese groups five digits and more with a no-break space
    big = fig(12345.0, 12340.0, 12350.0)
    assert claims.with_range(big, "copy", VI) == "12\u00a0300 (12\u00a0000–12\u00a0600)"


def test_a_fit_without_a_slope_prints_a_dash():
    no_slope = fig(math.inf, 900.0, math.inf)
    assert claims.text(no_slope, "gpu", EN) == "—"
    assert claims.range_text(no_slope, "gpu", EN) == "—"
    assert claims.with_range(no_slope, "gpu", EN) == "— (—)"


def test_a_range_end_on_the_place_is_not_moved():
    # median 10, runs ±1%: stated 9.7–10.3 (the GPU floor), half width 0.3: one decimal
    assert claims.range_text(fig(10.0, 9.9, 10.1), "gpu", EN) == "9.7–10.3"


# --- transforms and ratios ------------------------------------------------------------------------------

def test_transform_of_a_decreasing_function_swaps_low_and_high():
    # a time in µs becomes GB/s of 1000 bytes... per ns: the slowest run gives the lowest bandwidth
    time_us = fig(10.0, 8.0, 12.5, runs=[8.0, 10.0, 12.5])
    gbps = claims.transform(time_us, lambda us: 1000.0 / us)
    assert gbps == {"median": 100.0, "low": 80.0, "high": 125.0, "runs": [125.0, 100.0, 80.0]}
    # an increasing function keeps them in place
    assert claims.transform(time_us, lambda us: 2 * us) == {"median": 20.0, "low": 16.0, "high": 25.0,
                                                            "runs": [16.0, 20.0, 25.0]}


def test_ratio_pairs_the_runs_and_takes_both_ranges_ends():
    a = fig(20.0, 18.0, 24.0, runs=[18.0, 20.0, 24.0])
    b = fig(10.0, 8.0, 12.0, runs=[12.0, 10.0, 8.0])
    assert claims.ratio(a, b) == {"median": 2.0, "low": 1.5, "high": 3.0, "runs": [1.5, 2.0, 3.0]}


def test_stated_ratio_reads_both_stated_ranges():
    # a: stated 18–24 (its runs), b: stated 9.7–10.3 (the floor)
    a = fig(20.0, 18.0, 24.0)
    b = fig(10.0, 9.9, 10.1)
    median, low, high = claims.stated_ratio(a, b, "gpu")
    assert (median, low, high) == pytest.approx((2.0, 18.0 / 10.3, 24.0 / 9.7))


# --- verdicts -------------------------------------------------------------------------------------------

def test_compare_is_on_par_when_the_stated_ranges_overlap():
    a = fig(100.0, 99.0, 101.0)   # stated 97–103
    near = fig(104.0, 103.5, 104.5)  # stated 100.88–107.12: overlaps
    far = fig(115.0, 114.0, 116.0)   # stated 111.55–118.45: apart by 8.3 % of 103, over the 3 % margin
    assert claims.compare(a, near, "gpu") == "on_par"
    assert claims.compare(near, a, "gpu") == "on_par"
    assert claims.compare(a, far, "gpu") == "lower"
    assert claims.compare(far, a, "gpu") == "higher"
    assert claims.time_verdict(a, far, "gpu") == "faster" and claims.time_verdict(far, a, "gpu") == "slower"
    # host costs compare by their paired ratio, at least ±20 %, whose range must clear 1 by the 20 %
    # margin: 100 / 115 = 0.87 (0.70–1.04) is on par; 100 / 160 = 0.625 (0.5–0.75) is lower, as
    # 0.75 × 1.2 = 0.9 < 1, however wide each host cost's own range is
    assert claims.compare(a, far, "host") == "on_par"
    slow = fig(160.0, 158.0, 162.0, runs=[158.0, 160.0, 162.0])
    assert claims.compare(a, slow, "host") == "lower" and claims.compare(slow, a, "host") == "higher"


def test_ranges_apart_by_less_than_the_margin_are_on_par():
    # a: stated 97–103. b's stated low end is its median × 0.97; the ranges are apart when it is above
    # 103 and the verdict is decided when it is above 103 × 1.03 = 106.09, i.e. b's median above 109.37
    a = fig(100.0, 99.5, 100.5)
    just_apart = fig(107.0, 106.5, 107.5)  # stated from 103.79: apart by 0.8 %, within the margin
    edge_below = fig(109.3, 109.0, 109.6)  # stated from 106.02: apart by 2.93 %
    edge_above = fig(109.5, 109.2, 109.8)  # stated from 106.215: apart by 3.12 %
    assert claims.compare(a, just_apart, "gpu") == "on_par" and claims.compare(just_apart, a, "gpu") == "on_par"
    assert claims.compare(a, edge_below, "gpu") == "on_par"
    assert claims.compare(a, edge_above, "gpu") == "lower" and claims.compare(edge_above, a, "gpu") == "higher"
    # the runs' own spread counts as well: wide runs of b (from 104) leave the verdict undecided
    wide = fig(115.0, 104.0, 116.0)
    assert claims.compare(a, wide, "gpu") == "on_par"
    # the margin is one more floor of each kind
    assert claims.MARGIN == {"gpu": 0.03, "copy": 0.02, "host": 0.2}


def test_an_edge_verdict_is_the_same_in_two_builds_that_move_it_a_little(monkeypatch):
    # SYNTHETIC pairs just past the edge the verdict had without the margin (stated ranges apart by
    # 0.2 %–1.1 %, as the committed data's closest "faster" verdicts were), then both medians moved
    # by up to 0.8 % (the 95th percentile of a GPU figure's move between two builds) in opposite
    # directions: without the margin some of these builds say "faster" and some "on par"; with it
    # every one says "on par"
    def verdicts(b_median):
        out = set()
        for move in (-0.008, -0.004, 0.0, 0.004, 0.008):
            a = fig(100.0 * (1 + move), 99.9 * (1 + move), 100.1 * (1 + move))
            b = fig(b_median * (1 - move), (b_median - 0.1) * (1 - move), (b_median + 0.1) * (1 - move))
            out.add(claims.compare(a, b, "gpu"))
        return out

    medians = (106.4, 106.5, 107.0)
    assert all(verdicts(m) == {"on_par"} for m in medians)
    monkeypatch.setitem(claims.MARGIN, "gpu", 0.0)  # the rule as it was: ranges apart by anything
    assert all(verdicts(m) == {"lower", "on_par"} for m in medians)


def test_against_reads_the_target_from_the_stated_range_without_a_margin():
    f = fig(100.0, 99.0, 101.0)  # stated 97–103
    assert claims.against(f, 90.0, "gpu") == "met"
    assert claims.against(f, 110.0, "gpu") == "missed"
    assert claims.against(f, 100.0, "gpu") == "within"
    assert claims.against(f, 102.0, "gpu") == "within"  # above the median, inside the range: cannot tell
    # a target is a number the page set, not a figure that moves: the floor alone decides, no margin
    assert claims.against(f, 96.0, "gpu") == "met" and claims.against(f, 104.0, "gpu") == "missed"


def test_under_reads_the_limit_from_the_paired_ratio():
    # paired ratio a / b = 1.0 with runs 0.98–1.02: its range is the ±20 % floor, 0.8–1.2
    a = fig(100.0, 98.0, 102.0, runs=[98.0, 100.0, 102.0])
    b = fig(100.0, 99.0, 101.0, runs=[100.0, 100.0, 100.0])
    assert claims.under(a, b, 1.3) == "met"
    assert claims.under(a, b, 1.1) == "within"
    assert claims.under(a, b, 0.7) == "missed"


def test_typical_is_the_median_figure_by_median():
    figs = [fig(m, m, m) for m in (30.0, 10.0, 20.0)]
    assert claims.typical(figs)["median"] == 20.0
    four = [fig(m, m, m) for m in (40.0, 10.0, 30.0, 20.0)]
    assert claims.typical(four)["median"] == 20.0  # an even count: the lower of the two middle ones


# --- the fixed-cost fit ---------------------------------------------------------------------------------

def test_fixed_cost_fit_recovers_fixed_cost_and_bandwidth():
    # SYNTHETIC exact points: time_us = 5 + bytes / 2e6, i.e. 5 µs fixed and 2e6 bytes per µs = 2000 GB/s
    sizes = (1e6, 4e6, 16e6, 64e6)
    points = [(b, bench.figure([5 + b / 2e6] * 3)) for b in sizes]
    fit = bench.fixed_cost_fit(points)
    assert set(fit) == {"fixed_us", "gb_per_s"}
    assert fit["fixed_us"]["runs"] == pytest.approx([5.0] * 3)
    assert fit["gb_per_s"]["runs"] == pytest.approx([2000.0] * 3)
    assert fit["fixed_us"]["median"] == pytest.approx(5.0) and fit["gb_per_s"]["median"] == pytest.approx(2000.0)


def test_fixed_cost_fit_is_one_fit_per_repetition():
    # SYNTHETIC: the i-th run of every point has a fixed cost of 4, 5 or 6 µs, the same 2000 GB/s
    sizes = (1e6, 4e6, 16e6)
    points = [(b, {"median": 5 + b / 2e6, "low": 4 + b / 2e6, "high": 6 + b / 2e6,
                   "runs": [f + b / 2e6 for f in (6.0, 4.0, 5.0)]}) for b in sizes]
    fit = bench.fixed_cost_fit(points)
    assert fit["fixed_us"]["runs"] == pytest.approx([6.0, 4.0, 5.0])
    assert (fit["fixed_us"]["median"], fit["fixed_us"]["low"], fit["fixed_us"]["high"]) == pytest.approx((5.0, 4.0, 6.0))
    assert fit["gb_per_s"]["runs"] == pytest.approx([2000.0] * 3)


def test_fixed_cost_fit_without_a_slope_has_no_bandwidth():
    flat = [(b, bench.figure([7.0, 7.0, 7.0])) for b in (1e6, 2e6)]
    fit = bench.fixed_cost_fit(flat)
    assert fit["fixed_us"]["median"] == pytest.approx(7.0)
    assert fit["gb_per_s"]["median"] == math.inf
    assert claims.text(fit["gb_per_s"], "gpu", EN) == "—"


def test_fixed_cost_fit_needs_two_sizes():
    one_size = [(1e6, bench.figure([5.5] * 3)), (1e6, bench.figure([5.6] * 3))]
    with pytest.raises(ValueError, match="two sizes"):
        bench.fixed_cost_fit(one_size)


# --- the words around the figures -----------------------------------------------------------------------

def test_floor_quotes_state_the_floors_and_the_edges():
    assert claims.floor_quotes(EN) == {"floor_gpu": "3%", "floor_host": "60%", "floor_copy": "2%",
                                       "edge_gpu": "2%", "edge_host": "10%", "edge_copy": "2%"}


def test_protocol_text_states_the_record_and_the_floor():
    record = bench.protocol_record(bench.QUICK)
    gpu = claims.protocol_text(record, EN)
    assert "2 warm-up replays, then the median of 3 samples of 2 replays; 3 repetitions" in gpu
    assert "±3%" in gpu and "up to 2 copies" in gpu
    host = claims.protocol_text(record, EN, "host")
    assert "the fastest of 5 plain calls" in host and "±60%" in host
    # every language gets the same counts
    for t in (ZH, VI):
        text = claims.protocol_text(record, t)
        assert all(str(n) in text for n in (2, 3)) and "±3" in text


def test_under_a_table_come_its_notes_then_the_protocol_of_each_timing_each_a_paragraph():
    record = bench.protocol_record(bench.QUICK)
    lines = claims.under_table(record, EN, "A caption.", timings=("gpu", "host"))
    assert lines == ["", "A caption.", "", claims.protocol_text(record, EN), "", claims.protocol_text(record, EN, "host")]
    assert claims.under_table(record, EN) == ["", claims.protocol_text(record, EN)]


# --- verdicts on an edge keep the previous build's (claims.remembering) ---------------------------------

def named(f, name):
    return {**f, claims.ID: name}


def test_a_verdict_on_its_edge_keeps_the_previous_builds_and_one_clear_of_it_does_not():
    # a: stated 97–103; "lower" needs b's stated low end above 103 × 1.03 = 106.09 (b's median above 109.37)
    a = named(fig(100.0, 99.5, 100.5), "a")
    just_under = named(fig(109.0, 108.8, 109.2), "b")   # on par by the rule, 0.3 % short of the edge
    far = named(fig(130.0, 129.0, 131.0), "b")          # lower by 16 %: no rebuild turns it
    key = "compare | gpu | a | b"
    with claims.remembering({key: "lower"}) as ledger:
        assert claims.compare(a, just_under, "gpu") == "lower"  # a rebuild could turn it: the previous build's
    assert ledger.verdicts() == {key: "lower"}
    with claims.remembering({key: "higher"}):  # the previous build's verdict is out of reach: the rule
        assert claims.compare(a, just_under, "gpu") == "on_par"
    with claims.remembering({key: "on_par"}) as ledger:  # clear of the edge: the rule, whatever came before
        assert claims.compare(a, far, "gpu") == "lower"
    assert ledger.verdicts() == {key: "lower"}
    # outside remembering, or for a figure with no identity, the rule alone
    assert claims.compare(a, just_under, "gpu") == "on_par"
    with claims.remembering({key: "lower"}):
        assert claims.compare(a, fig(109.0, 108.8, 109.2), "gpu") == "on_par"


def test_the_edge_is_edge_wide_on_each_figure():
    # a lower-than verdict on its edge is kept while b's median stays within the move of two figures
    # (2 × EDGE) of the rule's edge (109.37), and follows the rule beyond it
    e = claims.EDGE["gpu"]
    a = named(fig(100.0, 99.5, 100.5), "a")
    edge = 103.0 * (1 + claims.MARGIN["gpu"]) / 0.97
    key = "compare | gpu | a | b"
    for factor, kept in ((1 - 1.9 * e, True), (1 - 2.1 * e, False), (1 - 0.2 * e, True)):
        b = named(fig(edge * factor, edge * factor - 0.1, edge * factor + 0.1), "b")
        with claims.remembering({key: "lower"}):
            assert (claims.compare(a, b, "gpu") == "lower") == kept, factor


def test_targets_and_limits_keep_the_previous_builds_verdict_on_their_edge():
    f = named(fig(92.9, 92.8, 93.0), "pct")  # stated 90.1–95.7: met by the rule, 0.1 % above 90
    with claims.remembering({"against | gpu | pct | 90": "within"}) as ledger:
        assert claims.against(f, 90.0, "gpu") == "within"
        assert claims.against(f, 80.0, "gpu") == "met"  # another target: another verdict, clear of its edge
    assert ledger.verdicts() == {"against | gpu | pct | 90": "within", "against | gpu | pct | 80": "met"}
    # host: paired ratio 1.0 (0.8–1.2) against a limit of 1.25: met, within a 10 % move of each cost
    a = named(fig(100.0, 98.0, 102.0, runs=[98.0, 100.0, 102.0]), "ours")
    b = named(fig(100.0, 99.0, 101.0, runs=[100.0, 100.0, 100.0]), "torch")
    with claims.remembering({"under | host | ours | torch | 1.25": "within"}):
        assert claims.under(a, b, 1.25) == "within"
        assert claims.under(a, b, 2.0) == "met"


def test_the_fastest_of_figures_within_a_rebuilds_move_is_the_previous_builds_pick():
    liger, quack, torch = (named(fig(m, m - 0.1, m + 0.1), n)
                           for m, n in ((100.0, "liger"), (100.5, "quack"), (130.0, "torch")))
    assert claims.fastest([quack, liger, torch]) == 1
    key = "fastest | gpu | quack | liger | torch"
    with claims.remembering({key: "quack"}) as ledger:
        assert claims.fastest([quack, liger, torch]) == 0
    assert ledger.verdicts() == {key: "quack"}
    with claims.remembering({key: "torch"}):  # 30 % slower: no rebuild makes it the fastest
        assert claims.fastest([quack, liger, torch]) == 1


def test_a_key_decided_two_ways_in_one_render_is_not_kept_for_the_next():
    a, b = named(fig(100.0, 99.5, 100.5), "a"), named(fig(130.0, 129.0, 131.0), "b")
    with claims.remembering() as ledger:
        claims.compare(a, b, "gpu")
        claims.compare(claims.transform(a, lambda us: 1e4 / us), claims.transform(b, lambda us: 1e4 / us), "gpu")
    assert ledger.clashes == {"compare | gpu | a | b"} and ledger.verdicts() == {}


def test_identify_names_every_figure_by_its_path_and_transforms_keep_it():
    tree = {"rows": [{"op": "x", "N": 8, "us": fig(10.0, 9.0, 11.0)}], "copy": fig(4.0, 3.9, 4.1)}
    named_tree = claims.identify(tree)
    assert named_tree["rows"][0]["us"][claims.ID] == "rows/op=x/N=8/us" and named_tree["copy"][claims.ID] == "copy"
    assert claims.ID not in tree["copy"]  # the caller's tree is left as it was
    us = named_tree["rows"][0]["us"]
    assert claims.transform(us, lambda v: 2 * v)[claims.ID] == "rows/op=x/N=8/us"
    assert claims.ratio(us, named_tree["copy"])[claims.ID] == "rows/op=x/N=8/us ÷ copy"


@pytest.mark.parametrize("kind", ["gpu", "host"], ids=["device-time", "host-cost"])
def test_a_speedup_shown_with_its_range_tells_the_verdict_by_the_rule(kind):
    # SYNTHETIC pairs from far slower to far faster: "faster" exactly where the shown range's low end clears
    # 1 by the margin, "slower" where its high end lies under 1 / (1 + margin); else "on par"
    margin = claims.MARGIN[kind]
    for other_us in (40.0, 80.0, 95.0, 100.0, 104.0, 110.0, 130.0, 250.0):
        fast = {"median": 100.0, "low": 99.0, "high": 101.0, "runs": [99.0, 100.0, 101.0]}
        other = {"median": other_us, "low": other_us * 0.99, "high": other_us * 1.01,
                 "runs": [other_us * 0.99, other_us, other_us * 1.01]}
        low, high = claims.speedup_range(fast, other, kind)
        expected = "faster" if low > 1 + margin else "slower" if high * (1 + margin) < 1 else "on_par"
        assert claims.time_verdict(fast, other, kind) == expected, (kind, other_us)
    assert claims.speedup_text(fast, other, kind, EN).startswith("2.5×")
