"""Render the LayerNorm measurements: Markdown tables, a bandwidth plot, and the numbers prose quotes.

    write(measurements, out_dir)

measurements = {"provenance": {..., "gpu": str, "copy": figure}, "results": measure()}.
Writes benchmark.md, fixed-cost.md, group-size.md, backward-parts.md, group-sweep.md and quotes.json
in every language of the site
(normkit.tables.write_localized: words from normkit/catalogue.toml, numbers in the language's format)
and bandwidth.svg (bandwidth.<lang>.svg in the other languages). Every figure is quoted with the
digits its stated range supports, and every comparison is read from the ranges (normkit.claims).
Same input, same bytes: the SVG carries no date and a fixed hash salt.
"""

import math
import warnings
from pathlib import Path

import matplotlib

from layernorm.ops import REDUCE_BLOCK_M, REDUCE_BLOCK_N, group_size_for
from normkit import claims
from normkit.launch import fused_block_size
from normkit.tables import PLOT_FONT_PT, plot_style, write_localized, write_quotes
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


def _pct_copy(row, copy):
    """% of the copy bandwidth, as a figure: bytes / time against the copy's median."""
    return claims.transform(row["us"], lambda us: 100 * row["bytes"] / (us * 1e3) / copy)


def _speed(triton, torch):
    """How many times faster Triton is than torch (torch's time / Triton's), as a figure."""
    return claims.ratio(torch["us"], triton["us"])


def _pct(fig, t):
    return claims.percent_text(fig, "gpu", t)


def benchmark_markdown(results, copy, t):
    rows = _index(results)
    out = []
    for mode, short in MODES.items():
        out += [f"**{t(short)}** · M = {results['M']} · {results['dtype']}", "",
                f"| N | Triton {t('gpu_us')} | torch {t('gpu_us')} | {t('of_copy')} | {t('verdict')} |",
                "|--:|--:|--:|--:|--:|"]
        for n in results["n_values"]:
            tri, ref = rows[(mode, "triton", n)], rows[(mode, "torch", n)]
            speed = _speed(tri, ref)
            verdict = t(claims.time_verdict(tri["us"], ref["us"], "gpu"))
            out.append(f"| {n} | {claims.with_range(tri['us'], 'gpu', t)} | {claims.with_range(ref['us'], 'gpu', t)} "
                       f"| {_pct(_pct_copy(tri, copy), t)} | {claims.times_text(speed, 'gpu', t)} · {verdict} |")
        out.append("")
    out.append(claims.protocol_text(results["protocol"], t))
    return "\n".join(out) + "\n"


def fixed_cost_markdown(results, t):
    """The fit of each provider and pass, and the host cost of one call beside it."""
    out = [f"| {t('pass')} | {t('provider')} | {t('fixed_us')} | {t('fit_gbps')} | {t('host_us')}{t('comma')}N = "
           f"{results['host_n']} |", "|---|---|--:|--:|--:|"]
    for mode, short in MODES.items():
        for provider, name in PROVIDERS.items():
            fit = results["fits"][f"{mode}/{provider}"]
            host = results["host"][f"{mode}/{provider}"]
            out.append(f"| {t(short)} | {name} | {claims.fixed_cost_text(fit['fixed_us'], t, with_spread=True)} "
                       f"| {claims.text(fit['gb_per_s'], 'gpu', t)} | {claims.with_range(host, 'host', t)} |")
    out += claims.under_table(results["protocol"], t, t("fit_caption") + t("full_stop"), timings=("gpu", "host"))
    return "\n".join(out) + "\n"


def _counts(results, mode):
    """How many widths Triton is faster, on par, slower at than torch."""
    rows = _index(results)
    verdicts = [claims.time_verdict(rows[(mode, "triton", n)]["us"], rows[(mode, "torch", n)]["us"], "gpu")
                for n in results["n_values"]]
    return {v: verdicts.count(v) for v in ("faster", "on_par", "slower")}


def quotes(results, provenance, t=ENGLISH):
    """Flat dict of ready-to-print strings in t's language; keys are what pages write as {{ layernorm.KEY }}."""
    rows = _index(results)
    copy = provenance["copy"]
    p = results["protocol"]
    q = {"gpu": str(provenance["gpu"]), "copy_gb_per_s": claims.copy_text(copy, t),
         "m": str(results["M"]), "dtype": results["dtype"], "n_count": str(len(results["n_values"])),
         "n_min": str(results["n_values"][0]), "n_max": str(results["n_values"][-1]), "host_n": str(results["host_n"])}
    for key in ("warmup_calls", "samples", "calls_per_sample", "repeats", "host_calls", "max_copies"):
        q[f"timing_{key}"] = str(p[key])
    for mode, short in MODES.items():
        pcts, speeds = [], []
        for n in results["n_values"]:
            tri, ref = rows[(mode, "triton", n)], rows[(mode, "torch", n)]
            pct, speed = _pct_copy(tri, copy["median"]), _speed(tri, ref)
            pcts.append((n, pct))
            speeds.append(speed)
            q[f"{short}_triton_us_n{n}"] = claims.text(tri["us"], "gpu", t) + " µs"
            q[f"{short}_torch_us_n{n}"] = claims.text(ref["us"], "gpu", t) + " µs"
            q[f"{short}_pct_copy_n{n}"] = _pct(pct, t)
            q[f"{short}_torch_pct_copy_n{n}"] = _pct(_pct_copy(ref, copy["median"]), t)
            q[f"{short}_speedup_n{n}"] = claims.times_text(speed, "gpu", t)
            q[f"{short}_verdict_n{n}"] = t(claims.time_verdict(tri["us"], ref["us"], "gpu"))
            claims.cite(f"{short}_verdict_n{n}", (tri["us"], ref["us"]), "gpu",
                        (f"{short}_triton_us_n{n}", f"{short}_torch_us_n{n}", f"{short}_speedup_n{n}"))
        typical = claims.typical([f for _, f in pcts])
        q[f"{short}_pct_copy_typical"] = _pct(typical, t)
        low_n, low = min(pcts, key=lambda item: item[1]["median"])
        high_n, high = max(pcts, key=lambda item: item[1]["median"])
        q[f"{short}_pct_copy_min"], q[f"{short}_pct_copy_min_n"] = _pct(low, t), str(low_n)
        q[f"{short}_pct_copy_max"], q[f"{short}_pct_copy_max_n"] = _pct(high, t), str(high_n)
        q[f"{short}_speedup_typical"] = claims.times_text(claims.typical(speeds), "gpu", t)
        q[f"{short}_vs_torch_tally"] = t.tally("vs_widths", _counts(results, mode))
        for provider in PROVIDERS:
            fit = results["fits"][f"{mode}/{provider}"]
            q[f"{short}_{provider}_fixed_us"] = claims.fixed_cost_text(fit["fixed_us"], t, " µs")
            q[f"{short}_{provider}_fit_gbps"] = claims.text_with_unit(fit["gb_per_s"], "gpu", t, " GB/s")
            q[f"{short}_{provider}_host_us"] = claims.text(results["host"][f"{mode}/{provider}"], "host", t) + " µs"
    q |= claims.floor_quotes(t)
    return q | parts_quotes(results, t) | code_quotes(results, t)


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
        rows.append(f"| {n} | {groups} | {t.number(math.ceil(m / groups), 'd')} | {_mib(2 * groups * n * 4, t)} "
                    f"| {_mib(m * n * element, t)} |")
    return "\n".join(rows) + "\n"


PART_COLUMNS = ("zeroing", "kernel1", "kernel2", "both")  # layernorm.benchmark.PARTS, in the table's order


def _parts(results):
    return {(r["part"], r["N"]): r for r in results["parts"]}


def _part_ns(results):
    return sorted({r["N"] for r in results["parts"]})


def backward_parts_markdown(results, t):
    """The backward taken apart, each part timed on its own, beside the whole pass through autograd."""
    parts, rows = _parts(results), _index(results)
    out = [f"| N | GROUP_SIZE | {' | '.join(t(f'part_{c}') for c in PART_COLUMNS)} | {t('part_autograd')} |",
           "|--:|--:|" + "--:|" * (len(PART_COLUMNS) + 1)]
    for n in _part_ns(results):
        cells = [claims.with_range(parts[(c, n)]["us"], "gpu", t) for c in PART_COLUMNS]
        whole = rows.get(("backward", "triton", n))
        cells.append(claims.with_range(whole["us"], "gpu", t) if whole else "—")
        out.append(f"| {n} | {parts[('both', n)]['group_size']} | " + " | ".join(cells) + " |")
    out += claims.under_table(results["protocol"], t, t("parts_caption") + t("full_stop"))
    return "\n".join(out) + "\n"


def _sweep(results):
    by_n = {}
    for r in results["group_sweep"]:
        by_n.setdefault(r["N"], []).append(r)
    return by_n


def group_sweep_markdown(results, t):
    """The backward (both kernels) at each GROUP_SIZE; the chapter's choice marked."""
    by_n = _sweep(results)
    ns = sorted(by_n)
    out = ["| GROUP_SIZE | " + " | ".join(f"N = {n}" for n in ns) + " |", "|--:|" + "--:|" * len(ns)]
    sizes = sorted({r["group_size"] for rows in by_n.values() for r in rows})
    for groups in sizes:
        cells = []
        for n in ns:
            r = next((r for r in by_n[n] if r["group_size"] == groups), None)
            mark = " ◀" if groups == group_size_for(n) else ""
            cells.append("—" if r is None else claims.with_range(r["us"], "gpu", t) + mark)
        label = f"{groups}" + t.parenthesized("= M") if groups == results["M"] else str(groups)
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out += claims.under_table(results["protocol"], t, t("group_sweep_caption") + t("full_stop"))
    return "\n".join(out) + "\n"


def parts_quotes(results, t):
    """What the backward's parts and the GROUP_SIZE sweep let the pages say."""
    parts, q = _parts(results), {}
    for n in _part_ns(results):
        for c in PART_COLUMNS:
            q[f"bwd_{c}_us_n{n}"] = claims.text(parts[(c, n)]["us"], "gpu", t) + " µs"
        share = claims.ratio(parts[("kernel2", n)]["us"], parts[("both", n)]["us"])
        q[f"bwd_kernel2_share_n{n}"] = claims.percent_text(claims.transform(share, lambda r: 100 * r), "gpu", t)
    for n, rows in _sweep(results).items():
        best = rows[claims.fastest([r["us"] for r in rows])]
        default = next((r for r in rows if r["group_size"] == group_size_for(n)), None)
        q[f"group_best_n{n}"] = str(best["group_size"])
        q[f"group_best_us_n{n}"] = claims.text(best["us"], "gpu", t) + " µs"
        q[f"group_default_n{n}"] = str(group_size_for(n))
        if default:
            q[f"group_default_us_n{n}"] = claims.text(default["us"], "gpu", t) + " µs"
            q[f"group_default_vs_best_n{n}"] = t(claims.time_verdict(default["us"], best["us"], "gpu"))
            claims.cite(f"group_default_vs_best_n{n}", (default["us"], best["us"]), "gpu",
                        (f"group_default_us_n{n}", f"group_best_us_n{n}"))
            # one sentence per case: the chapter's choice is the fastest, or another one is
            case = "group_sentence_same" if default is best else "group_sentence_other"
            q[f"group_sentence_n{n}"] = t(case).format(
                n=n, default=group_size_for(n), default_us=q[f"group_default_us_n{n}"], best=best["group_size"],
                best_us=q[f"group_best_us_n{n}"], verdict=q[f"group_default_vs_best_n{n}"])
        one_per_row = next((r for r in rows if r["group_size"] == results["M"]), None)
        if one_per_row:
            q[f"group_per_row_us_n{n}"] = claims.text(one_per_row["us"], "gpu", t) + " µs"
    return q


def code_quotes(results, t):
    """Numbers the page takes from the code: the reduction's tile and the bytes moved."""
    fwd_bytes = {n: 2 * results["M"] * n * ELEMENT_BYTES[results["dtype"]] for n in (1024, 8192)}
    return {
        "reduce_block_m": str(REDUCE_BLOCK_M),
        "reduce_block_n": str(REDUCE_BLOCK_N),
        "fwd_bytes_n1024": _mib(fwd_bytes[1024], t),
        "fwd_bytes_ratio_n8192_n1024": t.times(fwd_bytes[8192] / fwd_bytes[1024], "g"),
        # the first width past a power of two: its block is the next power of two, the rest masked lanes
        "block_n9216": str(fused_block_size(9216, ELEMENT_BYTES[results["dtype"]])),
        "masked_share_n9216": t.percent(100 * (1 - 9216 / fused_block_size(9216, ELEMENT_BYTES[results["dtype"]])),
                                        ".0f"),
    }


def bandwidth_plot(results, provenance, path, t=ENGLISH):
    """GB/s against N, one panel per pass stacked so that the labels stay legible on a phone, each
    line with the band of its stated range, the copy bandwidth dashed, the legend under the panels."""
    rows = _index(results)
    copy = provenance["copy"]["median"]
    ns = results["n_values"]
    with plt.rc_context(plot_style()):
        fig, axes = plt.subplots(2, 1, figsize=(5, 6.2), sharex=True, layout="constrained")
        for ax, (mode, short) in zip(axes, MODES.items()):
            for provider, label in PROVIDERS.items():  # the tables' column names, in every language
                gbps = [claims.transform(rows[(mode, provider, n)]["us"],
                                         lambda us, n=n: rows[(mode, provider, n)]["bytes"] / (us * 1e3)) for n in ns]
                bands = [claims.stated(f, "gpu") for f in gbps]
                ax.fill_between(ns, [lo for lo, _ in bands], [hi for _, hi in bands], color=COLORS[provider],
                                alpha=0.2, linewidth=0)
                ax.plot(ns, [f["median"] for f in gbps], marker="o", markersize=3.5, color=COLORS[provider],
                        label=label)
            ax.axhline(copy, color="0.45", linestyle="--", linewidth=1, label=t("copy_short"))
            ax.set_title(t(short))
            ax.set_ylabel("GB/s")
            ax.set_xticks(ns[1::2] if len(ns) > 8 else ns)
            ax.tick_params(axis="x", labelrotation=45)
            ax.set_ylim(0, copy * 1.15)
            ax.yaxis.set_major_formatter(lambda value, _: t.number(value, "g"))  # 2,5 in Vietnamese
            ax.grid(True, linewidth=0.4, alpha=0.5)
        axes[1].set_xlabel("N")
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3, frameon=False)
        fig.suptitle(f"{provenance['gpu']} · M = {results['M']} · {results['dtype']}", fontsize=PLOT_FONT_PT)
        fig.savefig(path, format="svg", metadata={"Date": None}, transparent=True)
        plt.close(fig)


def write(measurements, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    provenance, results = measurements["provenance"], measurements["results"]
    copy = provenance["copy"]["median"]
    write_localized(out_dir, "benchmark.md", lambda t: benchmark_markdown(results, copy, t))
    write_localized(out_dir, "fixed-cost.md", lambda t: fixed_cost_markdown(results, t))
    write_localized(out_dir, "group-size.md", lambda t: group_size_markdown(results, t))
    write_localized(out_dir, "backward-parts.md", lambda t: backward_parts_markdown(results, t))
    write_localized(out_dir, "group-sweep.md", lambda t: group_sweep_markdown(results, t))
    for language in LANGUAGES:  # bandwidth.svg, bandwidth.zh.svg, bandwidth.vi.svg: the plot in the page's words
        suffix = "" if language == "en" else f".{language}"
        bandwidth_plot(results, provenance, out_dir / f"bandwidth{suffix}.svg", Words(language))
    write_quotes(out_dir, lambda t: quotes(results, provenance, t))
