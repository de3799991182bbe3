"""Render the LayerNorm measurements: Markdown tables, a bandwidth plot, and the numbers prose quotes.

    write(measurements, out_dir)

measurements = {"provenance": {..., "gpu": str, "copy_gb_per_s": float}, "results": measure()}.
Writes benchmark.md, bandwidth.svg and quotes.json. Same input, same bytes: the SVG carries no
date and a fixed hash salt.
"""

import json
from pathlib import Path

import matplotlib

from normkit.tables import write_localized

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = {"forward": "fwd", "backward": "bwd"}
PROVIDERS = {"triton": "Triton", "torch": "torch"}
COLORS = {"triton": "#3f51b5", "torch": "#ff7043"}


def _index(results):
    return {(r["mode"], r["provider"], r["N"]): r for r in results["rows"]}


def _gbps(value):
    return f"{value:.0f}"


def _ratio(value):
    return f"{value:.2f}×"


def _percent(value):
    return f"{value:.0f}%"


LABELS = {
    "en": {"of_copy": "Triton / copy"},
    "zh": {"of_copy": "Triton / 拷贝带宽"},
    "vi": {"of_copy": "Triton / băng thông sao chép"},
}


def benchmark_markdown(results, copy_gb_per_s, label):
    rows = _index(results)
    out = []
    for mode, short in MODES.items():
        out += [f"**{short}** · M = {results['M']} · {results['dtype']}", "",
                f"| N | Triton GB/s | torch GB/s | {label('of_copy')} | Triton / torch |",
                "|--:|--:|--:|--:|--:|"]
        for n in results["n_values"]:
            t = rows[(mode, "triton", n)]["gb_per_s"]
            r = rows[(mode, "torch", n)]["gb_per_s"]
            out.append(f"| {n} | {_gbps(t)} | {_gbps(r)} | {_percent(100 * t / copy_gb_per_s)} | {_ratio(t / r)} |")
        out.append("")
    return "\n".join(out)


def quotes(results, provenance):
    """Flat dict of ready-to-print strings; keys are what pages write as {{ layernorm.KEY }}."""
    rows = _index(results)
    copy = float(provenance["copy_gb_per_s"])
    q = {"gpu": str(provenance["gpu"]), "copy_gb_per_s": _gbps(copy),
         "m": str(results["M"]), "dtype": results["dtype"]}
    for mode, short in MODES.items():
        ratios = {}
        for n in results["n_values"]:
            t = rows[(mode, "triton", n)]["gb_per_s"]
            r = rows[(mode, "torch", n)]["gb_per_s"]
            ratios[n] = t / r
            q[f"{short}_triton_gbps_n{n}"] = _gbps(t)
            q[f"{short}_torch_gbps_n{n}"] = _gbps(r)
            q[f"{short}_speedup_n{n}"] = _ratio(t / r)
            q[f"{short}_pct_copy_n{n}"] = _percent(100 * t / copy)
            q[f"{short}_triton_us_n{n}"] = f"{1000 * rows[(mode, 'triton', n)]['ms']:.0f} µs"
        low = min(ratios, key=ratios.get)
        high = max(ratios, key=ratios.get)
        q[f"{short}_speedup_min"], q[f"{short}_speedup_min_n"] = _ratio(ratios[low]), str(low)
        q[f"{short}_speedup_max"], q[f"{short}_speedup_max_n"] = _ratio(ratios[high]), str(high)
        best = max(results["n_values"], key=lambda n: rows[(mode, "triton", n)]["gb_per_s"])
        q[f"{short}_triton_best_gbps"] = _gbps(rows[(mode, "triton", best)]["gb_per_s"])
        q[f"{short}_triton_best_n"] = str(best)
        q[f"{short}_triton_best_pct_copy"] = _percent(100 * rows[(mode, "triton", best)]["gb_per_s"] / copy)
    return q


def bandwidth_plot(results, provenance, path):
    rows = _index(results)
    copy = float(provenance["copy_gb_per_s"])
    ns = results["n_values"]
    with plt.rc_context({"svg.hashsalt": "normkernels", "svg.fonttype": "path", "font.size": 10}):
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
        for ax, (mode, short) in zip(axes, MODES.items()):
            for provider, label in PROVIDERS.items():
                ax.plot(ns, [rows[(mode, provider, n)]["gb_per_s"] for n in ns], marker="o",
                        markersize=3.5, color=COLORS[provider], label=label)
            ax.axhline(copy, color="0.45", linestyle="--", linewidth=1, label="copy")
            ax.set_title(short)
            ax.set_xlabel("N")
            ax.set_xticks(ns[1::2] if len(ns) > 8 else ns)
            ax.tick_params(axis="x", labelrotation=45)
            ax.set_ylim(0, copy * 1.08)
            ax.grid(True, linewidth=0.4, alpha=0.5)
        axes[0].set_ylabel("GB/s")
        axes[1].legend(loc="lower right", frameon=False)
        fig.suptitle(f"{provenance['gpu']} · M = {results['M']} · {results['dtype']}", fontsize=10)
        fig.tight_layout()
        fig.savefig(path, format="svg", metadata={"Date": None})
        plt.close(fig)


def write(measurements, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    provenance, results = measurements["provenance"], measurements["results"]
    copy = float(provenance["copy_gb_per_s"])
    write_localized(out_dir, "benchmark.md", lambda label: benchmark_markdown(results, copy, label), LABELS)
    bandwidth_plot(results, provenance, out_dir / "bandwidth.svg")
    (out_dir / "quotes.json").write_text(
        json.dumps(quotes(results, provenance), indent=2, ensure_ascii=False, sort_keys=True) + "\n",
        encoding="utf-8",
    )
