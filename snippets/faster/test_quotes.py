"""faster.quotes: every number and sentence the "Going faster" pages quote, from SYNTHETIC
measurements (faster.synthetic). The expected strings are worked out by hand in the comments."""

import json

import pytest

from faster import benchmark as speed
from faster import report
from faster.quotes import _drops_sentence, entries_beside, quotes, widths_sentence
from faster.synthetic import BETWEEN_PCT, COPY, SWEEP_N, fig, read_text, synthetic_measurements, synthetic_run
from normkit.words import ENGLISH, Words

# the plots keep Chinese text as SVG text, drawn by the browser: matplotlib's font has no CJK glyphs
pytestmark = pytest.mark.filterwarnings("ignore:Glyph .* missing from font")


def test_the_walks_chunks_are_a_sentence_even_where_the_run_has_no_walked_width():
    # the odd widths a run measures are its between widths (the sweep's are even): the full run's 4097,
    # 8193, 12289, 16383 and 16385 take chunks of 1024 to 4096 lanes (N / 4, clamped); the quick run's
    # 513 is narrower than the walk's narrowest width (WALK_MIN_COLS); the hand-made set's 4097 alone, 1024
    full, quick = (quotes(synthetic_run(plan)) for plan in (speed.FULL, speed.QUICK_PLAN))
    assert full["walk_chunks"] == "from 1024 to 4096 lanes at the odd widths this run measured"
    assert quick["walk_chunks"] == ENGLISH("walk_chunks_none") == "this run measured no odd width wide enough to be walked"
    assert quotes(synthetic_measurements())["walk_chunks"] == "1024 lanes at the odd widths this run measured"


@pytest.mark.parametrize("widths, expected", [
    ([32768], ("Another provider is faster forward+backward, by ranges at least 3% apart, at N = 32768 only.",
               "只在 32768 这一个宽度上，有其他实现的前向+反向明显快于快速内核（两者范围相隔至少 3%）。",
               "Chỉ ở N = 32768 mới có bản cài đặt khác chạy lượt xuôi + lượt ngược nhanh hơn, với khoảng đo "
               "của hai bên cách nhau ít nhất 3%.")),
    ([16384, 32768], ("Another provider is faster forward+backward, by ranges at least 3% apart, at N = 16384 and 32768.",
                      "在 2 个宽度上，有其他实现的前向+反向明显快于快速内核（两者范围相隔至少 3%）：16384 和 32768。",
                      "Có bản cài đặt khác chạy lượt xuôi + lượt ngược nhanh hơn, với khoảng đo của hai bên cách nhau "
                      "ít nhất 3%, ở 2 độ rộng: N = 16384 và 32768.")),
])
def test_one_width_behind_is_named_as_the_one_not_counted(widths, expected):
    # one width: "only at 32768", never "at 1 width: 32768"; several are counted and listed
    assert tuple(widths_sentence("sweep_behind", widths, Words(lang)) for lang in ("en", "zh", "vi")) == expected


def test_a_width_past_the_table_is_below_the_one_entry_measured_beside_it(monkeypatch):
    # 16385 lies past the launch table's widest entry: of the multiples of 256 beside it only 16384 is
    # measured, and 26 % (25.2–26.8) lies under its 95 % by far more than the margin; 16384 is an entry
    # itself, never named
    monkeypatch.setitem(BETWEEN_PCT, 16384, {"fast": (98.0, 95.0), "torch": (61.0, 46.0)})
    monkeypatch.setitem(BETWEEN_PCT, 16385, {"fast": (85.0, 26.0), "torch": (30.0, 32.0)})
    assert entries_beside(16385, 256) == (16384, 16640) and entries_beside(16384, 256) == ()
    q = quotes(synthetic_measurements())
    assert q["ln_between_below_sentence"] == ("Forward+backward falls below each launch-table entry measured beside "
                                              "the width, by ranges at least 3% apart, at N = 4097 and 16385.")
    zh = quotes(synthetic_measurements(), Words("zh"))
    assert zh["ln_between_below_sentence"] == ("在 2 个宽度上，前向+反向比启动配置表中本次实测过的每个相邻条目都慢"
                                               "（范围都相隔至少 3%）：4097 和 16385。")


def test_quotes_are_strings_the_pages_can_quote(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    q = json.loads(read_text(tmp_path / "quotes.json"))
    assert all(isinstance(v, str) for v in q.values())
    assert q["gpu"] == "Synthetic GPU" and q["sm_count"] == "100" and q["l2_mb"] == "50"
    # Little's law at 4000 GB/s: 4.0 MB on the way per µs of latency, 4e6 / 100 SMs / 1024 = 39 KiB each
    assert (q["inflight_mb_per_us"], q["inflight_kib_per_sm_per_us"]) == ("4.0", "39")
    assert q["copy_gbps"] == "4000 GB/s (3920–4080)"
    assert (q["target_fwd"], q["target_fwdbwd"], q["sweep_total"]) == ("92%", "85%", "2^{27}")
    assert (q["sweep_n_min"], q["sweep_n_max"], q["sweep_n_count"]) == ("1024", "16384", "5")
    assert (q["timing_samples"], q["timing_repeats"], q["timing_host_calls"]) == ("20", "3", "200")
    assert q["floor_gpu"] == "3%" and q["floor_host"] == "60%"
    # minimum traffic at 32768x4096 bf16: 2*M*N*2 B = 537 MB, 134 µs at 4000 GB/s; fwd+bwd 1342 MB, 336 µs
    assert q["ln_min_fwd_mb_32768x4096"] == "537" and q["ln_min_fwd_us_32768x4096"] == "134"
    assert q["ln_min_fwdbwd_mb_32768x4096"] == "1342" and q["ln_min_fwdbwd_us_32768x4096"] == "336"
    # the targets
    assert q["ln_fast_fwd_pct_32768x4096"] == "95%" and q["ln_fast_fwdbwd_pct_32768x4096"] == "80%"
    assert q["ln_fast_fwd_us_32768x4096"] == "141" and q["ln_fast_fwdbwd_us_32768x4096"] == "420"
    assert q["ln_fast_fwd_target_32768x4096"] == "met" and q["ln_fast_fwdbwd_target_32768x4096"] == "missed"
    assert q["ln_fast_fwdbwd_target_32768x8192"] == "within the spread"
    assert q["ln_targets_sentence"] == ("Of the 4 targets, 2 met by the whole range of its figure, 1 missed by "
                                        "the whole range and 1 inside the range, where this run cannot tell.")
    # the fastest other provider (lowest median time): torch.compile; at 4096 the ranges overlap, at 8192
    # the fast kernel's 270–287 µs lies under torch.compile's 325–346
    assert q["ln_best_other_fwd_32768x4096"] == "torch.compile" and q["ln_best_other_fwd_pct_32768x4096"] == "92%"
    assert q["ln_best_other_fwdbwd_pct_32768x4096"] == "82%"
    assert q["ln_fast_fwd_vs_best_other_32768x4096"] == "on par"
    assert q["ln_fast_fwd_vs_best_other_32768x8192"] == "faster"
    assert q["ln_fwd_vs_best_other_sentence"] == (
        "The forward alone is on par at 32768×4096 (95% against torch.compile's 92%) and faster at 32768×8192 "
        "(96% against torch.compile's 80%).")
    assert q["rms_best_other_fwdbwd_32768x4096"] == "torch.compile"
    assert "rms_teaching_fwd_pct_32768x4096" not in q  # refused: nothing to quote
    # the launch and the partial rows: 200 programs x 4096 x 4 B x (dW, dB) = 6.6 MB, 1.0 % of 1342 MB moved
    # twice; RMSNorm has dW alone; the teaching RMSNorm's M x N fp32 partial buffer: 537 MB
    assert q["ln_partial_mb_32768x4096"] == "6.6" and q["ln_partial_share_32768x4096"] == "1.0%"
    assert q["rms_partial_mb_32768x4096"] == "3.3" and q["rms_teaching_partial_mb_32768x4096"] == "537"
    assert q["ln_prefetch_32768x4096"] == "PREFETCH=1" and q["ln_bwd_programs_32768x4096"] == "200"
    # the profile
    assert q["ln_fast_host_us_32768x4096"] == "900" and q["ln_fast_gpu_us_32768x4096"] == "400"
    assert q["ln_fast_launches_32768x4096"] == "3"
    # no "limited by" verdict: the profile's host time is too noisy for one (notes/timing.md)
    assert not any("_bound_" in key for key in q)
    # each kernel's time per repetition, summed by name: fwd 99/100/102, bwd 290/295/297, reduce 4.9/5.0/5.1
    assert q["ln_fast_fwd_kernel_us_32768x4096"] == "100" and q["ln_fast_bwd_kernel_us_32768x4096"] == "295"
    assert q["ln_fast_reduce_kernel_us_32768x4096"] == "5.0" and q["rms_fast_reduce_kernel_us_32768x8192"] == "10.0"
    assert q["rms_fast_fwd_kernel_us_32768x8192"] == "200" and q["rms_fast_bwd_kernel_us_32768x8192"] == "570"
    assert "rms_torch_host_us_32768x8192" not in q  # the profile that failed
    # the launch-bound shape: GPU time 5.2 / 4.2 = 1.24 (ranges apart), 8.8 / 8.4 = 1.05 (ranges overlap);
    # host cost 31 / 82 = 0.38: the fast path costs the host more
    assert q["small_shape"] == "128×257" and q["small_dtype"] == "float32"
    assert q["ln_fast_small_fwd_gpu_us"] == "4.2" and q["ln_fast_small_fwdbwd_host_us"] == "300"
    # each with the range its verdict reads: faster where the low end clears 1 by the 3 % margin
    assert q["ln_small_fwd_gpu_vs_torch"] == "1.24× (1.16–1.32)" and q["ln_small_fwd_gpu_verdict"] == "faster"
    assert q["ln_small_fwdbwd_gpu_vs_torch"] == "1.05× (0.98–1.12)" and q["ln_small_fwdbwd_gpu_verdict"] == "on par"
    # host 82 against 31, paired: a ratio of 0.38, its range (the paired one, at least ±20 %) all under 1/1.2
    assert q["ln_small_fwd_host_vs_torch"] == "0.38× (0.31–0.48)" and q["ln_small_fwd_host_verdict"] == "slower"
    # dW error
    assert q["dw_lock_vs_fast"] == "7.00×" and q["dw_lock_buffer_in_input_dtype_rel"] == "2.0\u00a0×\u00a010⁻²"
    assert q["dw_ref_max"] == "600" and q["dw_lock_group"] == "96"
    assert q["dw_half_ulp"] == "2"  # bf16 near 600: exponent 9, 8 significant bits
    # not installed: no figure of it to quote, only the sentence that says so
    assert sorted(k for k in q if k.startswith(("ln_liger", "rms_liger", "dw_liger"))) == [
        "ln_liger_drops_sentence", "ln_liger_sweep_fwd", "rms_liger_drops_sentence", "rms_liger_sweep_fwd"]
    assert q["ln_liger_drops_sentence"] == q["rms_liger_drops_sentence"] == ""
    assert q["ln_liger_sweep_fwd"] == "Liger-Kernel was not installed in this run, so the tables leave it out."


def test_sweep_quotes_count_targets_from_the_stated_ranges(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    q = json.loads(read_text(tmp_path / "quotes.json"))
    assert q["ln_fast_gpu_fwd_pct_n1024"] == "91%" and q["ln_fast_gpu_fwdbwd_pct_n4096"] == "88%"
    assert q["ln_fast_gpu_lowest_fwd_pct"] == "91%" and q["ln_fast_gpu_lowest_fwdbwd_pct"] == "78%"
    assert not any("worst" in key for key in q)  # which width is lowest can change between builds
    # fwd+bwd 80, 86, 88, 84, 78: the median is 84
    assert q["ln_fast_gpu_fwdbwd_pct_typical"] == "84%"
    assert q["ln_teaching_gpu_fwdbwd_pct_typical"] == "22.0%"
    # fwd against 90 %: 91 (88.3–93.7) within, 93, 95, 96, 94 met (targets take no margin)
    # fwd+bwd against 85 % up to N = 8192 and 75 % above: 80 missed, 86 within, 88 met, 84 (81.5–86.5)
    # within, 78 at 16384 (75.7–80.3) met
    assert q["ln_sweep_tallies"] == ("forward meets its target at 4 and has it inside its range at 1 of the 5 widths, "
                                     "and its forward+backward meets its target at 2, misses it at 1 and has it "
                                     "inside its range at 2 of the 5 widths")
    # torch.compile's fwd+bwd at 2048 (95 %: 342.6–363.8 µs) lies under the fast kernel's (86 %: 378.5–401.9 µs)
    # by 4 %, over the 3 % margin
    assert q["ln_sweep_fwdbwd_behind_sentence"] == ("Another provider is faster forward+backward, by ranges "
                                                   "at least 3% apart, at N = 2048 only.")
    assert q["rms_sweep_fwdbwd_behind_sentence"] == ENGLISH("sweep_behind_none").format(margin="3%")
    # the 80 % that misses its 85 % is the fast kernel's fwd+bwd at 1024
    assert q["ln_sweep_fwdbwd_missed_sentence"] == "The forward+backward target is missed at N = 1024 only."
    assert q["ln_compile_gpu_fwdbwd_pct_n2048"] == "95%"


def test_quotes_in_every_language(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    en = json.loads(read_text(tmp_path / "quotes.json"))
    zh = json.loads(read_text(tmp_path / "quotes.zh.json"))
    vi = json.loads(read_text(tmp_path / "quotes.vi.json"))
    assert en.keys() == zh.keys() == vi.keys()
    assert zh["ln_small_fwd_gpu_vs_torch"] == "1.24 倍（1.16–1.32）" and zh["dw_lock_vs_fast"] == "7.00 倍"
    assert zh["ln_fast_fwd_target_32768x4096"] == "达到" and zh["ln_fast_fwd_vs_best_other_32768x8192"] == "更快"
    # "none" said once: a sentence, not "0 个：无"
    assert zh["rms_sweep_fwdbwd_behind_sentence"] == "在这些宽度上，没有哪个其他实现的前向+反向明显快于快速内核（两者范围相隔至少 3%）。"
    assert zh["ln_sweep_fwdbwd_behind_sentence"] == "只在 2048 这一个宽度上，有其他实现的前向+反向明显快于快速内核（两者范围相隔至少 3%）。"
    assert vi["ln_between_below_sentence"] == ("Chỉ ở N = 4097, lượt xuôi + lượt ngược mới chậm hơn mọi mục lân cận đã đo "
                                               "trong bảng cấu hình khởi chạy, với khoảng đo cách nhau ít nhất 3%.")
    # sizes a reader passes to code: the classes' lanes as plain digits in every language
    assert vi["classes_lanes_16"] == zh["classes_lanes_16"] == en["classes_lanes_16"] == "1024–16384"
    assert vi["ln_fast_small_fwd_gpu_us"] == "4,2" and vi["ln_small_fwd_gpu_vs_torch"] == "1,24 lần (1,16–1,32)"
    assert vi["ln_teaching_gpu_fwdbwd_pct_typical"] == "22,0%" and vi["ln_partial_mb_32768x4096"] == "6,6"


def test_designs_in_another_dtype_are_rows_and_quotes_of_their_own():
    m = synthetic_measurements()
    m["results"]["designs"] += [{"op": "layernorm", "design": d, "N": 16384, "dtype": "float32", "M": 2**26 // 16384,
                                 "config": [d], "bwd_gpu_us": fig(us, us - 1, us + 1)}
                                for d, us in (("chunked", 500.0), ("staged", 300.0))]
    md = report.designs_md(m["results"], "layernorm", COPY, ENGLISH)
    lines = [line for line in md.splitlines() if line.startswith("| ")]
    assert lines[-1].startswith("| 16384 · float32 | — |")  # after the run's own dtype, no row design
    # fp32: 4 bytes an element, at half the rows
    staged_pct = 100 * 3 * (2**26 // 16384) * 16384 * 4 / 300e3 / COPY
    q = quotes(m, ENGLISH)
    assert q["ln_design_staged_bwd_pct_n16384_fp32"] == f"{staged_pct:.0f}%"
    assert q["ln_design_staged_vs_chunked_n16384_fp32"] == ENGLISH("faster")
    assert q["design_n_list"] == "2304 and 4352"  # the run's own dtype only


def test_a_provider_package_forward_over_the_sweep_is_one_sentence_present_or_not(tmp_path):
    m = synthetic_measurements()
    sweep = m["results"]["sweep"]["layernorm"]
    sweep += [{**r, "provider": "quack"} for r in sweep if r["provider"] == "fast"]
    q = quotes(m, ENGLISH)
    fast = [q[f"ln_fast_gpu_fwd_pct_n{n}"] for n in SWEEP_N]
    low, high = min(fast, key=lambda p: float(p.rstrip("%"))), max(fast, key=lambda p: float(p.rstrip("%")))
    assert q["ln_quack_sweep_fwd"] == f"Over the sweep, QuACK's forward runs at {low} to {high} of the copy bandwidth in this run."
    # the run without the package says so, in a sentence of the page's language
    assert q["rms_quack_sweep_fwd"] == "QuACK was not installed in this run, so the tables leave it out."
    report.write(m, tmp_path)
    zh = json.loads(read_text(tmp_path / "quotes.zh.json"))
    assert zh["rms_liger_sweep_fwd"] == "本次运行没有安装 Liger-Kernel，所以表中没有它。"
    assert zh["ln_quack_sweep_fwd"].startswith("QuACK 的前向在本次扫描中从拷贝带宽的 ")


def _points(medians):
    """Sweep points whose forward figures have these medians and a ±1 range."""
    return [(1024 * (i + 1), {"fwd": {"median": m, "low": m - 1, "high": m + 1}}) for i, m in enumerate(medians)]


@pytest.mark.parametrize("medians, expected", [
    # typical (the median of five) 90: half is 45, and no figure's stated range reaches under it
    ((90, 91, 88, 92, 89), "QuACK's forward stays above half its typical 90% at every width of the sweep."),
    # one figure at 7 (range to 8, stated ±3%: at most 8) lies under 45; the typical of five is 89
    ((90, 7, 88, 92, 89), "QuACK's forward drops to 7% at N = 2048, less than half its typical 89%."),
    # two: the span from the lower to the higher; a figure whose range reaches 45 (44: up to 45.3) is not a drop
    ((7, 90, 6, 92, 44, 95, 91), "QuACK's forward drops to 6% to 7% at 2 widths, N = 1024 and 3072: less than "
                                 "half its typical 90%."),
])
def test_a_providers_deep_drops_are_said_per_case_never_at_zero_widths(medians, expected):
    assert _drops_sentence(_points(medians), "QuACK", ENGLISH) == expected
