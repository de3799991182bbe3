"""How wide are the row forward's global loads and stores at width N (bf16, sm_90, compiled on the
CPU as faster/test_layouts.py does)? Run from snippets/ with TRITON_INTERPRET=0:

    python ../notes/experiments/load_width.py 4096 4097 4100 4104

Rows start at row * N elements: unless N is a multiple of 8 (16 bytes of bf16), Triton cannot
prove a row's start aligned and narrows every access (notes/fast-kernels.md, sixth session)."""
import re, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from layernorm.fast import ln_fast_fwd_kernel

def compile_fwd(n, warps=4):
    block = triton.next_power_of_2(n)
    sig = {"X": "*bf16", "Y": "*bf16", "W": "*bf16", "B": "*bf16", "Stats": "*fp32", "M": "i32", "eps": "fp32"}
    consts = dict(N=n, STRIDE=n, BLOCK_N=block, ROWS=1, HAS_W=True, HAS_B=True)
    sig.update({c: "constexpr" for c in consts})
    aligned = {(i,): [["tt.divisibility", 16]] for i in range(5)}
    return triton.compile(ASTSource(ln_fast_fwd_kernel, sig, consts, aligned), target=GPUTarget("cuda", 90, 32),
                          options={"num_warps": warps})

for n in map(int, sys.argv[1:]):
    ptx = compile_fwd(n).asm["ptx"]
    loads = re.findall(r"ld\.global[\.\w]*", ptx)
    stores = re.findall(r"st\.global[\.\w]*", ptx)
    print(n, "loads:", sorted(set(loads)), len(loads), "stores:", sorted(set(stores)), len(stores))
