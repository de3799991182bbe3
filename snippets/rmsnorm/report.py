"""Render the chapter's measurements into the files the page includes.

write(measurements, out_dir) with measurements = {"provenance": {...}, "results": measure()}.
Files: accuracy.md, timing.md, training.md and quotes.json in every language of the site
(normkit.tables.write_localized: words from normkit/catalogue.toml, numbers in the language's format),
examples.txt, exercise.txt, and timing.svg in every language (timing.<lang>.svg).
"""

import json
import math
import pathlib
import warnings

from normkit.bench import gb_per_s
from normkit.tables import write_localized
from normkit.words import ENGLISH, LANGUAGES, Words
from rmsnorm.examples import EPS, format_examples
from rmsnorm.ops import MAX_N, SCRATCH_LIMIT_BYTES
from rmsnorm.exercise import format_exercise
from rmsnorm.timing import PROTOCOL, diff_pct

# Chinese labels: matplotlib's own font has no CJK glyphs, but the plots keep their text as SVG text,
# drawn by the reader's browser with its fonts, so matplotlib's warning about them is beside the point.
warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)

SCOPES = (("fwd", "fwd"), ("fwdbwd", "fwd_bwd"))  # measurement key, catalogue key of its label

def _sci(v, t):
    return "0" if v == 0 else t.number(v, ".2e")


def _us(v, t):
    return t.number(v, ".2f")


def _pct(v, t):
    return t.number(v, "+.1f") + " %"


def _shape(s):
    return f"{s['m']}×{s['n']} {s['dtype']}"


def accuracy_md(acc, t):
    rows = [f"| {t('quantity')} | dtype | atol | rtol | {t('cases')} | {t('max_abs_error')} | {t('error_ratio')} "
            f"| {t('failed')} |",
            "|---|---|--:|--:|--:|--:|--:|--:|"]
    names = {"y": "$y$", "dx": "$dx$", "dgamma": "$d\\gamma$"}
    for s in acc["per_quantity_dtype"]:
        rows.append(f"| {names[s['quantity']]} | {s['dtype']} | {t.number(s['atol'], 'g')} | {t.number(s['rtol'], 'g')} | {s['cases']} | "
                    f"{_sci(s['max_abs_err'], t)} | {t.number(s['worst_ratio'], '.3f')} | {s['failed_cases']} |")
    return "\n".join(rows) + "\n"


def _bandwidth(s, scope, impl, copy):
    ms = s["us"][f"{scope}_{impl}"] / 1000
    gbs = gb_per_s(s["min_bytes"][scope], ms)
    return gbs, 100 * gbs / copy


def timing_md(tim, copy, t):
    rows = [f"| {t('shape')} | {t('scope')} | {t('reference_us')} | {t('kernel_us')} | {t('difference')} "
            f"| {t('reference_gbps')} | {t('kernel_gbps')} |",
            "|---|---|--:|--:|--:|--:|--:|"]
    for s in tim["shapes"]:
        for scope, label in SCOPES:
            ref, ker = s["us"][f"{scope}_reference"], s["us"][f"{scope}_kernel"]
            if s["large"]:
                cells = []
                for impl in ("reference", "kernel"):
                    gbs, pct = _bandwidth(s, scope, impl, copy)
                    cells.append(f"{t.number(gbs, '.0f')} ({t.number(pct, '.0f')} %)")
            else:
                cells = ["—", "—"]
            rows.append(f"| {_shape(s)} | {t(label)} | {_us(ref, t)} | {_us(ker, t)} | {_pct(diff_pct(ker, ref), t)} | "
                        f"{cells[0]} | {cells[1]} |")
    return "\n".join(rows) + "\n"


def training_md(tr, t):
    rows = [f"| | {t('reference')} | {t('kernel')} |", "|---|--:|--:|"]
    for split in ("val", "test"):
        mse = tr[f"{split}_mse"]
        rows.append(f"| {t(f'{split}_mse')} | {t.number(mse['reference'], '.5f')} | {t.number(mse['kernel'], '.5f')} |")
    rows.append(f"| {t('calls')} | — | {tr['kernel_forwards']} / {tr['kernel_backwards']} |")
    rows.append("")
    rows.append(f"| {t('check')} | {t('value')} |")
    rows.append("|---|--:|")
    rows.append(f"| {t('init_out')} | {_sci(tr['initial_output_diff'], t)} |")
    rows.append(f"| {t('init_grad')} | {_sci(tr['initial_grad_diff'], t)} |")
    rows.append(f"| {t('final_param')} | {_sci(tr['final_param_diff'], t)} |")
    rows.append(f"| {t('reload')} | {_sci(tr['reload_diff'], t)} |")
    return "\n".join(rows) + "\n"


def timing_svg(tim, path, t=ENGLISH):
    """Median µs per call, reference against kernel, on linear axes from zero (bar lengths compare
    times), one panel per scope stacked so that the labels stay legible on a phone, the legend above
    the data, and the tables' names for the two implementations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = tim["shapes"]
    # text stays text (svg.fonttype none): selectable, and its size can be checked by tests/test_browser.py
    with plt.rc_context({"svg.hashsalt": "normkernels", "svg.fonttype": "none", "font.size": 10}):
        fig, axes = plt.subplots(2, 1, figsize=(5, 6), layout="constrained")
        width = 0.38
        for ax, (scope, title) in zip(axes, SCOPES):
            xs = range(len(shapes))
            ref = [s["us"][f"{scope}_reference"] for s in shapes]
            ker = [s["us"][f"{scope}_kernel"] for s in shapes]
            bars = [ax.bar([i - width / 2 for i in xs], ref, width, label=t("reference"), color="#9e9e9e"),
                    ax.bar([i + width / 2 for i in xs], ker, width, label=t("kernel"), color="#3f51b5")]
            for group in bars:
                ax.bar_label(group, fmt=lambda v: t.number(v, ".0f"), padding=2)
            ax.set_xticks(list(xs), [f"{s['m']}×{s['n']}\n{s['dtype']}" for s in shapes])
            ax.set_ylim(0, max(ref + ker) * 1.18)
            ax.set_title(t(title))
            ax.set_ylabel("µs")
            ax.grid(axis="y", alpha=0.3)
        fig.legend(handles=bars, loc="outside upper center", ncols=2, frameon=False)
        fig.savefig(path, format="svg", metadata={"Date": None}, transparent=True)
        plt.close(fig)


def _bytes(n_bytes, t):
    """A byte count as the page writes it: grouped digits, and KiB or MiB beside it."""
    digits = t.number(n_bytes, "," if t.language == "en" else "d")
    unit = ("MiB", 2**20) if n_bytes >= 2**20 else ("KiB", 2**10)
    return f"{digits} B ({t.number(n_bytes / unit[1], 'g')} {unit[0]})"


def code_quotes(results, t):
    """Numbers the page takes from the code and the arithmetic of its examples, never typed by hand:
    the contract's limits, the timing protocol, the scratch sizes, the exercise's exact values."""
    ex = results["examples"]
    wrong = results["exercise"]["forward"][0]  # the row of ones that the exercise reasons about
    mean_block = wrong["n"] / wrong["block"]
    return {
        "max_n": str(MAX_N),
        "scratch_limit": t.number(SCRATCH_LIMIT_BYTES / 2**20, "g") + " MiB",
        "timing_warmup_calls": str(PROTOCOL["warmup_calls"]),
        "timing_samples": str(PROTOCOL["samples"]),
        "timing_calls_per_sample": str(PROTOCOL["calls_per_sample"]),
        "scratch_128x257": _bytes(ex["scratch_128x257"]["bytes"], t),
        "scratch_4096x4096": _bytes(ex["scratch_4096x4096"]["bytes"], t),
        "worked_root": t.number(math.sqrt(ex["two_values"]["mean_sq"] + EPS), ".6f"),
        "ex_n": str(wrong["n"]),
        "ex_block": str(wrong["block"]),
        "ex_mean_block": t.number(mean_block, ".9f"),
        "ex_root_n": t.number(math.sqrt(1 + EPS), ".7f"),
        "ex_root_block": t.number(math.sqrt(mean_block + EPS), ".6f"),
        "ex_y_n": t.number(1 / math.sqrt(1 + EPS), ".7f"),
        "ex_y_block": t.number(1 / math.sqrt(mean_block + EPS), ".6f"),
    }


def quotes(measurements, t=ENGLISH):
    """Flat dict of ready-to-print strings in t's language; keys are what pages write as {{ rmsnorm.KEY }}."""
    prov, res = measurements["provenance"], measurements["results"]
    copy = prov["copy_gb_per_s"]
    q = {"gpu": str(prov["gpu"]), "copy_gb_per_s": t.number(copy, ".0f") + " GB/s"}

    acc = res["accuracy"]
    q["acc_cases"] = str(acc["cases"])
    q["acc_failed_cases"] = str(len(acc["failures"]))
    q["acc_worst_ratio"] = t.number(max(s["worst_ratio"] for s in acc["per_quantity_dtype"]), ".2f")
    for s in acc["per_quantity_dtype"]:
        q[f"acc_max_err_{s['quantity']}_{s['dtype']}"] = _sci(s["max_abs_err"], t)

    for s in res["timing"]["shapes"]:
        lab = s["label"]
        for scope, _ in SCOPES:
            ref, ker = s["us"][f"{scope}_reference"], s["us"][f"{scope}_kernel"]
            q[f"{scope}_ref_us_{lab}"] = f"{_us(ref, t)} µs"
            q[f"{scope}_kernel_us_{lab}"] = f"{_us(ker, t)} µs"
            q[f"{scope}_diff_pct_{lab}"] = _pct(diff_pct(ker, ref), t)
            if s["large"]:
                for impl, short in (("reference", "ref"), ("kernel", "kernel")):
                    gbs, pct = _bandwidth(s, scope, impl, copy)
                    q[f"{scope}_{short}_gbps_{lab}"] = t.number(gbs, ".0f") + " GB/s"
                    q[f"{scope}_{short}_pct_copy_{lab}"] = t.number(pct, ".0f") + " %"

    tr = res["training"]
    q["train_steps"] = str(tr["config"]["steps"])
    q["train_batch"] = str(tr["config"]["batch"])
    q["train_kernel_forwards"] = str(tr["kernel_forwards"])
    q["train_kernel_backwards"] = str(tr["kernel_backwards"])
    q["train_init_out_diff"] = _sci(tr["initial_output_diff"], t)
    q["train_init_grad_diff"] = _sci(tr["initial_grad_diff"], t)
    q["train_final_param_diff"] = _sci(tr["final_param_diff"], t)
    q["train_reload_diff"] = _sci(tr["reload_diff"], t)
    for split in ("val", "test"):
        for branch in ("reference", "kernel"):
            q[f"train_{split}_mse_{branch}"] = t.number(tr[f"{split}_mse"][branch], ".5f")
    return q | code_quotes(res, t)


def write(measurements, out_dir):
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    res = measurements["results"]
    copy = measurements["provenance"]["copy_gb_per_s"]
    write_localized(out_dir, "accuracy.md", lambda t: accuracy_md(res["accuracy"], t))
    write_localized(out_dir, "timing.md", lambda t: timing_md(res["timing"], copy, t))
    write_localized(out_dir, "training.md", lambda t: training_md(res["training"], t))
    (out_dir / "examples.txt").write_text(format_examples(res["examples"]) + "\n", encoding="utf-8")
    (out_dir / "exercise.txt").write_text(format_exercise(res["exercise"]) + "\n", encoding="utf-8")
    for language in LANGUAGES:  # timing.svg, timing.zh.svg, timing.vi.svg: the plot in the page's words
        suffix = "" if language == "en" else f".{language}"
        timing_svg(res["timing"], out_dir / f"timing{suffix}.svg", Words(language))
    write_localized(out_dir, "quotes.json", lambda t: json.dumps(
        quotes(measurements, t), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
