"""Render the chapter's measurements into the files the page includes.

write(measurements, out_dir) with measurements = {"provenance": {...}, "results": measure()}.
Files: accuracy.md, timing.md, training.md, examples.txt, exercise.txt, timing.svg, quotes.json.
"""

import json
import pathlib

from normkit.bench import gb_per_s
from normkit.tables import write_localized
from rmsnorm.examples import format_examples
from rmsnorm.exercise import format_exercise
from rmsnorm.timing import diff_pct

SCOPES = (("fwd", "fwd"), ("fwdbwd", "fwd + bwd"))

LABELS = {
    "en": {
        "quantity": "quantity", "cases": "cases", "max_abs_error": "max abs error",
        "error_ratio": "max error / allowed", "failed": "failed cases",
        "shape": "shape", "scope": "scope", "reference_us": "reference (µs)", "kernel_us": "kernel (µs)",
        "difference": "kernel − reference", "reference_gbps": "reference GB/s (% copy)",
        "kernel_gbps": "kernel GB/s (% copy)", "reference": "reference", "kernel": "kernel",
        "val_mse": "validation MSE", "test_mse": "test MSE",
        "calls": "RMSNorm forwards / backwards in training", "check": "check", "value": "value",
        "init_out": "initial output difference", "init_grad": "initial gradient difference",
        "final_param": "largest parameter difference after training",
        "reload": "checkpoint reload difference",
    },
    "zh": {
        "quantity": "量", "cases": "用例数", "max_abs_error": "最大绝对误差",
        "error_ratio": "最大误差 / 容差", "failed": "失败用例",
        "shape": "形状", "scope": "范围", "reference_us": "参考实现（µs）", "kernel_us": "内核（µs）",
        "difference": "内核 − 参考", "reference_gbps": "参考实现 GB/s（占拷贝带宽 %）",
        "kernel_gbps": "内核 GB/s（占拷贝带宽 %）", "reference": "参考实现", "kernel": "内核",
        "val_mse": "验证集 MSE", "test_mse": "测试集 MSE",
        "calls": "训练中 RMSNorm 前向 / 反向次数", "check": "检查项", "value": "值",
        "init_out": "初始输出差异", "init_grad": "初始梯度差异",
        "final_param": "训练后参数的最大差异", "reload": "检查点重新加载后的差异",
    },
    "vi": {
        "quantity": "đại lượng", "cases": "số trường hợp", "max_abs_error": "sai số tuyệt đối lớn nhất",
        "error_ratio": "sai số lớn nhất / cho phép", "failed": "trường hợp thất bại",
        "shape": "kích thước", "scope": "phạm vi", "reference_us": "tham chiếu (µs)", "kernel_us": "kernel (µs)",
        "difference": "kernel − tham chiếu", "reference_gbps": "tham chiếu GB/s (% sao chép)",
        "kernel_gbps": "kernel GB/s (% sao chép)", "reference": "tham chiếu", "kernel": "kernel",
        "val_mse": "MSE tập xác thực", "test_mse": "MSE tập kiểm tra",
        "calls": "số lượt xuôi / ngược của RMSNorm khi huấn luyện", "check": "kiểm tra", "value": "giá trị",
        "init_out": "chênh lệch đầu ra ban đầu", "init_grad": "chênh lệch gradient ban đầu",
        "final_param": "chênh lệch tham số lớn nhất sau huấn luyện",
        "reload": "chênh lệch sau khi nạp lại checkpoint",
    },
}


def _sci(v):
    return "0" if v == 0 else f"{v:.2e}"


# No thousands separator anywhere: a comma reads as a decimal mark in Vietnamese.
def _us(v):
    return f"{v:.2f}"


def _pct(v):
    return f"{v:+.1f} %"


def _shape(s):
    return f"{s['m']}×{s['n']} {s['dtype']}"


def accuracy_md(acc, t):
    rows = [f"| {t('quantity')} | dtype | atol | rtol | {t('cases')} | {t('max_abs_error')} | {t('error_ratio')} "
            f"| {t('failed')} |",
            "|---|---|--:|--:|--:|--:|--:|--:|"]
    names = {"y": "$y$", "dx": "$dx$", "dgamma": "$d\\gamma$"}
    for s in acc["per_quantity_dtype"]:
        rows.append(f"| {names[s['quantity']]} | {s['dtype']} | {s['atol']:g} | {s['rtol']:g} | {s['cases']} | "
                    f"{_sci(s['max_abs_err'])} | {s['worst_ratio']:.3f} | {s['failed_cases']} |")
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
                    cells.append(f"{gbs:.0f} ({pct:.0f} %)")
            else:
                cells = ["—", "—"]
            rows.append(f"| {_shape(s)} | {label} | {_us(ref)} | {_us(ker)} | {_pct(diff_pct(ker, ref))} | "
                        f"{cells[0]} | {cells[1]} |")
    return "\n".join(rows) + "\n"


def training_md(tr, t):
    rows = [f"| | {t('reference')} | {t('kernel')} |", "|---|--:|--:|"]
    rows.append(f"| {t('val_mse')} | {tr['val_mse']['reference']:.5f} | {tr['val_mse']['kernel']:.5f} |")
    rows.append(f"| {t('test_mse')} | {tr['test_mse']['reference']:.5f} | {tr['test_mse']['kernel']:.5f} |")
    rows.append(f"| {t('calls')} | — | {tr['kernel_forwards']} / {tr['kernel_backwards']} |")
    rows.append("")
    rows.append(f"| {t('check')} | {t('value')} |")
    rows.append("|---|--:|")
    rows.append(f"| {t('init_out')} | {_sci(tr['initial_output_diff'])} |")
    rows.append(f"| {t('init_grad')} | {_sci(tr['initial_grad_diff'])} |")
    rows.append(f"| {t('final_param')} | {_sci(tr['final_param_diff'])} |")
    rows.append(f"| {t('reload')} | {_sci(tr['reload_diff'])} |")
    return "\n".join(rows) + "\n"


def timing_svg(tim, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "normkernels"
    shapes = tim["shapes"]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    width = 0.38
    for ax, (scope, title) in zip(axes, SCOPES):
        xs = range(len(shapes))
        ref = [s["us"][f"{scope}_reference"] for s in shapes]
        ker = [s["us"][f"{scope}_kernel"] for s in shapes]
        ax.bar([i - width / 2 for i in xs], ref, width, label="PyTorch", color="#9e9e9e")
        ax.bar([i + width / 2 for i in xs], ker, width, label="Triton", color="#3f51b5")
        ax.set_xticks(list(xs), [f"{s['m']}×{s['n']}\n{s['dtype']}" for s in shapes])
        ax.set_yscale("log")
        ax.set_title(title)
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("µs")
    axes[1].legend(frameon=False)
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def quotes(measurements):
    prov, res = measurements["provenance"], measurements["results"]
    copy = prov["copy_gb_per_s"]
    q = {"gpu": str(prov["gpu"]), "copy_gb_per_s": f"{copy:.0f} GB/s"}

    acc = res["accuracy"]
    q["acc_cases"] = str(acc["cases"])
    q["acc_failed_cases"] = str(len(acc["failures"]))
    q["acc_worst_ratio"] = f"{max(s['worst_ratio'] for s in acc['per_quantity_dtype']):.2f}"
    for s in acc["per_quantity_dtype"]:
        q[f"acc_max_err_{s['quantity']}_{s['dtype']}"] = _sci(s["max_abs_err"])

    for s in res["timing"]["shapes"]:
        lab = s["label"]
        for scope, _ in SCOPES:
            ref, ker = s["us"][f"{scope}_reference"], s["us"][f"{scope}_kernel"]
            q[f"{scope}_ref_us_{lab}"] = f"{_us(ref)} µs"
            q[f"{scope}_kernel_us_{lab}"] = f"{_us(ker)} µs"
            q[f"{scope}_diff_pct_{lab}"] = _pct(diff_pct(ker, ref))
            if s["large"]:
                for impl, short in (("reference", "ref"), ("kernel", "kernel")):
                    gbs, pct = _bandwidth(s, scope, impl, copy)
                    q[f"{scope}_{short}_gbps_{lab}"] = f"{gbs:.0f} GB/s"
                    q[f"{scope}_{short}_pct_copy_{lab}"] = f"{pct:.0f} %"

    tr = res["training"]
    q["train_steps"] = str(tr["config"]["steps"])
    q["train_batch"] = str(tr["config"]["batch"])
    q["train_kernel_forwards"] = str(tr["kernel_forwards"])
    q["train_kernel_backwards"] = str(tr["kernel_backwards"])
    q["train_init_out_diff"] = _sci(tr["initial_output_diff"])
    q["train_init_grad_diff"] = _sci(tr["initial_grad_diff"])
    q["train_final_param_diff"] = _sci(tr["final_param_diff"])
    q["train_reload_diff"] = _sci(tr["reload_diff"])
    for split in ("val", "test"):
        for branch in ("reference", "kernel"):
            q[f"train_{split}_mse_{branch}"] = f"{tr[f'{split}_mse'][branch]:.5f}"
    return q


def write(measurements, out_dir):
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    res = measurements["results"]
    copy = measurements["provenance"]["copy_gb_per_s"]
    write_localized(out_dir, "accuracy.md", lambda t: accuracy_md(res["accuracy"], t), LABELS)
    write_localized(out_dir, "timing.md", lambda t: timing_md(res["timing"], copy, t), LABELS)
    write_localized(out_dir, "training.md", lambda t: training_md(res["training"], t), LABELS)
    (out_dir / "examples.txt").write_text(format_examples(res["examples"]) + "\n", encoding="utf-8")
    (out_dir / "exercise.txt").write_text(format_exercise(res["exercise"]) + "\n", encoding="utf-8")
    timing_svg(res["timing"], out_dir / "timing.svg")
    (out_dir / "quotes.json").write_text(
        json.dumps(quotes(measurements), indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
