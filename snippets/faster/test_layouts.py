"""The kernels that hold a row as two tiles keep one layout per tile: compiled for an H100/H200
(sm_90), with or without a GPU (Triton compiles for any target; ptxas ships with it), the staged
backwards' row loop holds no layout conversion. A (1,) row sum shared by two tiles once made Triton give the wide tile the
small tile's layout and convert it through shared memory at every step (notes/fast-kernels.md).

The compilation runs in a child process: the tests' own process may be using the interpreter,
whose kernels cannot be compiled."""

import json
import os
import re
import subprocess
import sys

import pytest

KERNELS = {"layernorm": ("layernorm.fast", "ln_fast_bwd_staged_kernel", {"GRAD_B": True}),
           "rmsnorm": ("rmsnorm.fast", "rms_fast_bwd_staged_kernel", {})}


def compile_staged(kernel, n, tile, rest, num_warps, dtype="bf16", **constants):
    """A staged backward kernel compiled for sm_90 (no GPU, no interpreter) for rows of width n
    in `dtype` (Triton's name), one row a step, 3 stages; `constants` adds the kernel's own or
    overrides these (notes/experiments/ptxas_spills.py reads the same compilation's registers)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from normkit.tiles import share_width

    stats = kernel.arg_names[4]
    signature = {"X": f"*{dtype}", "DY": f"*{dtype}", "DX": f"*{dtype}", "W": f"*{dtype}",
                 stats: "*fp32", "Part": "*fp32", "M": "i32", "rows_per_program": "i32"}
    constants = {**dict(N=n, STRIDE_X=n, STRIDE_DY=n, SPLIT=1, TILE=tile, REST=rest, ROWS=1, STAGES=3,
                        HAS_W=True, GRAD_X=True, GRAD_W=True, EARLY=False), **constants}
    constants["WIDTH"] = share_width(n, constants["SPLIT"])
    signature.update({c: "constexpr" for c in constants})
    aligned = {(i,): [["tt.divisibility", 16]] for i in range(6)}
    return triton.compile(ASTSource(kernel, signature, constants, aligned),
                          target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})


def staged_kernel(op):
    """An op's staged backward kernel and the constants only it takes."""
    import importlib

    module, name, extra = KERNELS[op]
    return getattr(importlib.import_module(module), name), extra


def staged_ttgir(op, n, tile, rest, num_warps):
    """The TTGIR of an op's staged backward kernel for bf16 rows of width n."""
    kernel, extra = staged_kernel(op)
    return compile_staged(kernel, n, tile, rest, num_warps, **extra).asm["ttgir"]


def row_loop(ttgir):
    """The body of the kernel's row loop (scf.for ... scf.yield)."""
    return ttgir[ttgir.index("scf.for"):ttgir.index("scf.yield")]


@pytest.mark.parametrize("op", sorted(KERNELS))
def test_two_tiles_keep_their_own_layouts(op):
    child = subprocess.run([sys.executable, "-m", "faster.test_layouts", op], capture_output=True,
                           text=True, env={**os.environ, "TRITON_INTERPRET": "0"}, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    loop = child.stdout
    assert "ttg.convert_layout" not in loop, "a tile is converted to another layout at every row"
    # each tile's x and dy are read from shared memory once a step
    wide = re.findall(r"ttg\.local_load [^\n]*-> tensor<1x8192xbf16", loop)
    assert len(wide) == 2, f"the 8192-column tile is read {len(wide)} times a step, not 2"


ROW_FORWARDS = {"layernorm": ("layernorm.fast", "ln_fast_fwd_kernel",
                              {"X": "*bf16", "Y": "*bf16", "W": "*bf16", "B": "*bf16", "Stats": "*fp32"},
                              {"HAS_W": True, "HAS_B": True, "SAVE_STATS": True}),
                "rmsnorm": ("rmsnorm.fast", "rms_fast_fwd_kernel",
                            {"X": "*bf16", "Y": "*bf16", "W": "*bf16", "Rstd": "*fp32"}, {"HAS_W": True, "SAVE_STATS": True})}
# RMSNorm holds a row's window whole, LayerNorm walks it (normkit.aligned: window_config, walk_config)
ALIGNED_FORWARDS = {"layernorm": ("layernorm.fast", "ln_fast_fwd_aligned_kernel",
                                  {"X": "*bf16", "Y": "*bf16", "W_AT": "*bf16", "B_AT": "*bf16", "W": "*bf16",
                                   "B": "*bf16", "Stats": "*fp32"}, {"HAS_W": True, "HAS_B": True, "SAVE_STATS": True}),
                    "rmsnorm": ("rmsnorm.fast", "rms_fast_fwd_aligned_kernel",
                                {"X": "*bf16", "Y": "*bf16", "W_AT": "*bf16", "W": "*bf16", "Rstd": "*fp32"},
                                {"HAS_W": True, "SAVE_STATS": True})}


def aligned_constants(op, n, num_warps):
    """The aligned forward's tiles at width n in bf16 (V = 8), as the launch code chooses them."""
    from normkit import aligned
    if op == "rmsnorm":
        return dict(LANES=aligned.window(n, 2), ROWS=1)
    chunk = aligned.walk_config(("row",), n, 2)[1]
    return dict(CHUNK=chunk, LANES=aligned.walk_lanes(n, chunk), EDGES=32 * num_warps)


def forward_accesses(op, n, design="row", num_warps=4):
    """The global loads and stores (PTX) of an op's row forward (or with design="aligned", its
    forward from aligned windows) for bf16 rows of width n, one row a program, every pointer
    16-byte aligned (as Triton specializes a fresh tensor's)."""
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    module, name, pointers, flags = (ROW_FORWARDS if design == "row" else ALIGNED_FORWARDS)[op]
    signature = {**pointers, "M": "i32", "eps": "fp32"}
    if design == "row":
        constants = dict(N=n, STRIDE=n, BLOCK_N=triton.next_power_of_2(n), ROWS=1, **flags)
    else:
        constants = dict(N=n, V=8, **aligned_constants(op, n, num_warps), **flags)
    signature.update({c: "constexpr" for c in constants})
    divisible = {(i,): [["tt.divisibility", 16]] for i in range(len(pointers))}
    kernel = getattr(importlib.import_module(module), name)
    ptx = triton.compile(ASTSource(kernel, signature, constants, divisible),
                         target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps}).asm["ptx"]
    return sorted(set(re.findall(r"(?:ld|st)\.global[.\w:]*", ptx)))


@pytest.mark.parametrize("op", sorted(ROW_FORWARDS))
def test_rows_that_do_not_start_on_16_bytes_narrow_every_access(op):
    """Row r starts at element r * N: Triton proves 16-byte alignment of every row only when N * 2
    bytes is a multiple of 16, and otherwise narrows each access (Going faster: between the table's
    entries). 4104 * 2 = 8208 bytes: 16-byte accesses; 4097 * 2 = 8194: one element at a time."""
    accesses = _accesses(op, "row", 4097, 4104)
    assert "ld.global.v4.b32" in accesses["4104"] and "st.global.v4.b32" in accesses["4104"]
    assert set(accesses["4097"]) == {"ld.global.b16", "st.global.b16", "st.global.b32"}  # b32: the fp32 stats


@pytest.mark.parametrize("op", sorted(ALIGNED_FORWARDS))
def test_aligned_windows_read_and_write_16_bytes_at_a_time(op):
    """The same rows read from aligned windows (normkit.aligned): the body in 16-byte accesses,
    the edges one element at a time."""
    accesses = _accesses(op, "aligned", 4097)["4097"]
    for kind in ("ld", "st"):  # a load with a cache hint: ld.global.L1::evict_last.L2::cache_hint.v4.b32
        widths = {re.search(r"(v\d\.)?b\d+$", a).group(0) for a in accesses if a.startswith(kind)}
        assert {"v4.b32", "b16"} <= widths, (kind, accesses)


def _accesses(op, design, *widths):
    child = subprocess.run([sys.executable, "-m", "faster.test_layouts", "accesses", op, design, *map(str, widths)],
                           capture_output=True, text=True, env={**os.environ, "TRITON_INTERPRET": "0"}, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    return json.loads(child.stdout)


if __name__ == "__main__":
    if sys.argv[1] == "accesses":
        print(json.dumps({n: forward_accesses(sys.argv[2], int(n), sys.argv[3]) for n in sys.argv[4:]}))
    else:
        print(row_loop(staged_ttgir(sys.argv[1], 9216, 8192, 1024, 16)))
