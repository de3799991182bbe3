"""Render the "faster" data set: the tables, plots and quotes of both "Going faster" pages.

    write(measurements, out_dir)

measurements = {"provenance": {..., "gpu", "copy": figure}, "results": faster.benchmark.measure()}.
Every speed figure is GPU time (CUDA-graph replay, normkit.bench) with the spread of its three
repetitions; host cost is its own figure. Numbers carry the digits their stated range supports and
every verdict (met, faster, on par, ...) is read from the ranges (normkit.claims). Files, for each
chapter OP in (layernorm, rmsnorm):

- OP-targets.md: every provider at the target shapes, fwd and fwd+bwd as GPU µs and % of the copy
  bandwidth measured in the same run, and each target met, missed, or within the figure's range;
- OP-small.md: the launch-bound 128x257 case, GPU µs per call and the host cost of one call;
- OP-profile.md: host time against the profiler's kernel time of one fwd+bwd call;
- OP-host.md: the host cost of one call at few rows (decoding, small batches) against eager PyTorch,
  each ratio against its target; OP-host-steps.md: each step of one call alone; OP-host-trace.md:
  the profiler's trace of one plain call, span by span;
- OP-sweep-gpu.svg (and .zh.svg, .vi.svg): % of copy bandwidth against N over the sweep
  (M = total / N rows) for every provider, fwd and fwd+bwd panels, each line with its range;
- OP-sweep.md: the sweep at a few N plus each provider's lowest figure;
- OP-dtypes.md: the sweep's fp16 and fp32 points;
- OP-between.md: the drop-ins at widths between the launch tables' entries, each with the bytes
  its rows start on;

and dw-error.md (LayerNorm dW error per design), llama.md (a Llama training step with each RMSNorm:
GPU time, speed-up over eager, loss and gradient agreement) and quotes.json (every number the pages quote, as
ready-to-print strings: a page writes {{ faster.KEY }}; faster.quotes writes them). Tables and quotes are written in every
language of the site (normkit.tables.write_localized: words from normkit/catalogue.toml, numbers in
the language's format), and so are the plots. Same input, same bytes: no dates, a fixed SVG hash
salt, sorted keys.
"""

import warnings
from pathlib import Path

import matplotlib

from faster.quotes import quotes
from faster.results import (BACKWARD_DESIGNS, DW_DESIGNS, ELEMENT_SIZE, MISSING, MODES, NAMES, OPS,
                            PACKAGE_NAMES, PROVIDERS, _between, _copy, _design_pct, _design_rows, _index,
                            _installed, _lowest, _num, _ok, _pct, _ratio, _ref_max, _sci, _series,
                            _shape_text, _short, _total_text, _us, pct_copy)
from normkit import aligned, claims
from normkit.tables import PLOT_FONT_PT, plot_style, write_localized, write_quotes
from normkit.words import ENGLISH, LANGUAGES, Words

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Chinese labels: matplotlib's own font has no CJK glyphs, but the plots keep their text as SVG text,
# drawn by the reader's browser with its fonts, so matplotlib's warning about them is beside the point.
warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)


COLORS = {"fast": "#3f51b5", "teaching": "#9e9e9e", "torch": "#ff7043", "compile": "#26a69a", "liger": "#ab47bc", "quack": "#8d6e63"}


MARKERS = {"fast": "o", "teaching": "s", "torch": "^", "compile": "D", "liger": "v", "quack": "P"}


SHOW_N = (1024, 2560, 4096, 6144, 8192, 12288, 16384)  # the sweep's columns in the tables


INK = "#808080"  # axes and text: readable on the light and the dark theme


def _status(fig, target, t):
    """✓ met, ✗ missed, ≈ within the figure's range: read from the stated range."""
    return {"met": "✓", "missed": "✗", "within": "≈"}[claims.against(fig, target, "gpu")]


def _phrase(quantity, unit, t):
    """A table header's pass and unit: side by side ("fwd % copy", 「前向占拷贝带宽 %」, 「前向 GPU µs」),
    with a comma in Vietnamese ("lượt xuôi, µs GPU")."""
    if t.language == "vi":
        return quantity + t("comma") + unit
    return t.beside(quantity, unit)


def targets_md(res, op, copy, t):
    rows = res["targets"][op]
    index = _index(rows)
    goal = res["targets_pct"]
    fwd, both = t("fwd"), t("fwdbwd")
    out = [f"**{res['dtype']}** · M = {res['M']} · {t('copy')}{t('colon')}{claims.copy_text(copy, t)} · "
           f"{t('targets')}{t('colon')}{fwd} ≥ {t.percent(goal['fwd'], '.0f')}{t('comma')}"
           f"{both} ≥ {t.percent(goal['fwd_bwd'], '.0f')}",
           "",
           f"| {t('shape')} | {t('provider')} | {_phrase(fwd, t('gpu_us'), t)} | {_phrase(fwd, t('pct_copy'), t)} "
           f"| {_phrase(both, t('gpu_us'), t)} | {_phrase(both, t('pct_copy'), t)} |",
           "|---|---|--:|--:|--:|--:|"]
    for n in res["target_n"]:
        for name in _installed(rows):
            r = index.get((name, n))
            head = f"| {_shape_text(res['M'], n)} | `{NAMES[op][name]}` |"
            if not _ok(r):
                out.append(f"{head} {t('refused')} | — | — | — |")
                continue
            cells = []
            for key, _ in MODES:
                pct = pct_copy(r, key, copy["median"])
                cells += [claims.with_range(r[f"{key}_gpu_us"], "gpu", t),
                          f"{claims.with_range(pct, 'gpu', t)} {_status(pct, goal[key], t)}"]
            out.append(f"{head} {' | '.join(cells)} |")
    marks = t("target_marks").format(edge=claims.edge_text("gpu", t))
    out += claims.under_table(res["protocol"], t, "\n".join(filter(None, (marks, packages_text(res, t)))))
    return "\n".join(out) + "\n"


def packages_text(res, t):
    """Which run had which provider package: "Liger-Kernel 0.8.5 · QuACK: not installed" (a data set
    measured before the packages were recorded says nothing)."""
    packages = res.get("packages")
    if packages is None:
        return ""
    parts = [f"{PACKAGE_NAMES[name]} {version}" if version else f"{PACKAGE_NAMES[name]}{t('colon')}{t('not_installed')}"
             for name, version in packages.items()]
    return t("packages_in_run").format(packages=" · ".join(parts))


def small_md(res, op, t):
    rows = [r for r in res["small"] if r["op"] == op]
    first = rows[0]
    out = [f"**{_shape_text(first['M'], first['N'])} {first['dtype']}** · {t('per_call')}", "",
           f"| {t('provider')} | {t('fwd')}{t('comma')}{t('gpu_us')} | {t('fwdbwd')}{t('comma')}{t('gpu_us')} "
           f"| {t('fwd')}{t('comma')}{t('host_us')} | {t('fwdbwd')}{t('comma')}{t('host_us')} |",
           "|---|--:|--:|--:|--:|"]
    for name in _installed(rows):
        r = next(r for r in rows if r["provider"] == name)
        head = f"| `{NAMES[op][name]}` |"
        if not _ok(r):
            out.append(f"{head} {t('refused')} | — | — | — |")
            continue
        out.append(f"{head} {claims.with_range(r['fwd_gpu_us'], 'gpu', t)} | "
                   f"{claims.with_range(r['fwd_bwd_gpu_us'], 'gpu', t)} | "
                   f"{claims.with_range(r['fwd_host_us'], 'host', t)} | {claims.with_range(r['fwd_bwd_host_us'], 'host', t)} |")
    out += claims.under_table(res["protocol"], t, timings=("gpu", "host"))
    return "\n".join(out) + "\n"


def profile_md(res, op, t):
    rows = [p for p in res["profile"] if p["op"] == op]
    out = [f"**{t('fwdbwd')}** · {res['dtype']}", "",
           f"| {t('shape')} | {t('provider')} | {t('host_us')} | {t('kernels_us')} | {t('launches')} |",
           "|---|---|--:|--:|--:|"]
    for p in rows:
        if "error" in p:
            continue
        out.append(f"| {_shape_text(p['M'], p['N'])} | `{NAMES[op][p['provider']]}` | "
                   f"{claims.with_range(p['host_us_per_call'], 'host', t)} | "
                   f"{claims.with_range(p['gpu_us_per_call'], 'gpu', t)} | "
                   f"{t.number(p['launches_per_call'], '.0f')} |")
    out += ["", t("profile_protocol").format(repeats=res["protocol"]["repeats"])]
    return "\n".join(out) + "\n"


MARKS = {"met": "✓", "missed": "✗", "within": "≈"}


STEPS = ("synchronize", "checks", "views", "allocate", "launch", "forward_rows", "call", "torch_call",
         "autograd_identity", "autograd_forward", "backward_rows", "call_fwd_bwd", "torch_fwd_bwd")


def host_md(res, op, t):
    """The host cost of one call at few rows, fast against eager PyTorch, and each target's verdict."""
    rows = {(r["M"], r["N"], r["provider"]): r for r in res["host_grid"] if r["op"] == op}
    targets = res["host_targets"]
    out = [f"**{res['dtype']}** · {t('host_per_call')}", "",
           f"| {t('shape')} | {t('fwd')}{t('colon')}{t('host_pair')} | {t('host_ratio')} "
           f"| {t('fwdbwd')}{t('colon')}{t('host_pair')} | {t('host_ratio')} |",
           "|---|--:|--:|--:|--:|"]
    for m, n in sorted({(m, n) for m, n, _ in rows}):
        fast, torch = rows[(m, n, "fast")], rows[(m, n, "torch")]
        cells = []
        for key, _ in MODES:
            if not (_ok(fast) and _ok(torch)):
                cells += [t("refused"), "—"]
                continue
            f, e = fast[f"{key}_host_us"], torch[f"{key}_host_us"]
            verdict = claims.under(f, e, targets[key])
            cells += [f"{_us(f, t, 'host')} · {_us(e, t, 'host')}",
                      f"{claims.paired_text(f, e, t)} {MARKS[verdict]}"]
        out.append(f"| {_shape_text(m, n)} | " + " | ".join(cells) + " |")
    words = {_short(k): t.times(v, ".1f") for k, v in targets.items()} | {"edge": claims.edge_text("host", t)}
    out += claims.under_table(res["protocol"], t, t("host_target_marks").format(**words), timings=("host",))
    return "\n".join(out) + "\n"


def host_steps_md(res, op, t):
    """Each step of one fast call, alone, against the whole call and eager PyTorch's."""
    steps = {r["step"]: r["host_us"] for r in res["host_steps"]["steps"] if r["op"] == op}
    shape = _shape_text(res["host_steps"]["M"], res["host_steps"]["N"])
    out = [f"**{shape} {res['host_steps']['dtype']}** · {t('host_per_call')}", "",
           f"| {t('step')} | {t('host_us')} |", "|---|--:|"]
    for step in STEPS:
        fig = steps.get(step)
        cell = t("refused") if fig is None or "error" in fig else claims.with_range(fig, "host", t)
        out.append(f"| {t('step_' + step).format(fast=NAMES[op]['fast'], torch=NAMES[op]['torch'])} | {cell} |")
    out += claims.under_table(res["protocol"], t, t("host_steps_note"), timings=("host",))
    return "\n".join(out) + "\n"


def host_trace_md(res, op, t):
    """The profiler's trace of one plain forward+backward call: each span on the host in order, where
    it starts and how long it lasts, then the whole call and its time in no span."""
    trace = next(r for r in res["host_trace"] if r["op"] == op)
    shape = _shape_text(trace["M"], trace["N"])
    host = lambda f: claims.with_range(f, "host", t)  # noqa: E731
    title = t("trace_title").format(calls=trace["calls"], fast=NAMES[op][trace["provider"]])
    out = [f"**{shape} {trace['dtype']}** · {title}", "",
           f"| {t('span')} | {t('thread')} | {t('starts_us')} | {t('lasts_us')} |", "|---|---|--:|--:|"]
    for s in trace["spans"]:
        name = " " * s["depth"] + ("↳ " if s["depth"] else "") + f"`{s['name']}`"
        if s["count"] > 1:
            name += f" ×{s['count']}"
        thread = t("thread_caller" if s["thread"] == 0 else "thread_other")
        out.append(f"| {name} | {thread} | {host(s['start_us'])} | {host(s['us'])} |")
    out.append(f"| **{t('trace_call')}** | {t('thread_caller')} | | {host(trace['call_us'])} |")
    out.append(f"| {t('trace_outside')} | | | {host(trace['outside_us'])} |")
    out += claims.under_table(res["protocol"], t, t("trace_note").format(calls=trace["calls"]), timings=("host",))
    return "\n".join(out) + "\n"


def designs_md(res, op, copy, t):
    """The backward's designs side by side at a few widths, each with its fastest configuration."""
    rows = _design_rows(res, op)
    out = [f"| N | {t('design_row')} | {t('design_staged')} | {t('design_chunked')} |",
           "|--:|--:|--:|--:|"]
    for n, dtype in dict.fromkeys((n, d) for n, d, _ in rows):
        cells = []
        for design in BACKWARD_DESIGNS:
            r = rows.get((n, dtype, design))
            cells.append("—" if r is None else t("refused") if "error" in r["bwd_gpu_us"]
                         else _pct(_design_pct(r, copy, dtype), t))
        label = n if dtype == res["dtype"] else f"{n} · {dtype}"
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out += claims.under_table(res["protocol"], t, t("designs_note").format(total=_total_text(res["sweep_total"])))
    return "\n".join(out) + "\n"


LLAMA_NAMES = {"torch": "LlamaRMSNorm", "fast": "rms_norm_fast", "liger": "Liger"}


def llama_md(res, t):
    """The Llama training step with each RMSNorm: GPU time, against eager, and agreement with eager."""
    llama = res["llama"]
    steps = {(r["provider"], r["hidden"]): r["gpu_us"] for r in llama["steps"]}
    agree = {(r["provider"], r["hidden"]): r for r in llama["agreement"]}
    c = llama["config"]
    # the layers and the vocabulary are counts (32 000 in Vietnamese); batch × seq is the input's shape, digits
    counts = {key: t.number(c[key], "d") for key in ("layers", "vocab")}
    out = [t("llama_config").format(**counts, batch=c["batch"], seq=c["seq"]), "",
           f"| {t('hidden')} | {t('provider')} | {t('step_ms')} | {t('vs_eager')} | {t('loss')} "
           f"| {t('grad_diff')} |", "|--:|---|--:|--:|--:|--:|"]
    for hidden, _ in llama["shapes"]:
        eager = steps.get(("torch", hidden))
        for name in LLAMA_NAMES:
            fig, a = steps.get((name, hidden)), agree.get((name, hidden), {})
            if fig is None or "error" in fig or "error" in a:
                if (fig or {}).get("error", a.get("error", "")).startswith(MISSING):
                    continue  # a package not installed: left out
                out.append(f"| {hidden} | `{LLAMA_NAMES[name]}` | {t('refused')} | — | — | — |")
                continue
            ms = claims.transform(fig, lambda us: us / 1e3)
            speed = "—" if name == "torch" else (
                f"{claims.times_text(claims.ratio(eager, fig), 'gpu', t)} · {t(claims.time_verdict(fig, eager, 'gpu'))}")
            diff = "—" if name == "torch" else _sci(a["max_grad_rel_diff"], t)
            out.append(f"| {hidden} | `{LLAMA_NAMES[name]}` | {claims.with_range(ms, 'gpu', t)} | {speed} | "
                       f"{t.number(a['loss'], '.5f')} | {diff} |")
    floor = t.number(100 * claims.REPRODUCIBILITY["gpu"], "g")
    out += ["", t("llama_note"), "", t("protocol_model").format(**llama["protocol"], floor=floor)]
    return "\n".join(out) + "\n"


def dw_md(dw, t):
    fast = dw["fast"].get("max_abs")
    out = [f"**LayerNorm** · {_shape_text(dw['M'], dw['N'])} {dw['dtype']} · {t('dw_ref')} = "
           f"{_num(_ref_max(dw), t)}", "",
           f"| {t('design')} | {t('max_abs')} | {t('rel')} | {t('vs_fast')} |",
           "|---|--:|--:|--:|"]
    for name in DW_DESIGNS:
        e = dw.get(name)
        if e is None or ("error" in e and e["error"].startswith(MISSING)):
            continue
        label = t(f"dw_{name}").replace("{group}", str(e.get("group_size", "")))
        if "error" in e:
            out.append(f"| {label} | {t('refused')} | — | — |")
            continue
        ratio = _ratio(e["max_abs"] / fast, t) if fast else "—"
        out.append(f"| {label} | {t.number(e['max_abs'], '.3g')} | {_sci(e['rel_norm'], t)} | {ratio} |")
    return "\n".join(out) + "\n"




def sweep_svg(res, op, gpu, copy, path, t=ENGLISH):
    """% of the copy bandwidth against N, GPU time, each line with the band of its stated range; the fwd
    panel above the fwd+bwd one so that the labels stay legible on a phone, the legend under the panels."""
    series = _series(res, op, copy)
    ns = sorted({n for points in series.values() for n, _ in points})
    ticks = [n for n in ns if n % 4096 == 0 or n == ns[0]]  # labels that do not overlap at 12 pt
    with plt.rc_context(plot_style(**{"text.color": INK, "axes.labelcolor": INK, "axes.edgecolor": INK,
                                      "xtick.color": INK, "ytick.color": INK})):
        fig, axes = plt.subplots(2, 1, figsize=(5, 7.2), sharex=True, layout="constrained")
        for ax, (key, _) in zip(axes, MODES):
            for name, points in series.items():
                xs, figs = [n for n, _ in points], [f[key] for _, f in points]
                bands = [claims.stated(f, "gpu") for f in figs]
                # torch.compile is measured at a few widths only: points with error bars, no line
                if name == "compile":
                    ax.errorbar(xs, [f["median"] for f in figs], capsize=2, marker=MARKERS[name], markersize=5,
                                linestyle="none", color=COLORS[name], label=NAMES[op][name],
                                yerr=[[f["median"] - lo for f, (lo, _) in zip(figs, bands)],
                                      [hi - f["median"] for f, (_, hi) in zip(figs, bands)]])
                    continue
                ax.fill_between(xs, [lo for lo, _ in bands], [hi for _, hi in bands], color=COLORS[name],
                                alpha=0.18, linewidth=0)
                ax.plot(xs, [f["median"] for f in figs], marker=MARKERS[name], markersize=3,
                        linewidth=2.6 if name == "fast" else 1.2, color=COLORS[name], label=NAMES[op][name])
            goal = res["sweep_targets_pct"]
            if key == "fwd":
                ax.plot([ns[0], ns[-1]], [goal["fwd"]] * 2, color=INK, linestyle="--", linewidth=1)
            else:
                edge = goal["wide_above"]
                ax.plot([ns[0], edge, edge, ns[-1]], [goal["fwd_bwd"], goal["fwd_bwd"], goal["fwd_bwd_wide"],
                                                     goal["fwd_bwd_wide"]], color=INK, linestyle="--", linewidth=1)
            ax.axhline(100, color=INK, linestyle=":", linewidth=0.8)
            ax.set_xticks(ticks, [str(n) for n in ticks])
            ax.tick_params(axis="x", labelrotation=45)
            ax.set_title(t("fwd" if key == "fwd" else "fwdbwd"))
            ax.set_ylabel(t("pct_copy"))
            ax.set_ylim(0, 110)
            ax.yaxis.set_major_formatter(lambda value, _: t.number(value, "g"))  # 2,5 in Vietnamese
            ax.grid(True, linewidth=0.4, alpha=0.4, color=INK)
            ax.set_facecolor("none")
        axes[1].set_xlabel("N")
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2, frameon=False)
        total = res["sweep_total"]
        fig.suptitle(f"{gpu} · M = {_total_text(total)} / N · {res['dtype']}", fontsize=PLOT_FONT_PT)
        fig.savefig(path, format="svg", metadata={"Date": None}, transparent=True)
        plt.close(fig)


def sweep_md(res, op, copy, t):
    series = _series(res, op, copy)
    cols = [n for n in SHOW_N if any(n == m for points in series.values() for m, _ in points)]
    out = [f"**{t('sweep_gpu')}** · {t('fwd')} / {t('fwdbwd')}{t('comma')}{t('pct_copy')} · M = {_total_text(res['sweep_total'])}"
           f" / N · {res['dtype']}", "",
           f"| {t('provider')} | " + " | ".join(f"N = {n}" for n in cols) + f" | {t('lowest')} |",
           "|---|" + "--:|" * len(cols) + "--:|"]
    for name, points in series.items():
        at = dict(points)
        cells = [f"{claims.text(at[n]['fwd'], 'gpu', t)} / {claims.text(at[n]['fwd_bwd'], 'gpu', t)}"
                 if n in at else "—" for n in cols]
        cells.append(f"{claims.text(_lowest(points, 'fwd'), 'gpu', t)} / {claims.text(_lowest(points, 'fwd_bwd'), 'gpu', t)}")
        out.append(f"| `{NAMES[op][name]}` | " + " | ".join(cells) + " |")
    out += claims.under_table(res["protocol"], t)
    return "\n".join(out) + "\n"


def dtypes_md(res, op, copy, t):
    rows = [r for r in res["sweep"][op] if r["dtype"] != res["dtype"] and _ok(r)]
    out = [f"**{t('sweep_gpu')}** · {t('pct_copy')}", "",
           f"| {t('shape')} | {t('dtype')} | {t('provider')} | {t('fwd')} | {t('fwdbwd')} |", "|---|---|---|--:|--:|"]
    for r in sorted(rows, key=lambda r: (r["N"], r["dtype"], PROVIDERS.index(r["provider"]))):
        out.append(f"| {_shape_text(r['M'], r['N'])} | {r['dtype']} | `{NAMES[op][r['provider']]}` | "
                   f"{claims.with_range(pct_copy(r, 'fwd', copy), 'gpu', t)} | "
                   f"{claims.with_range(pct_copy(r, 'fwd_bwd', copy), 'gpu', t)} |")
    out += claims.under_table(res["protocol"], t)
    return "\n".join(out) + "\n"


def between_md(res, op, copy, t):
    at, names = _between(res, op, copy)
    elt = ELEMENT_SIZE[res["dtype"]]
    out = [f"**{t('sweep_gpu')}** · {t('fwd')} / {t('fwdbwd')}{t('comma')}{t('pct_copy')} · M = "
           f"{_total_text(res['sweep_total'])} / N · {res['dtype']}", "",
           f"| N | {t('row_start')} | " + " | ".join(f"`{NAMES[op][name]}`" for name in names) + " |",
           "|--:|--:|" + "--:|" * len(names)]
    for n, by in at.items():
        cells = [f"{claims.text(by[name]['fwd'], 'gpu', t)} / {claims.text(by[name]['fwd_bwd'], 'gpu', t)}"
                 if name in by else "—" for name in names]
        out.append(f"| {n} | {aligned.row_alignment(n, elt)} B | " + " | ".join(cells) + " |")
    out += claims.under_table(res["protocol"], t, t("between_note"))
    return "\n".join(out) + "\n"


def write(measurements, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    res = measurements["results"]
    copy = _copy(measurements)
    gpu = measurements["provenance"].get("gpu", res.get("device", ""))
    for op in OPS:
        write_localized(out_dir, f"{op}-targets.md", lambda t, op=op: targets_md(res, op, copy, t))
        write_localized(out_dir, f"{op}-small.md", lambda t, op=op: small_md(res, op, t))
        write_localized(out_dir, f"{op}-profile.md", lambda t, op=op: profile_md(res, op, t))
        write_localized(out_dir, f"{op}-sweep.md", lambda t, op=op: sweep_md(res, op, copy["median"], t))
        write_localized(out_dir, f"{op}-dtypes.md", lambda t, op=op: dtypes_md(res, op, copy["median"], t))
        write_localized(out_dir, f"{op}-between.md", lambda t, op=op: between_md(res, op, copy["median"], t))
        write_localized(out_dir, f"{op}-host.md", lambda t, op=op: host_md(res, op, t))
        write_localized(out_dir, f"{op}-host-steps.md", lambda t, op=op: host_steps_md(res, op, t))
        write_localized(out_dir, f"{op}-host-trace.md", lambda t, op=op: host_trace_md(res, op, t))
        write_localized(out_dir, f"{op}-designs.md", lambda t, op=op: designs_md(res, op, copy["median"], t))
        for language in LANGUAGES:  # OP-sweep-gpu.svg, .zh.svg, .vi.svg: the plot in the page's words
            suffix = "" if language == "en" else f".{language}"
            sweep_svg(res, op, gpu, copy["median"], out_dir / f"{op}-sweep-gpu{suffix}.svg", Words(language))
    write_localized(out_dir, "dw-error.md", lambda t: dw_md(res["dw_error"], t))
    write_localized(out_dir, "llama.md", lambda t: llama_md(res, t))
    write_quotes(out_dir, lambda t: quotes(measurements, t))
