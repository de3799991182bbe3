"""faster.report.write renders the "faster" tables, plots and quotes. Every number here is SYNTHETIC,
made up to test the rendering only: none of it is a measurement and none of it is ever published."""

import inspect
import json

import pytest

from faster import report
from normkit.bench import median_call_ms

M = 32768
TARGET_N = [4096, 8192]
SWEEP_N = [1024, 2048, 4096, 8192, 16384]
COPY = 4000.0  # synthetic copy bandwidth, GB/s
# synthetic % of copy: (fwd, fwd+bwd) per provider; the sweep scales them with N
SYNTHETIC_PCT = {"fast": (95.0, 80.0), "teaching": (70.0, 30.0), "torch": (60.0, 45.0), "compile": (85.0, 70.0)}


def _row(op, provider, n, fwd_pct, both_pct, elt=2):
    row = {"op": op, "provider": provider, "M": M, "N": n, "dtype": "bfloat16"}
    for key, pct, mult in (("fwd", fwd_pct, 2), ("fwd_bwd", both_pct, 5)):
        gbps = COPY * pct / 100
        row[f"{key}_gbps"], row[f"{key}_pct_copy"] = gbps, pct
        row[f"{key}_ms"] = mult * M * n * elt / (gbps * 1e9) * 1e3
    return row


def _rows(op, ns, scale=1.0):
    rows = []
    for provider in ("teaching", "fast", "torch", "compile", "liger"):
        for n in ns:
            if provider == "liger":
                rows.append({"op": op, "provider": provider, "M": M, "N": n, "dtype": "bfloat16",
                             "error": "ModuleNotFoundError: No module named 'liger_kernel'"})
            elif provider == "teaching" and op == "rmsnorm":
                rows.append({"op": op, "provider": provider, "M": M, "N": n, "dtype": "bfloat16",
                             "error": "ContractError: x has dtype torch.bfloat16"})
            else:
                fwd, both = SYNTHETIC_PCT[provider]
                bump = 5.0 if n == 8192 else 0.0  # 8192 meets both synthetic targets for the fast kernel
                rows.append(_row(op, provider, n, scale * fwd + bump, scale * both + bump))
    return rows


def _sweep_row(row):
    """A sweep row: plain calls at the row's figures, GPU-bound 10 points higher (synthetic)."""
    if "error" in row:
        return row
    row = dict(row)
    for key in ("fwd", "fwd_bwd"):
        row[f"{key}_gpu_pct_copy"] = row[f"{key}_pct_copy"] + 10
    return row


def synthetic_measurements():
    targets = {op: _rows(op, TARGET_N) for op in ("layernorm", "rmsnorm")}
    sweep = {op: [_sweep_row(r) for r in _rows(op, SWEEP_N, 0.5)] for op in ("layernorm", "rmsnorm")}
    for op in ("layernorm", "rmsnorm"):
        sweep[op].append({**_sweep_row(_row(op, "fast", 4096, 90.0, 80.0, elt=4)), "dtype": "float32", "M": M // 2})
    small, profile, launch, host_rows = [], [], {}, []
    for op in ("layernorm", "rmsnorm"):
        for provider, plain, graph in (("teaching", 500.0, 12.0), ("fast", 400.0, 8.0), ("torch", 200.0, 10.0)):
            small.append({"op": op, "provider": provider, "M": 128, "N": 257, "dtype": "float32",
                          "fwd_plain_us": plain / 4, "fwd_graph_us": graph / 2,
                          "fwd_bwd_plain_us": plain, "fwd_bwd_graph_us": graph})
        small.append({"op": op, "provider": "liger", "M": 128, "N": 257, "dtype": "float32",
                      "error": "ModuleNotFoundError: No module named 'liger_kernel'"})
        for n in TARGET_N:
            for provider, host, gpu in (("fast", 500.0, 400.0), ("torch", 150.0, 600.0)):
                kernels = [{"kernel": "ln_fast_fwd_kernel", "us_per_call": gpu / 4, "count_per_call": 1.0},
                           {"kernel": "ln_fast_bwd_kernel", "us_per_call": gpu * 3 / 4 - 5, "count_per_call": 1.0},
                           {"kernel": "sum_partials_kernel", "us_per_call": 5.0, "count_per_call": 1.0}]
                profile.append({"op": op, "provider": provider, "M": M, "N": n, "dtype": "bfloat16",
                                "host_us_per_call": host, "wall_us_per_call": max(host, gpu),
                                "gpu_us_per_call": gpu, "launches_per_call": 3.0, "kernels": kernels,
                                "graph_us_per_call": gpu + 10})
            profile.append({"op": op, "provider": "liger", "M": M, "N": n,
                            "error": "ModuleNotFoundError: No module named 'liger_kernel'"})
        launch[op] = [{"op": op, "M": M, "N": n, "fwd_design": "row", "fwd_block": n, "fwd_rows": 1, "fwd_warps": 8,
                       "fwd_programs": M, "bwd_design": "row", "bwd_block": n, "bwd_rows": 1, "bwd_warps": 16,
                       "programs_per_sm": 2, "prefetch": True, "sm_count": 100,
                       "bwd_programs": 200, "rows_per_program": 164} for n in SWEEP_N]
        for provider, fwd_us, both_us in (("fast", 60.0, 300.0), ("torch", 30.0, 150.0)):
            host_rows.append({"op": op, "provider": provider, "M": 128, "N": 257, "dtype": "float32", "calls": 300,
                         "fwd_min_us": fwd_us, "fwd_bwd_min_us": both_us, "fwd_graph_us": 3.0, "fwd_bwd_graph_us": 8.0})
    err = {"max_abs_ref": 600.0}
    dw = {"M": M, "N": 4096, "dtype": "bfloat16",
          "teaching": {"max_abs": 2.0, "rel_norm": 1.5e-3, **err}, "fast": {"max_abs": 2.0, "rel_norm": 1.5e-3, **err},
          "torch": {"max_abs": 2.0, "rel_norm": 1.5e-3, **err},
          "liger": {"error": "ModuleNotFoundError: No module named 'liger_kernel'"},
          "lock_buffer_in_input_dtype": {"max_abs": 14.0, "rel_norm": 2.04e-2, "group_size": 96, **err}}
    results = {"quick": False, "device": "Synthetic GPU", "sm_count": 100, "copy_gbps": COPY, "copy_gbps_end": 3990.0,
               "targets_pct": {"fwd": 92.0, "fwd_bwd": 85.0}, "M": M, "dtype": "bfloat16", "target_n": TARGET_N,
               "sweep_n": SWEEP_N, "providers": ["teaching", "fast", "torch", "compile", "liger"],
               "sweep_total": 2**27, "host": host_rows,
               "sweep_targets_pct": {"fwd": 90.0, "fwd_bwd": 85.0, "fwd_bwd_wide": 75.0, "wide_above": 8192},
               "timing": {"targets": "normal", "small": "normal"}, "launch": launch, "targets": targets, "sweep": sweep, "small": small,
               "dw_error": dw, "profile": profile, "seconds": {}}
    return {"provenance": {"gpu": "Synthetic GPU", "copy_gb_per_s": COPY, "quick": False}, "results": results}


OPS = ("layernorm", "rmsnorm")


def test_write_renders_every_file_in_every_language(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    expected = ["quotes.json", "quotes.vi.json", "quotes.zh.json"]
    for stem in ("dw-error", *(f"{op}-{t}" for op in OPS for t in ("targets", "small", "profile", "sweep", "dtypes",
                                                                  "host"))):
        expected += [f"{stem}.md", f"{stem}.vi.md", f"{stem}.zh.md"]
    expected += [f"{op}-sweep-{how}{suffix}.svg" for op in OPS for how in ("gpu", "plain")
                 for suffix in ("", ".vi", ".zh")]
    assert names == sorted(expected)
    # same numbers in every language, in its words and its number format
    for stem in ("layernorm-targets", "rmsnorm-small", "dw-error"):
        rows = [(tmp_path / f"{stem}{lang}.md").read_text(encoding="utf-8").splitlines()[4:] for lang in ("", ".zh", ".vi")]
        assert len(rows[0]) == len(rows[1]) == len(rows[2]), stem
        assert rows[0] == rows[1] or stem == "dw-error", stem


def test_targets_table_computes_whether_the_targets_are_met(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    table = (tmp_path / "layernorm-targets.md").read_text(encoding="utf-8")
    # synthetic fast kernel: 95 / 80 at 4096 (fwd met, fwd+bwd 5 points short), 100 / 85 at 8192 (both met)
    assert "| 32768×4096 | `layer_norm_fast` | 3800 | 95.0% | ✓ (+3.0) | 3200 | 80.0% | ✗ (−5.0) |" in table
    assert "| 32768×8192 | `layer_norm_fast` | 4000 | 100.0% | ✓ (+8.0) | 3400 | 85.0% | ✓ (+0.0) |" in table
    assert "Liger" not in table  # not installed: left out, not shown as refused
    rms = (tmp_path / "rmsnorm-targets.zh.md").read_text(encoding="utf-8")
    assert "| 32768×4096 | `rms_norm` | 不支持 | — | — | — | — | — |" in rms  # the teaching kernel refuses bf16
    assert "4,0" not in table and "3,8" not in table  # no thousands separators


def test_small_profile_and_dw_tables(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    small = (tmp_path / "rmsnorm-small.md").read_text(encoding="utf-8")
    assert "| `rms_norm_fast` | 100 | 4.0 | 400 | 8.0 |" in small
    profile = (tmp_path / "layernorm-profile.vi.md").read_text(encoding="utf-8")
    # fast: host 500 > GPU 400 -> host-bound; torch: GPU-bound. Graph replay 410 µs of 5*M*N*2 bytes
    # (Vietnamese: decimal comma)
    assert "| 32768×4096 | `layer_norm_fast` | 500 | 400 | 500 | 3 | 410 (81,8%) | host (CPU) |" in profile
    assert "| 32768×4096 | `F.layer_norm` | 150 | 600 | 600 | 3 | 610 (55,0%) | GPU |" in profile
    dw = (tmp_path / "dw-error.md").read_text(encoding="utf-8")
    assert "(official tutorial, emulated, 96 rows) | 14 | 2.0e-2 | 7.00× |" in dw
    assert "Liger" not in dw


def test_quotes_are_strings_the_pages_can_quote(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    q = json.loads((tmp_path / "quotes.json").read_text(encoding="utf-8"))
    assert all(isinstance(v, str) for v in q.values())
    assert q["gpu"] == "Synthetic GPU" and q["copy_gbps"] == "4000"
    assert q["ln_fast_fwd_pct_32768x4096"] == "95.0%"
    assert q["ln_fast_fwdbwd_pct_32768x4096"] == "80.0%"
    assert q["ln_fast_fwdbwd_gap_32768x4096"] == "−5.0"
    assert q["ln_fast_fwd_gap_32768x8192"] == "+8.0"
    assert q["ln_targets_met"] == "3 / 4"
    # the targets' timing protocol ("normal": median_call_ms's defaults), read from the code
    defaults = inspect.signature(median_call_ms).parameters
    assert q["timing_samples"] == str(defaults["samples"].default)
    assert q["timing_calls_per_sample"] == str(defaults["calls_per_sample"].default)
    assert q["ln_best_other_fwdbwd_32768x4096"] == "torch.compile"
    assert q["ln_fast_fwdbwd_lead_32768x4096"] == "+10.0"
    # minimum traffic at 32768x4096 bf16: 2*M*N*2 bytes = 537 MB; at 4000 GB/s, 134 µs
    assert q["ln_min_fwd_mb_32768x4096"] == "537" and q["ln_min_fwd_us_32768x4096"] == "134"
    assert q["ln_partial_mb_32768x4096"] == "6.6"  # 200 programs x 4096 x 4 bytes x (dW, dB)
    assert q["rms_partial_mb_32768x4096"] == "3.3"
    assert q["rms_teaching_partial_mb_32768x4096"] == "537"
    assert q["ln_fast_host_us_32768x4096"] == "500" and q["ln_fast_gpu_us_32768x4096"] == "400"
    assert q["ln_fast_host_us_per_launch_32768x4096"] == "167"
    assert q["ln_fast_bwd_kernel_us_32768x4096"] == "295" and q["ln_fast_reduce_kernel_us_32768x4096"] == "5.0"
    assert q["rms_small_fwdbwd_graph_vs_torch"] == "1.25×" and q["rms_small_fwdbwd_plain_vs_torch"] == "0.50×"
    assert q["ln_fast_small_fwdbwd_plain_us"] == "400" and q["small_shape"] == "128×257"
    assert q["dw_lock_vs_fast"] == "7.00×" and q["dw_lock_buffer_in_input_dtype_rel"] == "2.0e-2"
    assert q["dw_half_ulp"] == "2"  # bf16 near 600: exponent 9, 8 significant bits
    assert not any(k.startswith("ln_liger") for k in q)  # not installed: nothing to quote


def test_plots_are_deterministic_with_text_as_text_in_each_language(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    report.write(synthetic_measurements(), first)
    report.write(synthetic_measurements(), second)
    for path in sorted(first.iterdir()):
        assert path.read_bytes() == (second / path.name).read_bytes(), path.name
    svg = (first / "layernorm-sweep-gpu.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<dc:date>" not in svg
    # labels are <text> (svg.fonttype none), in the page's words, the functions' names in every language
    assert "<text" in svg and "fwd+bwd" in svg and "layer_norm_fast" in svg
    zh = (first / "layernorm-sweep-gpu.zh.svg").read_text(encoding="utf-8")
    assert "前向+反向" in zh and "layer_norm_fast" in zh
    vi = (first / "rmsnorm-sweep-plain.vi.svg").read_text(encoding="utf-8")
    assert "lượt xuôi" in vi and "rms_norm_fast" in vi


def test_sweep_host_and_dtype_tables(tmp_path):
    report.write(synthetic_measurements(), tmp_path)
    sweep = (tmp_path / "layernorm-sweep.md").read_text(encoding="utf-8")
    # synthetic sweep: plain = half the target figures (8192: +5), GPU-bound 10 points higher
    assert "| `layer_norm_fast` | 57.5 / 50.0 | 57.5 / 50.0 | 62.5 / 55.0 | 57.5 / 50.0 | N = 1024: 57.5 / 50.0 |" in sweep
    assert "| `layer_norm_fast` | 47.5 / 40.0 | 47.5 / 40.0 |" in sweep  # the plain-call table
    assert "M = 2²⁷ / N" in sweep
    host = (tmp_path / "rmsnorm-host.zh.md").read_text(encoding="utf-8")
    assert "| `rms_norm_fast` | 60.0 | 300 | 2.00 倍 | 3.0 | 8.0 |" in host
    dtypes = (tmp_path / "layernorm-dtypes.md").read_text(encoding="utf-8")
    assert "| 16384×4096 | float32 | `layer_norm_fast` | 100.0% | 90.0% |" in dtypes
    q = json.loads((tmp_path / "quotes.json").read_text(encoding="utf-8"))
    assert q["ln_sweep_fwd_met"] == "0 / 5" and q["ln_sweep_fwdbwd_met"] == "0 / 5"
    assert q["ln_fast_gpu_worst_fwdbwd_n"] == "1024" and q["ln_fast_gpu_fwdbwd_pct_n8192"] == "55.0%"
    assert q["ln_host_fwdbwd_vs_torch"] == "2.00×" and q["ln_fast_host_fwdbwd_us"] == "300"
    assert q["ln_sweep_fwdbwd_behind_n"] == "—"


@pytest.mark.gpu
def test_quick_measure_renders(tmp_path):
    from faster import benchmark as speed

    results = speed.measure(quick=True)
    json.dumps(results)
    # the quick run skips torch.compile; a provider that is missing still has its (error) row
    assert {r["provider"] for r in results["targets"]["layernorm"]} == set(speed.PROVIDERS) - {"compile"}
    report.write({"provenance": {"gpu": results["device"], "copy_gb_per_s": results["copy_gbps"]},
                        "results": results}, tmp_path)
    assert (tmp_path / "quotes.json").is_file()
