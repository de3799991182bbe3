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
ready-to-print strings: a page writes {{ faster.KEY }}). Tables and quotes are written in every
language of the site (normkit.tables.write_localized: words from normkit/catalogue.toml, numbers in
the language's format), and so are the plots. Same input, same bytes: no dates, a fixed SVG hash
salt, sorted keys.
"""

import importlib
import math
import warnings
from pathlib import Path

import matplotlib

from normkit import aligned, claims
from normkit.bench import figure
from normkit.tables import PLOT_FONT_PT, write_localized, write_quotes
from normkit.words import ENGLISH, LANGUAGES, Words

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Chinese labels: matplotlib's own font has no CJK glyphs, but the plots keep their text as SVG text,
# drawn by the reader's browser with its fonts, so matplotlib's warning about them is beside the point.
warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)

OPS = {"layernorm": "ln", "rmsnorm": "rms"}
PROVIDERS = ("fast", "teaching", "torch", "compile", "liger", "quack")
# language-neutral names: the functions a reader would call
NAMES = {
    "layernorm": {"fast": "layer_norm_fast", "teaching": "layer_norm", "torch": "F.layer_norm",
                  "compile": "torch.compile", "liger": "Liger", "quack": "QuACK"},
    "rmsnorm": {"fast": "rms_norm_fast", "teaching": "rms_norm", "torch": "F.rms_norm",
                "compile": "torch.compile", "liger": "Liger", "quack": "QuACK"},
}
COLORS = {"fast": "#3f51b5", "teaching": "#9e9e9e", "torch": "#ff7043", "compile": "#26a69a", "liger": "#ab47bc", "quack": "#8d6e63"}
MARKERS = {"fast": "o", "teaching": "s", "torch": "^", "compile": "D", "liger": "v", "quack": "P"}
MODES = (("fwd", 2), ("fwd_bwd", 5))  # key, bytes moved per element (in units of the element size)
DW_DESIGNS = ("fast", "teaching", "torch", "liger", "lock_buffer_in_input_dtype")
MISSING = ("ModuleNotFoundError", "ImportError")  # a provider not installed is left out, not shown as refused
ELEMENT_SIZE = {"bfloat16": 2, "float16": 2, "float32": 4}
SHORT_DTYPE = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
SHOW_N = (1024, 2560, 4096, 6144, 8192, 12288, 16384)  # the sweep's columns in the tables
INK = "#808080"  # axes and text: readable on the light and the dark theme


def _short(key):
    return key.replace("_", "")


def _num(v, t):
    return t.number(v, ".0f" if abs(v) >= 100 else ".1f")


def _ratio(v, t):
    return t.times(v, ".2f" if v < 10 else ".1f")


def _us(fig, t, kind="gpu"):
    return claims.text(fig, kind, t)


def _pct(fig, t):
    return claims.percent_text(fig, "gpu", t)


def _sci(v, t):
    """Two significant digits, as a power of ten: 1.6 × 10⁻³."""
    return t.number(v, ".1e") if v else "0"


def _shape_key(m, n):
    return f"{m}x{n}"


def _shape_text(m, n):
    return f"{m}×{n}"


def _ok(row):
    return row is not None and "error" not in row


def _installed(rows):
    """Providers with at least one row that did not fail for want of the package."""
    seen = []
    for name in PROVIDERS:
        mine = [r for r in rows if r["provider"] == name]
        if mine and not all(r.get("error", "").startswith(MISSING) for r in mine):
            seen.append(name)
    return seen


def _index(rows):
    return {(r["provider"], r["N"]): r for r in rows}


def _copy(measurements):
    return measurements["provenance"]["copy"]


def pct_of_copy(gpu_us, n_bytes, copy):
    """% of the copy bandwidth's median, as a figure, of a GPU-time figure that moves n_bytes."""
    return claims.transform(gpu_us, lambda us: 100 * n_bytes / (us * 1e3) / copy)


def pct_copy(row, key, copy):
    """% of the copy bandwidth's median, as a figure, from the GPU time of one pass."""
    n_bytes = dict(MODES)[key] * row["M"] * row["N"] * ELEMENT_SIZE[row["dtype"]]
    return pct_of_copy(row[f"{key}_gpu_us"], n_bytes, copy)


def _status(fig, target, t):
    """✓ met, ✗ missed, ≈ within the figure's range: read from the stated range."""
    return {"met": "✓", "missed": "✗", "within": "≈"}[claims.against(fig, target, "gpu")]


def _phrase(*words):
    """Words of a table header side by side: a space between two, but none between two Chinese
    characters ("fwd % copy", 「前向占拷贝带宽 %」, 「前向 GPU µs」). Here and not in normkit.words,
    whose changes would count as changes of the measured sources."""
    out = words[0]
    for word in words[1:]:
        out += ("" if _hanzi(out[-1:]) and _hanzi(word[:1]) else " ") + word
    return out


def _hanzi(character):
    return "\u4e00" <= character <= "\u9fff"


def targets_md(res, op, copy, t):
    rows = res["targets"][op]
    index = _index(rows)
    goal = res["targets_pct"]
    fwd, both = t("fwd"), t("fwdbwd")
    out = [f"**{res['dtype']}** · M = {res['M']} · {t('copy')}{t('colon')}{claims.with_range(copy, 'copy', t)} GB/s · "
           f"{t('targets')}{t('colon')}{fwd} ≥ {t.percent(goal['fwd'], '.0f')}{t('comma')}"
           f"{both} ≥ {t.percent(goal['fwd_bwd'], '.0f')}",
           "",
           f"| {t('shape')} | {t('provider')} | {_phrase(fwd, t('gpu_us'))} | {_phrase(fwd, t('pct_copy'))} "
           f"| {_phrase(both, t('gpu_us'))} | {_phrase(both, t('pct_copy'))} |",
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
    out += ["", t("target_marks"), packages_text(res, t), "", claims.protocol_text(res["protocol"], t)]
    return "\n".join(out) + "\n"


PACKAGE_NAMES = {"liger": "Liger-Kernel", "quack": "QuACK"}


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
    out += ["", claims.protocol_text(res["protocol"], t), "", claims.protocol_text(res["protocol"], t, "host")]
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
    words = {_short(k): t.times(v, ".1f") for k, v in targets.items()}
    out += ["", t("host_target_marks").format(**words), "", claims.protocol_text(res["protocol"], t, "host")]
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
    out += ["", t("host_steps_note"), "", claims.protocol_text(res["protocol"], t, "host")]
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
    out += ["", t("trace_note").format(calls=trace["calls"]), "", claims.protocol_text(res["protocol"], t, "host")]
    return "\n".join(out) + "\n"


BACKWARD_DESIGNS = ("row", "staged", "chunked")


def _design_pct(r, copy, dtype):
    """% of the copy bandwidth of one backward-alone figure: x and dy read, dx written."""
    return pct_of_copy(r["bwd_gpu_us"], 3 * r["M"] * r["N"] * ELEMENT_SIZE[dtype], copy)


def _design_rows(res, op):
    """{(N, dtype, design): record} of the side-by-side; the run's dtype first, then the others."""
    rows = {(r["N"], r.get("dtype", res["dtype"]), r["design"]): r
            for r in res.get("designs", []) if r["op"] == op}
    return dict(sorted(rows.items(), key=lambda kv: (kv[0][1] != res["dtype"], kv[0])))


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
    out += ["", t("designs_note").format(total=_total_text(res["sweep_total"])), "",
            claims.protocol_text(res["protocol"], t, "gpu")]
    return "\n".join(out) + "\n"


def _design_quotes(res, op, p, copy, t, q):
    """Each design's backward at each width of the side-by-side, and staged against each other
    design; a point in another dtype than the run's ends in that dtype's short name (_fp32)."""
    rows = {k: r for k, r in _design_rows(res, op).items() if "error" not in r["bwd_gpu_us"]}
    for (n, dtype, design), r in rows.items():
        suffix = "" if dtype == res["dtype"] else f"_{SHORT_DTYPE[dtype]}"
        q[f"{p}_design_{design}_bwd_pct_n{n}{suffix}"] = _pct(_design_pct(r, copy, dtype), t)
        if design != "staged":
            continue
        for other in BACKWARD_DESIGNS:
            if other != "staged" and (n, dtype, other) in rows:
                key = f"{p}_design_staged_vs_{other}_n{n}{suffix}"
                q[key] = _time_verdict(r["bwd_gpu_us"], rows[(n, dtype, other)]["bwd_gpu_us"], t)
                claims.cite(key, (r["bwd_gpu_us"], rows[(n, dtype, other)]["bwd_gpu_us"]), "gpu",
                            (f"{p}_design_staged_bwd_pct_n{n}{suffix}", f"{p}_design_{other}_bwd_pct_n{n}{suffix}"))
    q["design_n_list"] = t.join(str(n) for n in sorted({n for n, d, _ in rows if d == res["dtype"]}))


LLAMA_NAMES = {"torch": "LlamaRMSNorm", "fast": "rms_norm_fast", "liger": "Liger"}


def llama_md(res, t):
    """The Llama training step with each RMSNorm: GPU time, against eager, and agreement with eager."""
    llama = res["llama"]
    steps = {(r["provider"], r["hidden"]): r["gpu_us"] for r in llama["steps"]}
    agree = {(r["provider"], r["hidden"]): r for r in llama["agreement"]}
    c = llama["config"]
    out = [t("llama_config").format(layers=c["layers"], batch=c["batch"], seq=c["seq"], vocab=c["vocab"]), "",
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


def _ref_max(dw):
    return next(e["max_abs_ref"] for e in dw.values() if isinstance(e, dict) and "max_abs_ref" in e)


def _half_ulp(value, dtype):
    """Half a unit in the last place of value in dtype: the rounding of the output itself."""
    mantissa_bits = {"bfloat16": 8, "float16": 11, "float32": 24}[dtype]  # with the implicit bit
    return 2.0 ** (math.floor(math.log2(value)) - mantissa_bits)


def _total_text(total):
    """2**27 as 2²⁷ (a power of two), anything else as digits."""
    exponent = total.bit_length() - 1
    if total == 2**exponent:
        return "2" + str(exponent).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return str(total)


def _total_tex(total):
    """The same number for a page's math: 2^{27}, so that "M = 2^{27}/N" is one formula."""
    exponent = total.bit_length() - 1
    return f"2^{{{exponent}}}" if total == 2**exponent else str(total)


def _sweep_rows(res, op, dtype=None):
    """The sweep's rows of one dtype (the run's, by default) that measured."""
    dtype = dtype or res["dtype"]
    return [r for r in res["sweep"][op] if r["dtype"] == dtype and _ok(r)]


def _series(res, op, copy):
    """{provider: [(N, {"fwd": % figure, "fwd_bwd": % figure})]} in order of N."""
    rows = _sweep_rows(res, op)
    series = {}
    for name in _installed(res["sweep"][op]):
        points = sorted(((r["N"], {key: pct_copy(r, key, copy) for key, _ in MODES})
                         for r in rows if r["provider"] == name), key=lambda point: point[0])
        if points:
            series[name] = points
    return series


def _sweep_target(res, n):
    goal = res["sweep_targets_pct"]
    return goal["fwd_bwd"] if n <= goal["wide_above"] else goal["fwd_bwd_wide"]


def sweep_svg(res, op, gpu, copy, path, t=ENGLISH):
    """% of the copy bandwidth against N, GPU time, each line with the band of its stated range; the fwd
    panel above the fwd+bwd one so that the labels stay legible on a phone, the legend under the panels."""
    series = _series(res, op, copy)
    ns = sorted({n for points in series.values() for n, _ in points})
    ticks = [n for n in ns if n % 4096 == 0 or n == ns[0]]  # labels that do not overlap at 12 pt
    # text stays text (svg.fonttype none): selectable, and its size can be checked by tests/test_browser.py
    with plt.rc_context({"svg.hashsalt": "normkernels", "svg.fonttype": "none", "font.size": PLOT_FONT_PT,
                         "text.color": INK, "axes.labelcolor": INK, "axes.edgecolor": INK,
                         "xtick.color": INK, "ytick.color": INK}):
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


def _lowest(points, key):
    """The figure with the lowest median over the sweep (which width it is can change between builds
    where two widths are on par, so the pages name the widths that miss a target instead)."""
    return min((figs[key] for _, figs in points), key=lambda fig: fig["median"])


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
    out += ["", claims.protocol_text(res["protocol"], t)]
    return "\n".join(out) + "\n"


def dtypes_md(res, op, copy, t):
    rows = [r for r in res["sweep"][op] if r["dtype"] != res["dtype"] and _ok(r)]
    out = [f"**{t('sweep_gpu')}** · {t('pct_copy')}", "",
           f"| {t('shape')} | {t('dtype')} | {t('provider')} | {t('fwd')} | {t('fwdbwd')} |", "|---|---|---|--:|--:|"]
    for r in sorted(rows, key=lambda r: (r["N"], r["dtype"], PROVIDERS.index(r["provider"]))):
        out.append(f"| {_shape_text(r['M'], r['N'])} | {r['dtype']} | `{NAMES[op][r['provider']]}` | "
                   f"{claims.with_range(pct_copy(r, 'fwd', copy), 'gpu', t)} | "
                   f"{claims.with_range(pct_copy(r, 'fwd_bwd', copy), 'gpu', t)} |")
    out += ["", claims.protocol_text(res["protocol"], t)]
    return "\n".join(out) + "\n"


def _between(res, op, copy):
    """{N: {provider: {"fwd": % figure, "fwd_bwd": % figure}}} of the widths between the tables'
    entries, and the providers that measured there (the providers of the run that refused a width
    leave a gap)."""
    rows = res.get("between", {}).get(op, [])
    at = {}
    for r in filter(_ok, rows):
        at.setdefault(r["N"], {})[r["provider"]] = {key: pct_copy(r, key, copy) for key, _ in MODES}
    names = [p for p in _installed(rows) if any(p in v for v in at.values())]
    return dict(sorted(at.items())), names


def _elements_per_thread(row_config):
    """Elements of a row each thread holds in a row backward's configuration."""
    _, block_n, rows, num_warps = row_config[:4]
    return block_n * rows // (num_warps * 32)


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
    out += ["", t("between_note"), "", claims.protocol_text(res["protocol"], t)]
    return "\n".join(out) + "\n"


def _between_quotes(res, op, p, copy, t, q):
    """Each provider's figures between the entries, each width's row alignment, and two sentences:
    the widths where the fast path falls below both neighbouring entries (forward+backward, ranges
    apart), and those where another provider is faster."""
    at, names = _between(res, op, copy)
    elt = ELEMENT_SIZE[res["dtype"]]
    for n, by in at.items():
        q[f"{p}_between_align_n{n}"] = str(aligned.row_alignment(n, elt))
        for name, figs in by.items():
            for key, _ in MODES:
                q[f"{p}_between_{name}_{_short(key)}_pct_n{n}"] = _pct(figs[key], t)
    fast = {n: by["fast"] for n, by in at.items() if "fast" in by}
    below, behind = [], []
    for n, figs in fast.items():
        entries = [fast[m]["fwd_bwd"] for m in (n // 256 * 256, n // 256 * 256 + 256) if m != n and m in fast]
        if n % 256 and entries and all(claims.compare(figs["fwd_bwd"], e, "gpu") == "lower" for e in entries):
            below.append(n)
        if any(claims.compare(other["fwd_bwd"], figs["fwd_bwd"], "gpu") == "higher"
               for name, other in at[n].items() if name != "fast"):
            behind.append(n)
    q[f"{p}_between_below_sentence"] = widths_sentence("between_below", below, t)
    q[f"{p}_between_behind_sentence"] = widths_sentence("sweep_behind", behind, t)


def _counts(figs_and_targets):
    """{"met": k, "missed": k, "within": k} over [(figure, target)]."""
    verdicts = [claims.against(fig, target, "gpu") for fig, target in figs_and_targets]
    return {v: verdicts.count(v) for v in ("met", "missed", "within")}


def widths_sentence(label, widths, t):
    """Widths as the catalogue's sentence LABEL_some, or LABEL_none when there are none (which
    says "none" once, not "at 0 widths: none"); {margin} is the GPU verdicts' margin."""
    margin = _margin_text(t)
    if not widths:
        return t(f"{label}_none").format(margin=margin)
    return t(f"{label}_some").format(count=len(widths), widths=t.join(map(str, widths)), margin=margin)


def _margin_text(t, kind="gpu"):
    """The gap a verdict of this kind needs between its two sides (normkit.claims.MARGIN): "3%"."""
    return t.percent(100 * claims.MARGIN[kind], "g")


def _sweep_quotes(res, op, p, copy, t, q):
    """Sweep figures the pages quote: targets met, each provider's worst N, the fast path at each N."""
    series = _series(res, op, copy)
    for name, points in series.items():
        for key, _ in MODES:
            q[f"{p}_{name}_gpu_lowest_{_short(key)}_pct"] = _pct(_lowest(points, key), t)
            for n, figs in points:
                q[f"{p}_{name}_gpu_{_short(key)}_pct_n{n}"] = _pct(figs[key], t)
            q[f"{p}_{name}_gpu_{_short(key)}_pct_typical"] = _pct(claims.typical([f[key] for _, f in points]), t)
    fast = dict(series.get("fast", []))
    if fast:
        goal = res["sweep_targets_pct"]
        targets = {"fwd": {n: goal["fwd"] for n in fast}, "fwd_bwd": {n: _sweep_target(res, n) for n in fast}}
        tallies = [t.tally("sweep", _counts([(fast[n][key], target[n]) for n in fast])) for key, target in targets.items()]
        q[f"{p}_sweep_tallies"] = t.both("sweep", *tallies)
        # N at which another provider is faster than the fast path (fwd+bwd GPU time, ranges apart)
        rows = _sweep_rows(res, op)
        fast_rows = {r["N"]: r for r in rows if r["provider"] == "fast"}
        behind = sorted({r["N"] for r in rows if r["provider"] != "fast" and r["N"] in fast_rows
                         and claims.compare(r["fwd_bwd_gpu_us"], fast_rows[r["N"]]["fwd_bwd_gpu_us"], "gpu") == "lower"})
        missed = [n for n in fast if claims.against(fast[n]["fwd_bwd"], targets["fwd_bwd"][n], "gpu") == "missed"]
        for key, widths in (("missed", missed), ("behind", behind)):
            q[f"{p}_sweep_fwdbwd_{key}_sentence"] = widths_sentence(f"sweep_{key}", widths, t)
    # the provider packages' forward over the sweep, as a sentence: a run may not have them
    for name, label in PACKAGE_NAMES.items():
        points = series.get(name)
        if points:
            q[f"{p}_{name}_sweep_fwd"] = t("sweep_fwd_range").format(
                provider=label, low=_pct(_lowest(points, "fwd"), t),
                high=_pct(max((f["fwd"] for _, f in points), key=lambda fig: fig["median"]), t))
        else:
            q[f"{p}_{name}_sweep_fwd"] = t("provider_not_in_run").format(provider=label)


def _host_quotes(res, op, p, t, q):
    """The host grid's verdicts and ratio ranges, and each step's host cost."""
    rows = {(r["M"], r["N"], r["provider"]): r for r in res["host_grid"] if r["op"] == op}
    q["host_m_list"] = t.join(str(m) for m in sorted({r["M"] for r in res["host_grid"]}))
    q["host_n_list"] = t.join(str(n) for n in sorted({r["N"] for r in res["host_grid"]}))
    tallies = []
    for key, _ in MODES:
        k = _short(key)
        q[f"host_{k}_target"] = t.times(res["host_targets"][key], ".1f")
        ratios, verdicts = [], []
        for m, n in sorted({(m, n) for m, n, _ in rows}):
            fast, torch = rows[(m, n, "fast")], rows[(m, n, "torch")]
            if _ok(fast) and _ok(torch):
                f, e = fast[f"{key}_host_us"], torch[f"{key}_host_us"]
                ratios.append(f["median"] / e["median"])
                verdicts.append(claims.under(f, e, res["host_targets"][key]))
        if verdicts:
            tallies.append(t.tally("host", {v: verdicts.count(v) for v in ("met", "within", "missed")}))
            q[f"{p}_host_{k}_ratio_span"] = t.span(t.times(min(ratios), ".1f"), t.times(max(ratios), ".1f"))
    if len(tallies) == len(MODES):
        q[f"{p}_host_tallies"] = t.both("host", *tallies)
    for trace in (r for r in res["host_trace"] if r["op"] == op):
        for key in ("call_us", "outside_us", "launch_us"):
            q[f"{p}_trace_{key}"] = _us(trace[key], t, "host")
        q[f"{p}_trace_launches"] = str(trace["launches"])
        q["trace_calls"] = str(trace["calls"])
    q["host_steps_shape"] = _shape_text(res["host_steps"]["M"], res["host_steps"]["N"])
    for r in res["host_steps"]["steps"]:
        if r["op"] == op and "error" not in r["host_us"]:
            q[f"{p}_step_{r['step']}_us"] = _us(r["host_us"], t, "host")


def _llama_quotes(res, t, q):
    """The Llama step: each swap's speed-up over eager and verdict, and its gradients' agreement."""
    llama = res["llama"]
    steps = {(r["provider"], r["hidden"]): r["gpu_us"] for r in llama["steps"]}
    agree = {(r["provider"], r["hidden"]): r for r in llama["agreement"]}
    q["llama_layers"], q["llama_seq"], q["llama_batch"] = (str(llama["config"][k]) for k in ("layers", "seq", "batch"))
    q["llama_hidden_list"] = t.join(str(h) for h, _ in llama["shapes"])
    diffs, against_liger = [], []
    for hidden, _ in llama["shapes"]:
        eager = steps.get(("torch", hidden))
        for name in ("fast", "liger"):
            fig, a = steps.get((name, hidden)), agree.get((name, hidden), {})
            if not (fig and eager and "error" not in fig and "error" not in eager and "error" not in a):
                continue
            q[f"llama_{name}_speedup_h{hidden}"] = claims.times_text(claims.ratio(eager, fig), "gpu", t)
            q[f"llama_{name}_verdict_h{hidden}"] = t(claims.time_verdict(fig, eager, "gpu"))
            claims.cite(f"llama_{name}_verdict_h{hidden}", (fig, eager), "gpu", (f"llama_{name}_speedup_h{hidden}",))
            q[f"llama_{name}_grad_diff_h{hidden}"] = _sci(a["max_grad_rel_diff"], t)
            q[f"llama_{name}_loss_h{hidden}"] = t.number(a["loss"], ".5f")
            q[f"llama_eager_loss_h{hidden}"] = t.number(a["eager_loss"], ".5f")
            if name == "fast":
                diffs.append(a["max_grad_rel_diff"])
        fast, liger = steps.get(("fast", hidden)), steps.get(("liger", hidden))
        if fast and liger and "error" not in fast and "error" not in liger:
            against_liger.append({"verdict": t(claims.time_verdict(fast, liger, "gpu")), "place": str(hidden)})
    if against_liger:
        q["llama_fast_vs_liger"] = t.pair("liger", against_liger)
    if diffs:
        q["llama_fast_grad_diff_max"] = _sci(max(diffs), t)


def _time_verdict(a, b, t):
    return t(claims.time_verdict(a, b, "gpu"))


def walk_chunks_text(res, t):
    """The chunks LayerNorm's aligned walk takes at the odd 16-bit widths up to the sweep's widest
    row (normkit.aligned.walk_config), narrowest to widest, in words: a sweep that ends below the
    walk's narrowest width (a quick run's) has none, and says so."""
    chunks = [aligned.walk_config(None, n, 2)[1]
              for n in range(aligned.WALK_MIN_COLS[2] + 1, max(res["sweep_n"]), 2)]
    if not chunks:
        return t("walk_chunks_none")
    return t("walk_chunks_range").format(low=min(chunks), high=max(chunks))


def quotes(measurements, t=ENGLISH):
    """Flat dict of ready-to-print strings in t's language; keys are what pages write as {{ faster.KEY }}."""
    prov, res = measurements["provenance"], measurements["results"]
    copy_fig = _copy(measurements)
    copy, goal, m = copy_fig["median"], res["targets_pct"], res["M"]
    elt = ELEMENT_SIZE[res["dtype"]]
    protocol = res["protocol"]
    q = {"gpu": str(prov.get("gpu", res.get("device"))), "sm_count": str(res["sm_count"]),
         "copy_gbps": claims.with_range(copy_fig, "copy", t), "m": str(m),
         # Little's law at this run's copy bandwidth: the bytes on their way per microsecond of latency
         "inflight_mb_per_us": t.number(copy * 1e9 * 1e-6 / 1e6, ".1f"),
         "inflight_kib_per_sm_per_us": t.number(copy * 1e9 * 1e-6 / res["sm_count"] / 1024, ".0f"),
         "dtype": res["dtype"], "target_fwd": t.percent(goal["fwd"], ".0f"),
         "target_fwdbwd": t.percent(goal["fwd_bwd"], ".0f"),
         "sweep_n_min": str(min(res["sweep_n"])), "sweep_n_max": str(max(res["sweep_n"])),
         "sweep_n_multiple": str(math.gcd(*res["sweep_n"])),
         "sweep_n_count": str(len(res["sweep_n"])), "sweep_total": _total_tex(res["sweep_total"]),
         "sweep_target_fwd": t.percent(res["sweep_targets_pct"]["fwd"], ".0f"),
         "sweep_target_fwdbwd": t.percent(res["sweep_targets_pct"]["fwd_bwd"], ".0f"),
         "sweep_target_fwdbwd_wide": t.percent(res["sweep_targets_pct"]["fwd_bwd_wide"], ".0f"),
         "sweep_wide_above": str(res["sweep_targets_pct"]["wide_above"]),
         "l2_mb": t.number(res["l2_bytes"] / 1e6, ".0f"),
         "window_min_mib": t.number(aligned.WINDOW_MIN_BYTES / 2**20, ".0f"),
         "window_min_cols": str(aligned.WINDOW_MIN_COLS),
         "walk_min_cols_16": str(aligned.WALK_MIN_COLS[2]),
         "walk_min_cols_32": str(aligned.WALK_MIN_COLS[4]),
         "walk_chunks": walk_chunks_text(res, t),
         "narrow_elements_per_thread": str(_elements_per_thread(aligned.narrow_backward_config(4097, 2)))}
    for key, value in protocol.items():
        q[f"timing_{key}"] = str(value)

    for op, p in OPS.items():
        index = _index(res["targets"][op])
        launch = {c["N"]: c for c in res["launch"][op]}
        statuses, fwd_vs_best = [], []
        for n in res["target_n"]:
            s = _shape_key(m, n)
            q[f"shape_{s}"] = _shape_text(m, n)
            min_bytes = {key: mult * m * n * elt for key, mult in MODES}
            for key, _ in MODES:
                q[f"{p}_min_{_short(key)}_mb_{s}"] = t.number(min_bytes[key] / 1e6, ".0f")
                q[f"{p}_min_{_short(key)}_us_{s}"] = _num(min_bytes[key] / (copy * 1e9) * 1e6, t)
            for name in PROVIDERS:
                r = index.get((name, n))
                if not _ok(r):
                    continue
                for key, _ in MODES:
                    q[f"{p}_{name}_{_short(key)}_pct_{s}"] = _pct(pct_copy(r, key, copy), t)
                    q[f"{p}_{name}_{_short(key)}_us_{s}"] = _us(r[f"{key}_gpu_us"], t)
            fast = index.get(("fast", n))
            if _ok(fast):
                for key, _ in MODES:
                    pct = pct_copy(fast, key, copy)
                    statuses.append((pct, goal[key]))
                    q[f"{p}_fast_{_short(key)}_target_{s}"] = t("target_" + claims.against(pct, goal[key], "gpu"))
                    claims.cite(f"{p}_fast_{_short(key)}_target_{s}", (pct,), "gpu",
                                (f"{p}_fast_{_short(key)}_pct_{s}",), target=goal[key])
                    others = [o for o in PROVIDERS if o != "fast" and _ok(index.get((o, n)))]
                    if others:  # the fastest other provider
                        who = others[claims.fastest([index[(o, n)][f"{key}_gpu_us"] for o in others])]
                        them = index[(who, n)]
                        q[f"{p}_best_other_{_short(key)}_{s}"] = NAMES[op][who]
                        q[f"{p}_best_other_{_short(key)}_pct_{s}"] = _pct(pct_copy(them, key, copy), t)
                        q[f"{p}_fast_{_short(key)}_vs_best_other_{s}"] = _time_verdict(
                            fast[f"{key}_gpu_us"], them[f"{key}_gpu_us"], t)
                        claims.cite(f"{p}_fast_{_short(key)}_vs_best_other_{s}",
                                    (fast[f"{key}_gpu_us"], them[f"{key}_gpu_us"]), "gpu",
                                    (f"{p}_fast_{_short(key)}_pct_{s}", f"{p}_best_other_{_short(key)}_pct_{s}"))
                        if key == "fwd":
                            fwd_vs_best.append({"verdict": q[f"{p}_fast_fwd_vs_best_other_{s}"],
                                                "place": _shape_text(m, n), "other": NAMES[op][who],
                                                "fast": q[f"{p}_fast_fwd_pct_{s}"],
                                                "pct": q[f"{p}_best_other_fwd_pct_{s}"]})
            c = launch.get(n)
            if c:
                halves = 2 if op == "layernorm" else 1  # dW and dB, or dW alone
                part = c.get("partial_rows", c["bwd_programs"]) * n * 4 * halves
                for k in ("fwd_block", "fwd_rows", "fwd_warps", "fwd_programs", "bwd_block", "bwd_rows", "bwd_warps",
                          "programs_per_sm", "bwd_programs", "rows_per_program"):
                    q[f"{p}_{k}_{s}"] = str(c[k])
                for k in ("fwd_design", "bwd_design"):  # the design's name in the page's words
                    q[f"{p}_{k}_{s}"] = t(f"design_{c[k]}_name")
                q[f"{p}_prefetch_{s}"] = "PREFETCH=1" if c["prefetch"] else "PREFETCH=0"
                q[f"{p}_partial_mb_{s}"] = t.number(part / 1e6, ".1f")
                # written once and read once, against the minimum fwd+bwd traffic
                q[f"{p}_partial_share_{s}"] = t.percent(100 * 2 * part / min_bytes["fwd_bwd"], ".1f")
            if op == "rmsnorm":
                q[f"rms_teaching_partial_mb_{s}"] = t.number(m * n * 4 / 1e6, ".0f")
        if statuses:
            q[f"{p}_targets_sentence"] = t.tally("targets", _counts(statuses))
        if fwd_vs_best:
            q[f"{p}_fwd_vs_best_other_sentence"] = t.pair("best_other", fwd_vs_best)
        _sweep_quotes(res, op, p, copy, t, q)
        _between_quotes(res, op, p, copy, t, q)

        for pr in res["profile"]:
            if pr["op"] != op or "error" in pr:
                continue
            s, name = _shape_key(pr["M"], pr["N"]), pr["provider"]
            host, gpu = pr["host_us_per_call"], pr["gpu_us_per_call"]
            q[f"{p}_{name}_host_us_{s}"] = _us(host, t, "host")
            q[f"{p}_{name}_gpu_us_{s}"] = _us(gpu, t)
            q[f"{p}_{name}_launches_{s}"] = t.number(pr["launches_per_call"], ".0f")
            if name == "fast":
                # by pass, whatever the design: ln_fast_bwd_staged_kernel, rms_fast_fwd_chunked_kernel, ...
                for part, marker in (("fwd", "_fast_fwd"), ("bwd", "_fast_bwd"), ("reduce", "sum_partials")):
                    runs = [sum(k["us_per_call"]["runs"][i] for k in pr["kernels"] if marker in k["kernel"])
                            for i in range(res["protocol"]["repeats"])]
                    q[f"{p}_fast_{part}_kernel_us_{s}"] = _us(figure(runs), t)

        small = {r["provider"]: r for r in res["small"] if r["op"] == op}
        for name, r in small.items():
            q["small_shape"], q["small_dtype"] = _shape_text(r["M"], r["N"]), r["dtype"]
            if not _ok(r):
                continue
            for key, _ in MODES:
                q[f"{p}_{name}_small_{_short(key)}_gpu_us"] = _us(r[f"{key}_gpu_us"], t)
                q[f"{p}_{name}_small_{_short(key)}_host_us"] = _us(r[f"{key}_host_us"], t, "host")
        if _ok(small.get("fast")) and _ok(small.get("torch")):
            for key, _ in MODES:
                for kind in ("gpu", "host"):
                    fast, torch = small["fast"][f"{key}_{kind}_us"], small["torch"][f"{key}_{kind}_us"]
                    # above 1x: the fast path beats torch eager; with the range the verdict reads
                    q[f"{p}_small_{_short(key)}_{kind}_vs_torch"] = claims.speedup_text(fast, torch, kind, t)
                    q[f"{p}_small_{_short(key)}_{kind}_verdict"] = t(claims.time_verdict(fast, torch, kind))
                    claims.cite(f"{p}_small_{_short(key)}_{kind}_verdict", (fast, torch), kind,
                                (f"{p}_small_{_short(key)}_{kind}_vs_torch",))

        _host_quotes(res, op, p, t, q)
        _design_quotes(res, op, p, copy, t, q)
    _llama_quotes(res, t, q)

    dw = res["dw_error"]
    ref = _ref_max(dw)
    q["dw_shape"], q["dw_dtype"] = _shape_text(dw["M"], dw["N"]), dw["dtype"]
    q["dw_ref_max"] = _num(ref, t)
    q["dw_half_ulp"] = t.number(_half_ulp(ref, dw['dtype']), "g")
    for name in DW_DESIGNS:
        e = dw.get(name, {})
        if "max_abs" in e:
            q[f"dw_{name}_max_abs"] = t.number(e['max_abs'], ".3g")
            q[f"dw_{name}_rel"] = _sci(e["rel_norm"], t)
    lock = dw.get("lock_buffer_in_input_dtype", {})
    if "group_size" in lock:
        q["dw_lock_group"] = str(lock["group_size"])
    if "max_abs" in lock and dw.get("fast", {}).get("max_abs"):
        q["dw_lock_vs_fast"] = _ratio(lock["max_abs"] / dw["fast"]["max_abs"], t)
    for op, p in OPS.items():
        q |= launch_limits(op, p) | table_steps(op, p) | staged_shared_quotes(op, p)
    q |= claims.floor_quotes(t)
    return q


def launch_limits(op, p):
    """Where a program's registers run out, as the launch table the kernels use says it (bf16,
    snippets/<op>/fast_tuned.json): the widest N at which the row design's fastest backward still
    prefetches the next row, and the narrowest N at which the backward gives a row two programs
    (SPLIT = 2), with the widest one program still holds. The pages quote these, never type them."""
    table = importlib.import_module(f"{op}.fast").tuned_table(2)
    if table is None:
        return {}
    prefetch = [n for n, d in table["backward_designs"].items() if d.get("row", ("",))[0] == "row" and d["row"][4]]
    split = [n for n, c in table["backward"].items() if c[0] == "staged" and c[4] > 1]
    one = [n for n in table["backward"] if not split or n < min(split)]
    found = {"prefetch_max_n": max(prefetch, default=None), "split_from_n": min(split, default=None),
             "one_program_max_n": max(one, default=None)}
    return {f"{p}_bwd_{key}": str(n) for key, n in found.items() if n is not None}


def table_steps(op, p):
    """The widths the launch tables have entries for: every multiple of their step."""
    fast = importlib.import_module(f"{op}.fast")
    tables = {"": fast.tuned_table(2), "_fp32": fast.tuned_table(4)}
    return {f"{p}_table_step{key}": str(table["step"]) for key, table in tables.items() if table}


def staged_shared_quotes(op, p):
    """What a staged program of the fp32 launch table keeps in shared memory at the side-by-side's
    fp32 widths, with its stages and with one more, and an SM's shared memory (faster.tune's
    rule, which faster/test_tune.py checks against the compiler). The pages quote these."""
    from faster.benchmark import DESIGN_N_FP32
    from faster import tune

    fast = importlib.import_module(f"{op}.fast")
    q = {"shared_kib_per_sm": str(tune.SHARED_BYTES // 1024)}
    for n in DESIGN_N_FP32:
        entry = fast.tuned_table(4)["backward_designs"].get(n, {}).get("staged")
        if entry is None:
            continue
        _, tile, rows, _, _, split, stages, rest, _ = fast.backward_entry_config(entry, n)
        q[f"{p}_staged_stages_n{n}_fp32"] = str(stages)
        for key, s in (("", stages), ("_one_more_stage", stages + 1)):
            q[f"{p}_staged_kib_n{n}_fp32{key}"] = str(tune.staged_shared(rows, (tile + rest) * split, s, 4) // 1024)
    return q


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
