"""Registers and spills of the staged backward for sm_90a, on any machine (no GPU): Triton compiles
the kernel to PTX for GPUTarget("cuda", 90, 32), and the ptxas that ships with Triton reports what the
H200 would run (-v). Usage: TRITON_INTERPRET=0 python notes/experiments/ptxas_spills.py layernorm|rmsnorm
(from the repository root). Third session, issue 21: where the staged LayerNorm backward spills."""
import sys, subprocess, tempfile, re, os
sys.path.insert(0, "snippets")
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
import importlib
PTXAS = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas")
def staged(op, n, tile, rest, warps, stages=3, split=1, early=False):
    mod, name, extra = {"layernorm": ("layernorm.fast", "ln_fast_bwd_staged_kernel", {"GRAD_B": True}),
                        "rmsnorm": ("rmsnorm.fast", "rms_fast_bwd_staged_kernel", {})}[op]
    k = getattr(importlib.import_module(mod), name)
    stats = k.arg_names[4]
    sig = {"X": "*bf16", "DY": "*bf16", "DX": "*bf16", "W": "*bf16", stats: "*fp32", "Part": "*fp32", "M": "i32", "rows_per_program": "i32"}
    const = dict(N=n, STRIDE_X=n, STRIDE_DY=n, SPLIT=split, TILE=tile, REST=rest, ROWS=1, STAGES=stages,
                 HAS_W=True, GRAD_X=True, GRAD_W=True, **extra, EARLY=early)
    sig.update({c: "constexpr" for c in const})
    aligned = {(i,): [["tt.divisibility", 16]] for i in range(6)}
    c = triton.compile(ASTSource(k, sig, const, aligned), target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(c.asm["ptx"])
    out = subprocess.run([PTXAS, "-arch=sm_90a", "-v", f.name, "-o", "/dev/null"], capture_output=True, text=True).stderr
    regs = re.search(r"Used (\d+) registers", out); sp = re.search(r"(\d+) bytes spill stores", out)
    return int(regs.group(1)), int(sp.group(1)) if sp else 0
op = sys.argv[1]
for n, tile, rest, warps, early in [(10240, 8192, 2048, 16, False), (10496, 8192, 4096, 16, False), (10496, 8192, 4096, 16, True),
                                     (11264, 8192, 4096, 16, True), (12288, 8192, 4096, 16, True), (12544, 8192, 8192, 16, False)]:
    try:
        print(op, n, tile, rest, warps, "EARLY" if early else "", staged(op, n, tile, rest, warps, early=early), flush=True)
    except Exception as e:
        print(op, n, tile, rest, "error", str(e)[:200])
