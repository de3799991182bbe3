"""Issue 21, fourth session: the chunked LayerNorm forward's partial last chunk, four ways, timed
side by side in one run (GPU-bound, CUDA-graph replay, % of the copy bandwidth measured in the same run):
  before: the full chunks in a loop, the partial one after it (a division per element);
  tail:   the same, the division replaced by a reciprocal known when compiling (branch chunked-tail);
  loop:   every chunk in one loop, lanes past N adding nothing;
  sums:   the loop, and the lanes merged by two plain sums instead of a reduction with Chan's pairwise
          merge (a division at every level of the tree): layernorm/fast.py now.
Run 1 (notes/data/chunked-walk-1.json): before, tail, loop (then layernorm/fast.py); run 2: before, loop, sums.
The two earlier versions of layernorm/fast.py are read from files given on the command line (git show
of each, cut before its torch.library operators, which register once a process, in an ignored folder).
Usage, from the repository root on the GPU machine:
python notes/experiments/chunked_walk.py OUT.json before=.exp/fast_before.py loop=.exp/fast_loop.py"""
import importlib.util
import json
import sys

sys.path.insert(0, "snippets")
import torch  # noqa: E402

from faster.tune import LN_EPS, copy_bandwidth_gb_per_s, graph_ms, pct, rows_for  # noqa: E402
from layernorm import fast  # noqa: E402

WIDTHS = (8448, 9216, 10240, 10496, 11008, 11776, 12032, 12288, 12544, 13312, 14336, 15104, 16128, 16384)
CONFIGS = (("chunked", 1024, 1, 8), ("chunked", 2048, 1, 8), ("chunked", 2048, 1, 16), ("chunked", 4096, 1, 8),
           ("chunked", 4096, 1, 16))


def module(name, path):
    spec = importlib.util.spec_from_file_location(f"layernorm.fast_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(out, *versions):
    kernels = {"sums": fast, **{v.split("=")[0]: module(*v.split("=")) for v in versions}}
    copy = copy_bandwidth_gb_per_s()["median"]
    rows = []
    for n in WIDTHS:
        m = rows_for(n)
        x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        reference = torch.nn.functional.layer_norm(x.float(), (n,), w.float(), b.float(), LN_EPS)
        for cfg in CONFIGS:
            for name, mod in kernels.items():
                step = lambda: mod.forward_rows(x, w, b, LN_EPS, config=cfg)  # noqa: E731
                err = (step()[0].float() - reference).abs().max().item()
                ms = graph_ms(step, replays=7)
                rows.append({"N": n, "config": list(cfg), "version": name, "ms": ms,
                             "pct": pct(2 * m * n * 2, ms, copy), "max_error": err})
                print(n, cfg, name, round(rows[-1]["pct"], 1), f"err {err:.3g}", flush=True)
        del x, w, b, reference
        torch.cuda.empty_cache()
    json.dump({"copy_gb_per_s": copy, "device": torch.cuda.get_device_name(), "results": rows},
              open(out, "w"), indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:])
