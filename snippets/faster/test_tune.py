"""The tuning run's rule for which staged grids fit an SM (faster/tune.py, staged_shared) agrees
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
from faster.tune import staged_shared

N = 4096


@pytest.mark.parametrize("dtype, element_size, stages", [("bf16", 2, 3), ("fp32", 4, 2), ("fp32", 4, 4)])
def test_staged_shared_memory_is_what_the_compiler_allocates(dtype, element_size, stages):
    child = subprocess.run([sys.executable, "-m", "faster.test_tune", dtype, str(stages)],
                           capture_output=True, text=True, env={**os.environ, "TRITON_INTERPRET": "0"},
                           timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    allocated = int(child.stdout)
    counted = staged_shared(1, N, stages, element_size)
    assert counted <= allocated <= counted + 1024, (allocated, counted)


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


if __name__ == "__main__":
    from faster.test_layouts import compile_staged, staged_kernel

    kernel, extra = staged_kernel("layernorm")
    compiled = compile_staged(kernel, N, N, 0, 8, dtype=sys.argv[1], STAGES=int(sys.argv[2]), **extra)
    print(compiled.metadata.shared)
