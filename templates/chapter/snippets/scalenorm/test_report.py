"""report.write on SYNTHETIC numbers: they test the rendering only and are never published.

synthetic_measurements() is also what the placeholder of a chapter not measured yet renders
(`scripts/gpu_build.py placeholder --only scalenorm`): the quote keys, tables and plots it writes
are the ones the placeholder gives "not measured yet", so a page that quotes a key the report does
not write stays an error. Keep it a complete input of report.write().

Every figure is {"median", "low", "high", "runs"} (normkit.bench); what a table states is read from
the figure's stated range (normkit.claims: at least ±3 % of the median for GPU time, ±2 % for the
copy bandwidth). The expected strings are worked out by hand in the comments beside them.
"""

import json

import pytest

from scalenorm import report

M = 4096
PROTOCOL = {"warmup_calls": 10, "samples": 20, "calls_per_sample": 10, "repeats": 3, "host_calls": 200,
            "max_copies": 8}
# SYNTHETIC GPU µs per call: (median, low, high) at each N
SYNTHETIC_US = {1024: (12.0, 11.9, 12.1), 4096: (30.0, 29.0, 32.0), 16384: (100.0, 99.5, 100.5)}
LANGS = ("", ".zh", ".vi")
# the plots keep Chinese text as SVG text, drawn by the browser: matplotlib's font has no CJK glyphs
pytestmark = pytest.mark.filterwarnings("ignore:Glyph .* missing from font")


def fig(median, low, high):
    """A SYNTHETIC figure of three repetitions."""
    return {"median": median, "low": low, "high": high, "runs": [low, median, high]}


def synthetic_measurements():
    copy = fig(4000.0, 3990.0, 4010.0)
    rows = [{"N": n, "bytes": 2 * M * n * 2, "us": fig(*us)} for n, us in SYNTHETIC_US.items()]
    return {
        "provenance": {"gpu": "Synthetic GPU", "copy": copy, "copy_gb_per_s": copy["median"], "quick": True},
        "results": {"M": M, "dtype": "float16", "protocol": PROTOCOL, "rows": rows},
    }


def read(path):
    return path.read_text(encoding="utf-8")


def test_write_renders_every_file_in_every_language(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        name.format(suffix) for name in ("bandwidth{}.md", "bandwidth{}.svg", "quotes{}.json") for suffix in LANGS)
    svg = read(tmp_path / "bandwidth.svg")
    assert "<dc:date>" not in svg and "font-size" in svg  # no date; the labels stay text
    assert "Synthetic GPU · M = 4096 · float16" in svg
    assert "拷贝" in read(tmp_path / "bandwidth.zh.svg") and "sao chép" in read(tmp_path / "bandwidth.vi.svg")


def test_the_same_input_renders_the_same_bytes(tmp_path):
    report.write(synthetic_measurements(), tmp_path / "a")
    report.write(synthetic_measurements(), tmp_path / "b")
    for path in sorted((tmp_path / "a").iterdir()):
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes(), path.name


def test_the_table_states_each_figure_with_its_range(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    table = read(tmp_path / "bandwidth.md")
    assert "| N | GPU µs | GB/s | % copy |" in table
    # N = 1024: 12.0 µs, stated 11.64–12.36 (±3 %): one decimal, 11.6–12.4 outwards. 2*4096*1024*2 =
    # 16777216 B in 12 µs = 1398.1 GB/s, stated 1356.2–1440.1: tens; 34.95 % of 4000, stated 33.9–36.0: units
    assert "| 1024 | 12.0 (11.6–12.4) | 1400 (1350–1450) | 35% |" in table
    # N = 4096: runs 29–32 are wider than the floor: 30 (29–32); 67108864 B in 30 µs = 2237.0 GB/s,
    # stated 2097.2–2314.1 (the runs' ends): hundreds; 55.9 %, stated 52.4–57.9: units
    assert "| 4096 | 30 (29–32) | 2200 (2000–2400) | 56% |" in table
    # N = 16384: 100 µs, stated 97–103: units; 268435456 B = 2684.4 GB/s, stated 2603.9–2764.9 (±3 %):
    # tens, 2600–2770 outwards; 67.1 %, stated 65.1–69.1: units
    assert "| 16384 | 100 (97–103) | 2680 (2600–2770) | 67% |" in table
    assert "M = 4096 · float16." in table and "10 warm-up replays" in table
    # the same rows in Vietnamese: a decimal comma, the catalogue's words in the header
    vi = read(tmp_path / "bandwidth.vi.md")
    assert "| N | µs GPU | GB/s | % băng thông sao chép |" in vi and "| 1024 | 12,0 (11,6–12,4) | 1400 (1350–1450) | 35% |" in vi


def test_the_quotes_in_every_language(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    quotes = {lang: json.loads(read(tmp_path / f"quotes{lang}.json")) for lang in LANGS}
    # the best bandwidth is N = 16384's, 2684.4 GB/s stated to tens; the copy 4000, stated ±2 %: hundreds
    assert quotes[""] == {"gpu": "Synthetic GPU", "m": "4096", "dtype": "float16", "best_n": "16384",
                          "best_gbps": "2680 GB/s", "best_pct_copy": "67%", "copy_gb_per_s": "4000 GB/s"}
    assert quotes[".zh"] == quotes[""]  # no decimals, no word: Chinese writes these as English does
    assert quotes[".vi"]["best_gbps"] == "2680 GB/s"  # four digits stay together in every language
    assert set(quotes[".zh"]) == set(quotes[".vi"]) == set(quotes[""])  # one key set for every language
