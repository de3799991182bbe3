"""What the "Going faster" pages quote: quotes(measurements, t) is every number and sentence a page
writes as {{ faster.KEY }}, in t's language, from the figures faster.report's tables show (so a
sentence and a table quote one figure alike). Every verdict is read from the ranges
(normkit.claims), and the verdicts a page states cite what they rest on (claims.cite).
"""

import importlib
import math

from faster.results import (BACKWARD_DESIGNS, DW_DESIGNS, ELEMENT_SIZE, MODES, NAMES, OPS, PACKAGE_NAMES,
                            PROVIDERS, SHORT_DTYPE, _between, _copy, _design_pct, _design_rows,
                            _elements_per_thread, _half_ulp, _index, _lowest, _num, _ok, _pct, _ratio,
                            _ref_max, _sci, _series, _shape_key, _shape_text, _short, _sweep_rows,
                            _sweep_target, _total_tex, _us, pct_copy)
from normkit import aligned, claims, exchange, tiles
from normkit.launch_tables import backward_entry_config
from normkit.bench import figure
from normkit.words import ENGLISH


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


def _between_quotes(res, op, p, copy, t, q):
    """Each provider's figures between the entries, each width's row alignment, and two sentences:
    the widths where the fast path falls below each entry measured beside it (forward+backward, ranges
    apart; past the table's widest entry the one below it alone), and those where another provider
    is faster."""
    at, names = _between(res, op, copy)
    elt = ELEMENT_SIZE[res["dtype"]]
    for n, by in at.items():
        q[f"{p}_between_align_n{n}"] = str(aligned.row_alignment(n, elt))
        for name, figs in by.items():
            for key, _ in MODES:
                q[f"{p}_between_{name}_{_short(key)}_pct_n{n}"] = _pct(figs[key], t)
    fast = {n: by["fast"] for n, by in at.items() if "fast" in by}
    step = importlib.import_module(f"{op}.fast").tuned_table(elt)["step"]
    below, behind = [], []
    for n, figs in fast.items():
        entries = [fast[m]["fwd_bwd"] for m in entries_beside(n, step) if m in fast]
        if entries and all(claims.compare(figs["fwd_bwd"], e, "gpu") == "lower" for e in entries):
            below.append(n)
        if any(claims.compare(other["fwd_bwd"], figs["fwd_bwd"], "gpu") == "higher"
               for name, other in at[n].items() if name != "fast"):
            behind.append(n)
    q[f"{p}_between_below_sentence"] = widths_sentence("between_below", below, t)
    q[f"{p}_between_behind_sentence"] = widths_sentence("sweep_behind", behind, t)


def entries_beside(n, step):
    """The launch-table entries on either side of a width between them (the multiples of the table's
    step around it), none for an entry itself. The sentence reads those the run measured: past the
    table's widest entry, the one below it alone (16385: 16384)."""
    below = n // step * step
    return (below, below + step) if n % step else ()


def _counts(figs_and_targets):
    """{"met": k, "missed": k, "within": k} over [(figure, target)]."""
    verdicts = [claims.against(fig, target, "gpu") for fig, target in figs_and_targets]
    return {v: verdicts.count(v) for v in ("met", "missed", "within")}


def widths_sentence(label, widths, t):
    """Widths as the catalogue's sentence, per case: LABEL_none where there are none (which says
    "none" once, not "at 0 widths: none"), LABEL_one with its {width} where there is one (not "at
    1 widths"), else LABEL_some with their {count} and {widths}; {margin} is the GPU verdicts' margin."""
    margin = _margin_text(t)
    if not widths:
        return t(f"{label}_none").format(margin=margin)
    if len(widths) == 1:
        return t(f"{label}_one").format(width=widths[0], margin=margin)
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
            q[f"{p}_{name}_drops_sentence"] = _drops_sentence(points, label, t)
        else:
            q[f"{p}_{name}_sweep_fwd"] = t("provider_not_in_run").format(provider=label)
            q[f"{p}_{name}_drops_sentence"] = ""


def _drops_sentence(points, provider, t):
    """The widths where a provider's forward drops to less than half its typical figure (the whole
    stated range under half the sweep's median), per case: none, one, or some with their span."""
    typical = claims.typical([figs["fwd"] for _, figs in points])
    drops = [(n, figs["fwd"]) for n, figs in points
             if claims.stated(figs["fwd"], "gpu")[1] < typical["median"] / 2]
    words = {"provider": provider, "typical": _pct(typical, t)}
    if not drops:
        return t("sweep_drops_none").format(**words)
    if len(drops) == 1:
        return t("sweep_drops_one").format(width=drops[0][0], figure=_pct(drops[0][1], t), **words)
    low = min((fig for _, fig in drops), key=lambda fig: fig["median"])
    high = max((fig for _, fig in drops), key=lambda fig: fig["median"])
    return t("sweep_drops_some").format(count=len(drops), widths=t.join(str(n) for n, _ in drops),
                                        span=t.span(_pct(low, t), _pct(high, t)), **words)


def _host_quotes(res, op, p, t, q):
    """The host grid's verdicts and ratio ranges, and each step's host cost."""
    rows = {(r["M"], r["N"], r["provider"]): r for r in res["host_grid"] if r["op"] == op}
    q["host_m_list"] = t.join(str(m) for m in sorted({r["M"] for r in res["host_grid"]}))
    q["host_n_list"] = t.join(str(n) for n in sorted({r["N"] for r in res["host_grid"]}))
    counts = []
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
            counts.append({v: verdicts.count(v) for v in ("met", "within", "missed")})
            q[f"{p}_host_{k}_ratio_span"] = t.times_span(min(ratios), max(ratios), ".1f")
    if len(counts) == len(MODES):
        q[f"{p}_host_tallies"] = t.both_counted("host", *counts)
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
    """The chunks LayerNorm's aligned walk takes (normkit.aligned.walk_config) at the odd widths this
    run measured, the widths between the table's entries (the sweep's are even), in words: the
    narrowest and the widest, one where they agree, and none where no width measured is walked (a
    quick run's are narrower than WALK_MIN_COLS), said so."""
    elt = ELEMENT_SIZE[res["dtype"]]
    walks = [aligned.walk_config(None, n, elt) for n in res["between_n"]]
    chunks = sorted({walk[1] for walk in walks if walk})
    if not chunks:
        return t("walk_chunks_none")
    if len(chunks) == 1:
        return t("walk_chunks_one").format(chunk=chunks[0])
    return t("walk_chunks_range").format(low=chunks[0], high=chunks[-1])


def quotes(measurements, t=ENGLISH):
    """Flat dict of ready-to-print strings in t's language; keys are what pages write as {{ faster.KEY }}."""
    prov, res = measurements["provenance"], measurements["results"]
    copy_fig = _copy(measurements)
    copy, goal, m = copy_fig["median"], res["targets_pct"], res["M"]
    elt = ELEMENT_SIZE[res["dtype"]]
    protocol = res["protocol"]
    q = {"gpu": str(prov.get("gpu", res.get("device"))), "sm_count": str(res["sm_count"]),
         "copy_gbps": claims.copy_text(copy_fig, t), "m": str(m),
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
         "walk_chunks": walk_chunks_text(res, t),
         "window_warps": str(aligned.WINDOW_WARPS),
         "offset_chunk": t.number(aligned.OFFSET_CHUNK, "d"),
         "offset_warps": str(aligned.OFFSET_WARPS),
         "offset_row_max_lanes": t.number(aligned.OFFSET_ROW_MAX_LANES, "d"),
         "offset_fp32_chunk": t.number(aligned.OFFSET_FP32[1], "d"),
         "offset_fp32_warps": str(aligned.OFFSET_FP32[3]),
         "classes_elements_per_thread": str(_elements_per_thread(aligned.classes_config(None, 4097, 2))),
         # the widest 16-bit window, where the warps stop at CLASS_WARPS
         "classes_elements_per_thread_widest": str(_elements_per_thread(
             aligned.classes_config(None, aligned.CLASS_LANES[2][1] - 1, 2))),
         "classes_warps_max": str(aligned.CLASS_WARPS),
         # sizes a reader passes to code: plain digits in every language (1024–16384)
         "classes_lanes_16": "–".join(map(str, aligned.CLASS_LANES[2])),
         "classes_lanes_32": "–".join(map(str, aligned.CLASS_LANES[4]))}
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
        q |= launch_limits(op, p) | table_steps(op, p) | staged_shared_quotes(res, op, p)
        q[f"{p}_wide_staged_cols"] = wide_staged_text(op, t)
        q |= class_walk(op, p)
    q |= exchange_quotes(t)
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


def wide_staged_text(op, t):
    """How far past the tuned range the backward keeps the staged design (the first rung of the
    op's WIDE backward ladders), in words: one width where 16 bits and fp32 agree."""
    ladders = importlib.import_module(f"{op}.fast").OP.WIDE["backward"]
    n16, n32 = (ladders[size][0][0] for size in (2, 4))
    if n16 == n32:
        return t("width_is").format(n=n16)
    return t("wide_staged_apart").format(n16=n16, n32=n32)


def exchange_quotes(t):
    """The exchange of row sums past the staged rung (normkit.exchange, both ops' rung): the
    programs a row, and the widest rows it takes."""
    widest, (_, shares, *_) = exchange.WIDE_RUNG
    return {"exchange_shares": str(shares), "exchange_cols": t("width_is").format(n=widest)}


def class_walk(op, p):
    """The walk by residue class past the tuned range (the op's WIDE entry): its chunk's lanes,
    rows a step, and the elements an access below which the chunked design gives way to it."""
    chunk, rows, _, _, fewer = importlib.import_module(f"{op}.fast").OP.WIDE["classes_chunked"]
    return {f"{p}_class_walk_chunk": str(chunk), f"{p}_class_walk_rows": str(rows),
            f"{p}_class_walk_fewer": str(fewer)}


def table_steps(op, p):
    """The widths the launch tables have entries for: every multiple of their step."""
    fast = importlib.import_module(f"{op}.fast")
    tables = {"": fast.tuned_table(2), "_fp32": fast.tuned_table(4)}
    return {f"{p}_table_step{key}": str(table["step"]) for key, table in tables.items() if table}


def staged_shared_quotes(res, op, p):
    """What a staged program of the fp32 launch table keeps in shared memory at the side-by-side's
    fp32 widths, with its stages and with one more, and an SM's shared memory (normkit.tiles.staged_shared's
    rule, which faster/test_tune.py checks against the compiler). The pages quote these."""
    fast = importlib.import_module(f"{op}.fast")
    q = {"shared_kib_per_sm": str(tiles.SHARED_BYTES // 1024)}
    for n in sorted({n for n, dtype, _ in _design_rows(res, op) if dtype == "float32"}):
        entry = fast.tuned_table(4)["backward_designs"].get(n, {}).get("staged")
        if entry is None:
            continue
        _, tile, rows, _, _, split, stages, rest, _ = backward_entry_config(entry, n)
        q[f"{p}_staged_stages_n{n}_fp32"] = str(stages)
        for key, s in (("", stages), ("_one_more_stage", stages + 1)):
            q[f"{p}_staged_kib_n{n}_fp32{key}"] = str(tiles.staged_shared(rows, (tile + rest) * split, s, 4) // 1024)
    return q
