"""The single source of every notebook on the site, in every language.

    python scripts/notebooks.py write --execute jupyter   # CPU machine: run each notebook with nbclient
    python scripts/notebooks.py write --execute inline    # GPU machine: run the cells in-process, stdlib only
    python scripts/notebooks.py write --execute none      # keep the outputs already in docs/ (prose edits)
    python scripts/notebooks.py check                     # generate and execute into a temp dir; docs/ untouched

Each notebook is an ordered list of cells: markdown cells written in every language, and code
cells shared by all languages. Code cells import the kernels from the snippets/ packages; none
defines a kernel. `write` builds docs/<lang>/notebooks/<name>.ipynb for every language, executes
the code once and stores the same outputs in every language.

Executors:
  jupyter  nbclient with a real ipykernel, allow_errors off (needs nbclient, nbformat, ipykernel).
  inline   for machines without Jupyter packages: the code cells of one notebook run sequentially in
           one namespace, in a fresh Python subprocess; stdout and stderr become nbformat `stream`
           outputs, the value of a final bare expression an `execute_result`, and any exception fails
           the run. Only the standard library is used to write the .ipynb JSON.
  none     no execution: outputs are taken from the committed English notebook, cell by cell, where the
           code is unchanged.

--only NAME limits the run to some notebooks. On a CPU-only machine the snippets run through Triton's
interpreter and the notebooks pick small sizes; on a CUDA GPU they run at realistic sizes.
"""

import argparse
import ast
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
LANGUAGES = ("en", "zh", "vi")
REPOSITORY = "https://github.com/normkernels/normkernels"


def md(en, zh, vi):
    return {"cell_type": "markdown", "source": {"en": en.strip("\n"), "zh": zh.strip("\n"), "vi": vi.strip("\n")}}


def code(source):
    return {"cell_type": "code", "source": source.strip("\n")}


# ----------------------------------------------------------------------------------------------
# Shared cells
# ----------------------------------------------------------------------------------------------

def how_to_run(name, timing):
    """The paragraph every notebook opens with: GPU, CPU through the interpreter, where outputs come from."""
    gpu = {
        "en": "the kernels run natively, at realistic sizes" + (", and the timing cells measure them" if timing else ""),
        "zh": "内核以原生方式运行，使用贴近实际的规模" + ("，计时单元格会测量它们的耗时" if timing else ""),
        "vi": "kernel chạy trực tiếp trên GPU với kích thước sát thực tế" + (", và các ô đo thời gian sẽ đo chúng" if timing else ""),
    }
    cpu = {
        "en": "the notebook picks small sizes so that it finishes in seconds"
              + ("; the timing cells only say that they need a GPU" if timing else ""),
        "zh": "笔记本改用小规模输入，几秒钟就能跑完" + ("；计时单元格则会说明它们需要 GPU" if timing else ""),
        "vi": "notebook chọn kích thước nhỏ để chạy xong trong vài giây"
              + (", còn các ô đo thời gian sẽ báo rằng chúng cần GPU" if timing else ""),
    }
    return {
        "en": f"""
**Running this notebook.** Download it with the download link on this page, or open
`docs/en/notebooks/{name}.ipynb` in a clone of the [repository]({REPOSITORY}). It imports the kernels
from the packages in `snippets/`, so install them first, from the repository root, with
`pip install -r requirements.txt -e .`, then open the notebook in Jupyter.

- **On a CUDA GPU** {gpu["en"]}.
- **On a CPU** the same cells run through Triton's interpreter: without a GPU the packages switch to it
  by themselves (`TRITON_INTERPRET=1`) and {cpu["en"]}.

The outputs shown on this page were recorded on the GPU named in the output of the first code cell.
""",
        "zh": f"""
**如何运行本笔记本。** 用本页的下载链接获取它，或者在克隆下来的[代码仓库]({REPOSITORY})中打开
`docs/zh/notebooks/{name}.ipynb`。笔记本从 `snippets/` 下的包导入内核，所以请先在仓库根目录执行
`pip install -r requirements.txt -e .` 安装这些包，再用 Jupyter 打开笔记本。

- **在 CUDA GPU 上**，{gpu["zh"]}。
- **在 CPU 上**，同样的单元格经由 Triton 的解释器（interpreter）运行：没有 GPU 时，这些包会自动切换到解释器（`TRITON_INTERPRET=1`），{cpu["zh"]}。

本页显示的输出是在第一个代码单元格的输出中列出的那块 GPU 上记录的。
""",
        "vi": f"""
**Cách chạy notebook này.** Tải notebook về bằng liên kết tải xuống trên trang này, hoặc mở
`docs/vi/notebooks/{name}.ipynb` trong bản clone của [kho mã nguồn]({REPOSITORY}). Notebook import các
kernel từ các gói trong `snippets/`, vì vậy trước hết hãy cài các gói đó từ thư mục gốc của kho bằng
`pip install -r requirements.txt -e .`, rồi mở notebook trong Jupyter.

- **Trên GPU CUDA**, {gpu["vi"]}.
- **Trên CPU**, cũng chính các ô đó chạy qua trình thông dịch (interpreter) của Triton: khi không có GPU,
  các gói tự chuyển sang trình thông dịch (`TRITON_INTERPRET=1`), {cpu["vi"]}.

Các kết quả hiển thị trên trang này được ghi lại trên GPU có tên trong kết quả của ô mã đầu tiên.
""",
    }


def opening(name, title, lead, timing=False):
    """The first markdown cell: the title, what the notebook does, and how to run it."""
    run = how_to_run(name, timing)
    return md(*(f"# {title[lang]}\n\n{lead[lang].strip()}\n\n{run[lang].strip()}" for lang in LANGUAGES))


SETUP = code("""
import normkit  # first: picks Triton's interpreter when there is no CUDA GPU
import torch
import triton

if normkit.INTERPRETED:
    print("device: CPU, through Triton's interpreter (TRITON_INTERPRET=1)")
else:
    print("device:", torch.cuda.get_device_name(normkit.DEVICE))
print(f"torch {torch.__version__}, triton {triton.__version__}")
""")


# ----------------------------------------------------------------------------------------------
# A first notebook
# ----------------------------------------------------------------------------------------------

FIRST_NOTEBOOK = [
    opening(
        "first-notebook",
        {"en": "A first notebook", "zh": "第一个笔记本", "vi": "Notebook đầu tiên"},
        {
            "en": """
This page is a Jupyter notebook, rendered with its cells and outputs. Each chapter has a companion
notebook like it: it imports the kernels from `snippets/` (never a second copy of them), runs them and
checks them against PyTorch.

The first cell shows where the kernels run on this machine: on a CUDA GPU, or on the CPU through
Triton's interpreter.
""",
            "zh": """
这一页是一个 Jupyter 笔记本（notebook），连同单元格和输出一起渲染。每一章都配有这样一个笔记本：它从 `snippets/` 导入内核（绝不另写一份副本），运行它们，并与 PyTorch 的结果对照。

第一个单元格显示内核在这台机器上的运行位置：CUDA GPU，或者经由 Triton 解释器（interpreter）在 CPU 上运行。
""",
            "vi": """
Trang này là một Jupyter notebook, được hiển thị cùng các ô (cell) và kết quả của chúng. Mỗi chương có
một notebook đi kèm như vậy: nó nhập kernel từ `snippets/` (không bao giờ chép lại một bản thứ hai),
chạy chúng và đối chiếu với PyTorch.

Ô đầu tiên cho biết kernel chạy ở đâu trên máy này: trên GPU CUDA, hoặc trên CPU qua trình thông dịch
(interpreter) của Triton.
""",
        },
    ),
    SETUP,
    md(
        """
The snippets pick the interpreter by themselves when no GPU is present, so the same notebook runs on a
laptop. A quick check that the environment computes what we expect: the root mean square of a row,
with PyTorch.
""",
        """
没有 GPU 时，snippets 会自动切换到解释器，所以同一个笔记本在笔记本电脑上也能运行。先用 PyTorch 算一行的均方根（root mean square），确认环境算出的结果符合预期。
""",
        """
Khi không có GPU, các snippet tự chuyển sang trình thông dịch, nên cùng một notebook chạy được trên
laptop. Kiểm tra nhanh rằng môi trường tính đúng như ta mong đợi: căn bậc hai của trung bình bình
phương (root mean square) của một hàng, bằng PyTorch.
""",
    ),
    code("""
row = torch.tensor([3.0, 4.0])
rms = row.square().mean().sqrt()
print(f"RMS of {row.tolist()} = {rms.item():.6f}")
"""),
]


# ----------------------------------------------------------------------------------------------
# Chapter 1: LayerNorm
# ----------------------------------------------------------------------------------------------

LAYERNORM = [
    opening(
        "layernorm",
        {"en": "LayerNorm, step by step", "zh": "LayerNorm 动手实践", "vi": "LayerNorm từng bước"},
        {
            "en": """
The companion of the chapter **LayerNorm: the backward pass with atomic locks**. It builds the
inputs, runs the Triton forward and backward kernels of `snippets/layernorm`, compares $y$,
$\\partial L/\\partial x$, $\\partial L/\\partial w$ and $\\partial L/\\partial b$ with
`torch.nn.functional.layer_norm`, looks at `GROUP_SIZE`, and times both implementations. Every kernel
is imported; none is copied here.
""",
            "zh": """
本笔记本配合 **LayerNorm：用原子锁实现反向传播** 一章使用。它构造输入，运行 `snippets/layernorm` 中的 Triton 前向与反向内核（kernel），把 $y$、$\\partial L/\\partial x$、$\\partial L/\\partial w$ 和 $\\partial L/\\partial b$ 与 `torch.nn.functional.layer_norm` 的结果对照，考察 `GROUP_SIZE`，并为两种实现计时。所有内核都是导入的，这里没有复制任何一个。
""",
            "vi": """
Notebook đi kèm chương **LayerNorm: lượt ngược với khóa nguyên tử**. Nó dựng dữ liệu đầu vào, chạy các
kernel Triton lượt xuôi (forward) và lượt ngược (backward) của `snippets/layernorm`, so sánh $y$,
$\\partial L/\\partial x$, $\\partial L/\\partial w$ và $\\partial L/\\partial b$ với
`torch.nn.functional.layer_norm`, xem xét `GROUP_SIZE`, rồi đo thời gian của cả hai cách cài đặt. Mọi
kernel đều được import; không kernel nào được chép lại ở đây.
""",
        },
        timing=True,
    ),
    SETUP,
    md(
        """
## The inputs

$M$ rows of $N$ features, made like the chapter's tests: rows centred far from zero (mean $-2.3$) so
that the mean matters, a weight and a bias of length $N$, and an upstream gradient $dy$. $N$ is not a
power of two, so every row leaves masked lanes at the end of its block. The interpreter runs the
programs one after another, so under it the input is small; on a GPU it has 4096 rows, like the
chapter's benchmark.
""",
        """
## 输入

$M$ 行、每行 $N$ 个特征，构造方式与本章的测试相同：各行的中心远离零点（均值为 $-2.3$），让均值真正起作用；权重和偏置的长度都是 $N$；另有上游梯度 $dy$。$N$ 不是 2 的幂，所以每一行在块的末尾都会留下被屏蔽的通道（masked lane）。解释器逐个运行各个程序（program），因此在解释器下输入规模很小；在 GPU 上则与本章的基准测试一样，有 4096 行。
""",
        """
## Dữ liệu đầu vào

$M$ hàng, mỗi hàng $N$ đặc trưng, được tạo giống như trong các bài kiểm thử của chương: các hàng có tâm
nằm xa số 0 (trung bình $-2.3$) để giá trị trung bình thực sự có ảnh hưởng, một trọng số và một bias
dài $N$, cùng gradient từ phía trên (upstream gradient) $dy$. $N$ không phải lũy thừa của 2, nên mỗi
hàng để lại các làn bị che (masked lane) ở cuối khối. Trình thông dịch chạy lần lượt từng chương trình
(program), nên khi dùng nó, đầu vào được giữ nhỏ; trên GPU, đầu vào có 4096 hàng như trong phép đo hiệu
năng (benchmark) của chương.
""",
    ),
    code("""
import torch.nn.functional as F

from layernorm import group_size_for, layer_norm

# small under the interpreter (one program at a time), realistic on a GPU
M, N = (320, 300) if normkit.INTERPRETED else (4096, 3000)
EPS = 1e-5
DEVICE = normkit.DEVICE

gen = torch.Generator().manual_seed(0)
x = (-2.3 + 0.5 * torch.randn(M, N, generator=gen)).to(DEVICE)
w = torch.rand(N, generator=gen).to(DEVICE)
b = torch.rand(N, generator=gen).to(DEVICE)
dy = (0.1 * torch.randn(M, N, generator=gen)).to(DEVICE)

print(f"x: {tuple(x.shape)} {x.dtype} on {x.device}")
print(f"{M} programs, one per row; "
      f"BLOCK_SIZE = {triton.next_power_of_2(N)} lanes for N = {N}")
"""),
    md(
        """
## The forward pass

`layer_norm` takes the arguments of `torch.nn.functional.layer_norm`. Both run on their own copies of
the same leaves, which require gradients, so the forward pass also records the graph for the backward
pass. A third run, PyTorch in float64, serves as the exact reference: it tells how far each fp32
implementation is from the true value.
""",
        """
## 前向传播

`layer_norm` 的参数与 `torch.nn.functional.layer_norm` 相同。两者各自使用同一组叶子张量的副本，这些张量都需要梯度，所以前向传播的同时也记录下反向传播要用的计算图。第三次运行用 PyTorch 以 float64 计算，作为精确的参考：它告诉我们两个 fp32 实现各自离真实值有多远。
""",
        """
## Lượt xuôi

`layer_norm` nhận đúng các đối số của `torch.nn.functional.layer_norm`. Mỗi bên chạy trên bản sao riêng
của cùng các tensor lá (leaf), vốn cần gradient, nên lượt xuôi cũng ghi lại đồ thị tính toán cho lượt
ngược. Lần chạy thứ ba, PyTorch ở float64, làm bản tham chiếu chính xác: nó cho biết mỗi cách cài đặt
fp32 cách giá trị thật bao xa.
""",
    ),
    code("""
def leaves(dtype=torch.float32):
    return [t.detach().to(dtype).requires_grad_() for t in (x, w, b)]


def max_err(got, want):
    return (got.double() - want.double()).abs().max().item()


ours, theirs, exact = leaves(), leaves(), leaves(torch.float64)
y_ours = layer_norm(ours[0], (N,), ours[1], ours[2], EPS)
y_theirs = F.layer_norm(theirs[0], (N,), theirs[1], theirs[2], EPS)
y_exact = F.layer_norm(exact[0], (N,), exact[1], exact[2], EPS)

print("row 0 starts with", [round(v, 4) for v in y_ours[0, :5].tolist()])
print(f"y: max |triton - float64|    = {max_err(y_ours, y_exact):.1e}")
print(f"y: max |torch fp32 - float64| = {max_err(y_theirs, y_exact):.1e}")
"""),
    md(
        """
## The backward pass

`torch.autograd.grad` returns the gradients of $x$, $w$ and $b$ for the upstream gradient $dy$,
without accumulating them in `.grad`. For the Triton version it runs `LayerNormFunction.backward`:
kernel 1 writes `dx` and adds each row's share of $\\partial L/\\partial w$ and
$\\partial L/\\partial b$ into `GROUP_SIZE` partial rows under their locks; kernel 2 sums the partial
rows. The check uses the fp32 tolerances of the chapter's tests, against the float64 reference.
""",
        """
## 反向传播

`torch.autograd.grad` 针对上游梯度 $dy$ 返回 $x$、$w$ 和 $b$ 的梯度，而不会把它们累加到 `.grad` 中。对 Triton 版本，它调用的是 `LayerNormFunction.backward`：内核 1 写出 `dx`，并在锁的保护下把每一行对 $\\partial L/\\partial w$ 和 $\\partial L/\\partial b$ 的贡献加到 `GROUP_SIZE` 个部分和行中；内核 2 再把这些部分和行加起来。检查时以 float64 结果为参考，采用本章测试中的 fp32 容差（tolerance）。
""",
        """
## Lượt ngược

`torch.autograd.grad` trả về gradient của $x$, $w$ và $b$ ứng với gradient từ phía trên $dy$, mà không
cộng dồn chúng vào `.grad`. Với phiên bản Triton, nó gọi `LayerNormFunction.backward`: kernel 1 ghi
`dx` và cộng phần đóng góp của từng hàng vào $\\partial L/\\partial w$ và $\\partial L/\\partial b$ trong
`GROUP_SIZE` hàng tổng một phần (partial row), mỗi hàng được bảo vệ bởi khóa của nó; kernel 2 cộng các
hàng tổng một phần lại. Phép kiểm tra dùng các dung sai (tolerance) fp32 của bài kiểm thử trong chương,
so với bản tham chiếu float64.
""",
    ),
    code("""
ATOL, RTOL = 1e-5, 1e-4  # the fp32 tolerances of the chapter's tests

g_ours = [y_ours.detach(), *torch.autograd.grad(y_ours, ours, dy)]
g_theirs = [y_theirs.detach(), *torch.autograd.grad(y_theirs, theirs, dy)]
g_exact = [y_exact.detach(), *torch.autograd.grad(y_exact, exact, dy.double())]

print("     |triton - float64|  |torch - float64|  largest |value|")
for name, a, t, e in zip(("y", "dx", "dW", "dB"), g_ours, g_theirs, g_exact):
    print(f"{name:>3} {max_err(a, e):>19.1e} {max_err(t, e):>18.1e} "
          f"{e.abs().max().item():>16.2f}")
    torch.testing.assert_close(a.double(), e, atol=ATOL, rtol=RTOL)
print("every element of y, dx, dW and dB is within the tolerances")
"""),
    md(
        """
## Choosing GROUP_SIZE

Row `row` adds into partial row `row % GROUP_SIZE`, so each lock sees at most
$\\lceil M / \\texttt{GROUP\\_SIZE} \\rceil$ updates. `group_size_for` picks fewer groups for wider
rows, so that the two fp32 partial buffers stay small next to the input. The table is the chapter's,
for the benchmark's $M = 4096$ rows.
""",
        """
## 选择 GROUP_SIZE

第 `row` 行加到第 `row % GROUP_SIZE` 个部分和行上，所以每把锁最多经历 $\\lceil M / \\texttt{GROUP\\_SIZE} \\rceil$ 次更新。行越宽，`group_size_for` 选的组数越少，使两个 fp32 部分和缓冲区与输入相比始终很小。下表就是本章中的那张表，对应基准测试的 $M = 4096$ 行。
""",
        """
## Chọn GROUP_SIZE

Hàng `row` cộng vào hàng tổng một phần `row % GROUP_SIZE`, nên mỗi khóa chịu tối đa
$\\lceil M / \\texttt{GROUP\\_SIZE} \\rceil$ lần cập nhật. Với hàng càng rộng, `group_size_for` chọn càng
ít nhóm, để hai bộ đệm tổng một phần fp32 luôn nhỏ so với đầu vào. Bảng dưới đây chính là bảng trong
chương, ứng với $M = 4096$ hàng của phép đo hiệu năng.
""",
    ),
    code("""
groups = group_size_for(N)
per_lock = -(-M // groups)  # ceil(M / GROUP_SIZE)
print(f"this input: N = {N} -> GROUP_SIZE = {groups}")
print(f"{M} rows: at most {per_lock} of them behind each lock")
print()
print("     N  GROUP_SIZE  updates per lock  partial buffers  input x (fp16)")
for n in (1024, 4096, 8192, 16384):
    g = group_size_for(n)
    partial_mib = 2 * g * n * 4 / 2**20  # dW and dB partial rows, fp32
    input_mib = 4096 * n * 2 / 2**20
    print(f"{n:>6} {g:>11} {-(-4096 // g):>17} {partial_mib:>12g} MiB "
          f"{input_mib:>11g} MiB")
"""),
    md(
        """
The number of groups changes how the sums are split, not what they add up to. The launch functions
of `layernorm.ops` take `group_size` as an argument, so we can run the backward kernels with a single
lock, with 8, and with the heuristic's choice. On a GPU a single lock puts all $M$ updates in one
queue; the result must not change beyond fp32 rounding.
""",
        """
组数改变的是求和如何拆分，而不是求和的结果。`layernorm.ops` 中的启动函数接受 `group_size` 参数，因此我们可以分别用一把锁、8 把锁和启发式规则选出的组数来运行反向内核。在 GPU 上，只用一把锁意味着全部 $M$ 次更新排成一队；结果除 fp32 舍入误差外不应有任何变化。
""",
        """
Số nhóm thay đổi cách chia nhỏ các tổng, chứ không thay đổi kết quả của chúng. Các hàm khởi chạy
(launch) trong `layernorm.ops` nhận `group_size` làm đối số, nên ta có thể chạy các kernel lượt ngược với
một khóa duy nhất, với 8 khóa, và với số nhóm do quy tắc kinh nghiệm (heuristic) chọn. Trên GPU, một khóa
duy nhất xếp cả $M$ lần cập nhật vào một hàng đợi; kết quả không được thay đổi, ngoài sai số làm tròn fp32.
""",
    ),
    code("""
from layernorm.ops import backward_rows, forward_rows

with torch.no_grad():
    # mean and rstd: what the forward pass saves for the backward pass
    _, mean, rstd, meta = forward_rows(x, w, b, EPS)
    for size in (1, 8, groups):
        _, dw, db = backward_rows(dy, x, w, mean, rstd, meta, group_size=size)
        print(f"GROUP_SIZE = {size:>3}: "
              f"max |dW - float64| = {max_err(dw, g_exact[2]):.1e}, "
              f"max |dB - float64| = {max_err(db, g_exact[3]):.1e}")
"""),
    md(
        """
## Timing

On a GPU this cell uses the chapter's timing functions from `layernorm.benchmark`: one forward call,
and one backward pass on a graph recorded once, each timed with CUDA events by
`normkit.bench.median_call_ms` (20 warm-up calls, then the median of 50 samples of 20 calls). The
inputs are those of the benchmark: $M = 4096$ rows of fp16. GB/s count the bytes each pass must move:
$2MN$ elements for the forward pass, $3MN$ for the backward pass. The interpreter has no CUDA events,
so on a CPU the cell only says that timing needs a GPU.
""",
        """
## 计时

在 GPU 上，这个单元格使用本章 `layernorm.benchmark` 中的计时函数：一次前向调用，以及在只记录一次的计算图上执行的一次反向传播，二者都由 `normkit.bench.median_call_ms` 用 CUDA 事件（CUDA event）计时（先预热 20 次调用，再取 50 个样本的中位数，每个样本包含 20 次调用）。输入与基准测试相同：$M = 4096$ 行 fp16 数据。GB/s 按每一趟必须搬运的字节数计算：前向传播 $2MN$ 个元素，反向传播 $3MN$ 个元素。解释器没有 CUDA 事件，所以在 CPU 上这个单元格只会说明计时需要 GPU。
""",
        """
## Đo thời gian

Trên GPU, ô này dùng các hàm đo thời gian của chương trong `layernorm.benchmark`: một lần gọi lượt xuôi,
và một lượt ngược trên đồ thị chỉ được ghi một lần, mỗi thứ được `normkit.bench.median_call_ms` đo bằng
sự kiện CUDA (CUDA event): 20 lần gọi khởi động, rồi lấy trung vị của 50 mẫu, mỗi mẫu 20 lần gọi. Đầu
vào giống phép đo hiệu năng: $M = 4096$ hàng fp16. GB/s được tính từ số byte mà mỗi lượt buộc phải di
chuyển: $2MN$ phần tử cho lượt xuôi, $3MN$ cho lượt ngược. Trình thông dịch không có sự kiện CUDA, nên
trên CPU ô này chỉ báo rằng việc đo thời gian cần GPU.
""",
    ),
    code("""
if normkit.INTERPRETED:
    print("timing needs a CUDA GPU: the interpreter has no CUDA events")
else:
    from layernorm import benchmark

    def timed(mode, fn, x, w, b, dy):
        if mode == "forward":
            return benchmark.time_forward(fn, x, w, b)
        return benchmark.time_backward(fn, x, w, b, dy)

    print(f"M = {benchmark.M} rows of {benchmark.DTYPE}: "
          "median ms per call, effective GB/s")
    print("     N      pass  triton ms  torch ms  triton GB/s  torch GB/s")
    for n in (1024, 4096, 8192, 16384):
        inputs = benchmark.make_inputs(benchmark.M, n)
        for mode in ("forward", "backward"):
            t_ms, t_gbs = timed(mode, layer_norm, *inputs)
            r_ms, r_gbs = timed(mode, F.layer_norm, *inputs)
            print(f"{n:>6} {mode:>9} {t_ms:>10.4f} {r_ms:>9.4f} "
                  f"{t_gbs:>12.0f} {r_gbs:>11.0f}")
        del inputs
        torch.cuda.empty_cache()
"""),
    md(
        """
## To go further

Change `M`, `N` or the dtype in the inputs cell and run the notebook again; a row wider than 64 KiB is
refused with a `ContractError` that names the limit. `python -m layernorm` prints the same comparison
for several shapes and dtypes, and `pytest snippets/layernorm` runs the chapter's tests, including the
lock stress test.
""",
        """
## 更进一步

修改输入单元格中的 `M`、`N` 或数据类型，再运行一遍笔记本；宽度超过 64 KiB 的行会被拒绝，抛出的 `ContractError` 会指明这个上限。`python -m layernorm` 会针对多种形状和数据类型打印同样的对照结果，`pytest snippets/layernorm` 则运行本章的全部测试，包括锁的压力测试。
""",
        """
## Đi xa hơn

Hãy đổi `M`, `N` hoặc kiểu dữ liệu trong ô tạo đầu vào rồi chạy lại notebook; một hàng rộng hơn 64 KiB sẽ
bị từ chối bằng một `ContractError` nêu rõ giới hạn. `python -m layernorm` in ra cùng phép so sánh cho
nhiều hình dạng và kiểu dữ liệu, còn `pytest snippets/layernorm` chạy các bài kiểm thử của chương, kể cả
bài kiểm thử sức chịu tải của khóa.
""",
    ),
]


# ----------------------------------------------------------------------------------------------
# Chapter 2: RMSNorm
# ----------------------------------------------------------------------------------------------

RMSNORM = [
    opening(
        "rmsnorm",
        {"en": "RMSNorm, step by step", "zh": "RMSNorm 动手实践", "vi": "RMSNorm từng bước"},
        {
            "en": """
The companion of the chapter **RMSNorm: kernel, backward and partial reductions**. It computes the
worked example, compares the Triton forward, $dx$ and $d\\gamma$ of `snippets/rmsnorm` with the
PyTorch reference, opens the `PARTIAL` buffer, reads the `CALLS` counters, and times kernel and
reference. Every kernel is imported; none is copied here.
""",
            "zh": """
本笔记本配合 **RMSNorm：内核、反向传播与部分归约** 一章使用。它计算本章的算例，把 `snippets/rmsnorm` 中 Triton 内核（kernel）算出的前向输出、$dx$ 和 $d\\gamma$ 与 PyTorch 参考实现对照，查看 `PARTIAL` 缓冲区，读取 `CALLS` 计数器，并为内核和参考实现计时。所有内核都是导入的，这里没有复制任何一个。
""",
            "vi": """
Notebook đi kèm chương **RMSNorm: kernel, lượt ngược và giảm một phần**. Nó tính ví dụ tính tay của
chương, so sánh lượt xuôi, $dx$ và $d\\gamma$ của các kernel Triton trong `snippets/rmsnorm` với bản tham
chiếu PyTorch, mở bộ nhớ tạm `PARTIAL` ra xem, đọc các bộ đếm `CALLS`, rồi đo thời gian của kernel và
bản tham chiếu. Mọi kernel đều được import; không kernel nào được chép lại ở đây.
""",
        },
        timing=True,
    ),
    SETUP,
    md(
        """
## The worked example

$x = [3, 4]$: the mean of squares, $r$, the output for two choices of $\\gamma$, then $dx$ for
$dy = [1, 2]$; a row of 257 ones divided by $N$ and by `BLOCK`; the size of `PARTIAL`. These numbers
are arithmetic in float64, not measurements: they are the same on every machine.
""",
        """
## 算例

$x = [3, 4]$：平方的均值、$r$、两种 $\\gamma$ 下的输出，以及 $dy = [1, 2]$ 时的 $dx$；一行 257 个 1 分别除以 $N$ 和 `BLOCK` 的结果；`PARTIAL` 的大小。这些数字是 float64 下的算术结果，不是测量值：在任何机器上都一样。
""",
        """
## Ví dụ tính tay

$x = [3, 4]$: trung bình bình phương, $r$, đầu ra với hai lựa chọn $\\gamma$, rồi $dx$ với
$dy = [1, 2]$; một hàng gồm 257 số 1 khi chia cho $N$ và khi chia cho `BLOCK`; kích thước của
`PARTIAL`. Đây là phép tính số học ở float64, không phải số đo: chúng giống nhau trên mọi máy.
""",
    ),
    code("""
from rmsnorm import examples

print(examples.format_examples())
"""),
    md(
        """
## The inputs and the forward pass

The inputs come from the chapter's accuracy campaign (`rmsnorm.accuracy.make_inputs`). Under the
interpreter the shape is $17 \\times 257$, an odd row count and a width just above a power of two; on
a GPU it is $128 \\times 4096$, the campaign's largest case, whose rows are the widest the contract
accepts. `compare` applies the campaign's
rule to every element: $|\\text{kernel} - \\text{reference}| \\le \\text{atol} + \\text{rtol} \\cdot
|\\text{reference}|$.
""",
        """
## 输入与前向传播

输入来自本章的精度测试（`rmsnorm.accuracy.make_inputs`）。在解释器下，形状是 $17 \\times 257$：行数为奇数，宽度刚好比 2 的幂多一；在 GPU 上是 $128 \\times 4096$，即精度测试中最大的情形，行宽达到契约所允许的上限。`compare` 对每个元素都套用精度测试的规则：$|\\text{kernel} - \\text{reference}| \\le \\text{atol} + \\text{rtol} \\cdot |\\text{reference}|$。
""",
        """
## Đầu vào và lượt xuôi

Đầu vào lấy từ đợt kiểm tra độ chính xác của chương (`rmsnorm.accuracy.make_inputs`). Khi chạy bằng
trình thông dịch, hình dạng là $17 \\times 257$: số hàng lẻ và độ rộng vừa vượt một lũy thừa của 2;
trên GPU là $128 \\times 4096$, trường hợp lớn nhất của đợt kiểm tra, với những hàng rộng nhất mà hợp
đồng (contract) chấp nhận. `compare` áp
quy tắc của đợt kiểm tra cho từng phần tử: $|\\text{kernel} - \\text{reference}| \\le \\text{atol} +
\\text{rtol} \\cdot |\\text{reference}|$.
""",
    ),
    code("""
from rmsnorm import manual_backward, rms_norm, rmsnorm_reference
from rmsnorm.accuracy import TOLERANCES, Case, compare, make_inputs

M, N = (17, 257) if normkit.INTERPRETED else (128, 4096)
EPS = 1e-6


def report(name, got, want, dtype):
    # one line per quantity; an element out of tolerance stops the notebook
    r = compare(got, want, dtype)
    print(f"{name:<6} {str(dtype)[6:]:<7} max |err| {r['max_abs_err']:.2e}  "
          f"err/allowed {r['worst_ratio']:.3f}  "
          f"out of tolerance {r['bad_elements']}")
    assert r["bad_elements"] == 0, name


for dtype, tol in TOLERANCES.items():
    print(f"{str(dtype)[6:]}: atol = {tol['atol']:g}, rtol = {tol['rtol']:g}")
x, gamma, dy = make_inputs(Case(M, N, torch.float32, 0))
print(f"x: {tuple(x.shape)} {x.dtype}, BLOCK = {triton.next_power_of_2(N)}")
y = rms_norm(x, gamma, EPS)
report("y", y, rmsnorm_reference(x, gamma, EPS), torch.float32)
"""),
    md(
        """
## The backward pass: dx and dγ

`torch.autograd.grad` runs the kernels' backward; `manual_backward` writes the two gradients out in
PyTorch, computing in fp32 whatever the input dtype. Both dtypes the contract accepts, fp32 and fp16,
get their own tolerances.
""",
        """
## 反向传播：dx 与 dγ

`torch.autograd.grad` 运行内核的反向传播；`manual_backward` 用 PyTorch 把两个梯度直接写出来，无论输入是什么数据类型，都以 fp32 计算。契约接受的两种数据类型 fp32 和 fp16 各有自己的容差（tolerance）。
""",
        """
## Lượt ngược: dx và dγ

`torch.autograd.grad` chạy lượt ngược của các kernel; `manual_backward` viết tường minh hai gradient bằng
PyTorch, luôn tính ở fp32 bất kể kiểu dữ liệu đầu vào. Hai kiểu dữ liệu mà hợp đồng chấp nhận, fp32 và
fp16, mỗi kiểu có dung sai (tolerance) riêng.
""",
    ),
    code("""
for dtype in (torch.float32, torch.float16):
    x, gamma, dy = make_inputs(Case(M, N, dtype, 0))
    xk, gk = x.clone().requires_grad_(), gamma.clone().requires_grad_()
    y = rms_norm(xk, gk, EPS)  # the kernel path, through autograd
    dx, dgamma = torch.autograd.grad(y, (xk, gk), dy)
    dx_ref, dgamma_ref = manual_backward(x, gamma, dy, EPS)
    report("y", y, rmsnorm_reference(x, gamma, EPS), dtype)
    report("dx", dx, dx_ref, dtype)
    report("dgamma", dgamma, dgamma_ref, dtype)
"""),
    md(
        """
## Inside the backward pass: the PARTIAL buffer

The autograd wrapper hides two steps that the launch functions expose. `rmsnorm_dx` writes $dx$ and,
for every row, that row's share $dy \\odot x\\, r$ of $d\\gamma$ into `PARTIAL`, an fp32 buffer as large
as $x$; `reduce_gamma_grad` then sums it over the rows, column block by column block. The sum must
agree with PyTorch summing the same buffer.
""",
        """
## 反向传播内部：PARTIAL 缓冲区

autograd 封装隐藏了两个步骤，而启动函数把它们摆在明处。`rmsnorm_dx` 写出 $dx$，同时把每一行对 $d\\gamma$ 的贡献 $dy \\odot x\\, r$ 写入 `PARTIAL`，这是一个与 $x$ 一样大的 fp32 缓冲区；随后 `reduce_gamma_grad` 按列块对它沿行求和。这个和必须与 PyTorch 对同一个缓冲区求和的结果一致。
""",
        """
## Bên trong lượt ngược: bộ nhớ tạm PARTIAL

Lớp bọc autograd giấu đi hai bước mà các hàm khởi chạy phơi bày ra. `rmsnorm_dx` ghi $dx$ và, với mỗi
hàng, ghi phần đóng góp $dy \\odot x\\, r$ của hàng đó vào $d\\gamma$ trong `PARTIAL`, một bộ nhớ tạm fp32
lớn bằng $x$; sau đó `reduce_gamma_grad` cộng nó theo các hàng, từng khối cột một. Tổng này phải khớp
với kết quả PyTorch cộng chính bộ nhớ tạm đó.
""",
    ),
    code("""
from rmsnorm import reduce_gamma_grad, rmsnorm_dx, rmsnorm_forward

x, gamma, dy = make_inputs(Case(M, N, torch.float32, 0))
y, rstd = rmsnorm_forward(x, gamma, EPS)
dx, partial = rmsnorm_dx(x, gamma, dy, rstd, EPS)
dgamma = reduce_gamma_grad(partial, gamma.dtype)

print(f"rstd:    {tuple(rstd.shape)} {rstd.dtype}, one r per row")
print(f"PARTIAL: {tuple(partial.shape)} {partial.dtype}, "
      f"{partial.numel() * 4:,} bytes")
gap = (dgamma - partial.sum(0)).abs().max().item()
print(f"dgamma:  {tuple(dgamma.shape)}, |kernel - PARTIAL.sum(0)| <= {gap:.1e}")
"""),
    md(
        """
## The CALLS counters

`CALLS` counts passes through the autograd wrapper: a forward pass adds one to `forward`, a backward
pass one to `backward`, and a backward pass runs two kernels. A run that silently used the reference
would leave them at zero. A forward call under `torch.no_grad()` still goes through the wrapper, but
records nothing for a backward pass.
""",
        """
## CALLS 计数器

`CALLS` 统计的是经过 autograd 封装的次数：一次前向传播使 `forward` 加一，一次反向传播使 `backward` 加一，而一次反向传播要运行两个内核。如果某次运行在不知不觉中用的是参考实现，计数器就会停在零。在 `torch.no_grad()` 下调用前向传播时，依然会经过封装，但不会为反向传播记录任何东西。
""",
        """
## Các bộ đếm CALLS

`CALLS` đếm số lượt đi qua lớp bọc autograd: mỗi lượt xuôi cộng một vào `forward`, mỗi lượt ngược cộng
một vào `backward`, và một lượt ngược chạy hai kernel. Nếu một lần chạy đã lặng lẽ dùng bản tham chiếu,
các bộ đếm sẽ vẫn là 0. Một lần gọi lượt xuôi trong `torch.no_grad()` vẫn đi qua lớp bọc, nhưng không
ghi lại gì cho lượt ngược.
""",
    ),
    code("""
import rmsnorm

rmsnorm.reset_calls()
print("after reset_calls():          ", rmsnorm.CALLS)
xk, gk = x.clone().requires_grad_(), gamma.clone().requires_grad_()
for _ in range(3):
    torch.autograd.grad(rms_norm(xk, gk, EPS), (xk, gk), dy)
print("after 3 forward + backward:   ", rmsnorm.CALLS)
with torch.no_grad():
    rms_norm(x, gamma, EPS)
print("after 1 forward under no_grad:", rmsnorm.CALLS)
rmsnorm_reference(x, gamma, EPS)
print("after the reference:          ", rmsnorm.CALLS)
"""),
    md(
        """
## Timing

On a GPU this cell runs the chapter's timing protocol, `rmsnorm.timing`: CUDA events around complete
calls, 20 warm-up calls, then the median of 50 samples of 20 calls, for the forward pass alone and
for forward + backward, at $128 \\times 257$ in fp32 and $4096 \\times 4096$ in fp16 and fp32. For the
large shapes the bandwidth counts only the bytes any RMSNorm must move, and is compared with the
device's copy bandwidth, measured first. The interpreter has no CUDA events, so on a CPU the cell only
says that timing needs a GPU.
""",
        """
## 计时

在 GPU 上，这个单元格运行本章的计时规程 `rmsnorm.timing`：用 CUDA 事件（CUDA event）包住完整的调用，先预热 20 次，再取 50 个样本的中位数，每个样本 20 次调用；分别测量单独的前向传播和前向 + 反向，形状为 fp32 的 $128 \\times 257$，以及 fp16 和 fp32 的 $4096 \\times 4096$。对大形状，带宽只计入任何 RMSNorm 都必须搬运的字节数，并与先行测得的设备拷贝带宽比较。解释器没有 CUDA 事件，所以在 CPU 上这个单元格只会说明计时需要 GPU。
""",
        """
## Đo thời gian

Trên GPU, ô này chạy quy trình đo thời gian của chương, `rmsnorm.timing`: sự kiện CUDA (CUDA event) bao
quanh các lần gọi trọn vẹn, 20 lần gọi khởi động, rồi lấy trung vị của 50 mẫu, mỗi mẫu 20 lần gọi, cho
riêng lượt xuôi và cho lượt xuôi + lượt ngược, ở $128 \\times 257$ fp32 và $4096 \\times 4096$ fp16 và
fp32. Với các hình dạng lớn, băng thông chỉ tính số byte mà RMSNorm nào cũng phải di chuyển, và được so
với băng thông sao chép của thiết bị, đo trước tiên. Trình thông dịch không có sự kiện CUDA, nên trên CPU
ô này chỉ báo rằng việc đo thời gian cần GPU.
""",
    ),
    code("""
if normkit.INTERPRETED:
    print("timing needs a CUDA GPU: the interpreter has no CUDA events")
else:
    from normkit.bench import copy_bandwidth_gb_per_s
    from rmsnorm import timing

    copy_gb_per_s = copy_bandwidth_gb_per_s()
    print(f"device-to-device copy bandwidth: {copy_gb_per_s:.0f} GB/s")
    print(timing.format_timing(timing.run_timing(), copy_gb_per_s))
"""),
    md(
        """
## To go further

The exercise notebook, **Exercise: N versus BLOCK**, runs the chapter's deliberately wrong kernel. From
the repository root, `python -m rmsnorm check-forward` and `python -m rmsnorm check-backward` run the
whole accuracy campaign, and `python -m rmsnorm train-integration` trains the same small network with
the reference and with the kernels.
""",
        """
## 更进一步

练习笔记本 **练习：N 与 BLOCK** 会运行本章那个故意写错的内核。在仓库根目录下，`python -m rmsnorm check-forward` 和 `python -m rmsnorm check-backward` 运行完整的精度测试，`python -m rmsnorm train-integration` 则分别用参考实现和内核训练同一个小网络。
""",
        """
## Đi xa hơn

Notebook bài tập, **Bài tập: N và BLOCK**, chạy kernel cố tình viết sai của chương. Từ thư mục gốc của
kho, `python -m rmsnorm check-forward` và `python -m rmsnorm check-backward` chạy toàn bộ đợt kiểm tra
độ chính xác, còn `python -m rmsnorm train-integration` huấn luyện cùng một mạng nhỏ với bản tham chiếu
và với các kernel.
""",
    ),
]


# ----------------------------------------------------------------------------------------------
# Chapter 2: the exercise
# ----------------------------------------------------------------------------------------------

RMSNORM_EXERCISE = [
    opening(
        "rmsnorm-exercise",
        {"en": "Exercise: N versus BLOCK", "zh": "练习：N 与 BLOCK", "vi": "Bài tập: N và BLOCK"},
        {
            "en": """
The exercise of the chapter **RMSNorm: kernel, backward and partial reductions**, to run. A forward
kernel that divides the sum of squares by the padded width `BLOCK` instead of the row length $N$: form
a hypothesis, run it at $N = 257$ and $N = 256$, compare, then explain why the backward pass needs the
same $N$. The wrong kernel lives in `rmsnorm.exercise`, where a test catches it; it is imported here,
never copied.
""",
            "zh": """
这是 **RMSNorm：内核、反向传播与部分归约** 一章末尾的练习，可以直接运行。一个前向内核（kernel）把平方和除以填充后的宽度 `BLOCK`，而不是行长 $N$：先提出假设，再在 $N = 257$ 和 $N = 256$ 上运行它，对照结果，最后解释为什么反向传播也需要同一个 $N$。这个错误的内核放在 `rmsnorm.exercise` 中，有一个测试专门捕获它；这里只导入它，绝不复制。
""",
            "vi": """
Bài tập của chương **RMSNorm: kernel, lượt ngược và giảm một phần**, ở dạng chạy được. Một kernel lượt
xuôi chia tổng bình phương cho độ rộng đã đệm `BLOCK` thay vì độ dài hàng $N$: hãy đặt giả thuyết, chạy
nó với $N = 257$ và $N = 256$, so sánh, rồi giải thích vì sao lượt ngược cũng cần cùng một $N$. Kernel
sai nằm trong `rmsnorm.exercise`, nơi có một bài kiểm thử bắt được nó; ở đây nó chỉ được import, không
bao giờ được chép lại.
""",
        },
    ),
    SETUP,
    md(
        """
## The bug

Here is the wrong kernel's source, printed from the package. It is the chapter's forward kernel with
a single change, on the line marked `WRONG`.
""",
        """
## 这个错误

下面是从包中打印出来的错误内核的源码。它与本章的前向内核只差一处，就在标有 `WRONG` 的那一行。
""",
        """
## Lỗi sai

Dưới đây là mã nguồn của kernel sai, được in ra từ gói. Nó chính là kernel lượt xuôi của chương, chỉ
khác đúng một chỗ, ở dòng có đánh dấu `WRONG`.
""",
    ),
    code("""
import inspect

from rmsnorm import exercise, rms_norm

print(inspect.getsource(exercise.forward_kernel_divides_by_block.fn))
"""),
    md(
        """
## Your hypothesis

Before running anything, take a row of 257 ones, with $\\gamma = 1$ and $\\varepsilon = 10^{-6}$, and
write your answers in this cell (double-click it to edit):

1. What is the sum of squares? What mean do you get dividing by 257, and by 512?
   *My answer:* …
2. Is the RMSNorm denominator then larger or smaller than it should be? And the outputs, by about what
   factor? *My answer:* …
3. Redo the reasoning with 256 ones. Would a test at this width see the bug? *My answer:* …
""",
        """
## 你的假设

在运行任何代码之前，先考虑一行 257 个 1，取 $\\gamma = 1$、$\\varepsilon = 10^{-6}$，把你的答案写在这个单元格里（双击即可编辑）：

1. 平方和是多少？除以 257 得到的均值是多少？除以 512 呢？
   *我的答案：* …
2. 这样一来，RMSNorm 的分母比应有的值大还是小？输出呢，大约差多少倍？*我的答案：* …
3. 换成 256 个 1，再推理一遍。在这个宽度上做测试，能发现这个错误吗？*我的答案：* …
""",
        """
## Giả thuyết của bạn

Trước khi chạy bất cứ thứ gì, hãy xét một hàng gồm 257 số 1, với $\\gamma = 1$ và
$\\varepsilon = 10^{-6}$, rồi ghi câu trả lời của bạn vào ô này (nhấp đúp để sửa):

1. Tổng bình phương bằng bao nhiêu? Chia cho 257 thì được trung bình bao nhiêu, còn chia cho 512?
   *Câu trả lời của tôi:* …
2. Khi đó mẫu số của RMSNorm lớn hơn hay nhỏ hơn giá trị đúng? Còn đầu ra thì sao, lệch khoảng bao
   nhiêu lần? *Câu trả lời của tôi:* …
3. Làm lại lập luận với 256 số 1. Một bài kiểm thử ở độ rộng này có thấy được lỗi không?
   *Câu trả lời của tôi:* …
""",
    ),
    md(
        """
## Run it on a row of ones

The same row through the chapter's kernel, which divides by $N$, and through the wrong one, next to
what the arithmetic of the worked example predicts (`examples.row_of_ones`).
""",
        """
## 在一行全 1 上运行

让同一行数据分别通过本章的内核（除以 $N$）和错误的内核，并与算例中的算术预测（`examples.row_of_ones`）并排比较。
""",
        """
## Chạy trên một hàng toàn số 1

Cùng một hàng đi qua kernel của chương, vốn chia cho $N$, và qua kernel sai, đặt cạnh giá trị mà phép
tính số học của ví dụ tính tay dự đoán (`examples.row_of_ones`).
""",
    ),
    code("""
from rmsnorm import examples

for n in (257, 256):
    ones = torch.ones(1, n, device=normkit.DEVICE)
    gamma = torch.ones(n, device=normkit.DEVICE)
    predicted = examples.row_of_ones(n)  # arithmetic, no kernel
    block = predicted["block"]
    right = rms_norm(ones, gamma)[0, 0].item()
    wrong = exercise.wrong_forward(ones, gamma)[0, 0].item()
    print(f"N = {n}, BLOCK = {block}: sum of squares {n}, "
          f"mean {n / n:.4f} by N, {n / block:.4f} by BLOCK")
    print(f"  divide by N:     kernel y = {right:.7f}, "
          f"predicted {predicted['y_right']:.7f}")
    print(f"  divide by BLOCK: kernel y = {wrong:.7f}, "
          f"predicted {predicted['y_wrong']:.7f}")
"""),
    md(
        """
## Compare under the campaign's tolerance

A test does not look at rows of ones: it compares the kernel with the reference on random inputs,
under the accuracy campaign's fp32 tolerance. `exercise.try_width` does exactly that, with $M$ rows
(4 under the interpreter, 4096 on a GPU).
""",
        """
## 在精度测试的容差下比较

测试不会去看全 1 的行：它在随机输入上把内核与参考实现对照，采用精度测试的 fp32 容差（tolerance）。`exercise.try_width` 做的正是这件事，输入有 $M$ 行（解释器下 4 行，GPU 上 4096 行）。
""",
        """
## So sánh theo dung sai của đợt kiểm tra

Một bài kiểm thử không nhìn vào các hàng toàn số 1: nó so sánh kernel với bản tham chiếu trên đầu vào
ngẫu nhiên, theo dung sai (tolerance) fp32 của đợt kiểm tra độ chính xác. `exercise.try_width` làm đúng
điều đó, với $M$ hàng (4 hàng khi dùng trình thông dịch, 4096 hàng trên GPU).
""",
    ),
    code("""
M = 4 if normkit.INTERPRETED else 4096

for n in (257, 256):
    r = exercise.try_width(n, m=M)
    verdict = "CAUGHT" if r["caught"] else "hidden: N == BLOCK"
    print(f"N = {n}, BLOCK = {r['block']}: "
          f"max |wrong - reference| = {r['max_abs_err']:.3e}  {verdict}")
"""),
    md(
        """
Compare with your hypothesis. The sum of squares is 257 either way: the padded lanes load zeros, and
zeros add nothing. Dividing by 512 instead of 257 makes the mean about half as large, so $r$ is about
$\\sqrt{512/257} \\approx 1.41$ times too large, and so is every output. At $N = 256$, `BLOCK` is 256
too: the two kernels compute exactly the same thing, bit for bit, and a test suite that only uses
powers of two passes with the bug. That is why the campaign includes widths such as 255 and 257.
""",
        """
和你的假设对照一下。无论哪种做法，平方和都是 257：填充的通道加载的是 0，而 0 对和没有贡献。除以 512 而不是 257，均值大约只有应有值的一半，于是 $r$ 大了约 $\\sqrt{512/257} \\approx 1.41$ 倍，每个输出也随之放大同样的倍数。当 $N = 256$ 时，`BLOCK` 也是 256：两个内核算出的结果逐位完全相同，只用 2 的幂作为宽度的测试套件会带着这个错误照样通过。这就是精度测试要包含 255 和 257 这类宽度的原因。
""",
        """
Hãy đối chiếu với giả thuyết của bạn. Dù chia cách nào, tổng bình phương vẫn là 257: các làn đệm nạp
vào số 0, và số 0 không làm tổng thay đổi. Chia cho 512 thay vì 257 khiến trung bình chỉ còn khoảng một
nửa, nên $r$ lớn gấp khoảng $\\sqrt{512/257} \\approx 1.41$ lần giá trị đúng, và mọi đầu ra cũng vậy. Ở
$N = 256$, `BLOCK` cũng bằng 256: hai kernel tính ra đúng cùng một kết quả đến từng bit, và một bộ kiểm
thử chỉ dùng lũy thừa của 2 sẽ vẫn qua dù có lỗi. Đó là lý do đợt kiểm tra có cả những độ rộng như 255
và 257.
""",
    ),
    md(
        """
## The backward pass needs the same N

Fixing the forward is not enough. With $s = \\frac{1}{N}\\sum_k x_k^2 + \\varepsilon$ and
$r = s^{-1/2}$, the chain rule gives $\\partial s / \\partial x_i = 2 x_i / N$, and that $\\frac{1}{N}$
becomes the mean in

$$
dx = r\\,u - x\\,r^3\\,\\operatorname{mean}_N(u \\odot x), \\qquad u = dy \\odot \\gamma .
$$

The masked lanes add zeros to $\\sum_j u_j x_j$, so the sum is right whatever the block; only the count
it is divided by can be wrong. **Hypothesis:** at $N = 257$, which denominator gives an error at the
level of float64 rounding, $N$ or `BLOCK`? And at $N = 256$? `exercise.backward_needs_n` builds $dx$
with each denominator and compares it with autograd of the float64 reference.
""",
        """
## 反向传播也需要同一个 N

只修好前向传播还不够。记 $s = \\frac{1}{N}\\sum_k x_k^2 + \\varepsilon$，$r = s^{-1/2}$，由链式法则（chain rule）得 $\\partial s / \\partial x_i = 2 x_i / N$，这个 $\\frac{1}{N}$ 正是下式中的均值：

$$
dx = r\\,u - x\\,r^3\\,\\operatorname{mean}_N(u \\odot x), \\qquad u = dy \\odot \\gamma .
$$

被屏蔽的通道向 $\\sum_j u_j x_j$ 加的是 0，所以无论块多大，这个和都是对的；可能出错的只有除以的那个个数。**假设：** 当 $N = 257$ 时，除以 $N$ 和除以 `BLOCK`，哪一个的误差处在 float64 舍入误差的量级？$N = 256$ 时又如何？`exercise.backward_needs_n` 分别用这两个分母构造 $dx$，并与 float64 参考实现经 autograd 求得的梯度比较。
""",
        """
## Lượt ngược cần cùng một N

Chỉ sửa lượt xuôi thì chưa đủ. Với $s = \\frac{1}{N}\\sum_k x_k^2 + \\varepsilon$ và $r = s^{-1/2}$, quy
tắc dây chuyền (chain rule) cho $\\partial s / \\partial x_i = 2 x_i / N$, và chính $\\frac{1}{N}$ đó trở
thành phép lấy trung bình trong

$$
dx = r\\,u - x\\,r^3\\,\\operatorname{mean}_N(u \\odot x), \\qquad u = dy \\odot \\gamma .
$$

Các làn bị che cộng số 0 vào $\\sum_j u_j x_j$, nên tổng này đúng bất kể kích thước khối; chỉ có số
lượng mà ta chia cho là có thể sai. **Giả thuyết:** ở $N = 257$, mẫu số nào cho sai số ở mức làm tròn
của float64, $N$ hay `BLOCK`? Còn ở $N = 256$? `exercise.backward_needs_n` dựng $dx$ với từng mẫu số và
so sánh với gradient mà autograd tính từ bản tham chiếu float64.
""",
    ),
    code("""
for n in (257, 256):
    r = exercise.backward_needs_n(n, m=M)
    print(f"N = {n}, BLOCK = {r['block']}: dx error "
          f"{r['err_with_n']:.1e} dividing by N, "
          f"{r['err_with_block']:.1e} by BLOCK")
"""),
    md(
        """
There is also a check that needs no reference. RMSNorm ignores the scale of a row: $y(c\\,x) = y(x)$
for any $c > 0$, up to $\\varepsilon$. Moving a row along itself cannot change the loss, so the true
gradient is orthogonal to the row: $\\sum_i x_i\\, dx_i = r \\sum_j u_j x_j \\cdot \\varepsilon / s$,
which is tiny. Dividing by `BLOCK` breaks that identity at $N = 257$.
""",
        """
还有一种不需要参考实现的检查。RMSNorm 不在乎一行的缩放：对任意 $c > 0$，都有 $y(c\\,x) = y(x)$（忽略 $\\varepsilon$ 的影响）。沿着行自身的方向移动这一行不会改变损失，所以真正的梯度与这一行正交：$\\sum_i x_i\\, dx_i = r \\sum_j u_j x_j \\cdot \\varepsilon / s$，数值极小。在 $N = 257$ 时除以 `BLOCK` 会破坏这个恒等式。
""",
        """
Còn một phép kiểm tra không cần bản tham chiếu. RMSNorm không quan tâm đến tỉ lệ của một hàng:
$y(c\\,x) = y(x)$ với mọi $c > 0$, sai khác không đáng kể do $\\varepsilon$. Dịch chuyển một hàng dọc theo
chính nó không làm thay đổi hàm mất mát, nên gradient đúng trực giao với hàng đó:
$\\sum_i x_i\\, dx_i = r \\sum_j u_j x_j \\cdot \\varepsilon / s$, một giá trị rất nhỏ. Chia cho `BLOCK`
phá vỡ đẳng thức này ở $N = 257$.
""",
    ),
    code("""
n, block = 257, triton.next_power_of_2(257)
gen = torch.Generator().manual_seed(0)
x = torch.randn(M, n, dtype=torch.float64, generator=gen)
gamma = torch.randn(n, dtype=torch.float64, generator=gen)
dy = torch.randn(M, n, dtype=torch.float64, generator=gen)
for name, denominator in (("N", n), ("BLOCK", block)):
    dx = exercise.dx_with_denominator(x, gamma, dy, denominator)
    worst = (x * dx).sum(dim=-1).abs().max().item()
    print(f"dividing by {name:<5} ({denominator}): max over rows of "
          f"|sum_i x_i dx_i| = {worst:.1e}")
"""),
    md(
        """
The chapter's kernels use $N$ in both places, so their $dx$ at $N = 257$ passes the campaign's fp32
tolerance, and `python -m rmsnorm exercise` prints the same comparison as this notebook:
""",
        """
本章的内核在两处都使用 $N$，所以它们在 $N = 257$ 时算出的 $dx$ 能通过精度测试的 fp32 容差；`python -m rmsnorm exercise` 打印的也正是本笔记本所做的比较：
""",
        """
Các kernel của chương dùng $N$ ở cả hai chỗ, nên $dx$ của chúng ở $N = 257$ đạt dung sai fp32 của đợt
kiểm tra, và `python -m rmsnorm exercise` in ra cùng phép so sánh như notebook này:
""",
    ),
    code("""
from rmsnorm import manual_backward
from rmsnorm.accuracy import Case, compare, make_inputs

x, gamma, dy = make_inputs(Case(M, 257, torch.float32, 0))
xk, gk = x.clone().requires_grad_(), gamma.clone().requires_grad_()
dx, _ = torch.autograd.grad(rms_norm(xk, gk), (xk, gk), dy)
r = compare(dx, manual_backward(x, gamma, dy)[0], torch.float32)
print(f"the chapter's dx kernel at N = 257: max |err| {r['max_abs_err']:.1e}, "
      f"{r['bad_elements']} elements out of tolerance")
print()
print(exercise.format_exercise(exercise.run_exercise()))
"""),
    md(
        """
## What the exercise shows

$N$ describes the data; `BLOCK` describes the work of one program. The mask keeps the padded lanes out
of memory, and their zeros out of the sums, but it does not choose the denominator. The same $N$ must
appear wherever the formula has $\\frac{1}{N}$: in the forward pass, and in the backward pass that
differentiates it. Only widths that are not powers of two can tell the two sizes apart, so tests need
them.
""",
        """
## 这道练习说明了什么

$N$ 描述的是数据，`BLOCK` 描述的是一个程序（program）的工作量。掩码让填充的通道不去访问内存，也让它们的 0 不影响求和，但它不会替你选择分母。公式中凡是出现 $\\frac{1}{N}$ 的地方，都必须用同一个 $N$：前向传播如此，对前向传播求导得到的反向传播也是如此。只有不是 2 的幂的宽度才能区分这两个尺寸，所以测试离不开它们。
""",
        """
## Bài tập cho thấy điều gì

$N$ mô tả dữ liệu; `BLOCK` mô tả khối lượng công việc của một chương trình (program). Mặt nạ (mask) giữ
cho các làn đệm không chạm vào bộ nhớ, và giữ các số 0 của chúng ngoài các tổng, nhưng nó không chọn
mẫu số thay bạn. Cùng một $N$ phải xuất hiện ở mọi chỗ công thức có $\\frac{1}{N}$: trong lượt xuôi, và
trong lượt ngược vốn là đạo hàm của nó. Chỉ những độ rộng không phải lũy thừa của 2 mới phân biệt được
hai kích thước này, nên các bài kiểm thử cần đến chúng.
""",
    ),
]


NOTEBOOKS = {
    "first-notebook": FIRST_NOTEBOOK,
    "layernorm": LAYERNORM,
    "rmsnorm": RMSNORM,
    "rmsnorm-exercise": RMSNORM_EXERCISE,
}


# ----------------------------------------------------------------------------------------------
# Building the .ipynb JSON (standard library only)
# ----------------------------------------------------------------------------------------------

def lines(text):
    """nbformat's on-disk form of a multi-line string: a list of lines, each keeping its newline."""
    return text.splitlines(keepends=True)


def notebook_path(language, name, docs=DOCS):
    return Path(docs) / language / "notebooks" / f"{name}.ipynb"


def check_cells(name):
    """Refuse what the notebooks must never hold, before anything is written or run."""
    for index, cell in enumerate(NOTEBOOKS[name]):
        if cell["cell_type"] == "code":
            assert "@triton.jit" not in cell["source"], f"{name}: code cell {index} defines a kernel"
            ast.parse(cell["source"])
        else:
            texts = cell["source"]
            assert set(texts) == set(LANGUAGES), f"{name}: markdown cell {index} lacks a language"
            assert len(set(texts.values())) == len(LANGUAGES), f"{name}: markdown cell {index} is not translated"


def build(name, language):
    """The notebook without outputs, as a plain nbformat 4.5 dictionary."""
    check_cells(name)
    cells = []
    for index, cell in enumerate(NOTEBOOKS[name]):
        source = cell["source"] if cell["cell_type"] == "code" else cell["source"][language]
        entry = {"cell_type": cell["cell_type"], "id": f"{name}-{index:02d}", "metadata": {}, "source": lines(source)}
        if cell["cell_type"] == "code":
            entry["execution_count"] = None
            entry["outputs"] = []
        cells.append(entry)
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": ".".join(map(str, sys.version_info[:3]))},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def code_sources(name):
    return [cell["source"] for cell in NOTEBOOKS[name] if cell["cell_type"] == "code"]


def dump(notebook, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def stream(name, text):
    return {"name": name, "output_type": "stream", "text": lines(text)}


def normalize(outputs):
    """Plain, stable outputs: consecutive stream chunks of the same name merged, text as line lists."""
    merged = []
    for output in outputs:
        output = json.loads(json.dumps(output))
        if output.get("output_type") == "stream":
            text = output["text"] if isinstance(output["text"], str) else "".join(output["text"])
            if merged and merged[-1].get("output_type") == "stream" and merged[-1]["name"] == output["name"]:
                merged[-1] = stream(output["name"], "".join(merged[-1]["text"]) + text)
            else:
                merged.append(stream(output["name"], text))
            continue
        for key in ("data",):
            for mime, value in output.get(key, {}).items():
                if isinstance(value, str) and mime.startswith("text/"):
                    output[key][mime] = lines(value)
        merged.append(output)
    return merged


# ----------------------------------------------------------------------------------------------
# Executors: each returns one list of outputs per code cell
# ----------------------------------------------------------------------------------------------

def kernel_environment(interpret=False):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SNIPPETS), env.get("PYTHONPATH")) if p)
    env.setdefault("PYTHONHASHSEED", "0")
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    return env


def execute_jupyter(name, workdir, interpret=False, timeout=600):
    import nbclient
    import nbformat

    notebook = nbformat.reads(json.dumps(build(name, "en")), as_version=4)  # joins the line lists
    client = nbclient.NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", allow_errors=False,
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute(env=kernel_environment(interpret))  # the kernel's environment: snippets/ importable
    return [normalize(cell.outputs) for cell in notebook.cells if cell.cell_type == "code"]


def execute_inline(name, workdir, interpret=False, timeout=600):
    """Run the code cells in a fresh interpreter (see run_cells); only the standard library is needed."""
    with tempfile.TemporaryDirectory() as tmp:
        sources, results = Path(tmp) / "sources.json", Path(tmp) / "outputs.json"
        sources.write_text(json.dumps(code_sources(name)), encoding="utf-8")
        command = [sys.executable, str(Path(__file__).resolve()), "_run-cells", str(sources), str(results)]
        completed = subprocess.run(command, cwd=workdir, env=kernel_environment(interpret), timeout=timeout)
        if completed.returncode != 0:
            raise RuntimeError(f"{name}: a code cell failed (its traceback is above)")
        return [normalize(outputs) for outputs in json.loads(results.read_text(encoding="utf-8"))]


def run_cells(sources_file, results_file):
    """Child process of execute_inline: the cells in order, in one namespace, like a kernel would."""
    sys.path.insert(0, str(SNIPPETS))
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    all_outputs = []
    for index, source in enumerate(json.loads(Path(sources_file).read_text(encoding="utf-8"))):
        out, err, outputs = io.StringIO(), io.StringIO(), []
        tree = ast.parse(source, filename=f"<cell {index}>")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                exec(compile(tree, f"<cell {index}>", "exec"), namespace)
                value = None
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), f"<cell {index}>", "eval"), namespace)
        except BaseException:
            sys.stdout.write(out.getvalue())
            sys.stderr.write(err.getvalue())
            print(f"code cell {index} failed:\n{source}\n", file=sys.stderr)
            traceback.print_exc()
            return 1
        if out.getvalue():
            outputs.append(stream("stdout", out.getvalue()))
        if err.getvalue():
            outputs.append(stream("stderr", err.getvalue()))
        if value is not None:
            outputs.append({"data": {"text/plain": repr(value)}, "execution_count": index + 1,
                            "metadata": {}, "output_type": "execute_result"})
        all_outputs.append(outputs)
    Path(results_file).write_text(json.dumps(all_outputs), encoding="utf-8")
    return 0


def committed_outputs(name, docs=DOCS):
    """Outputs of the committed English notebook, for each code cell whose source is unchanged."""
    path = notebook_path("en", name, docs)
    old = {}
    if path.is_file():
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        old_code = [c for c in cells if c["cell_type"] == "code"]
        for index, cell in enumerate(old_code):
            old[(index, "".join(cell["source"]))] = cell.get("outputs", [])
    outputs = []
    for index, source in enumerate(code_sources(name)):
        if (index, source) not in old:
            print(f"warning: {name}: code cell {index} changed; it has no outputs until the next execution",
                  file=sys.stderr)
        outputs.append(old.get((index, source), []))
    return outputs


EXECUTORS = {"jupyter": execute_jupyter, "inline": execute_inline}


def with_outputs(notebook, outputs):
    code_cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert len(code_cells) == len(outputs)
    for count, (cell, cell_outputs) in enumerate(zip(code_cells, outputs), start=1):
        cell["outputs"] = cell_outputs
        cell["execution_count"] = count if cell_outputs else None
        for output in cell_outputs:
            if output.get("output_type") == "execute_result":
                output["execution_count"] = count
    return notebook


def write(names, execute, docs=DOCS, interpret=False):
    """Generate, execute once, and write every language of each notebook under docs/<lang>/notebooks/."""
    written = []
    for name in names:
        check_cells(name)
        if execute == "none":
            outputs = committed_outputs(name, docs)
        else:
            workdir = notebook_path("en", name, docs).parent
            workdir.mkdir(parents=True, exist_ok=True)
            print(f"executing {name} ({execute})", flush=True)
            outputs = EXECUTORS[execute](name, workdir, interpret=interpret)
        for language in LANGUAGES:
            path = notebook_path(language, name, docs)
            dump(with_outputs(build(name, language), outputs), path)
            written.append(path)
    return written


def drift(docs=DOCS):
    """Differences between the notebooks under docs/ and what this script generates (outputs excluded)."""
    problems = []
    for language in LANGUAGES:
        folder = Path(docs) / language / "notebooks"
        present = {p.stem for p in folder.glob("*.ipynb")}
        for extra in sorted(present - set(NOTEBOOKS)):
            problems.append(f"{language}/notebooks/{extra}.ipynb is not generated by scripts/notebooks.py")
        for name in NOTEBOOKS:
            path = notebook_path(language, name, docs)
            if not path.is_file():
                problems.append(f"{language}/notebooks/{name}.ipynb is missing")
                continue
            have = [(c["cell_type"], "".join(c["source"])) for c in json.loads(path.read_text("utf-8"))["cells"]]
            want = [(c["cell_type"], "".join(c["source"])) for c in build(name, language)["cells"]]
            if have != want:
                problems.append(f"{language}/notebooks/{name}.ipynb differs from the generator")
    return problems


def check(names, execute="jupyter", interpret=True, out_dir=None):
    """Generate and execute into a temporary folder; docs/ is not touched. Returns the written paths."""
    if out_dir is None:
        out_dir = Path(tempfile.mkdtemp(prefix="notebooks-check-"))
    return write(names, execute, docs=out_dir, interpret=interpret)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    w = commands.add_parser("write", help="generate the notebooks into docs/ (or a temp dir with --check)")
    w.add_argument("--execute", choices=("jupyter", "inline", "none"), required=True)
    w.add_argument("--only", action="append", choices=sorted(NOTEBOOKS), help="this notebook only (repeatable)")
    w.add_argument("--check", action="store_true", help="write into a temporary folder, not docs/")
    w.add_argument("--interpret", action="store_true", help="force Triton's interpreter (TRITON_INTERPRET=1)")
    c = commands.add_parser("check", help="generate and execute into a temp dir, and report drift of docs/")
    c.add_argument("--execute", choices=("jupyter", "inline"), default="jupyter")
    c.add_argument("--only", action="append", choices=sorted(NOTEBOOKS))
    runner = commands.add_parser("_run-cells", help=argparse.SUPPRESS)
    runner.add_argument("sources")
    runner.add_argument("results")
    args = parser.parse_args(argv)

    if args.command == "_run-cells":
        return run_cells(args.sources, args.results)
    names = args.only or list(NOTEBOOKS)
    if args.command == "check" or args.check:
        paths = check(names, args.execute if args.execute != "none" else "jupyter",
                      interpret=args.command == "check" or args.interpret)
        print(f"{len(paths)} notebooks generated and executed in {paths[0].parents[2]}")
        problems = drift()
        for problem in problems:
            print(f"drift: {problem}", file=sys.stderr)
        return 1 if problems else 0
    paths = write(names, args.execute, interpret=args.interpret)
    for path in paths:
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
