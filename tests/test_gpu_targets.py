"""Which NVIDIA GPUs run which code: the Home page says it, and this file checks it.

Triton compiles for any GPU without one (`triton.compile` with a `GPUTarget`; ptxas ships with
it), as snippets/faster/test_layouts.py does for sm_90. Here the kernels of layernorm/ and rmsnorm/
(ops.py: the teaching kernels; fast.py: the Going faster ones) are compiled to a cubin for
sm_75 (T4, RTX 20xx), sm_80 (A100; RTX 30xx/40xx are sm_86/sm_89, the same compiler path) and
sm_90 (H100, H200), for fp32, fp16 and bf16 rows, each with the launch configuration its launch
code picks at a representative width. What was found, and what the tests hold to:

- Everything compiles for all three targets in all three dtypes (RUNS_ON), each kernel in the
  dtypes its launch code takes it for (LayerNorm's aligned walk: 16 bits). Triton does not
  refuse bf16 before sm_80: it emulates it. Reading bf16 is a 16-bit load and a shift; rounding
  fp32 to bf16, which sm_80 does with one cvt.rn.bf16.f32 instruction, is done on sm_75 with
  integer instructions (round to nearest even, NaN kept a NaN). test_bf16_is_emulated_before_sm_80
  checks that the instruction is there exactly from sm_80 on.
- The staged backwards pipeline their row loop through shared memory (tl.range(num_stages=...))
  with cp.async, which needs sm_80. For sm_75 Triton does not fail: it leaves the loop
  unpipelined (its nvidia backend runs the pipeliner for sm_8x and sm_9x only), so the kernel
  compiles, without cp.async and with num_stages ignored (test_staged_backwards_pipeline_from_sm_80).
- Compiling is not launching: a kernel asking for more shared memory than the GPU gives a block
  is refused at launch (Triton raises OutOfResources there, not when compiling). At the
  representative widths every kernel fits every GPU of its target (SHARED_PER_BLOCK), but the
  fast backwards' launch tables were tuned on an H200 (227 KiB a block): at their widest rows the
  staged backward asks for more than an A100 (163 KiB) or an RTX 30xx/40xx (99 KiB) has, while on
  sm_75, unpipelined, it asks for little (test_the_widest_staged_backwards_need_an_h100). A plan
  checks the GPU's shared memory first (normkit.fastop.FastNorm.fitting) and takes the chunked
  design where a staged entry would not fit.

The compilation runs in child processes (two, one per core): the tests' own process may be using
Triton's interpreter, whose kernels cannot be compiled.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SNIPPETS = Path(__file__).resolve().parent.parent / "snippets"

CCS = (75, 80, 90)
DTYPES = ("fp32", "fp16", "bf16")
ELEMENT_SIZE = {"fp32": 4, "fp16": 2, "bf16": 2}

# (CC, dtype) pairs whose kernels compile: all of them (bf16 on sm_75 emulated, see above)
RUNS_ON = {75: {"fp32", "fp16", "bf16"},
           80: {"fp32", "fp16", "bf16"},
           90: {"fp32", "fp16", "bf16"}}

# the most shared memory one block may have (CUDA's per-block opt-in limit), by compute capability
SHARED_PER_BLOCK = {75: ("T4, RTX 20xx", 64 * 1024),
                    80: ("A100", 163 * 1024),
                    86: ("RTX 30xx, A10", 99 * 1024),
                    89: ("RTX 40xx, L4", 99 * 1024),
                    90: ("H100, H200", 227 * 1024)}
# the GPUs each compiled target stands for: Triton compiles sm_86 and sm_89 through sm_80's passes
# (the same shared memory, to the byte, for the kernels here)
FAMILY = {75: (75,), 80: (80, 86, 89), 90: (90,)}

# the kernels compiled, each at one width: the teaching kernels of both ops, and of the fast
# ones every design of LayerNorm's (forward: row, chunked, aligned walk; backward: row, staged,
# chunked, by residue class whole and chunked, the exchange of row sums; the reductions) and
# RMSNorm's own aligned window, staged backward, chunked one by residue class and exchange
TEACHING = {"layernorm.ops fwd": ("layernorm.ops", "layer_norm_fwd_kernel"),
            "layernorm.ops bwd_dx": ("layernorm.ops", "layer_norm_bwd_dx_kernel"),
            "layernorm.ops bwd_dwdb": ("layernorm.ops", "layer_norm_bwd_dwdb_kernel"),
            "rmsnorm.ops fwd": ("rmsnorm.ops", "rmsnorm_forward_kernel"),
            "rmsnorm.ops dx": ("rmsnorm.ops", "rmsnorm_dx_kernel"),
            "rmsnorm.ops gamma": ("rmsnorm.ops", "gamma_grad_kernel")}
# fast kernels: (op, forward or backward, the design the launch code must pick at width N in
# every dtype, N), and the dtypes when not all three: LayerNorm's aligned walk takes 16-bit rows
# only (fp32 rows off 16 bytes go in chunks, normkit.aligned.OFFSET_FP32)
FAST = {"layernorm.fast fwd row": ("layernorm", "fwd", "row", 4096),
        "layernorm.fast fwd chunked": ("layernorm", "fwd", "chunked", 8192),
        "layernorm.fast fwd aligned": ("layernorm", "fwd", "aligned", 8193, ("fp16", "bf16")),
        "layernorm.fast bwd row": ("layernorm", "bwd", "row", 513),
        "layernorm.fast bwd classes": ("layernorm", "bwd", "classes", 4097),
        "layernorm.fast bwd staged": ("layernorm", "bwd", "staged", 4096),
        "layernorm.fast bwd chunked": ("layernorm", "bwd", "chunked", 40960),
        "layernorm.fast bwd classes_chunked": ("layernorm", "bwd", "classes_chunked", 16385),
        "layernorm.fast sum_partials": ("layernorm", "sum", None, 4096),
        "layernorm.fast sum_class_partials": ("layernorm", "reduce", "classes_chunked", 16385),
        "rmsnorm.fast fwd aligned": ("rmsnorm", "fwd", "aligned", 8193),
        "rmsnorm.fast bwd staged": ("rmsnorm", "bwd", "staged", 4096),
        "rmsnorm.fast bwd classes_chunked": ("rmsnorm", "bwd", "classes_chunked", 16385),
        "layernorm.fast bwd exchange": ("layernorm", "bwd", "exchange", 32768),
        "rmsnorm.fast bwd exchange": ("rmsnorm", "bwd", "exchange", 32768)}
KERNELS = list(TEACHING) + list(FAST)
# (kernel, dtype): each kernel in every dtype its launch code takes
PAIRS = [(k, d) for k in KERNELS for d in (FAST[k][4] if len(FAST.get(k, ())) > 4 else DTYPES)]
STAGED = [k for k in KERNELS if k.endswith("staged")]
TEACHING_N = 4096

# the widest rows' staged backwards, as the H200-tuned tables launch them (16384 columns of
# bf16 LayerNorm: two programs a row, 4 stages; 12288 of fp32 RMSNorm), compiled for each target
# (for sm_86 and sm_89 Triton allocates what it does for sm_80, to the byte)
WIDE = {"layernorm.fast bwd staged": ("bf16", 16384), "rmsnorm.fast bwd staged": ("fp32", 12288)}
# the GPUs whose blocks their shared memory fits: all but the A100 and the RTX 30xx/40xx
WIDE_FITS = {75: True, 80: False, 86: False, 89: False, 90: True}


# --- the child: compiles, no GPU, no interpreter --------------------------------------------

def _teaching(name, dtype):
    """A teaching kernel's signature, constants and warps, as its launch code gives them."""
    from normkit.launch import fused_block_size, warps_for_block

    from layernorm import ops as ln
    from rmsnorm import ops as rms

    n, p, f = TEACHING_N, f"*{dtype}", "*fp32"
    block = fused_block_size(n, ELEMENT_SIZE[dtype])
    warps = warps_for_block(block)
    return {
        "layernorm.ops fwd": (dict(X=p, Y=p, W=p, B=p, Mean=f, Rstd=f, stride="i32", N="i32", eps="fp32"),
                              dict(BLOCK_SIZE=block), warps),
        "layernorm.ops bwd_dx": (dict(DX=p, DY=p, X=p, W=p, DW_part=f, DB_part=f, Mean=f, Rstd=f, Locks="*i32",
                                      stride="i32", N="i32"),
                                 dict(GROUP_SIZE=ln.group_size_for(n), BLOCK_SIZE_N=block), warps),
        "layernorm.ops bwd_dwdb": (dict(DW_part=f, DB_part=f, DW=p, DB=p, rows="i32", N="i32"),
                                   dict(BLOCK_SIZE_M=ln.REDUCE_BLOCK_M, BLOCK_SIZE_N=ln.REDUCE_BLOCK_N), 4),
        "rmsnorm.ops fwd": (dict(x_ptr=p, gamma_ptr=p, y_ptr=p, rstd_ptr=f, n_cols="i32", eps="fp32"),
                            dict(BLOCK=block), warps),
        "rmsnorm.ops dx": (dict(x_ptr=p, gamma_ptr=p, dy_ptr=p, rstd_ptr=f, dx_ptr=p, partial_ptr=f, n_cols="i32"),
                           dict(BLOCK=block), warps),
        "rmsnorm.ops gamma": (dict(partial_ptr=f, dgamma_ptr=p, n_rows="i32", n_cols="i32"),
                              dict(BLOCK_M=rms.GAMMA_BLOCK_M, BLOCK_N=rms.GAMMA_BLOCK_N), 4),
    }[name]


def _fast(op, step, design, n, dtype):
    """A fast kernel, its signature, constants and warps, as the plans of normkit/fastop.py build
    them from forward_config / backward_config (every parameter present, every gradient asked);
    step "reduce": the backward plan's sum of its partial rows."""
    import importlib

    from normkit import fastop

    fast = importlib.import_module(f"{op}.fast")
    es, p, f = ELEMENT_SIZE[dtype], f"*{dtype}", "*fp32"
    if step == "sum":
        return (fastop.sum_partials_kernel, dict(Part=f, Out=p, P="i32", N="i32"),
                dict(BLOCK_P=32, BLOCK_N=64 if n > 2048 else 32), 4)
    config = (fast.forward_config if step == "fwd" else fast.backward_config)(n, es)
    assert config[0] == design, f"{op} {step} at N={n} in {dtype}: the launch code picks {config}, not {design}"
    every = (True,) * len(fast.OP.PARAMS)
    if step == "fwd":
        plan = fast.OP.launch_of(config, 1, n, es, n, every, True)
    else:
        plan = fast.OP.backward_launch(config, 1, n, (n, n), True, (True, *every), 1)
    launch = plan.reduce if step == "reduce" else plan.kernel
    kernel = launch.launcher.kernel
    constants = dict(launch.meta)
    warps = constants.pop("num_warps")
    constants.pop("launch_cooperative_grid", None)  # a launch option, not a constant
    # the arguments before the constants: pointers to rows and parameters, fp32 statistics and
    # partial sums, and the ints and eps
    kinds = dict(Stats=f, Rstd=f, Part=f, Sync=f, M="i32", rows_per_program="i32", eps="fp32",
                 P="i32", N="i32")
    signature = {name: kinds.get(name, p) for name in kernel.arg_names if name not in constants}
    return kernel, signature, constants, warps


def compile_one(name, cc, dtype, n=None):
    """What compiling kernel `name` for sm_`cc` with `dtype` rows gives: ok and what its PTX and
    metadata show, or the error. n overrides a fast kernel's width."""
    import importlib

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    if name in TEACHING:
        module, kernel_name = TEACHING[name]
        kernel = getattr(importlib.import_module(module), kernel_name)
        signature, constants, warps = _teaching(name, dtype)
    else:
        op, step, design, width = FAST[name][:4]
        kernel, signature, constants, warps = _fast(op, step, design, n or width, dtype)
    signature = {**signature, **{c: "constexpr" for c in constants}}
    assert set(signature) == set(kernel.arg_names), (name, sorted(set(kernel.arg_names) ^ set(signature)))
    # every pointer 16-byte aligned, as Triton specializes a fresh tensor's
    aligned = {(kernel.arg_names.index(a),): [["tt.divisibility", 16]]
               for a, t in signature.items() if t.startswith("*")}
    try:
        compiled = triton.compile(ASTSource(kernel, signature, constants, aligned),
                                  target=GPUTarget("cuda", cc, 32), options={"num_warps": warps})
    except Exception as e:  # noqa: BLE001  (the test reports what it was)
        return {"ok": False, "error": f"{type(e).__name__}: {e}"[:2000]}
    ptx = compiled.asm["ptx"]
    return {"ok": True, "target": re.search(r"^\.target (\w+)", ptx, re.M).group(1),
            "cubin": len(compiled.asm.get("cubin", b"")), "shared": compiled.metadata.shared,
            "cp_async": "cp.async" in ptx, "cvt_bf16": bool(re.search(r"\bcvt\.rn\.bf16", ptx))}


def compile_jobs(jobs):
    return {job: compile_one(*_parse(job)) for job in jobs}


# --- the tests --------------------------------------------------------------------------------

def _job(name, cc, dtype, n=None):
    return "|".join([name, str(cc), dtype] + ([str(n)] if n else []))


def _parse(job):
    name, cc, dtype, *n = job.split("|")
    return name, int(cc), dtype, *(int(x) for x in n)


JOBS = ([_job(k, cc, d) for k, d in PAIRS for cc in CCS]
        + [_job(k, cc, d, n) for k, (d, n) in WIDE.items() for cc in CCS])


@pytest.fixture(scope="module")
def compiled():
    """Every job's result, from two child processes compiling half the jobs each."""
    env = {**os.environ, "TRITON_INTERPRET": "0",
           "PYTHONPATH": os.pathsep.join([str(SNIPPETS), *filter(None, [os.environ.get("PYTHONPATH")])])}
    children = [subprocess.Popen([sys.executable, __file__, *JOBS[i::2]], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env) for i in range(2)]
    results = {}
    for child in children:
        out, err = child.communicate(timeout=600)
        assert child.returncode == 0, err[-3000:]
        results.update(json.loads(out))
    return results


@pytest.mark.parametrize("cc", CCS)
@pytest.mark.parametrize("kernel, dtype", PAIRS)
def test_compiles_where_the_table_says(compiled, kernel, cc, dtype):
    result = compiled[_job(kernel, cc, dtype)]
    assert result["ok"] == (dtype in RUNS_ON[cc]), result.get("error", f"{kernel} compiled for sm_{cc}")
    if result["ok"]:
        assert result["target"] == f"sm_{cc}{'a' if cc >= 90 else ''}" and result["cubin"] > 0, result


@pytest.mark.parametrize("cc", CCS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_bf16_is_emulated_before_sm_80(compiled, kernel, cc):
    """Every kernel rounds fp32 to bf16 to store its output: with sm_80's instruction from sm_80
    on, with integer instructions on sm_75."""
    result = compiled[_job(kernel, cc, "bf16")]
    assert result["cvt_bf16"] == (cc >= 80), result


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cc", CCS)
@pytest.mark.parametrize("kernel", STAGED)
def test_staged_backwards_pipeline_from_sm_80(compiled, kernel, cc, dtype):
    """cp.async (sm_80 on) stages the loop's loads; for sm_75 the loop compiles unpipelined."""
    result = compiled[_job(kernel, cc, dtype)]
    assert result["cp_async"] == (cc >= 80), result


@pytest.mark.parametrize("cc", CCS)
@pytest.mark.parametrize("kernel, dtype", PAIRS)
def test_fits_every_gpu_of_its_target(compiled, kernel, cc, dtype):
    """At the representative widths, each kernel's shared memory fits a block of every GPU that
    runs the target's code (sm_80's: the A100 and the RTX 30xx/40xx, 99 KiB the smaller)."""
    shared = compiled[_job(kernel, cc, dtype)]["shared"]
    for gpu in FAMILY[cc]:
        name, limit = SHARED_PER_BLOCK[gpu]
        assert shared <= limit, f"{kernel} ({dtype}) asks for {shared} bytes of shared memory, {name} has {limit}"


@pytest.mark.parametrize("gpu", sorted(SHARED_PER_BLOCK))
@pytest.mark.parametrize("kernel", sorted(WIDE))
def test_the_widest_staged_backwards_need_an_h100(compiled, kernel, gpu, monkeypatch):
    """The launch tables were tuned on an H200: at the widest rows the staged backward's
    pipeline asks for more shared memory than an A100 or an RTX 30xx/40xx gives a block, so
    there the plans take the chunked design (FastNorm.fitting, which must agree with what the
    compiled kernel asks for); unpipelined on sm_75 it fits a T4."""
    import importlib

    from normkit import fastop

    dtype, n = WIDE[kernel]
    cc = next(cc for cc, gpus in FAMILY.items() if gpu in gpus)
    result = compiled[_job(kernel, cc, dtype, n)]
    name, limit = SHARED_PER_BLOCK[gpu]
    assert result["ok"] and result["cp_async"] == (cc >= 80), result
    fits = result["shared"] <= limit
    assert fits == WIDE_FITS[gpu], (
        f"{kernel} at N={n} ({dtype}) for sm_{cc}: {result['shared']} bytes, {name} has {limit}")
    monkeypatch.setattr(fastop, "shared_bytes", lambda index: limit)
    monkeypatch.setattr(fastop, "pipelines", lambda index: cc >= 80)
    op = importlib.import_module(kernel.split(".")[0] + ".fast").OP
    config = op.backward_config(n, ELEMENT_SIZE[dtype])
    assert (op.fitting(config, n, ELEMENT_SIZE[dtype], 0) == config) == fits, (gpu, config)


if __name__ == "__main__":
    print(json.dumps(compile_jobs(sys.argv[1:])))
