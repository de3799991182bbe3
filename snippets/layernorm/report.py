"""Render the LayerNorm measurements: Markdown tables, a bandwidth plot, and the numbers prose quotes.

    write(measurements, out_dir)

measurements = {"provenance": {..., "gpu": str, "copy_gb_per_s": float}, "results": measure()}.
Writes benchmark.md and quotes.json in every language of the site (normkit.tables.write_localized:
words from normkit/catalogue.toml, numbers in the language's format) and bandwidth.svg (bandwidth.<lang>.svg in the other languages). Same input, same bytes: the SVG carries no
date and a fixed hash salt.
"""

import inspect
import json
import math
import warnings
from pathlib import Path

import matplotlib

from layernorm.ops import REDUCE_BLOCK_M, REDUCE_BLOCK_N, group_size_for
from normkit.bench import median_call_ms
from normkit.tables import write_localized
from normkit.words import ENGLISH, LANGUAGES, Words

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Chinese labels: matplotlib's own font has no CJK glyphs, but the plots keep their text as SVG text,
# drawn by the reader's browser with its fonts, so matplotlib's warning about them is beside the point.
warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)

MODES = {"forward": "fwd", "backward": "bwd"}  # measurement mode: quote-key prefix, also the catalogue key of its label
PROVIDERS = {"triton": "Triton", "torch": "torch"}
COLORS = {"triton": "#3f51b5", "torch": "#ff7043"}


def _index(results):
    return {(r["mode"], r["provider"], r["N"]): r for r in results["rows"]}


def _gbps(value, t):
    return t.number(value, ".0f")


def _ratio(value, t):
    return t.times(value, ".2f")


def _percent(value, t):
    return t.number(value, ".0f") + "%"


def benchmark_markdown(results, copy_gb_per_s, label):
    rows = _index(results)
    out = []
    for mode, short in MODES.items():
        out += [f"**{label(short)}** · M = {results['M']} · {results['dtype']}", "",
                f"| N | Triton GB/s | torch GB/s | {label('of_copy')} | Triton / torch |",
                "|--:|--:|--:|--:|--:|"]
        for n in results["n_values"]:
            t = rows[(mode, "triton", n)]["gb_per_s"]
            r = rows[(mode, "torch", n)]["gb_per_s"]
            out.append(f"| {n} | {_gbps(t, label)} | {_gbps(r, label)} | {_percent(100 * t / copy_gb_per_s, label)} "
                       f"| {_ratio(t / r, label)} |")
        out.append("")
    return "\n".join(out)


def quotes(results, provenance, t=ENGLISH):
    """Flat dict of ready-to-print strings in t's language; keys are what pages write as {{ layernorm.KEY }}."""
    rows = _index(results)
    copy = float(provenance["copy_gb_per_s"])
    q = {"gpu": str(provenance["gpu"]), "copy_gb_per_s": _gbps(copy, t),
         "m": str(results["M"]), "dtype": results["dtype"]}
    for mode, short in MODES.items():
        ratios = {}
        for n in results["n_values"]:
            triton = rows[(mode, "triton", n)]["gb_per_s"]
            torch = rows[(mode, "torch", n)]["gb_per_s"]
            ratios[n] = triton / torch
            q[f"{short}_triton_gbps_n{n}"] = _gbps(triton, t)
            q[f"{short}_torch_gbps_n{n}"] = _gbps(torch, t)
            q[f"{short}_speedup_n{n}"] = _ratio(triton / torch, t)
            q[f"{short}_pct_copy_n{n}"] = _percent(100 * triton / copy, t)
            q[f"{short}_triton_us_n{n}"] = t.number(1000 * rows[(mode, "triton", n)]["ms"], ".0f") + " µs"
        low = min(ratios, key=ratios.get)
        high = max(ratios, key=ratios.get)
        q[f"{short}_speedup_min"], q[f"{short}_speedup_min_n"] = _ratio(ratios[low], t), str(low)
        q[f"{short}_speedup_max"], q[f"{short}_speedup_max_n"] = _ratio(ratios[high], t), str(high)
        best = max(results["n_values"], key=lambda n: rows[(mode, "triton", n)]["gb_per_s"])
        q[f"{short}_triton_best_gbps"] = _gbps(rows[(mode, "triton", best)]["gb_per_s"], t)
        q[f"{short}_triton_best_n"] = str(best)
        q[f"{short}_triton_best_pct_copy"] = _percent(100 * rows[(mode, "triton", best)]["gb_per_s"] / copy, t)
    return q | code_quotes(results, t)


# Row lengths at which the page shows what GROUP_SIZE costs: one per branch of group_size_for.
GROUP_SIZE_EXAMPLES = (1024, 4096, 8192, 16384)
MIB = 1024 * 1024
ELEMENT_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4}


def _mib(n_bytes, t):
    return t.number(n_bytes / MIB, "g") + " MiB"


def group_size_markdown(results, t):
    """What group_size_for costs at the benchmark's M and dtype: computed from the code, not typed."""
    m, element = results["M"], ELEMENT_BYTES[results["dtype"]]
    rows = [f"| N | GROUP_SIZE | {t('updates_per_lock')} | {t('partial_buffers')} | {t('input_x')} |",
            "|--:|--:|--:|--:|--:|"]
    for n in GROUP_SIZE_EXAMPLES:
        groups = group_size_for(n)
        rows.append(f"| {n} | {groups} | {math.ceil(m / groups)} | {_mib(2 * groups * n * 4, t)} "
                    f"| {_mib(m * n * element, t)} |")
    return "\n".join(rows) + "\n"



def code_quotes(results, t):
    """Numbers the page takes from the code: the reduction's tile, the timing protocol, bytes moved."""
    protocol = {name: p.default for name, p in inspect.signature(median_call_ms).parameters.items()
                if p.default is not inspect.Parameter.empty}
    fwd_bytes = {n: 2 * results["M"] * n * ELEMENT_BYTES[results["dtype"]] for n in (1024, 8192)}
    return {
        "reduce_block_m": str(REDUCE_BLOCK_M),
        "reduce_block_n": str(REDUCE_BLOCK_N),
        "timing_warmup_calls": str(protocol["warmup_calls"]),
        "timing_samples": str(protocol["samples"]),
        "timing_calls_per_sample": str(protocol["calls_per_sample"]),
        "fwd_bytes_n1024": _mib(fwd_bytes[1024], t),
        "fwd_bytes_ratio_n8192_n1024": t.times(fwd_bytes[8192] / fwd_bytes[1024], "g"),
    }


def bandwidth_plot(results, provenance, path, t=ENGLISH):
    """GB/s against N, one panel per pass stacked so that the labels stay legible on a phone, the
    copy bandwidth dashed, the legend under the panels rather than over the lines."""
    rows = _index(results)
    copy = float(provenance["copy_gb_per_s"])
    ns = results["n_values"]
    # text stays text (svg.fonttype none): selectable, and its size can be checked by tests/test_browser.py
    with plt.rc_context({"svg.hashsalt": "normkernels", "svg.fonttype": "none", "font.size": 10}):
        fig, axes = plt.subplots(2, 1, figsize=(5, 6.2), sharex=True, layout="constrained")
        for ax, (mode, short) in zip(axes, MODES.items()):
            for provider, label in PROVIDERS.items():  # the tables' column names, in every language
                ax.plot(ns, [rows[(mode, provider, n)]["gb_per_s"] for n in ns], marker="o",
                        markersize=3.5, color=COLORS[provider], label=label)
            ax.axhline(copy, color="0.45", linestyle="--", linewidth=1, label=t("copy_short"))
            ax.set_title(t(short))
            ax.set_ylabel("GB/s")
            ax.set_xticks(ns[1::2] if len(ns) > 8 else ns)
            ax.tick_params(axis="x", labelrotation=45)
            ax.set_ylim(0, copy * 1.08)
            ax.grid(True, linewidth=0.4, alpha=0.5)
        axes[1].set_xlabel("N")
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3, frameon=False)
        fig.suptitle(f"{provenance['gpu']} · M = {results['M']} · {results['dtype']}", fontsize=10)
        fig.savefig(path, format="svg", metadata={"Date": None}, transparent=True)
        plt.close(fig)


def write(measurements, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    provenance, results = measurements["provenance"], measurements["results"]
    copy = float(provenance["copy_gb_per_s"])
    write_localized(out_dir, "benchmark.md", lambda t: benchmark_markdown(results, copy, t))
    write_localized(out_dir, "group-size.md", lambda t: group_size_markdown(results, t))
    for language in LANGUAGES:  # bandwidth.svg, bandwidth.zh.svg, bandwidth.vi.svg: the plot in the page's words
        suffix = "" if language == "en" else f".{language}"
        bandwidth_plot(results, provenance, out_dir / f"bandwidth{suffix}.svg", Words(language))
    write_localized(out_dir, "quotes.json", lambda t: json.dumps(
        quotes(results, provenance, t), indent=2, ensure_ascii=False, sort_keys=True) + "\n")
