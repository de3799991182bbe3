"""report.write renders tables, a plot and quotes. The numbers here are SYNTHETIC: they test the
rendering only and are never published.

Every figure is {"median", "low", "high", "runs"} (normkit.bench); what a page states is read from
the figure's stated range (normkit.claims: the runs' range, at least ±3 % of the median for GPU time,
±60 % for host cost, ±2 % for the copy bandwidth). The expected strings below are worked out by hand
from the synthetic input, in the comments beside them.
"""

import json
import re

import pytest

from layernorm import benchmark, report
from layernorm.ops import REDUCE_BLOCK_M, REDUCE_BLOCK_N
from normkit.testing import key_paths

M = 4096
SYNTHETIC_NS = [1024, 2048, 8192]
ELEMENTS_MOVED = {"forward": 2, "backward": 3}
PROTOCOL = {"warmup_calls": 10, "samples": 20, "calls_per_sample": 10, "repeats": 3, "host_calls": 200,
            "max_copies": 8}
# SYNTHETIC GPU µs per call: (median, low, high) for each pass, provider and N
SYNTHETIC_US = {
    ("forward", "triton"): {1024: (10.2, 10.1, 10.3), 2048: (24.0, 23.8, 24.2), 8192: (61.0, 60.5, 61.5)},
    ("forward", "torch"): {1024: (20.4, 20.2, 20.6), 2048: (24.5, 24.3, 24.7), 8192: (51.0, 50.5, 51.5)},
    ("backward", "triton"): {1024: (30.0, 28.0, 33.0), 2048: (40.0, 39.8, 40.2), 8192: (120.0, 119.0, 121.0)},
    ("backward", "torch"): {1024: (20.5, 20.3, 20.7), 2048: (48.0, 47.8, 48.2), 8192: (160.0, 158.0, 162.0)},
}


def fig(median, low, high):
    """A SYNTHETIC figure of three repetitions."""
    return {"median": median, "low": low, "high": high, "runs": [low, median, high]}


def synthetic_measurements():
    rows = [{"mode": mode, "provider": provider, "N": n, "us": fig(*SYNTHETIC_US[(mode, provider)][n]),
             "bytes": ELEMENTS_MOVED[mode] * M * n * 2}
            for n in SYNTHETIC_NS for mode in ("forward", "backward") for provider in ("triton", "torch")]
    fits = {  # SYNTHETIC fixed-cost fits; forward/torch found no slope (its bandwidth is infinite)
        "forward/triton": {"fixed_us": fig(5.0, 4.9, 5.1), "gb_per_s": fig(3000.0, 2900.0, 3100.0)},
        "forward/torch": {"fixed_us": fig(3.5, 3.4, 3.6), "gb_per_s": fig(float("inf"), 900.0, float("inf"))},
        "backward/triton": {"fixed_us": fig(20.0, 19.0, 21.5), "gb_per_s": fig(2500.0, 2400.0, 2600.0)},
        "backward/torch": {"fixed_us": fig(6.0, 5.9, 6.1), "gb_per_s": fig(2300.0, 2250.0, 2350.0)},
    }
    host = {"forward/triton": fig(100.0, 96.0, 108.0), "forward/torch": fig(21.0, 20.5, 21.5),
            "backward/triton": fig(240.0, 200.0, 300.0), "backward/torch": fig(96.0, 94.0, 98.0)}
    copy = fig(4000.0, 3990.0, 4010.0)
    parts = [{"part": part, "N": n, "group_size": groups, "us": fig(*SYNTHETIC_PARTS[n][part])}
             for n, groups in ((1024, 256), (8192, 96)) for part in ("zeroing", "kernel1", "kernel2", "both")]
    sweep = [{"N": 8192, "group_size": groups, "us": fig(*us)} for groups, us in SYNTHETIC_SWEEP.items()]
    return {
        "provenance": {"gpu": "Synthetic GPU", "copy": copy, "copy_gb_per_s": copy["median"], "quick": True},
        "results": {"M": M, "dtype": "float16", "eps": 1e-5, "n_values": SYNTHETIC_NS,
                    "group_size": {"1024": 256, "2048": 128, "8192": 96}, "elements_moved": ELEMENTS_MOVED,
                    "protocol": PROTOCOL, "rows": rows, "host": host, "host_n": SYNTHETIC_NS[0], "fits": fits,
                    "parts": parts, "group_sweep": sweep},
    }


# SYNTHETIC GPU µs of the backward's parts at two widths, and of the backward at three GROUP_SIZEs
SYNTHETIC_PARTS = {
    1024: {"zeroing": (2.0, 1.98, 2.02), "kernel1": (20.0, 19.9, 20.1), "kernel2": (5.0, 4.95, 5.05),
           "both": (27.0, 26.8, 27.2)},
    8192: {"zeroing": (2.0, 1.98, 2.02), "kernel1": (100.0, 99.5, 100.5), "kernel2": (10.0, 9.9, 10.1),
           "both": (112.0, 111.5, 112.5)},
}
SYNTHETIC_SWEEP = {32: (150.0, 149.0, 151.0), 96: (112.0, 111.5, 112.5), 4096: (300.0, 298.0, 302.0)}


# --- SYNTHETIC runs of the benchmark's own plans (layernorm.benchmark.FULL and QUICK_PLAN): a figure
# for every task key, laid out by layernorm.benchmark.assemble as a GPU run's are, so that the report
# meets each run's real widths on a CPU; the hand-made data set above pins the exact strings.
RUN_FIXED_US = 5.0  # SYNTHETIC: every call's fixed cost
RUN_GBPS = {"triton": 2500.0, "torch": 2000.0}  # SYNTHETIC bandwidth at large sizes
RUN_HOST_US = {"triton": 100.0, "torch": 20.0}


def _run_figure(plan, key):
    mode, provider, n = key
    if mode in ("part", "group"):  # SYNTHETIC: a backward's bytes at the Triton bandwidth, any part
        us = RUN_FIXED_US + benchmark.ELEMENTS_MOVED["backward"] * plan.M * n * 2 / (RUN_GBPS["triton"] * 1e3)
    elif n == "host":
        us = RUN_HOST_US[provider]
    else:
        us = RUN_FIXED_US + benchmark.ELEMENTS_MOVED[mode] * plan.M * n * 2 / (RUN_GBPS[provider] * 1e3)
    return fig(us, 0.99 * us, 1.01 * us)


def synthetic_run(plan):
    """The data set layernorm.benchmark.measure would return for plan, SYNTHETIC figures, with the
    provenance the report reads."""
    results = benchmark.assemble(plan, {key: _run_figure(plan, key) for key in benchmark.task_keys(plan)})
    copy = fig(4000.0, 3990.0, 4010.0)
    return {"provenance": {"gpu": "Synthetic GPU", "copy": copy, "copy_gb_per_s": copy["median"], "quick": plan.quick},
            "results": results}


@pytest.mark.parametrize("plan", [benchmark.FULL, benchmark.QUICK_PLAN], ids=["full", "quick"])
def test_a_run_of_each_plan_renders(plan, tmp_path):
    measurements = synthetic_run(plan)
    json.dumps(measurements, allow_nan=False)  # the data set is stored as JSON
    report.write(measurements, tmp_path)
    q = json.loads(_read(tmp_path / "quotes.json"))
    assert q["n_count"] == str(len(plan.n_values)) and q["m"] == str(plan.M)
    # one row per width in each pass
    widths = re.findall(r"^\| (\d+) \|", _read(tmp_path / "benchmark.md"), re.MULTILINE)
    assert widths == [str(n) for n in plan.n_values] * 2


def test_the_hand_made_data_set_has_a_runs_layout():
    # the exact strings above are worked out on a hand-made data set: every key it has, a run's
    # layout (assemble's) has too, so the two cannot drift apart
    assert key_paths(synthetic_measurements()) <= key_paths(synthetic_run(benchmark.FULL))


LANGS = ("", ".zh", ".vi")
# the plots keep Chinese text as SVG text, drawn by the browser: matplotlib's font has no CJK glyphs
pytestmark = pytest.mark.filterwarnings("ignore:Glyph .* missing from font")


def _read(path):
    return path.read_text(encoding="utf-8")


def test_write_renders_every_file_in_every_language(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    in_every_language = ("bandwidth{}.svg", "benchmark{}.md", "fixed-cost{}.md", "group-size{}.md", "quotes{}.json",
                         "backward-parts{}.md", "group-sweep{}.md")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["basis.json"] + [name.format(suffix) for name in in_every_language for suffix in LANGS])
    svg = _read(tmp_path / "bandwidth.svg")
    assert svg.lstrip().startswith("<?xml") and "<dc:date>" not in svg
    assert "<text" in svg and "Synthetic GPU · M = 4096 · float16" in svg  # text stays text
    assert "拷贝" in _read(tmp_path / "bandwidth.zh.svg") and "sao chép" in _read(tmp_path / "bandwidth.vi.svg")


def test_benchmark_table_states_figures_ranges_and_verdicts(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    table = _read(tmp_path / "benchmark.md")
    assert "**fwd** · M = 4096 · float16" in table and "**bwd** · M = 4096 · float16" in table
    # forward, N = 1024: Triton 10.2 µs, stated 9.894–10.506 (±3 %): one decimal, 9.8–10.6 outwards;
    # torch 20.4, stated 19.788–21.012. Bytes 2*4096*1024*2 = 16777216 in 10.2 µs = 1644.8 GB/s,
    # 41.1 % of 4000 (stated 39.9–42.4: units). torch / Triton = 2.00 (stated 1.94–2.06), ranges apart: faster
    assert "| 1024 | 10.2 (9.8–10.6) | 20.4 (19.7–21.1) | 41% | 2.00× · faster |" in table
    # N = 2048: 24.0 (23.28–24.72) against 24.5 (23.765–25.235): the ranges overlap, on par
    # (33554432 B in 24 µs: 35.0 %; ratio 24.5/24 = 1.0208, stated 0.990–1.051: two decimals)
    assert "| 2048 | 24.0 (23.2–24.8) | 24.5 (23.7–25.3) | 35% | 1.02× · on par |" in table
    # N = 8192: 61 (59.17–62.83) against 51 (49.47–52.53): Triton slower; ratio 51/61 = 0.836
    assert "| 8192 | 61 (59–63) | 51 (49–53) | 55% | 0.84× · slower |" in table
    # backward, N = 1024: Triton's runs 28–33 are wider than the floor: the range is theirs, units;
    # 3*4096*1024*2 = 25165824 B in 30 µs = 21.0 %; 20.5/30 = 0.683 (stated 0.615–0.739)
    assert "| 1024 | 30 (28–33) | 20.5 (19.8–21.2) | 21% | 0.68× · slower |" in table
    # N = 2048: 40 (38.8–41.2) against 48 (46.56–49.44): faster; 50331648 B in 40 µs = 31.46 %
    # (stated 30.51–32.40: one decimal)
    assert "| 2048 | 40 (38–42) | 48 (46–50) | 31.5% | 1.20× · faster |" in table
    assert "| 8192 | 120 (116–124) | 160 (155–165) | 42% | 1.33× · faster |" in table
    # the protocol sentence comes from the record the data set stored
    assert "10 warm-up replays, then the median of 20 samples of 10 replays; 3 repetitions" in table
    assert "up to 8 copies" in table


def test_fixed_cost_table_and_host_costs(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    table = _read(tmp_path / "fixed-cost.md")
    assert "| pass | provider | fixed µs per call | GB/s at large sizes | host µs, N = 1024 |" in table
    # fixed 5.0 stated 4.85–5.15; 3000 GB/s stated 2900–3100 (half width 100: hundreds);
    # host 100 stated 40–160 (the host floor, ±60 %): tens
    assert "| fwd | Triton | 5.0 (4.8–5.2) | 3000 | 100 (40–160) |" in table
    # a fit that found no slope has no bandwidth to state
    assert "| fwd | torch | 3.5 (3.3–3.7) | — | 20 (8–34) |" in table  # host 21: 8.4–33.6, tens would floor the low end to 0
    # fixed 20 with runs 19–21.5 (wider than the floor); host 240 stated 96–384: hundreds would floor
    # the low end to 0, so the ends take tens
    assert "| bwd | Triton | 20 (19–22) | 2500 | 200 (90–390) |" in table
    # host 96 stated 38.4–153.6: tens, so 96 prints as 100
    assert "| bwd | torch | 6.0 (5.8–6.2) | 2300 | 100 (30–160) |" in table
    assert "the fastest of 200 plain calls" in table and "±60%" in table
    # the fit's caption, the GPU protocol and the host protocol: three paragraphs
    assert "(the time grows faster than the bytes).\n\nGPU time per call" in table
    assert "in the L2 cache.\n\nHost cost per call" in table
    vi = _read(tmp_path / "fixed-cost.vi.md")
    assert "| lượt xuôi | Triton | 5,0 (4,8–5,2) | 3000 | 100 (40–160) |" in vi  # Vietnamese: decimal comma


def test_tables_in_every_language(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    zh = _read(tmp_path / "benchmark.zh.md")
    assert "| 1024 | 10.2（9.8–10.6） | 20.4（19.7–21.1） | 41% | 2.00 倍 · 更快 |" in zh  # Chinese multiples: 倍
    assert "| 2048 | 24.0（23.2–24.8） | 24.5（23.7–25.3） | 35% | 1.02 倍 · 持平 |" in zh
    vi = _read(tmp_path / "benchmark.vi.md")
    assert "| 1024 | 10,2 (9,8–10,6) | 20,4 (19,7–21,1) | 41% | 2,00 lần · nhanh hơn |" in vi
    assert "| 2048 | 40 (38–42) | 48 (46–50) | 31,5% | 1,20 lần · nhanh hơn |" in vi
    # the same rows in every language: only words and number formats differ
    rows = [[line for line in _read(tmp_path / f"benchmark{lang}.md").splitlines() if line.startswith("| 8192 ")]
            for lang in LANGS]
    assert rows[0] == ["| 8192 | 61 (59–63) | 51 (49–53) | 55% | 0.84× · slower |",
                       "| 8192 | 120 (116–124) | 160 (155–165) | 42% | 1.33× · faster |"]
    assert [r.replace("更慢", "slower").replace("更快", "faster").replace(" 倍", "×").replace("（", " (")
            .replace("）", ")") for r in rows[1]] == rows[0]


def test_group_size_table_is_computed_from_the_code(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    table = _read(tmp_path / "group-size.md")
    # M = 4096 fp16. N = 1024: 256 groups, 4096/256 = 16 updates per lock, 2*256*1024*4 B = 2 MiB of
    # partial rows against 4096*1024*2 B = 8 MiB of x; N = 8192: 96 groups, ceil(4096/96) = 43
    assert "| 1024 | 256 | 16 | 2 MiB | 8 MiB |" in table
    assert "| 4096 | 128 | 32 | 4 MiB | 32 MiB |" in table
    assert "| 8192 | 96 | 43 | 6 MiB | 64 MiB |" in table
    assert "| 16384 | 64 | 64 | 8 MiB | 128 MiB |" in table


def test_quotes_are_the_tables_numbers(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    q = json.loads(_read(tmp_path / "quotes.json"))
    assert all(isinstance(v, str) for v in q.values())
    assert q["gpu"] == "Synthetic GPU" and q["m"] == "4096" and q["dtype"] == "float16"
    assert (q["n_count"], q["n_min"], q["n_max"], q["host_n"]) == ("3", "1024", "8192", "1024")
    # copy 4000 with runs 3990–4010: the copy floor (±2 %) states 3920–4080, tens
    assert q["copy_gb_per_s"] == "4000 GB/s (3920–4080)"
    assert q["fwd_triton_us_n1024"] == "10.2 µs" and q["fwd_torch_us_n1024"] == "20.4 µs"
    assert q["fwd_speedup_n1024"] == "2.00×" and q["fwd_verdict_n1024"] == "faster"
    assert q["fwd_verdict_n2048"] == "on par" and q["fwd_verdict_n8192"] == "slower"
    assert q["fwd_pct_copy_n1024"] == "41%"
    # torch at N = 1024: 16777216 B in 20.4 µs = 20.56 % (stated 19.94–21.18: one decimal)
    assert q["fwd_torch_pct_copy_n1024"] == "20.6%"
    # forward % of copy: 41.1 (1024), 35.0 (2048), 55.0 (8192): the typical is the median, N = 1024
    assert q["fwd_pct_copy_typical"] == "41%"
    assert (q["fwd_pct_copy_min"], q["fwd_pct_copy_min_n"]) == ("35%", "2048")
    assert (q["fwd_pct_copy_max"], q["fwd_pct_copy_max_n"]) == ("55%", "8192")
    # speed-ups 2.00, 1.02, 0.84: the median is 1.02
    assert q["fwd_speedup_typical"] == "1.02×"
    assert q["fwd_vs_torch_tally"] == "faster at 1, on par at 1 and slower at 1 of the 3 widths"
    # backward: % of copy 21.0, 31.5, 41.9; speed-ups 0.68, 1.20, 1.33; faster at 2048 and 8192
    assert q["bwd_pct_copy_typical"] == "31.5%" and q["bwd_pct_copy_min_n"] == "1024"
    assert q["bwd_speedup_typical"] == "1.20×" and q["bwd_speedup_n8192"] == "1.33×"
    assert q["bwd_vs_torch_tally"] == "faster at 2 and slower at 1 of the 3 widths"  # never "on par at 0"
    assert q["bwd_triton_us_n8192"] == "120 µs" and q["bwd_torch_us_n8192"] == "160 µs"
    # fits and host costs, with the digits of their own stated ranges
    assert q["fwd_triton_fixed_us"] == "5.0 µs" and q["fwd_triton_fit_gbps"] == "3000 GB/s"
    assert q["bwd_triton_fixed_us"] == "20 µs" and q["bwd_torch_fit_gbps"] == "2300 GB/s"
    assert q["fwd_triton_host_us"] == "100 µs" and q["fwd_torch_host_us"] == "20 µs"
    assert q["bwd_torch_host_us"] == "100 µs"
    # the protocol's counts and the floors, as the pages quote them
    assert (q["timing_samples"], q["timing_repeats"], q["timing_host_calls"]) == ("20", "3", "200")
    assert q["floor_gpu"] == "3%"
    # numbers taken from the code: the reduction's tile and the bytes moved (2*4096*1024*2 B = 16 MiB)
    assert q["reduce_block_m"] == str(REDUCE_BLOCK_M) and q["reduce_block_n"] == str(REDUCE_BLOCK_N)
    assert q["fwd_bytes_n1024"] == "16 MiB" and q["fwd_bytes_ratio_n8192_n1024"] == "8×"


def test_a_verdict_needs_the_ranges_apart_by_the_margin(tmp_path):
    # SYNTHETIC torch forward at N = 2048 made slower: 26.0 µs (stated 25.22–26.78) against Triton's 24.0
    # (23.28–24.72) is 1.08x, the ranges apart by 2.0 %: under the 3 % margin, on par; 26.3 µs (from
    # 25.51) puts them 3.2 % apart: faster
    for torch_us, verdict, tally in ((26.0, "on par", "faster at 1, on par at 1 and slower at 1 of the 3 widths"),
                                     (26.3, "faster", "faster at 2 and slower at 1 of the 3 widths")):
        m = synthetic_measurements()
        row = next(r for r in m["results"]["rows"] if (r["mode"], r["provider"], r["N"]) == ("forward", "torch", 2048))
        row["us"] = fig(torch_us, torch_us - 0.2, torch_us + 0.2)
        q = report.quotes(m["results"], m["provenance"])
        assert q["fwd_verdict_n2048"] == verdict
        assert q["fwd_vs_torch_tally"] == tally


def test_quotes_in_every_language(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    zh = json.loads(_read(tmp_path / "quotes.zh.json"))
    en = json.loads(_read(tmp_path / "quotes.json"))
    assert zh.keys() == en.keys()
    assert zh["fwd_verdict_n1024"] == "更快" and zh["fwd_verdict_n2048"] == "持平"
    assert zh["fwd_speedup_n1024"] == "2.00 倍"  # a speed-up is a multiple: claims.times_text, 倍 in Chinese
    assert zh["fwd_bytes_ratio_n8192_n1024"] == "8 倍"  # a multiple of the code's numbers: t.times
    vi = json.loads(_read(tmp_path / "quotes.vi.json"))
    assert vi["fwd_triton_us_n1024"] == "10,2 µs" and vi["bwd_pct_copy_typical"] == "31,5%"
    assert vi["fwd_speedup_typical"] == "1,02 lần" and vi["fwd_verdict_n8192"] == "chậm hơn"


def test_write_is_deterministic(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    report.write(synthetic_measurements(), first)
    report.write(synthetic_measurements(), second)
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


@pytest.mark.gpu
def test_quick_measure_is_json_complete_and_renders(tmp_path):
    from normkit import bench

    results = benchmark.measure(quick=True)
    json.dumps(results)
    assert {(r["mode"], r["provider"], r["N"]) for r in results["rows"]} == {
        (m, p, n) for m in benchmark.MODES for p in benchmark.PROVIDERS for n in results["n_values"]
    }
    for r in results["rows"]:
        us = r["us"]
        assert len(us["runs"]) == bench.QUICK.repeats and 0 < us["low"] <= us["median"] <= us["high"]
        assert r["bytes"] == benchmark.ELEMENTS_MOVED[r["mode"]] * results["M"] * r["N"] * 2
    keys = {f"{m}/{p}" for m in benchmark.MODES for p in benchmark.PROVIDERS}
    assert set(results["fits"]) == keys and set(results["host"]) == keys
    assert all(set(fit) == {"fixed_us", "gb_per_s"} for fit in results["fits"].values())
    assert all(results["host"][k]["median"] > 0 for k in keys)
    assert results["protocol"] == bench.protocol_record(bench.QUICK)
    plan = benchmark.QUICK_PLAN
    assert [(r["part"], r["N"]) for r in results["parts"]] == [(p, n) for n in plan.part_n for p in benchmark.PARTS]
    assert [(r["N"], r["group_size"]) for r in results["group_sweep"]] == [
        (n, g) for n in plan.group_n for g in plan.group_sizes]
    assert all(r["us"]["median"] > 0 for r in results["parts"] + results["group_sweep"])
    copy = bench.copy_bandwidth_gb_per_s(protocol=bench.QUICK)
    report.write({"provenance": {"gpu": "GPU", "copy": copy, "copy_gb_per_s": copy["median"]},
                  "results": results}, tmp_path)
    assert json.loads(_read(tmp_path / "quotes.json"))["n_count"] == str(len(results["n_values"]))


def test_the_backward_parts_and_the_group_size_sweep(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    parts = _read(tmp_path / "backward-parts.md")
    # N = 8192: zeroing 2.0 (1.94–2.06), kernel 1 100 (97–103), kernel 2 10.0 (9.7–10.3), both 112
    # (108.64–115.36); the autograd backward is the sweep's 120 (119–121 widened to 116.4–123.6)
    assert "| 8192 | 96 | 2.00 (1.94–2.06) | 100 (97–103) | 10.0 (9.7–10.3) | 112 (108–116) | 120 (116–124) |" in parts
    assert "zeroing the locks" in parts and "锁清零" in _read(tmp_path / "backward-parts.zh.md")
    # a caption and the measuring protocol are paragraphs of their own, in every language
    assert "without autograd.\n\nGPU time per call" in parts
    assert "不经过自动微分。\n\n每次调用的 GPU 时间" in _read(tmp_path / "backward-parts.zh.md")
    sweep = _read(tmp_path / "group-sweep.md")
    # group_size_for(8192) = 96 is marked; GROUP_SIZE = M = 4096 is named as one lock per row
    assert "| 96 | 112 (108–116) ◀ |" in sweep and "| 4096 (= M) | 300 (291–309) |" in sweep
    assert "the one group_size_for picks.\n\nGPU time per call" in sweep
    q = json.loads(_read(tmp_path / "quotes.json"))
    # kernel 2's share: 10 / 112 = 8.9 %, stated from the two ranges 9.7/115.36 … 10.3/108.64 = 8.4–9.5 %
    assert q["bwd_kernel1_us_n8192"] == "100 µs" and q["bwd_kernel2_share_n8192"] == "8.9%"
    assert q["group_best_n8192"] == "96" and q["group_default_n8192"] == "96"
    assert q["group_default_vs_best_n8192"] == "on par" and q["group_per_row_us_n8192"] == "300 µs"
    assert q["group_sentence_n8192"] == "At N = 8192, the chapter's GROUP_SIZE, 96, is the fastest of the sweep (112 µs)."
    other = synthetic_measurements()
    other["results"]["group_sweep"][0]["us"] = fig(90.0, 89.5, 90.5)  # SYNTHETIC: GROUP_SIZE = 32 the fastest
    report.write(other, tmp_path / "other")
    q = json.loads(_read(tmp_path / "other" / "quotes.json"))
    assert q["group_sentence_n8192"] == ("At N = 8192, the fastest of the sweep is GROUP_SIZE = 32 (90 µs); "
                                         "the chapter's 96 takes 112 µs: slower.")
    zh = json.loads(_read(tmp_path / "other" / "quotes.zh.json"))
    assert zh["group_sentence_n8192"] == "N = 8192 时，扫描中最快的是 GROUP_SIZE = 32（90 µs）；本章选的 96 用时 112 µs，结论：更慢。"
    # code: 9216 columns of fp16 take a 16384-lane block, 44 % of its lanes masked
    assert q["block_n9216"] == "16384" and q["masked_share_n9216"] == "44%"
