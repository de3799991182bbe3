"""The "faster" data set as the pages read it: its providers and passes, its figures found and
formatted, and the sweep and design rows picked out of faster.benchmark's results. Shared by the
tables and plots (faster.report) and the sentences (faster.quotes), so both quote one figure alike.
"""

import math

from normkit import claims


OPS = {"layernorm": "ln", "rmsnorm": "rms"}


PROVIDERS = ("fast", "teaching", "torch", "compile", "liger", "quack")


# language-neutral names: the functions a reader would call
NAMES = {
    "layernorm": {"fast": "layer_norm_fast", "teaching": "layer_norm", "torch": "F.layer_norm",
                  "compile": "torch.compile", "liger": "Liger", "quack": "QuACK"},
    "rmsnorm": {"fast": "rms_norm_fast", "teaching": "rms_norm", "torch": "F.rms_norm",
                "compile": "torch.compile", "liger": "Liger", "quack": "QuACK"},
}


MODES = (("fwd", 2), ("fwd_bwd", 5))  # key, bytes moved per element (in units of the element size)


DW_DESIGNS = ("fast", "teaching", "torch", "liger", "lock_buffer_in_input_dtype")


MISSING = ("ModuleNotFoundError", "ImportError")  # a provider not installed is left out, not shown as refused


ELEMENT_SIZE = {"bfloat16": 2, "float16": 2, "float32": 4}


SHORT_DTYPE = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


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


PACKAGE_NAMES = {"liger": "Liger-Kernel", "quack": "QuACK"}


BACKWARD_DESIGNS = ("row", "staged", "chunked")


def _design_pct(r, copy, dtype):
    """% of the copy bandwidth of one backward-alone figure: x and dy read, dx written."""
    return pct_of_copy(r["bwd_gpu_us"], 3 * r["M"] * r["N"] * ELEMENT_SIZE[dtype], copy)


def _design_rows(res, op):
    """{(N, dtype, design): record} of the side-by-side; the run's dtype first, then the others."""
    rows = {(r["N"], r.get("dtype", res["dtype"]), r["design"]): r
            for r in res.get("designs", []) if r["op"] == op}
    return dict(sorted(rows.items(), key=lambda kv: (kv[0][1] != res["dtype"], kv[0])))


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


def _lowest(points, key):
    """The figure with the lowest median over the sweep (which width it is can change between builds
    where two widths are on par, so the pages name the widths that miss a target instead)."""
    return min((figs[key] for _, figs in points), key=lambda fig: fig["median"])


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

def _total_tex(total):
    """The same number for a page's math: 2^{27}, so that "M = 2^{27}/N" is one formula."""
    exponent = total.bit_length() - 1
    return f"2^{{{exponent}}}" if total == 2**exponent else str(total)
