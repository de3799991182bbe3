"""The rule for which staged grids fit an SM (normkit/tiles.py, staged_shared) agrees
with the compiler: a staged backward compiled for sm_90 (no GPU needed, as in test_layouts.py)
asks for the shared memory that the rule counts, within a few hundred bytes of barriers and
scratch. The rule once counted STAGES steps where Triton keeps STAGES - 1, and so left out every
wide fp32 row's staged grid."""

import json
import os
import subprocess
import sys

import pytest

from faster import tune
from normkit.launch_tables import backward_entry_config
from normkit.tiles import SHARED_SLACK, staged_shared

N = 4096


@pytest.mark.parametrize("dtype, element_size, stages", [("bf16", 2, 3), ("fp32", 4, 2), ("fp32", 4, 4)])
def test_staged_shared_memory_is_what_the_compiler_allocates(dtype, element_size, stages):
    child = subprocess.run([sys.executable, "-m", "faster.test_tune", dtype, str(stages)],
                           capture_output=True, text=True, env={**os.environ, "TRITON_INTERPRET": "0"},
                           timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    allocated = int(child.stdout)
    counted = staged_shared(1, N, stages, element_size)
    assert counted <= allocated <= counted + SHARED_SLACK, (allocated, counted)


def test_prior_runs_add_up(tmp_path, monkeypatch):
    """Two prior runs at one width: each one's best configuration is timed again, and a design
    that either of them timed is not searched afresh (a later run no longer hides an earlier one)."""
    monkeypatch.setattr(tune, "PRIOR", {})
    row = ("row", 8192, 1, 16, 1, True)
    staged = ("staged", 8192, 1, 16, 1, 1, 3, 0, False)
    runs = [{"op": "layernorm", "N": 8192, "fwd": [], "bwd": [{"config": list(c), "ms": 1.0}]}
            for c in (row, staged)]
    for i, run in enumerate(runs):
        (tmp_path / f"{i}.json").write_text(json.dumps({"tuned": [run]}))
        tune.load_prior(tmp_path / f"{i}.json", ("bwd",))
    other_row = ("row", 8192, 1, 8, 1, True)
    kept = tune.keep("layernorm", 8192, "bwd", [row, staged, other_row])
    assert kept == [row, staged]


@pytest.mark.parametrize("op", ["layernorm", "rmsnorm"])
def test_a_probe_runs_what_the_entry_gives_the_narrower_width(op):
    """--probe times a candidate at N - PROBE as the kernels would run it there: from its table
    entry, with what follows from the width (the row's block, the staged tiles) derived again."""
    entry = ["staged", 1, 8, 1, 2, 4, 2, False]  # two programs a row, each with two tiles
    staged = backward_entry_config(entry, 12288)
    assert tune.at_width(op, "bwd", staged, 12160) == backward_entry_config(entry, 12160)
    assert tune.at_width(op, "fwd", ("row", 8192, 1, 8), 4352 - 128) == ("row", 8192, 1, 8)
    assert tune.at_width(op, "fwd", ("row", 2048, 2, 4), 1024) == ("row", 1024, 2, 4)
    assert tune.at_width(op, "fwd", ("chunked", 4096, 1, 16, 1), 16192) == ("chunked", 4096, 1, 16, 1)


def test_a_probe_ranks_by_the_worse_width():
    fast_at_n = {"config": ["row"], "pct": 95.0, "probe_pct": 68.0}
    even = {"config": ["chunked"], "pct": 91.0, "probe_pct": 90.0}
    unprobed = {"config": ["staged"], "pct": 92.0}
    assert max([fast_at_n, even, unprobed], key=tune.worst_pct) is unprobed
    assert max([fast_at_n, even], key=tune.worst_pct) is even


def test_a_probed_run_keeps_the_candidate_whose_worse_width_is_fastest(monkeypatch):
    """tune_n with --probe, on the CPU: two forward and two backward configurations of RMSNorm
    run at N = 256 and at the probe's 192 (under the interpreter when there is no GPU), with made-up
    times: the first is faster at N and much slower at 192, so the second wins."""
    import torch

    from normkit.runtime import DEVICE

    def inputs(op, m, n, dtype, grad):
        g = torch.Generator().manual_seed(0)
        x, w, b, dy = (torch.randn(*shape, generator=g).to(DEVICE, dtype) for shape in ((m, n), (n,), (n,), (m, n)))
        return x, w, b, dy, [x, w]

    configs = {"fwd": [("row", 256, 1, 4), ("row", 256, 2, 4)],
               "bwd": [("row", 256, 1, 4, 1, True), ("row", 256, 2, 4, 1, True)]}
    times = iter([1.0, 2.0, 1.0, 2.0,    # at N: the first configuration of each pass is faster
                  9.0, 2.0, 9.0, 2.0])  # at N - 64: much slower
    monkeypatch.setattr(tune, "_inputs", inputs)
    monkeypatch.setattr(tune, "rows_for", lambda n, dtype: 8)
    monkeypatch.setattr(tune, "candidates", lambda op, n, kind, elt: configs[kind])
    monkeypatch.setattr(tune, "graph_ms", lambda step: (step(), next(times))[1])
    monkeypatch.setattr(tune, "compiled_resources", lambda fast, n: [])
    monkeypatch.setattr(tune, "PROBE", 64)
    result = tune.tune_n("rmsnorm", 256, copy=1.0, dtype=torch.float32)
    assert result["probe_N"] == 192
    for kind in ("fwd", "bwd"):
        assert [c["ok"] for c in result[kind]] == [True, True]
        assert tuple(result[f"best_{kind}"]["config"]) == configs[kind][1]
        first = result[kind][0]
        assert first["pct"] > result[f"best_{kind}"]["pct"] and first["probe_pct"] < first["pct"]


if __name__ == "__main__":
    from faster.test_layouts import compile_staged, staged_kernel

    kernel, extra = staged_kernel("layernorm")
    compiled = compile_staged(kernel, N, N, 0, 8, dtype=sys.argv[1], STAGES=int(sys.argv[2]), **extra)
    print(compiled.metadata.shared)


def test_a_run_writes_the_tables_the_op_reads_next(tmp_path, monkeypatch):
    """The table a run writes (with --update, over the current one) is the one the op reads
    next: the side-by-side after a tuning run times the new tables."""
    from rmsnorm import fast
    monkeypatch.setitem(fast.OP.TUNED, 2, fast.OP.TUNED[2])  # the op's own table, after the test
    best = ["row", 1024, 8, 16, 2, False]  # a backward no table holds at 1024
    run = [{"op": "rmsnorm", "N": 1024, "best_fwd": None, "best_bwd": {"config": best},
            "bwd": [{"config": best, "ms": 1.0, "pct": 90.0}]}]
    try:
        path = tune.write_table(run, "rmsnorm", tmp_path, "a test", "bfloat16", 256, update=True)
        assert path == tmp_path / "rmsnorm-fast_tuned.json"
        assert fast.OP.backward_config(1024, 2) == tuple(best)
        assert len(json.loads(path.read_text())["backward"]) > 1  # the current table's other entries, kept
    finally:
        monkeypatch.undo()
        fast.OP.reload()
