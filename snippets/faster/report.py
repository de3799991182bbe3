"""Render the "faster" data set: the tables, plots and quotes of both "Going faster" pages.

    write(measurements, out_dir)

measurements = {"provenance": {..., "gpu", "copy_gb_per_s"}, "results": faster.benchmark.measure()}.
Files, for each chapter OP in (layernorm, rmsnorm):

- OP-targets.md: every provider at the target shapes, fwd and fwd+bwd as GB/s and % of the copy
  bandwidth measured in the same run, and whether the issue's targets are met (computed here);
- OP-small.md: the launch-bound 128x257 case, µs per call, plain calls against CUDA-graph replay;
- OP-profile.md: host time against GPU time of one fwd+bwd call, and the same call from a CUDA graph;
- OP-sweep-gpu.svg, OP-sweep-plain.svg (and .zh.svg, .vi.svg): % of copy bandwidth against N over the sweep (M = total / N
  rows) for every provider, fwd and fwd+bwd panels: GPU-bound (CUDA-graph replay) and plain calls;
- OP-sweep.md: the sweep at a few N plus each provider's worst N, GPU-bound and plain;
- OP-dtypes.md: the sweep's fp16 and fp32 points; OP-host.md: the host's share of one call
  (fastest of many plain calls at a small shape, against eager PyTorch and CUDA-graph replay);

and dw-error.md (LayerNorm dW error per design) and quotes.json (every number the pages quote, as
ready-to-print strings: a page writes {{ faster.KEY }}). Tables and quotes are written in every
language of the site (normkit.tables.write_localized: words from normkit/catalogue.toml, numbers in
the language's format), and so are the plots (OP-sweep-HOW.zh.svg, .vi.svg). Same input,
same bytes: no dates, a fixed SVG hash salt, sorted keys.
"""

import inspect
import json
import math
from pathlib import Path

import matplotlib

from normkit.bench import median_call_ms
from normkit.tables import write_localized
from normkit.words import ENGLISH, LANGUAGES, Words

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OPS = {"layernorm": "ln", "rmsnorm": "rms"}
PROVIDERS = ("fast", "teaching", "torch", "compile", "liger")
# language-neutral names: the functions a reader would call
NAMES = {
    "layernorm": {"fast": "layer_norm_fast", "teaching": "layer_norm", "torch": "F.layer_norm",
                  "compile": "torch.compile", "liger": "Liger"},
    "rmsnorm": {"fast": "rms_norm_fast", "teaching": "rms_norm", "torch": "F.rms_norm",
                "compile": "torch.compile", "liger": "Liger"},
}
COLORS = {"fast": "#3f51b5", "teaching": "#9e9e9e", "torch": "#ff7043", "compile": "#26a69a", "liger": "#ab47bc"}
MARKERS = {"fast": "o", "teaching": "s", "torch": "^", "compile": "D", "liger": "v"}
MODES = (("fwd", "fwd", 2), ("fwd_bwd", "fwd+bwd", 5))  # key, label, bytes moved per element (in units of elt)
DW_DESIGNS = ("fast", "teaching", "torch", "liger", "lock_buffer_in_input_dtype")
MISSING = ("ModuleNotFoundError", "ImportError")  # a provider not installed is left out, not shown as refused

ELEMENT_SIZE = {"bfloat16": 2, "float16": 2, "float32": 4}


def _num(v, t):
    return t.number(v, ".0f" if abs(v) >= 100 else ".1f")


def _pct(v, t):
    return t.number(v, ".1f") + "%"


def _signed(v, t):
    return t.number(v, "+.1f").replace("-", "−")


def _ratio(v, t):
    return t.times(v, ".2f" if v < 10 else ".1f")


def _sci(v, t):
    if v == 0:
        return "0"
    exponent = math.floor(math.log10(abs(v)))
    mantissa = v / 10**exponent
    if round(mantissa, 1) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return t.number(mantissa, ".1f") + ("" if exponent == 0 else f"e{exponent}")


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


def _met(pct, target, t):
    return f"{'✓' if pct >= target else '✗'} ({_signed(pct - target, t)})"


def targets_md(res, op, t):
    rows = res["targets"][op]
    index = _index(rows)
    copy = res["copy_gbps"]
    goal = res["targets_pct"]
    fwd, both = t("fwd"), t("fwdbwd")
    out = [f"**{res['dtype']}** · M = {res['M']} · {t('copy')}: {t.number(copy, '.0f')} GB/s · {t('targets')}: "
           f"{fwd} ≥ {t.number(goal['fwd'], '.0f')}%, {both} ≥ {t.number(goal['fwd_bwd'], '.0f')}%", "",
           f"| {t('shape')} | {t('provider')} | {fwd} GB/s | {fwd} {t('pct_copy')} | {fwd} ≥ {t.number(goal['fwd'], '.0f')}% "
           f"| {both} GB/s | {both} {t('pct_copy')} | {both} ≥ {t.number(goal['fwd_bwd'], '.0f')}% |",
           "|---|---|--:|--:|:-:|--:|--:|:-:|"]
    for n in res["target_n"]:
        for name in _installed(rows):
            r = index.get((name, n))
            head = f"| {_shape_text(res['M'], n)} | `{NAMES[op][name]}` |"
            if not _ok(r):
                out.append(f"{head} {t('refused')} | — | — | — | — | — |")
                continue
            cells = []
            for key, _, _ in MODES:
                pct = r[f"{key}_pct_copy"]
                cells += [t.number(r[f'{key}_gbps'], ".0f"), _pct(pct, t), _met(pct, goal[key], t)]
            out.append(f"{head} {' | '.join(cells)} |")
    return "\n".join(out) + "\n"


def small_md(res, op, t):
    rows = [r for r in res["small"] if r["op"] == op]
    first = rows[0]
    out = [f"**{_shape_text(first['M'], first['N'])} {first['dtype']}** · {t('per_call')}", "",
           f"| {t('provider')} | {t('fwd')}, {t('plain')} | {t('fwd')}, {t('graph')} | {t('fwdbwd')}, {t('plain')} "
           f"| {t('fwdbwd')}, {t('graph')} |",
           "|---|--:|--:|--:|--:|"]
    for name in _installed(rows):
        r = next(r for r in rows if r["provider"] == name)
        head = f"| `{NAMES[op][name]}` |"
        if not _ok(r):
            out.append(f"{head} {t('refused')} | — | — | — |")
            continue
        out.append(f"{head} {_num(r['fwd_plain_us'], t)} | {_num(r['fwd_graph_us'], t)} | "
                   f"{_num(r['fwd_bwd_plain_us'], t)} | {_num(r['fwd_bwd_graph_us'], t)} |")
    return "\n".join(out) + "\n"


def _bytes(res, n, mode_bytes):
    return mode_bytes * res["M"] * n * ELEMENT_SIZE[res["dtype"]]


def _graph_pct(res, p):
    gbps = _bytes(res, p["N"], 5) / (p["graph_us_per_call"] * 1e-6) / 1e9
    return 100 * gbps / res["copy_gbps"]


def profile_md(res, op, t):
    rows = [p for p in res["profile"] if p["op"] == op]
    out = [f"**{t('fwdbwd')}** · {res['dtype']}", "",
           f"| {t('shape')} | {t('provider')} | {t('host_us')} | {t('gpu_us')} | {t('wall_us')} | {t('launches')} "
           f"| {t('graph_us')} | {t('bound')} |",
           "|---|---|--:|--:|--:|--:|--:|---|"]
    for p in rows:
        if "error" in p:
            continue
        graph = (f"{_num(p['graph_us_per_call'], t)} ({_pct(_graph_pct(res, p), t)})" if "graph_us_per_call" in p else "—")
        bound = t("host") if p["host_us_per_call"] > p["gpu_us_per_call"] else t("gpu")
        out.append(f"| {_shape_text(p['M'], p['N'])} | `{NAMES[op][p['provider']]}` | {_num(p['host_us_per_call'], t)} | "
                   f"{_num(p['gpu_us_per_call'], t)} | {_num(p['wall_us_per_call'], t)} | "
                   f"{t.number(p['launches_per_call'], '.0f')} | {graph} | {bound} |")
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


SHOW_N = (1024, 2560, 4096, 6144, 8192, 12288, 16384)  # the sweep's columns in the tables
HOW = {"gpu": "_gpu_pct_copy", "plain": "_pct_copy"}  # GPU-bound (graph replay) or plain calls
INK = "#808080"  # axes and text: readable on the light and the dark theme


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
    return [r for r in res["sweep"][op] if r.get("dtype", res["dtype"]) == dtype and _ok(r)]


def _series(res, op, how):
    """{provider: [(N, row)]} in order of N, for rows that have this kind of figure."""
    rows = _sweep_rows(res, op)
    series = {}
    for name in _installed(res["sweep"][op]):
        points = sorted(((r["N"], r) for r in rows if r["provider"] == name and f"fwd_bwd{HOW[how]}" in r),
                        key=lambda point: point[0])
        if points:
            series[name] = points
    return series


def _sweep_target(res, n):
    goal = res["sweep_targets_pct"]
    return goal["fwd_bwd"] if n <= goal["wide_above"] else goal["fwd_bwd_wide"]


def sweep_svg(res, op, gpu, path, how, t=ENGLISH):
    """% of the copy bandwidth against N, the fwd panel above the fwd+bwd one so that the labels stay
    legible on a phone, the legend under the panels rather than over the lines; words in t's language."""
    series = _series(res, op, how)
    ns = sorted({n for points in series.values() for n, _ in points})
    ticks = [n for n in ns if n % 2048 == 0 or n == ns[0]]
    # text stays text (svg.fonttype none): selectable, and its size can be checked by tests/test_browser.py
    with plt.rc_context({"svg.hashsalt": "normkernels", "svg.fonttype": "none", "font.size": 10,
                         "text.color": INK, "axes.labelcolor": INK, "axes.edgecolor": INK,
                         "xtick.color": INK, "ytick.color": INK}):
        fig, axes = plt.subplots(2, 1, figsize=(5, 6.6), sharex=True, layout="constrained")
        for ax, (key, _, _) in zip(axes, MODES):
            for name, points in series.items():
                # torch.compile is measured at a few widths only: points, no line drawn between them
                ax.plot([n for n, _ in points], [r[f"{key}{HOW[how]}"] for _, r in points], marker=MARKERS[name],
                        markersize=5 if name == "compile" else 3, linestyle="none" if name == "compile" else "-",
                        linewidth=2.6 if name == "fast" else 1.2, color=COLORS[name], label=NAMES[op][name])
            if how == "gpu":  # the issue's targets are GPU-bound
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
            ax.grid(True, linewidth=0.4, alpha=0.4, color=INK)
            ax.set_facecolor("none")
        axes[1].set_xlabel("N")
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=3, frameon=False)
        total = res["sweep_total"]
        fig.suptitle(f"{gpu} · M = {_total_text(total)} / N · {res['dtype']}", fontsize=10)
        fig.savefig(path, format="svg", metadata={"Date": None}, transparent=True)
        plt.close(fig)


def _worst(points, key):
    """(N, row) of the lowest figure."""
    return min(points, key=lambda point: point[1][key])


def sweep_md(res, op, t):
    out = []
    for how in ("gpu", "plain"):
        series = _series(res, op, how)
        cols = [n for n in SHOW_N if any(n == m for points in series.values() for m, _ in points)]
        out += [f"**{t('sweep_' + how)}** · {t('fwd')} / {t('fwdbwd')}, {t('pct_copy')} · M = {_total_text(res['sweep_total'])} / N"
                f" · {res['dtype']}", "",
                f"| {t('provider')} | " + " | ".join(f"N = {n}" for n in cols) + f" | {t('worst_n')} |",
                "|---|" + "--:|" * len(cols) + "--:|"]
        for name, points in series.items():
            at = dict(points)
            cells = [f"{t.number(at[n]['fwd' + HOW[how]], '.1f')} / {t.number(at[n]['fwd_bwd' + HOW[how]], '.1f')}"
                     if n in at else "—" for n in cols]
            n_worst, worst = _worst(points, "fwd_bwd" + HOW[how])
            cells.append(f"N = {n_worst}: {t.number(worst['fwd' + HOW[how]], '.1f')} / "
                         f"{t.number(worst['fwd_bwd' + HOW[how]], '.1f')}")
            out.append(f"| `{NAMES[op][name]}` | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def dtypes_md(res, op, t):
    rows = [r for r in res["sweep"][op] if r.get("dtype", res["dtype"]) != res["dtype"] and _ok(r)
            and "fwd_bwd_gpu_pct_copy" in r]
    out = [f"**{t('sweep_gpu')}** · {t('pct_copy')}", "",
           f"| {t('shape')} | dtype | {t('provider')} | {t('fwd')} | {t('fwdbwd')} |", "|---|---|---|--:|--:|"]
    for r in sorted(rows, key=lambda r: (r["N"], r["dtype"], PROVIDERS.index(r["provider"]))):
        out.append(f"| {_shape_text(r['M'], r['N'])} | {r['dtype']} | `{NAMES[op][r['provider']]}` | "
                   f"{_pct(r['fwd_gpu_pct_copy'], t)} | {_pct(r['fwd_bwd_gpu_pct_copy'], t)} |")
    return "\n".join(out) + "\n"


def host_md(res, op, t):
    rows = [r for r in res["host"] if r["op"] == op and _ok(r)]
    torch_row = next((r for r in rows if r["provider"] == "torch"), None)
    first = rows[0]
    out = [f"**{_shape_text(first['M'], first['N'])} {first['dtype']}** · {t('fastest_of').replace('{calls}', str(first['calls']))}",
           "", f"| {t('provider')} | {t('fwd')}, {t('plain')} | {t('fwdbwd')}, {t('plain')} | {t('vs_eager')} "
           f"| {t('fwd')}, {t('graph')} | {t('fwdbwd')}, {t('graph')} |", "|---|--:|--:|--:|--:|--:|"]
    for r in rows:
        ratio = _ratio(r["fwd_bwd_min_us"] / torch_row["fwd_bwd_min_us"], t) if torch_row else "—"
        out.append(f"| `{NAMES[op][r['provider']]}` | {_num(r['fwd_min_us'], t)} | {_num(r['fwd_bwd_min_us'], t)} | "
                   f"{ratio} | {_num(r['fwd_graph_us'], t)} | {_num(r['fwd_bwd_graph_us'], t)} |")
    return "\n".join(out) + "\n"


def _sweep_quotes(res, op, p, t, q):
    """Sweep figures the pages quote: targets met, each provider's worst N, the fast path at each N."""
    for how in ("gpu", "plain"):
        for name, points in _series(res, op, how).items():
            for key, _, _ in MODES:
                short = key.replace("_", "")
                n_worst, worst = _worst(points, key + HOW[how])
                q[f"{p}_{name}_{how}_worst_{short}_n"] = str(n_worst)
                q[f"{p}_{name}_{how}_worst_{short}_pct"] = _pct(worst[key + HOW[how]], t)
                for n, r in points:
                    q[f"{p}_{name}_{how}_{short}_pct_n{n}"] = _pct(r[key + HOW[how]], t)
    fast = dict(_series(res, op, "gpu").get("fast", []))
    if fast:
        goal = res["sweep_targets_pct"]
        fwd_met = sum(r["fwd_gpu_pct_copy"] >= goal["fwd"] for r in fast.values())
        both_met = sum(r["fwd_bwd_gpu_pct_copy"] >= _sweep_target(res, n) for n, r in fast.items())
        q[f"{p}_sweep_fwd_met"] = f"{fwd_met} / {len(fast)}"
        q[f"{p}_sweep_fwdbwd_met"] = f"{both_met} / {len(fast)}"
        # N at which another provider is faster than the fast path, GPU-bound fwd+bwd
        rows = _sweep_rows(res, op)
        behind = sorted({r["N"] for r in rows if r["provider"] != "fast" and r["N"] in fast
                         and r.get("fwd_bwd_gpu_pct_copy", 0) > fast[r["N"]]["fwd_bwd_gpu_pct_copy"]})
        q[f"{p}_sweep_fwdbwd_behind_n"] = t("list_separator").join(map(str, behind)) or "—"
    host = {r["provider"]: r for r in res["host"] if r["op"] == op and _ok(r)}
    for name, r in host.items():
        for key, _, _ in MODES:
            short = key.replace("_", "")
            q[f"{p}_{name}_host_{short}_us"] = _num(r[f"{key}_min_us"], t)
            q[f"{p}_{name}_host_{short}_graph_us"] = _num(r[f"{key}_graph_us"], t)
        q["host_shape"], q["host_dtype"], q["host_calls"] = _shape_text(r["M"], r["N"]), r["dtype"], str(r["calls"])
    if "fast" in host and "torch" in host:
        for key, _, _ in MODES:
            short = key.replace("_", "")
            q[f"{p}_host_{short}_vs_torch"] = _ratio(host["fast"][f"{key}_min_us"] / host["torch"][f"{key}_min_us"], t)


def _targets_timing(res):
    """The targets' timing protocol: the run's own keyword arguments, or median_call_ms's defaults
    ("normal"), read from the function so that the pages cannot drift from the code."""
    timing = res["timing"]["targets"]
    if timing == "normal":
        params = inspect.signature(median_call_ms).parameters
        return {name: params[name].default for name in ("samples", "calls_per_sample")}
    return timing


def quotes(measurements, t=ENGLISH):
    """Flat dict of ready-to-print strings in t's language; keys are what pages write as {{ faster.KEY }}."""
    prov, res = measurements["provenance"], measurements["results"]
    copy, goal, m = res["copy_gbps"], res["targets_pct"], res["M"]
    elt = ELEMENT_SIZE[res["dtype"]]
    protocol = _targets_timing(res)
    q = {"gpu": str(prov.get("gpu", res.get("device"))), "sm_count": str(res["sm_count"]),
         "timing_samples": str(protocol["samples"]), "timing_calls_per_sample": str(protocol["calls_per_sample"]),
         "copy_gbps": t.number(copy, ".0f"), "copy_gbps_end": t.number(res["copy_gbps_end"], ".0f"), "m": str(m),
         "dtype": res["dtype"], "target_fwd": t.number(goal["fwd"], ".0f") + "%",
         "target_fwdbwd": t.number(goal["fwd_bwd"], ".0f") + "%",
         "sweep_n_min": str(min(res["sweep_n"])), "sweep_n_max": str(max(res["sweep_n"])),
         "sweep_n_count": str(len(res["sweep_n"])), "sweep_total": _total_tex(res["sweep_total"]),
         "sweep_target_fwd": t.number(res["sweep_targets_pct"]["fwd"], ".0f") + "%",
         "sweep_target_fwdbwd": t.number(res["sweep_targets_pct"]["fwd_bwd"], ".0f") + "%",
         "sweep_target_fwdbwd_wide": t.number(res["sweep_targets_pct"]["fwd_bwd_wide"], ".0f") + "%",
         "sweep_wide_above": str(res["sweep_targets_pct"]["wide_above"])}

    for op, p in OPS.items():
        index = _index(res["targets"][op])
        launch = {c["N"]: c for c in res["launch"][op]}
        met = total = 0
        for n in res["target_n"]:
            s = _shape_key(m, n)
            q[f"shape_{s}"] = _shape_text(m, n)
            min_bytes = {key: mult * m * n * elt for key, _, mult in MODES}
            for key, _, _ in MODES:
                short = key.replace("_", "")
                q[f"{p}_min_{short}_mb_{s}"] = t.number(min_bytes[key] / 1e6, ".0f")
                q[f"{p}_min_{short}_us_{s}"] = _num(min_bytes[key] / (copy * 1e9) * 1e6, t)
            for name in PROVIDERS:
                r = index.get((name, n))
                if not _ok(r):
                    continue
                for key, _, _ in MODES:
                    short = key.replace("_", "")
                    q[f"{p}_{name}_{short}_pct_{s}"] = _pct(r[f"{key}_pct_copy"], t)
                    q[f"{p}_{name}_{short}_gbps_{s}"] = t.number(r[f'{key}_gbps'], ".0f")
                    q[f"{p}_{name}_{short}_us_{s}"] = _num(1000 * r[f"{key}_ms"], t)
            fast = index.get(("fast", n))
            if _ok(fast):
                for key, _, _ in MODES:
                    short = key.replace("_", "")
                    pct = fast[f"{key}_pct_copy"]
                    q[f"{p}_fast_{short}_gap_{s}"] = _signed(pct - goal[key], t)
                    total += 1
                    met += pct >= goal[key]
                    others = [(index[(o, n)][f"{key}_pct_copy"], o) for o in PROVIDERS
                              if o != "fast" and _ok(index.get((o, n)))]
                    if others:
                        best, who = max(others)
                        q[f"{p}_best_other_{short}_{s}"] = NAMES[op][who]
                        q[f"{p}_best_other_{short}_pct_{s}"] = _pct(best, t)
                        q[f"{p}_fast_{short}_lead_{s}"] = _signed(pct - best, t)
            c = launch.get(n)
            if c:
                halves = 2 if op == "layernorm" else 1  # dW and dB, or dW alone
                part = c["bwd_programs"] * n * 4 * halves
                for k in ("fwd_design", "fwd_block", "fwd_rows", "fwd_warps", "fwd_programs", "bwd_design",
                          "bwd_block", "bwd_rows", "bwd_warps", "programs_per_sm", "bwd_programs", "rows_per_program"):
                    q[f"{p}_{k}_{s}"] = str(c[k])
                q[f"{p}_prefetch_{s}"] = "PREFETCH=1" if c["prefetch"] else "PREFETCH=0"
                q[f"{p}_partial_mb_{s}"] = t.number(part / 1e6, ".1f")
                # written once and read once, against the minimum fwd+bwd traffic
                q[f"{p}_partial_share_{s}"] = _pct(100 * 2 * part / min_bytes["fwd_bwd"], t)
            if op == "rmsnorm":
                q[f"rms_teaching_partial_mb_{s}"] = t.number(m * n * 4 / 1e6, ".0f")
        q[f"{p}_targets_met"] = f"{met} / {total}"
        _sweep_quotes(res, op, p, t, q)

        for pr in res["profile"]:
            if pr["op"] != op or "error" in pr:
                continue
            s, name = _shape_key(pr["M"], pr["N"]), pr["provider"]
            host, gpu = pr["host_us_per_call"], pr["gpu_us_per_call"]
            q[f"{p}_{name}_host_us_{s}"] = _num(host, t)
            q[f"{p}_{name}_gpu_us_{s}"] = _num(gpu, t)
            q[f"{p}_{name}_wall_us_{s}"] = _num(pr["wall_us_per_call"], t)
            q[f"{p}_{name}_launches_{s}"] = t.number(pr['launches_per_call'], ".0f")
            q[f"{p}_{name}_host_over_gpu_{s}"] = _ratio(host / gpu, t) if gpu else "—"
            if pr["launches_per_call"]:
                q[f"{p}_{name}_host_us_per_launch_{s}"] = _num(host / pr["launches_per_call"], t)
            if "graph_us_per_call" in pr:
                q[f"{p}_{name}_graph_us_{s}"] = _num(pr["graph_us_per_call"], t)
                q[f"{p}_{name}_graph_fwdbwd_pct_{s}"] = _pct(_graph_pct(res, pr), t)
            if name == "fast":
                for part, marker in (("fwd", "fwd_kernel"), ("bwd", "bwd_kernel"), ("reduce", "sum_partials")):
                    us = sum(k["us_per_call"] for k in pr["kernels"] if marker in k["kernel"])
                    q[f"{p}_fast_{part}_kernel_us_{s}"] = _num(us, t)

        small = {r["provider"]: r for r in res["small"] if r["op"] == op}
        for name, r in small.items():
            q["small_shape"], q["small_dtype"] = _shape_text(r["M"], r["N"]), r["dtype"]
            if not _ok(r):
                continue
            for key, _, _ in MODES:
                short = key.replace("_", "")
                q[f"{p}_{name}_small_{short}_plain_us"] = _num(r[f"{key}_plain_us"], t)
                q[f"{p}_{name}_small_{short}_graph_us"] = _num(r[f"{key}_graph_us"], t)
        if _ok(small.get("fast")) and _ok(small.get("torch")):
            for key, _, _ in MODES:
                short = key.replace("_", "")
                for how in ("plain", "graph"):
                    # above 1x: the fast path beats torch eager
                    ratio = small["torch"][f"{key}_{how}_us"] / small["fast"][f"{key}_{how}_us"]
                    q[f"{p}_small_{short}_{how}_vs_torch"] = _ratio(ratio, t)

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
    return q


def write(measurements, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    res = measurements["results"]
    gpu = measurements["provenance"].get("gpu", res.get("device", ""))
    for op in OPS:
        write_localized(out_dir, f"{op}-targets.md", lambda t, op=op: targets_md(res, op, t))
        write_localized(out_dir, f"{op}-small.md", lambda t, op=op: small_md(res, op, t))
        write_localized(out_dir, f"{op}-profile.md", lambda t, op=op: profile_md(res, op, t))
        write_localized(out_dir, f"{op}-sweep.md", lambda t, op=op: sweep_md(res, op, t))
        write_localized(out_dir, f"{op}-dtypes.md", lambda t, op=op: dtypes_md(res, op, t))
        write_localized(out_dir, f"{op}-host.md", lambda t, op=op: host_md(res, op, t))
        for how in HOW:  # OP-sweep-HOW.svg, .zh.svg, .vi.svg: the plot in the page's words
            for language in LANGUAGES:
                suffix = "" if language == "en" else f".{language}"
                sweep_svg(res, op, gpu, out_dir / f"{op}-sweep-{how}{suffix}.svg", how, Words(language))
    write_localized(out_dir, "dw-error.md", lambda t: dw_md(res["dw_error"], t))
    write_localized(out_dir, "quotes.json", lambda t: json.dumps(
        quotes(measurements, t), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
