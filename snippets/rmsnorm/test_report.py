"""report.write on a SYNTHETIC measurements dict: invented numbers that only exercise the rendering.

Every timing figure is {"median", "low", "high", "runs"} (normkit.bench), stated with the range the
page may claim (normkit.claims: the runs' range, at least ±3 % of the median for GPU time, ±60 % for
host cost, ±2 % for the copy bandwidth). The expected strings are worked out by hand in the comments.
"""

import dataclasses
import json
import re

import pytest

from normkit.testing import key_paths
from normkit.words import Words
from rmsnorm import accuracy, benchmark, examples, exercise, report, timing, training

# the plots keep Chinese text as SVG text, drawn by the browser: matplotlib's font has no CJK glyphs
pytestmark = pytest.mark.filterwarnings("ignore:Glyph .* missing from font")

LANGS = ("", ".zh", ".vi")
PROTOCOL = {"warmup_calls": 10, "samples": 20, "calls_per_sample": 10, "repeats": 3, "host_calls": 200,
            "max_copies": 8}
# SYNTHETIC GPU µs per complete call, (median, low, high)
SYNTHETIC_US = {
    "128x257_fp32": {"fwd_reference": (31.0, 30.8, 31.2), "fwd_torch": (6.2, 6.1, 6.3), "fwd_kernel": (6.4, 6.3, 6.5),
                     "fwdbwd_reference": (120.0, 119.0, 121.0), "fwdbwd_torch": (12.0, 11.9, 12.1),
                     "fwdbwd_kernel": (15.0, 14.9, 15.1)},
    "4096x4096_fp16": {"fwd_reference": (210.0, 208.0, 212.0), "fwd_torch": (40.0, 39.8, 40.2),
                       "fwd_kernel": (33.0, 32.8, 33.2), "fwdbwd_reference": (900.0, 890.0, 910.0),
                       "fwdbwd_torch": (100.0, 99.0, 101.0), "fwdbwd_kernel": (95.0, 94.0, 96.0)},
}
# SYNTHETIC host µs per complete call at the small shape (its GPU time inside), (median, low, high)
SYNTHETIC_HOST = {"fwd_reference": (60.0, 58.0, 62.0), "fwd_torch": (25.0, 24.0, 26.0), "fwd_kernel": (90.0, 85.0, 140.0),
                  "fwdbwd_reference": (300.0, 290.0, 310.0), "fwdbwd_torch": (150.0, 140.0, 160.0),
                  "fwdbwd_kernel": (330.0, 320.0, 340.0)}
# SYNTHETIC fixed-cost fits: (fixed µs, GB/s), each (median, low, high); fwd_torch found no slope
INF = float("inf")
SYNTHETIC_FITS = {"fwd_reference": ((9.0, 8.9, 9.1), (1500.0, 1480.0, 1520.0)),
                  "fwd_torch": ((3.1, 3.05, 3.15), (INF, 3000.0, INF)),
                  "fwd_kernel": ((4.2, 4.1, 4.3), (3500.0, 3400.0, 3600.0)),
                  "fwdbwd_reference": ((30.0, 29.0, 31.5), (1200.0, 1190.0, 1210.0)),
                  "fwdbwd_torch": ((8.0, 7.9, 8.1), (2800.0, 2780.0, 2820.0)),
                  "fwdbwd_kernel": ((10.5, 10.3, 10.7), (3100.0, 3050.0, 3150.0))}
FIT_M = [256, 512, 1024, 2048, 4096]


def fig(median, low, high):
    """A SYNTHETIC figure of three repetitions."""
    return {"median": median, "low": low, "high": high, "runs": [low, median, high]}


def _entry(label, m, n, dtype, us):
    element = {"float32": 4, "float16": 2}[dtype]
    return {"label": label, "m": m, "n": n, "dtype": dtype, "large": label == "4096x4096_fp16",
            "min_bytes": {"fwd": 2 * m * n * element, "fwdbwd": 5 * m * n * element},
            "us": {key: fig(*value) for key, value in us.items()}}


def synthetic_measurements():
    shapes = [_entry("128x257_fp32", 128, 257, "float32", SYNTHETIC_US["128x257_fp32"]),
              _entry("4096x4096_fp16", 4096, 4096, "float16", SYNTHETIC_US["4096x4096_fp16"])]
    points = [_entry(f"{m}x4096_fit", m, 4096, "float16",
                     {key: (m / 64, m / 64 - 0.1, m / 64 + 0.1) for key in SYNTHETIC_HOST}) for m in FIT_M]
    per_q = [{"quantity": q, "dtype": d, "cases": 36, "failed_cases": 0, "max_abs_err": 1e-6, "worst_ratio": 0.1,
              "atol": 1e-5, "rtol": 1e-4} for q in ("y", "dx", "dgamma") for d in ("float32", "float16")]
    copy = fig(4000.0, 3990.0, 4010.0)
    timing = {"protocol": PROTOCOL, "shapes": shapes,
              "fit": {"n": 4096, "dtype": "float16", "m": FIT_M, "points": points,
                      "figures": {key: {"fixed_us": fig(*fixed), "gb_per_s": fig(*gbps)}
                                  for key, (fixed, gbps) in SYNTHETIC_FITS.items()}},
              "host": {"label": "128x257_fp32", "us": {key: fig(*value) for key, value in SYNTHETIC_HOST.items()}}}
    return {
        "provenance": {"gpu": "Synthetic GPU", "copy": copy, "copy_gb_per_s": copy["median"]},
        "results": {
            "examples": examples.all_examples(),
            "exercise": exercise.run_exercise(),
            "accuracy": {"cases": 72, "shapes": {"M": [1], "N": [1]}, "per_quantity_dtype": per_q,
                         "failures": [], "passed": True},
            "timing": timing,
            "training": {"config": {"steps": 100, "batch": 32}, "initial_output_diff": 1e-7,
                         "initial_grad_diff": 5e-8, "kernel_forwards": 100, "kernel_backwards": 100,
                         "val_mse": {"reference": 0.5, "kernel": 0.5}, "test_mse": {"reference": 0.3, "kernel": 0.3},
                         "final_param_diff": 1e-7, "reload_diff": 0.0},
        },
    }


def _read(path):
    return path.read_text(encoding="utf-8")


# --- SYNTHETIC runs of the chapter's own plans (quick and full): the campaign's real cases and the
# timing's real shapes (rmsnorm.timing.FULL and QUICK_PLAN), made-up results laid out by
# rmsnorm.benchmark.assemble, rmsnorm.accuracy.summarise and rmsnorm.timing.assemble as a GPU run's
# are; the examples and the exercise run for real (they run on the CPU). The hand-made data set
# above pins the exact strings.
RUN_GBPS = {"reference": 500.0, "kernel": 2500.0, "torch": 2000.0}  # SYNTHETIC bandwidth at large sizes
RUN_HOST_US = {"reference": 60.0, "kernel": 90.0, "torch": 25.0}
RUN_CASE = {"max_abs_err": 1e-6, "worst_ratio": 0.1, "bad_elements": 0}  # SYNTHETIC: every case passes


def _run_figure(plan, key):
    label, scope, name = key[:3]
    if key[3:] == ("host",):
        us = RUN_HOST_US[name]
    else:
        m, n, dtype = timing.points(plan)[label]
        us = 5.0 + timing.min_bytes(m, n, dtype)[scope] / (RUN_GBPS[name] * 1e3)
    return fig(us, 0.99 * us, 1.01 * us)


def synthetic_run(quick):
    """The data set rmsnorm.benchmark.measure would return on a GPU, SYNTHETIC campaign, training and
    timing results, with the provenance the report reads."""
    plan, cases = timing.plan(quick), benchmark.campaign_cases(quick)
    config = dataclasses.asdict(training.QUICK if quick else training.FULL)
    results = benchmark.assemble(
        quick, examples.all_examples(), accuracy.summarise(cases, [{q: RUN_CASE for q in accuracy.QUANTITIES}] * len(cases)),
        {**synthetic_measurements()["results"]["training"], "config": config}, exercise.run_exercise(),
        timing.assemble(plan, {key: _run_figure(plan, key) for key in timing.task_keys(plan)}))
    copy = fig(4000.0, 3990.0, 4010.0)
    return {"provenance": {"gpu": "Synthetic GPU", "copy": copy, "copy_gb_per_s": copy["median"], "quick": quick},
            "results": results}


@pytest.mark.parametrize("quick", [False, True], ids=["full", "quick"])
def test_a_run_of_each_plan_renders(quick, tmp_path):
    measurements = synthetic_run(quick)
    json.dumps(measurements, allow_nan=False)  # the data set is stored as JSON
    report.write(measurements, tmp_path)
    q = json.loads(_read(tmp_path / "quotes.json"))
    assert q["gpu"] == "Synthetic GPU"
    # every shape of the plan a row of the timing table, in each scope
    table = _read(tmp_path / "timing.md")
    for label, m, n, dtype in timing.plan(quick).shapes:
        assert table.count(f"| {m}×{n} {str(dtype).removeprefix('torch.')} |") == len(timing.SCOPES), label


def test_the_hand_made_data_set_has_a_runs_layout():
    # the exact strings above are worked out on a hand-made data set: every key it has, a run's
    # layout (assemble's) has too, so the two cannot drift apart
    assert key_paths(synthetic_measurements()) <= key_paths(synthetic_run(quick=False))


def test_write_renders_every_file(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    names = {p.name for p in tmp_path.iterdir()}
    tables = {f"{name}{lang}.md" for name in ("accuracy", "timing", "cost", "training") for lang in LANGS}
    quotes = {f"quotes{lang}.json" for lang in LANGS}
    plots = {f"timing{lang}.svg" for lang in LANGS}
    texts = {f"{name}{lang}.txt" for name in ("examples", "exercise") for lang in LANGS}
    assert names == tables | quotes | plots | texts | {"basis.json"}
    assert "0.9999995" in _read(tmp_path / "examples.txt")
    # each language's printout: Vietnamese writes the decimal comma
    assert "0,9999995" in _read(tmp_path / "examples.vi.txt")
    svg = _read(tmp_path / "timing.svg")
    assert svg.lstrip().startswith("<?xml") and not re.search(r"<dc:date>", svg)
    assert "<text" in svg and "F.rms_norm" in svg and "内核" in _read(tmp_path / "timing.zh.svg")


def test_timing_table_states_figures_ranges_and_verdicts(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    table = _read(tmp_path / "timing.md")
    assert ("| shape | scope | reference, GPU µs | F.rms_norm, GPU µs | kernel, GPU µs | kernel vs reference "
            "| kernel vs F.rms_norm | kernel, % copy |") in table
    # small shape, fwd: reference 31.0 (stated 30.07–31.93), torch 6.2 (6.014–6.386), kernel 6.4
    # (6.208–6.592). reference / kernel = 31/6.4 = 4.84 (stated 4.70–4.99: one decimal), ranges apart;
    # torch / kernel = 0.969 (stated 0.938–1.000), ranges overlap: on par. Not a large shape: no % of copy
    assert ("| 128×257 float32 | fwd | 31.0 (30.0–32.0) | 6.2 (6.0–6.4) | 6.4 (6.2–6.6) | 4.8× · faster "
            "| 0.97× · on par | — |") in table
    # fwd+bwd: kernel 15.0 (14.55–15.45) above torch's 12.0 (11.64–12.36): slower, 12/15 = 0.80
    assert ("| 128×257 float32 | fwd + bwd | 120 (116–124) | 12.0 (11.6–12.4) | 15.0 (14.5–15.5) | 8.0× · faster "
            "| 0.80× · slower | — |") in table
    # large shape, fwd: 2*4096*4096*2 = 67108864 B in 33 µs = 2033.6 GB/s = 50.8 % of 4000 (stated
    # 49.3–52.4: units); 40/33 = 1.21 with the ranges apart
    assert ("| 4096×4096 float16 | fwd | 210 (203–217) | 40 (38–42) | 33.0 (32.0–34.0) | 6.4× · faster "
            "| 1.21× · faster | 51% |") in table
    # fwd+bwd: 5*4096*4096*2 B in 95 µs = 44.2 %; kernel 95 (92.15–97.85) against torch 100 (97–103): on par
    assert ("| 4096×4096 float16 | fwd + bwd | 900 (870–930) | 100 (97–103) | 95 (92–98) | 9.5× · faster "
            "| 1.05× · on par | 44% |") in table
    assert "10 warm-up replays, then the median of 20 samples of 10 replays; 3 repetitions" in table


def test_cost_table_states_host_costs_and_fits(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    table = _read(tmp_path / "cost.md")
    assert "| scope | provider | host µs, 128×257 float32 | fixed µs per call | GB/s at large sizes |" in table
    # host 60, stated 24–96 (±60 %): tens; fixed 9.0 stated 8.73–9.27; 1500 GB/s stated 1455–1545: tens
    assert "| fwd | reference | 60 (20–100) | 9.0 (8.7–9.3) | 1500 |" in table
    # fixed 3.1 stated 3.007–3.193: two decimals; no slope: no bandwidth
    assert "| fwd | `F.rms_norm` | 30 (10–40) | 3.10 (3.00–3.20) | — |" in table  # host 25 (10–40): tens, half up
    # host 90 with runs 85–140: stated 36–144 (the floor is the wider)
    assert "| fwd | kernel | 90 (30–150) | 4.2 (4.0–4.4) | 3500 |" in table
    # host 300 stated 120–480 and 330 stated 132–528: hundreds
    assert "| fwd + bwd | reference | 300 (100–500) | 30 (29–32) | 1200 |" in table
    assert "| fwd + bwd | kernel | 300 (100–600) | 10.5 (10.1–10.9) | 3100 |" in table
    assert "M = 256 … 4096, N = 4096, float16.\n\nGPU time per call" in table  # the caption, then the protocol
    assert "the fastest of 200 plain calls" in table
    vi = _read(tmp_path / "cost.vi.md")
    assert "| 30 (10–40) | 3,10 (3,00–3,20) | — |" in vi  # Vietnamese: decimal comma


def test_tables_in_every_language(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    zh = _read(tmp_path / "timing.zh.md")
    # the words change, the numbers do not; a multiple is claims.text + "×" in every language
    assert ("| 4096×4096 float16 | 前向 | 210（203–217） | 40（38–42） | 33.0（32.0–34.0） | 6.4 倍 · 更快 "
            "| 1.21 倍 · 更快 | 51% |") in zh
    # a column of speed-ups reads kernel against the other, never as a fraction
    assert "| 内核相对参考实现 | 内核相对 F.rms_norm |" in zh
    vi = _read(tmp_path / "timing.vi.md")
    assert "| kernel so với bản tham chiếu | kernel so với F.rms_norm |" in vi
    assert ("| 128×257 float32 | lượt xuôi | 31,0 (30,0–32,0) | 6,2 (6,0–6,4) | 6,4 (6,2–6,6) | 4,8 lần · nhanh hơn "
            "| 0,97 lần · ngang nhau | — |") in vi
    accuracy = _read(tmp_path / "accuracy.md")
    assert "| $y$ | float32 | 1\u00a0×\u00a010⁻⁵ | 0.0001 | 36 | 1.00\u00a0×\u00a010⁻⁶ | 0.100 | 0 |" in accuracy
    assert "| $y$ | float32 | 1\u00a0×\u00a010⁻⁵ | 0,0001 | 36 | 1,00\u00a0×\u00a010⁻⁶ | 0,100 | 0 |" in _read(tmp_path / "accuracy.vi.md")
    training = _read(tmp_path / "training.md")
    assert "| 0.30000 | 0.30000 |" in training and "| 100 / 100 |" in training


def test_quotes_are_the_tables_numbers(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    q = json.loads(_read(tmp_path / "quotes.json"))
    assert all(isinstance(v, str) for v in q.values())
    assert q["gpu"] == "Synthetic GPU"
    # copy 4000 with runs 3990–4010: the copy floor (±2 %) states 3920–4080
    assert q["copy_gb_per_s"] == "4000 GB/s (3920–4080)"  # the unit before the range, as in the other data sets
    assert q["fwd_kernel_us_128x257_fp32"] == "6.4 µs" and q["fwdbwd_reference_us_4096x4096_fp16"] == "900 µs"
    assert q["fwd_kernel_pct_copy_4096x4096_fp16"] == "51%"
    # torch fwd, large: 67108864 B in 40 µs = 41.9 %; reference: in 210 µs = 7.99 % (stated 7.75–8.23)
    assert q["fwd_torch_pct_copy_4096x4096_fp16"] == "42%"
    assert q["fwd_reference_pct_copy_4096x4096_fp16"] == "8.0%"
    assert "fwd_kernel_pct_copy_128x257_fp32" not in q  # the small shape is launch-bound: no % of copy
    # PARTIAL at 4096x4096: 4 B a value, written and read: 134 MB beside the 168 MB minimum (5 x 2 B a value),
    # so 168 / 302 = 56 % of the copy bandwidth is the most a kernel that moves it can reach
    assert (q["partial_traffic_mb_4096x4096_fp16"], q["fwdbwd_min_mb_4096x4096_fp16"]) == ("134", "168")
    assert q["fwdbwd_partial_ceiling_4096x4096_fp16"] == "56%" and "partial_traffic_mb_128x257_fp32" not in q
    assert q["fwd_vs_reference_128x257_fp32"] == "4.8×" and q["fwd_vs_reference_verdict_128x257_fp32"] == "faster"
    assert q["fwd_vs_torch_verdict_128x257_fp32"] == "on par"
    assert q["fwdbwd_vs_torch_128x257_fp32"] == "0.80×" and q["fwdbwd_vs_torch_verdict_128x257_fp32"] == "slower"
    assert q["fwdbwd_vs_torch_4096x4096_fp16"] == "1.05×" and q["fwdbwd_vs_torch_verdict_4096x4096_fp16"] == "on par"
    # host costs (small shape) and fits
    assert q["fwd_kernel_host_us"] == "90 µs" and q["fwdbwd_torch_host_us"] == "150 µs"
    assert q["fwd_kernel_fixed_us"] == "4.2 µs" and q["fwd_torch_fixed_us"] == "3.10 µs"
    # a fit with no slope: a sentence says so in words, never with a bare dash
    assert q["fwd_torch_fit_gbps"] == "not measurable" and q["fwdbwd_kernel_fit_gbps"] == "3100 GB/s"
    assert q["host_shape"] == "128×257 float32"
    assert (q["fit_m_min"], q["fit_m_max"], q["fit_n"]) == ("256", "4096", "4096")
    assert (q["timing_samples"], q["timing_repeats"], q["timing_max_copies"]) == ("20", "3", "8")
    assert q["floor_gpu"] == "3%" and q["floor_host"] == "60%"
    assert q["train_test_mse_kernel"] == "0.30000"
    zh = json.loads(_read(tmp_path / "quotes.zh.json"))
    assert zh.keys() == q.keys()
    assert zh["fwd_vs_reference_verdict_128x257_fp32"] == "更快" and zh["fwd_vs_reference_128x257_fp32"] == "4.8 倍"
    assert zh["fwd_torch_fit_gbps"] == "测不出"
    vi = json.loads(_read(tmp_path / "quotes.vi.json"))
    assert vi["fwd_reference_pct_copy_4096x4096_fp16"] == "8,0%" and vi["fwd_torch_fixed_us"] == "3,10 µs"


def _with_failures(failures):
    """The hand-made data set, its accuracy campaign with these (quantity, m, n, dtype, seed) failures."""
    measurements = synthetic_measurements()
    measurements["results"]["accuracy"]["failures"] = [
        {"quantity": q, "m": m, "n": n, "dtype": dtype, "seed": seed, "bad_elements": 1}
        for q, m, n, dtype, seed in failures]
    return measurements


def test_the_accuracy_result_counts_failing_cases_and_says_each_case_in_words():
    # none fails: said in words, never "0 of 72"
    q = report.quotes(synthetic_measurements())
    assert q["acc_result"] == "all 72 accuracy cases within tolerance"
    assert q["acc_outside"] == "All 72 cases were run for each quantity, and none of them had an element outside tolerance"
    zh, vi = (report.quotes(synthetic_measurements(), Words(lang)) for lang in ("zh", "vi"))
    assert zh["acc_result"] == "72 个精度用例全部在容差之内"
    assert vi["acc_outside"] == ("Cả 72 trường hợp đều được chạy cho mỗi đại lượng, và không trường hợp nào có "
                                 "phần tử nằm ngoài dung sai")
    assert "acc_failed_cases" not in q and "acc_cases" not in q
    # a failure is a (quantity, case) pair: y and dx failing in one case, dgamma in another, are two cases
    two = _with_failures([("y", 1, 257, "float16", 0), ("dx", 1, 257, "float16", 0), ("dgamma", 4, 4096, "float32", 1)])
    assert report.failed_cases(two["results"]["accuracy"]) == {(1, 257, "float16", 0), (4, 4096, "float32", 1)}
    q = report.quotes(two)
    assert q["acc_result"] == "2 of the 72 accuracy cases out of tolerance"
    assert q["acc_outside"] == ("All 72 cases were run for each quantity; 2 of them had an element outside "
                                "tolerance in at least one quantity")
    assert report.quotes(two, Words("zh"))["acc_result"] == "72 个精度用例中有 2 个超出容差"
    assert report.quotes(two, Words("vi"))["acc_result"] == "2 trong 72 trường hợp kiểm tra độ chính xác nằm ngoài dung sai"
    # every case failing in some quantity: "all", never "72 of the 72"
    every = _with_failures([("dx", m, n, dtype, seed) for m in range(3) for n in range(6)
                            for dtype in ("float32", "float16") for seed in (0, 1)])
    assert report.quotes(every)["acc_result"] == "all 72 accuracy cases out of tolerance"
    assert report.quotes(every, Words("zh"))["acc_outside"] == "每个量都运行了全部 72 个用例，每个用例都有元素超出容差"


def test_write_is_deterministic(tmp_path):
    report.write(synthetic_measurements(), tmp_path / "a")
    report.write(synthetic_measurements(), tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_page_placeholders_exist_in_quotes():
    """Every {{ rmsnorm.KEY }} on the English page is a key report.quotes() produces."""
    import pathlib

    page = pathlib.Path(__file__).resolve().parents[2] / "docs" / "en" / "rmsnorm" / "index.md"
    if not page.exists():
        return
    keys = set(re.findall(r"\{\{\s*rmsnorm\.(\w+)\s*\}\}", page.read_text(encoding="utf-8")))
    produced = set(report.quotes(synthetic_measurements()))
    assert keys <= produced, sorted(keys - produced)
