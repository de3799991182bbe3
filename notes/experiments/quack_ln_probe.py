"""UNTESTED (written without a GPU; run it in the next GPU session before trusting a line of it).
Usage on the device, with quack-kernels 0.6.5 on PYTHONPATH: python notes/experiments/quack_ln_probe.py
Issue 38: why QuACK LayerNorm forward reaches ~6 % of copy bandwidth at some widths (notes/issue-38.md)."""
# Probe: QuACK 0.6.5 LayerNorm fwd slow at N = 3*2^k and 16384 (bf16 x, fp32 w/b)?
# Hypothesis: heuristic gives 96/128 elems per thread and keeps x + fp32 W + fp32 B live
# across both row reductions -> >255 regs -> local-memory spill.
import os, glob, struct, tempfile, time
DUMP = tempfile.mkdtemp(prefix="qprobe_")
os.environ["QUACK_CACHE_ENABLED"] = "0"      # force a real compile so cubins get dumped
os.environ["CUTE_DSL_KEEP"] = "cubin"
os.environ["CUTE_DSL_DUMP_DIR"] = DUMP
import torch
from quack.rmsnorm import layernorm_fwd, _compile_rmsnorm_fwd
from quack.rmsnorm_config import RmsNormFwdConfig
from quack.cute_dsl_utils import torch2cute_dtype_map as T2C

def cubin_regs(since):
    """(regs, local bytes) of kernels in cubins dumped after `since`."""
    try:
        from cuda.bindings import driver as cu
        out = []
        for p in glob.glob(os.path.join(DUMP, "**", "*.cubin"), recursive=True):
            if os.path.getmtime(p) < since: continue
            b = open(p, "rb").read()
            shoff, = struct.unpack_from("<Q", b, 0x28); shn, shstr = struct.unpack_from("<HH", b, 0x3C)
            sh = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * 64) for i in range(shn)]
            _, mod = cu.cuModuleLoadData(b)
            for s in sh:
                if s[1] != 2: continue  # SHT_SYMTAB
                strtab = sh[s[6]]
                for o in range(s[4], s[4] + s[5], 24):
                    nm, info = struct.unpack_from("<IB", b, o)
                    if info & 0xF != 2: continue  # STT_FUNC
                    e = b.index(b"\0", strtab[4] + nm); name = b[strtab[4] + nm:e]
                    _, f = cu.cuModuleGetFunction(mod, name)
                    A = cu.CUfunction_attribute
                    r = cu.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_NUM_REGS, f)[1]
                    l = cu.cuFuncGetAttribute(A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f)[1]
                    out.append(f"regs={r} local={l}B")
        return ", ".join(out) or "no cubin found"
    except Exception as ex:
        return f"reg query failed: {ex!r}"

def bench(fn, iters=20):
    fn(); torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph(); s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn(); torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            for _ in range(iters): fn()
    g.replay(); torch.cuda.synchronize()
    a, b = torch.cuda.Event(True), torch.cuda.Event(True)
    a.record(); g.replay(); b.record(); torch.cuda.synchronize()
    return a.elapsed_time(b) / iters * 1e3  # us

def run_variant(x, w, bias, cfg):
    out = torch.empty_like(x)
    t0 = time.time()
    f = _compile_rmsnorm_fwd(T2C[x.dtype], T2C[x.dtype], None, T2C[w.dtype],
                             T2C[bias.dtype] if bias is not None else None, None,
                             x.shape[1], False, False, True, False, 0.0, config=cfg)
    regs = cubin_regs(t0 - 1)
    us = bench(lambda: f(x, w, bias, None, out, None, None, None, 1e-6))
    return us, regs

SLOW = {3072, 6144, 12288, 16384}
for N in [2048, 3072, 4096, 6144, 8192, 12288, 16384]:
    M = 2**27 // N
    x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, device="cuda", dtype=torch.float32); b = torch.randn_like(w)
    gb = 2 * M * N * 2 / 1e9
    h = RmsNormFwdConfig.from_analytical_heuristic(N, 16, is_layernorm=True)
    epth = N // 4 // (h.threads_per_row * h.cluster_n) * 4  # vecsize=gcd(N,128//32)=4
    print(f"\nN={N} M={M} heuristic={h} rows/CTA={h.num_threads // h.threads_per_row} "
          f"elems/thread={epth}")
    t_pub = bench(lambda: layernorm_fwd(x, w, b))
    print(f"  layernorm_fwd (public)      {t_pub:8.1f} us  {gb / t_pub * 1e3:7.0f} GB/s")
    variants = [("heuristic", h, b)]
    if N in SLOW or N == 4096:
        variants += [("bias=None", h, None),
                     ("delay_w_load", RmsNormFwdConfig(h.num_threads, h.threads_per_row, h.cluster_n, h.reload_from, True), b),
                     ("reload smem", RmsNormFwdConfig(h.num_threads, h.threads_per_row, h.cluster_n, "smem", False), b)]
        if h.threads_per_row < 128:
            variants.append(("tpr*2", RmsNormFwdConfig(h.num_threads, h.threads_per_row * 2, 1, None, False), b))
        else:
            variants.append(("256thr,tpr256", RmsNormFwdConfig(256, 256, 1, None, False), b))
    for name, cfg, bb in variants:
        try:
            us, regs = run_variant(x, w, bb, cfg)
            print(f"  {name:<27} {us:8.1f} us  {gb / us * 1e3:7.0f} GB/s  {regs}")
        except Exception as ex:
            print(f"  {name:<27} failed: {ex!r}"[:300])
    del x, w, b; torch.cuda.empty_cache()
