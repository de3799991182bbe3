"""Render the chapter's measurements into the files the page includes.

write(measurements, out_dir) with measurements = {"provenance": {...}, "results": measure()}.
Files: accuracy.md, timing.md, cost.md, training.md and quotes.json in every language of the site
(normkit.tables.write_localized: words from normkit/catalogue.toml, numbers in the language's format),
examples.txt, exercise.txt and timing.svg, each in every language (examples.<lang>.txt, timing.<lang>.svg).
"""

import math
import pathlib
import warnings

from normkit import claims
from normkit.bench import gb_per_s
from normkit.tables import plot_style, write_localized, write_quotes
from normkit.words import ENGLISH, LANGUAGES, Words
from rmsnorm.examples import EPS, format_examples
from rmsnorm.ops import MAX_N, SCRATCH_LIMIT_BYTES
from rmsnorm.exercise import format_exercise

# Chinese labels: matplotlib's own font has no CJK glyphs, but the plots keep their text as SVG text,
# drawn by the reader's browser with its fonts, so matplotlib's warning about them is beside the point.
warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)

SCOPES = (("fwd", "fwd"), ("fwdbwd", "fwd_bwd"))  # measurement key, catalogue key of its label

def _sci(v, t):
    """Three significant digits, as a power of ten: 1.95 × 10⁻³."""
    return t.number(v, ".2e") if v else "0"


def _shape(s):
    return f"{s['m']}×{s['n']} {s['dtype']}"


def accuracy_md(acc, t):
    rows = [f"| {t('quantity')} | {t('dtype')} | `atol` | `rtol` | {t('cases')} | {t('max_abs_error')} | {t('error_ratio')} "
            f"| {t('failed')} |",
            "|---|---|--:|--:|--:|--:|--:|--:|"]
    names = {"y": "$y$", "dx": "$dx$", "dgamma": "$d\\gamma$"}
    for s in acc["per_quantity_dtype"]:
        rows.append(f"| {names[s['quantity']]} | {s['dtype']} | {t.number(s['atol'], 'g')} | {t.number(s['rtol'], 'g')} "
                    f"| {t.number(s['cases'], 'd')} | {_sci(s['max_abs_err'], t)} | {t.number(s['worst_ratio'], '.3f')} "
                    f"| {t.number(s['failed_cases'], 'd')} |")
    return "\n".join(rows) + "\n"


def failed_cases(acc):
    """The cases with an element outside tolerance in any quantity: a failure is a (quantity, case)
    pair, and a case is its shape, dtype and seed."""
    return {(f["m"], f["n"], f["dtype"], f["seed"]) for f in acc["failures"]}


IMPLEMENTATIONS = {"reference": "reference", "torch": "F.rms_norm", "kernel": "kernel"}  # key: column word


def _pct_copy(s, scope, impl, copy):
    """% of the copy bandwidth from the minimum bytes, as a figure."""
    return claims.transform(s["us"][f"{scope}_{impl}"],
                            lambda us: 100 * gb_per_s(s["min_bytes"][scope], us / 1000) / copy)


def _against(s, scope, other, t):
    """"2.1× · faster": how many times faster the kernel is than another implementation, and the verdict."""
    kernel, them = s["us"][f"{scope}_kernel"], s["us"][f"{scope}_{other}"]
    speed = claims.ratio(them, kernel)
    return f"{claims.times_text(speed, 'gpu', t)} · {t(claims.time_verdict(kernel, them, 'gpu'))}"


def _word(impl, t, code=True):
    """The implementation's name: PyTorch's as code in the rows, as plain text in a header."""
    if impl == "torch":
        return "`F.rms_norm`" if code else "F.rms_norm"
    return t(impl)


def _multiple_header(other, t):
    """The header of a column of multiples: "kernel vs reference", 「内核相对参考实现」, 「内核相对 F.rms_norm」,
    "kernel so với F.rms_norm"."""
    return t.beside(t("kernel_against"), other)


def timing_md(tim, copy, t):
    rows = [f"| {t('shape')} | {t('scope')} | "
            + " | ".join(f"{_word(i, t, code=False)}{t('comma')}{t('gpu_us')}" for i in IMPLEMENTATIONS)
            + f" | {_multiple_header(t('reference'), t)} | {_multiple_header('F.rms_norm', t)} | {t('kernel')}{t('comma')}{t('pct_copy')} |",
            "|---|---|--:|--:|--:|--:|--:|--:|"]
    for s in tim["shapes"]:
        for scope, label in SCOPES:
            cells = [claims.with_range(s["us"][f"{scope}_{impl}"], "gpu", t) for impl in IMPLEMENTATIONS]
            pct = claims.percent_text(_pct_copy(s, scope, "kernel", copy), "gpu", t) if s["large"] else "—"
            rows.append(f"| {_shape(s)} | {t(label)} | " + " | ".join(cells)
                        + f" | {_against(s, scope, 'reference', t)} | {_against(s, scope, 'torch', t)} | {pct} |")
    rows += claims.under_table(tim["protocol"], t)
    return "\n".join(rows) + "\n"


def cost_md(tim, t):
    """The host cost of one complete call at the small shape, and each implementation's fitted fixed cost."""
    host, fit = tim["host"], tim["fit"]
    small = next(s for s in tim["shapes"] if s["label"] == host["label"])
    rows = [f"| {t('scope')} | {t('provider')} | {t('host_us')}{t('comma')}{_shape(small)} | {t('fixed_us')} "
            f"| {t('fit_gbps')} |", "|---|---|--:|--:|--:|"]
    for scope, label in SCOPES:
        for impl in IMPLEMENTATIONS:
            f = fit["figures"][f"{scope}_{impl}"]
            rows.append(f"| {t(label)} | {_word(impl, t)} | {claims.with_range(host['us'][f'{scope}_{impl}'], 'host', t)} "
                        f"| {claims.fixed_cost_text(f['fixed_us'], t, with_spread=True)} | {claims.text(f['gb_per_s'], 'gpu', t)} |")
    m = fit["m"]
    caption = f"{t('fit_caption')}{t('colon')}M = {m[0]} … {m[-1]}{t('comma')}N = {fit['n']}{t('comma')}{fit['dtype']}"
    rows += claims.under_table(tim["protocol"], t, caption + t("full_stop"), timings=("gpu", "host"))
    return "\n".join(rows) + "\n"


def training_md(tr, t):
    rows = [f"| | {t('reference')} | {t('kernel')} |", "|---|--:|--:|"]
    for split in ("val", "test"):
        mse = tr[f"{split}_mse"]
        rows.append(f"| {t(f'{split}_mse')} | {t.number(mse['reference'], '.5f')} | {t.number(mse['kernel'], '.5f')} |")
    rows.append(f"| {t('calls')} | — | {t.number(tr['kernel_forwards'], 'd')} / {t.number(tr['kernel_backwards'], 'd')} |")
    rows.append("")
    rows.append(f"| {t('check')} | {t('value')} |")
    rows.append("|---|--:|")
    rows.append(f"| {t('init_out')} | {_sci(tr['initial_output_diff'], t)} |")
    rows.append(f"| {t('init_grad')} | {_sci(tr['initial_grad_diff'], t)} |")
    rows.append(f"| {t('final_param')} | {_sci(tr['final_param_diff'], t)} |")
    rows.append(f"| {t('reload')} | {_sci(tr['reload_diff'], t)} |")
    return "\n".join(rows) + "\n"


def timing_svg(tim, path, t=ENGLISH):
    """GPU µs per call, the three implementations side by side, on linear axes from zero (bar lengths
    compare times), each bar with the stated range as an error bar; one panel per scope stacked so that
    the labels stay legible on a phone, the legend above the data, and the tables' names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = tim["shapes"]
    colors = {"reference": "#9e9e9e", "torch": "#ff7043", "kernel": "#3f51b5"}
    with plt.rc_context(plot_style()):
        fig, axes = plt.subplots(2, 1, figsize=(5, 6), layout="constrained")
        width = 0.27
        for ax, (scope, title) in zip(axes, SCOPES):
            xs = range(len(shapes))
            bars, tops = [], []
            for i, impl in enumerate(IMPLEMENTATIONS):
                figs = [s["us"][f"{scope}_{impl}"] for s in shapes]
                ranges = [claims.stated(f, "gpu") for f in figs]
                errors = [[f["median"] - lo for f, (lo, _) in zip(figs, ranges)],
                          [hi - f["median"] for f, (_, hi) in zip(figs, ranges)]]
                label = "F.rms_norm" if impl == "torch" else t(impl)
                group = ax.bar([x + (i - 1) * width for x in xs], [f["median"] for f in figs], width,
                               yerr=errors, capsize=2, label=label, color=colors[impl], ecolor="#808080")
                # vertical, at the figure's size: three bars side by side leave no room for level labels
                ax.bar_label(group, labels=[claims.text(f, "gpu", t) for f in figs], padding=4, rotation=90)
                bars.append(group)
                tops += [hi for _, hi in ranges]
            ax.set_xticks(list(xs), [f"{s['m']}×{s['n']}\n{s['dtype']}" for s in shapes])
            ax.set_ylim(0, max(tops) * 1.35)
            ax.yaxis.set_major_formatter(lambda value, _: t.number(value, "g"))  # 2,5 in Vietnamese
            ax.set_title(t(title))
            ax.set_ylabel(t("gpu_us"))
            ax.grid(axis="y", alpha=0.3)
        fig.legend(handles=bars, loc="outside upper center", ncols=3, frameon=False)
        fig.savefig(path, format="svg", metadata={"Date": None}, transparent=True)
        plt.close(fig)


def _bytes(n_bytes, t):
    """A byte count as the page writes it: grouped digits, and KiB or MiB beside it."""
    digits = t.number(n_bytes, "d")
    unit = ("MiB", 2**20) if n_bytes >= 2**20 else ("KiB", 2**10)
    return f"{digits} B" + t.parenthesized(f"{t.number(n_bytes / unit[1], 'g')} {unit[0]}")


def code_quotes(results, t):
    """Numbers the page takes from the code and the arithmetic of its examples, never typed by hand:
    the contract's limits, the timing protocol, the scratch sizes, the exercise's exact values."""
    ex = results["examples"]
    wrong = results["exercise"]["forward"][0]  # the row of ones that the exercise reasons about
    mean_block = wrong["n"] / wrong["block"]
    return {
        "max_n": str(MAX_N),
        "scratch_limit": t.number(SCRATCH_LIMIT_BYTES / 2**20, "g") + " MiB",
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
    copy = prov["copy"]["median"]
    q = {"gpu": str(prov["gpu"]), "copy_gb_per_s": claims.copy_text(prov["copy"], t)}

    acc = res["accuracy"]
    failed = len(failed_cases(acc))
    q["acc_result"] = t.portion("acc_result", failed, acc["cases"])
    q["acc_outside"] = t.portion("acc_outside", failed, acc["cases"])
    q["acc_worst_ratio"] = t.number(max(s["worst_ratio"] for s in acc["per_quantity_dtype"]), ".2f")
    for s in acc["per_quantity_dtype"]:
        q[f"acc_max_err_{s['quantity']}_{s['dtype']}"] = _sci(s["max_abs_err"], t)

    tim = res["timing"]
    for s in tim["shapes"]:
        lab = s["label"]
        if s["large"]:
            # PARTIAL (M x N fp32) is written and read once more than the minimum: the most a kernel
            # that moves it could reach at the copy bandwidth is min / (min + 2 * PARTIAL)
            minimum, partial = s["min_bytes"]["fwdbwd"], 2 * 4 * s["m"] * s["n"]
            q[f"partial_traffic_mb_{lab}"] = t.number(partial / 1e6, ".0f")
            q[f"fwdbwd_min_mb_{lab}"] = t.number(minimum / 1e6, ".0f")
            q[f"fwdbwd_partial_ceiling_{lab}"] = t.percent(100 * minimum / (minimum + partial), ".0f")
        for scope, _ in SCOPES:
            for impl in IMPLEMENTATIONS:
                q[f"{scope}_{impl}_us_{lab}"] = claims.text(s["us"][f"{scope}_{impl}"], "gpu", t) + " µs"
                if s["large"]:
                    q[f"{scope}_{impl}_pct_copy_{lab}"] = claims.percent_text(_pct_copy(s, scope, impl, copy), "gpu", t)
            for other in ("reference", "torch"):
                kernel, them = s["us"][f"{scope}_kernel"], s["us"][f"{scope}_{other}"]
                q[f"{scope}_vs_{other}_{lab}"] = claims.times_text(claims.ratio(them, kernel), "gpu", t)
                q[f"{scope}_vs_{other}_verdict_{lab}"] = t(claims.time_verdict(kernel, them, "gpu"))
                claims.cite(f"{scope}_vs_{other}_verdict_{lab}", (kernel, them), "gpu",
                            (f"{scope}_vs_{other}_{lab}", f"{scope}_kernel_us_{lab}", f"{scope}_{other}_us_{lab}"))
            for impl in IMPLEMENTATIONS:
                if lab == tim["host"]["label"]:
                    q[f"{scope}_{impl}_host_us"] = claims.text(tim["host"]["us"][f"{scope}_{impl}"], "host", t) + " µs"
                fit = tim["fit"]["figures"][f"{scope}_{impl}"]
                q[f"{scope}_{impl}_fixed_us"] = claims.fixed_cost_text(fit["fixed_us"], t, " µs")
                q[f"{scope}_{impl}_fit_gbps"] = claims.text_with_unit(fit["gb_per_s"], "gpu", t, " GB/s")
    q["host_shape"] = next(_shape(s) for s in tim["shapes"] if s["label"] == tim["host"]["label"])
    q["fit_m_min"], q["fit_m_max"], q["fit_n"] = str(tim["fit"]["m"][0]), str(tim["fit"]["m"][-1]), str(tim["fit"]["n"])

    tr = res["training"]
    q["train_steps"] = t.number(tr["config"]["steps"], "d")
    q["train_batch"] = str(tr["config"]["batch"])
    q["train_kernel_forwards"] = t.number(tr["kernel_forwards"], "d")
    q["train_kernel_backwards"] = t.number(tr["kernel_backwards"], "d")
    q["train_init_out_diff"] = _sci(tr["initial_output_diff"], t)
    q["train_init_grad_diff"] = _sci(tr["initial_grad_diff"], t)
    q["train_final_param_diff"] = _sci(tr["final_param_diff"], t)
    q["train_reload_diff"] = _sci(tr["reload_diff"], t)
    for split in ("val", "test"):
        for branch in ("reference", "kernel"):
            q[f"train_{split}_mse_{branch}"] = t.number(tr[f"{split}_mse"][branch], ".5f")
    for key, value in tim["protocol"].items():
        q[f"timing_{key}"] = str(value)
    q |= claims.floor_quotes(t)
    return q | code_quotes(res, t)


def write(measurements, out_dir):
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    res = measurements["results"]
    copy = measurements["provenance"]["copy"]["median"]
    write_localized(out_dir, "accuracy.md", lambda t: accuracy_md(res["accuracy"], t))
    write_localized(out_dir, "timing.md", lambda t: timing_md(res["timing"], copy, t))
    write_localized(out_dir, "cost.md", lambda t: cost_md(res["timing"], t))
    write_localized(out_dir, "training.md", lambda t: training_md(res["training"], t))
    write_localized(out_dir, "examples.txt", lambda t: format_examples(res["examples"], t) + "\n")
    write_localized(out_dir, "exercise.txt", lambda t: format_exercise(res["exercise"], t) + "\n")
    for language in LANGUAGES:  # timing.svg, timing.zh.svg, timing.vi.svg: the plot in the page's words
        suffix = "" if language == "en" else f".{language}"
        timing_svg(res["timing"], out_dir / f"timing{suffix}.svg", Words(language))
    write_quotes(out_dir, lambda t: quotes(measurements, t))
