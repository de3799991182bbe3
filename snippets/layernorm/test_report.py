"""report.write renders tables, a plot and quotes. The numbers here are SYNTHETIC: they test the
rendering only and are never published."""

import json

import pytest

from layernorm import report

SYNTHETIC_NS = [1024, 2048, 8192]


def synthetic_measurements():
    rows = []
    for mode, base in (("forward", 1000.0), ("backward", 600.0)):
        for provider, scale in (("triton", 1.5), ("torch", 1.0)):
            for i, n in enumerate(SYNTHETIC_NS):
                gbps = base * scale + 100.0 * i
                rows.append({"mode": mode, "provider": provider, "N": n, "ms": 1.0, "gb_per_s": gbps})
    return {
        "provenance": {"gpu": "Synthetic GPU", "copy_gb_per_s": 4000.0, "quick": True},
        "results": {"M": 4096, "dtype": "float16", "n_values": SYNTHETIC_NS, "rows": rows},
    }


def test_write_renders_tables_plot_and_quotes(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    in_every_language = ("bandwidth{}.svg", "benchmark{}.md", "group-size{}.md", "quotes{}.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        name.format(suffix) for name in in_every_language for suffix in ("", ".zh", ".vi"))
    # the same numbers in every language, in its words and its number format
    assert "| 1024 | 1500 | 1000 | 38% | 1.50 倍 |" in (tmp_path / "benchmark.zh.md").read_text(encoding="utf-8")
    assert "| 1024 | 1500 | 1000 | 38% | 1,50× |" in (tmp_path / "benchmark.vi.md").read_text(encoding="utf-8")

    table = (tmp_path / "benchmark.md").read_text(encoding="utf-8")
    assert "**fwd**" in table and "**bwd**" in table
    # forward at N=1024: Triton 1500, torch 1000 -> 38% of 4000 GB/s, ratio 1.50x
    assert "| 1024 | 1500 | 1000 | 38% | 1.50× |" in table
    assert "| 8192 | 1100 | 800 | 28% | 1.38× |" in table  # backward, N = 8192

    quotes = json.loads((tmp_path / "quotes.json").read_text(encoding="utf-8"))
    assert all(isinstance(v, str) for v in quotes.values())
    assert quotes["gpu"] == "Synthetic GPU"
    assert quotes["bwd_speedup_n8192"] == "1.38×"
    assert quotes["bwd_triton_gbps_n8192"] == "1100"
    assert quotes["fwd_speedup_max"] == "1.50×" and quotes["fwd_speedup_max_n"] == "1024"
    assert quotes["bwd_triton_best_n"] == "8192" and quotes["bwd_triton_best_pct_copy"] == "28%"

    svg = (tmp_path / "bandwidth.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<dc:date>" not in svg


def test_write_is_deterministic(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    report.write(synthetic_measurements(), first)
    report.write(synthetic_measurements(), second)
    for name in ("benchmark.md", "bandwidth.svg", "quotes.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


@pytest.mark.gpu
def test_quick_measure_is_json_and_complete():
    from layernorm import benchmark

    results = benchmark.measure(quick=True)
    json.dumps(results)
    assert {(r["mode"], r["provider"], r["N"]) for r in results["rows"]} == {
        (m, p, n) for m in benchmark.MODES for p in benchmark.PROVIDERS for n in results["n_values"]
    }
    assert all(r["gb_per_s"] > 0 for r in results["rows"])
