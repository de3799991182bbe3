"""Render the ScaleNorm measurements: a table, a plot and the numbers the pages quote, in every language.

    write(measurements, out_dir)

measurements = {"provenance": {..., "gpu": str, "copy": figure}, "results": benchmark.measure()}.
Writes bandwidth.md and quotes.json once per language (normkit.tables.write_localized: words from
normkit/catalogue.toml, numbers in the language's format) and bandwidth.svg, bandwidth.zh.svg and
bandwidth.vi.svg. Every figure is quoted with the digits its stated range supports (normkit.claims).
Same input, same bytes: the plot carries no date and a fixed hash salt. test_report.py renders it
from SYNTHETIC numbers; the placeholder of a chapter not measured yet takes its quote keys, tables
and plots from that render.
"""

import json
import warnings
from pathlib import Path

import matplotlib

from normkit import claims
from normkit.tables import PLOT_FONT_PT, write_localized
from normkit.words import LANGUAGES, Words

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Chinese labels stay SVG text, drawn by the reader's browser: matplotlib's font needs no CJK glyphs
warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)


def gb_per_s(row):
    """The row's bandwidth, bytes moved over GPU time, as a figure (its runs and range follow)."""
    return claims.transform(row["us"], lambda us: row["bytes"] / (us * 1e3))


def pct_copy(row, copy):
    """The row's bandwidth as a share of the copy bandwidth measured in the same run."""
    return claims.transform(gb_per_s(row), lambda gbps: 100 * gbps / copy)


def bandwidth_table(results, copy, t):
    lines = [f"| N | {t('gpu_us')} | GB/s | {t('pct_copy')} |", "|--:|--:|--:|--:|"]
    for row in results["rows"]:
        lines.append(f"| {row['N']} | {claims.with_range(row['us'], 'gpu', t)} "
                     f"| {claims.with_range(gb_per_s(row), 'gpu', t)} "
                     f"| {claims.percent_text(pct_copy(row, copy), 'gpu', t)} |")
    lines += claims.under_table(results["protocol"], t, f"M = {results['M']} · {results['dtype']}{t('full_stop')}")
    return "\n".join(lines) + "\n"


def quotes(measurements, t):
    """The numbers the pages quote as {{ scalenorm.<key> }}, in t's language."""
    results, copy = measurements["results"], measurements["provenance"]["copy"]
    best = max(results["rows"], key=lambda row: gb_per_s(row)["median"])
    return {
        "gpu": str(measurements["provenance"]["gpu"]),
        "m": str(results["M"]),
        "dtype": results["dtype"],
        "best_n": str(best["N"]),
        "best_gbps": claims.text(gb_per_s(best), "gpu", t) + " GB/s",
        "best_pct_copy": claims.percent_text(pct_copy(best, copy["median"]), "gpu", t),
        "copy_gb_per_s": claims.text(copy, "copy", t) + " GB/s",
    }


def bandwidth_plot(measurements, path, t):
    """GB/s against N with the band of each stated range; the copy bandwidth dashed."""
    results, provenance = measurements["results"], measurements["provenance"]
    ns = [row["N"] for row in results["rows"]]
    figures = [gb_per_s(row) for row in results["rows"]]
    bands = [claims.stated(fig, "gpu") for fig in figures]
    copy = provenance["copy"]["median"]
    # labels stay text (svg.fonttype none): a reader selects them, the browser tests measure them
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "normkernels", "font.size": PLOT_FONT_PT}):
        fig, ax = plt.subplots(figsize=(4.8, 3.4), layout="constrained")
        ax.fill_between(ns, [low for low, _ in bands], [high for _, high in bands], color="#3f51b5",
                        alpha=0.2, linewidth=0)
        ax.plot(ns, [f["median"] for f in figures], marker="o", markersize=3.5, color="#3f51b5",
                label="ScaleNorm")
        ax.axhline(copy, color="0.45", linestyle="--", linewidth=1, label=t("copy_short"))
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.set_xlabel("N")
        ax.set_ylabel("GB/s")
        ax.set_ylim(0, copy * 1.15)
        ax.yaxis.set_major_formatter(lambda value, _: t.number(value, "g"))
        ax.grid(True, linewidth=0.4, alpha=0.5)
        ax.legend(loc="lower right", frameon=False)
        ax.set_title(f"{provenance['gpu']} · M = {results['M']} · {results['dtype']}", fontsize=PLOT_FONT_PT)
        fig.savefig(path, format="svg", metadata={"Date": None}, transparent=True)
        plt.close(fig)


def write(measurements, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    copy = measurements["provenance"]["copy"]["median"]
    write_localized(out_dir, "bandwidth.md", lambda t: bandwidth_table(measurements["results"], copy, t))
    write_localized(out_dir, "quotes.json", lambda t: json.dumps(
        quotes(measurements, t), indent=2, ensure_ascii=False, sort_keys=True) + "\n")
    for language in LANGUAGES:  # the plot in the words and numbers of each language's page
        suffix = "" if language == "en" else f".{language}"
        bandwidth_plot(measurements, out_dir / f"bandwidth{suffix}.svg", Words(language))
