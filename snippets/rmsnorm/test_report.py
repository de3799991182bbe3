"""report.write on a SYNTHETIC measurements dict: invented numbers that only exercise the rendering."""

import json
import re

from rmsnorm import examples, exercise, report

SYNTHETIC_US = {"fwd_reference": 50.0, "fwd_kernel": 60.0, "fwdbwd_reference": 200.0, "fwdbwd_kernel": 150.0}


def synthetic_measurements():
    shapes = []
    for label, m, n, dtype, large in (("128x257_fp32", 128, 257, "float32", False),
                                      ("4096x4096_fp16", 4096, 4096, "float16", True)):
        shapes.append({"label": label, "m": m, "n": n, "dtype": dtype, "large": large, "us": dict(SYNTHETIC_US),
                       "min_bytes": {"fwd": 2 * m * n * 2, "fwdbwd": 5 * m * n * 2}})
    per_q = [{"quantity": q, "dtype": d, "cases": 36, "failed_cases": 0, "max_abs_err": 1e-6, "worst_ratio": 0.1,
              "atol": 1e-5, "rtol": 1e-4} for q in ("y", "dx", "dgamma") for d in ("float32", "float16")]
    return {
        "provenance": {"gpu": "Synthetic GPU", "copy_gb_per_s": 1000.0},
        "results": {
            "examples": examples.all_examples(),
            "exercise": exercise.run_exercise(),
            "accuracy": {"cases": 72, "shapes": {"M": [1], "N": [1]}, "per_quantity_dtype": per_q,
                         "failures": [], "passed": True},
            "timing": {"protocol": {"warmup_calls": 20, "samples": 50, "calls_per_sample": 20}, "shapes": shapes},
            "training": {"config": {"steps": 100, "batch": 32}, "initial_output_diff": 1e-7,
                         "initial_grad_diff": 5e-8, "kernel_forwards": 100, "kernel_backwards": 100,
                         "val_mse": {"reference": 0.5, "kernel": 0.5}, "test_mse": {"reference": 0.3, "kernel": 0.3},
                         "final_param_diff": 1e-7, "reload_diff": 0.0},
        },
    }


def test_write_renders_every_file(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    names = {p.name for p in tmp_path.iterdir()}
    tables = {f"{name}{lang}.md" for name in ("accuracy", "timing", "training") for lang in ("", ".zh", ".vi")}
    quotes = {f"quotes{lang}.json" for lang in ("", ".zh", ".vi")}
    plots = {f"timing{lang}.svg" for lang in ("", ".zh", ".vi")}
    assert names == tables | quotes | plots | {"examples.txt", "exercise.txt"}
    # the same numbers in every language, in its words and its number format
    zh = (tmp_path / "timing.zh.md").read_text(encoding="utf-8")
    assert "| 4096×4096 float16 | 前向 | 50.00 | 60.00 | +20.0 % |" in zh and "内核" in zh
    vi = (tmp_path / "timing.vi.md").read_text(encoding="utf-8")
    assert "| 4096×4096 float16 | lượt xuôi | 50,00 | 60,00 | +20,0 % |" in vi
    q = json.loads((tmp_path / "quotes.json").read_text())
    assert all(isinstance(v, str) for v in q.values())
    assert q["fwd_diff_pct_128x257_fp32"] == "+20.0 %"
    assert q["fwdbwd_diff_pct_128x257_fp32"] == "-25.0 %"
    assert q["train_test_mse_kernel"] == "0.30000"
    assert q["gpu"] == "Synthetic GPU"
    # 4096*4096*2*2 bytes in 60 us = 1118 GB/s, 112 % of the synthetic 1000 GB/s
    assert q["fwd_kernel_gbps_4096x4096_fp16"] == "1118 GB/s"
    assert q["fwd_kernel_pct_copy_4096x4096_fp16"] == "112 %"
    timing_md = (tmp_path / "timing.md").read_text()
    assert "| 4096×4096 float16 | fwd | 50.00 | 60.00 | +20.0 % |" in timing_md
    assert "0.9999995" in (tmp_path / "examples.txt").read_text()


def test_svg_is_deterministic(tmp_path):
    report.write(synthetic_measurements(), tmp_path / "a")
    report.write(synthetic_measurements(), tmp_path / "b")
    a, b = ((tmp_path / d / "timing.svg").read_text() for d in "ab")
    assert a == b
    assert not re.search(r"<dc:date>", a)


def test_page_placeholders_exist_in_quotes(tmp_path):
    """Every {{ rmsnorm.KEY }} on the English page is a key report.quotes() produces."""
    import pathlib

    page = pathlib.Path(__file__).resolve().parents[2] / "docs" / "en" / "rmsnorm" / "index.md"
    if not page.exists():
        return
    keys = set(re.findall(r"\{\{\s*rmsnorm\.(\w+)\s*\}\}", page.read_text(encoding="utf-8")))
    produced = set(report.quotes(synthetic_measurements()))
    assert keys <= produced, sorted(keys - produced)
