"""Registers and spills of the staged backward for sm_90a, on any machine (no GPU): Triton compiles
the kernel to PTX for GPUTarget("cuda", 90, 32) (faster.test_layouts.compile_staged), and the ptxas
that ships with Triton reports what the H200 would run (-v). Usage, from the repository root:
TRITON_INTERPRET=0 python notes/experiments/ptxas_spills.py layernorm|rmsnorm
Third session, issue 21: where the staged LayerNorm backward spills."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, "snippets")
import triton  # noqa: E402

from faster.test_layouts import compile_staged, staged_kernel  # noqa: E402

PTXAS = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas")


def ptxas_usage(compiled):
    """(registers a thread, spill-store bytes) of a kernel compiled for sm_90, from ptxas -v."""
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(compiled.asm["ptx"])
    out = subprocess.run([PTXAS, "-arch=sm_90a", "-v", f.name, "-o", os.devnull],
                         capture_output=True, text=True).stderr
    os.unlink(f.name)
    spilled = re.search(r"(\d+) bytes spill stores", out)
    return int(re.search(r"Used (\d+) registers", out).group(1)), int(spilled.group(1)) if spilled else 0


if __name__ == "__main__":
    kernel, extra = staged_kernel(sys.argv[1])
    for n, tile, rest, early in ((10240, 8192, 2048, False), (10496, 8192, 4096, False), (10496, 8192, 4096, True),
                                 (11264, 8192, 4096, True), (12288, 8192, 4096, True), (12544, 8192, 8192, False)):
        usage = ptxas_usage(compile_staged(kernel, n, tile, rest, 16, **extra, EARLY=early))
        print(sys.argv[1], n, tile, rest, 16, "EARLY" if early else "", usage, flush=True)
