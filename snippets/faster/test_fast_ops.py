"""What both fast ops must do alike, tested once for each op: every design of the launch code
on shapes that reach its edges, a launch table entry for every width of the tuned range, and
large shapes on the GPU, and the shapes every op must get right. Each op's test_fast.py says what is checked (check) and which designs
there are (DESIGNS).
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest

from layernorm import fast as layernorm_fast, test_fast as layernorm_tests
from normkit import aligned
from normkit.testing import DTYPES, TABLE_ENTRY_SIZES
from rmsnorm import fast as rmsnorm_fast, test_fast as rmsnorm_tests

OPS = {"layernorm": (layernorm_fast, layernorm_tests), "rmsnorm": (rmsnorm_fast, rmsnorm_tests)}
# the launch table entries' lengths: LayerNorm's chunked forward takes a fifth field, TAIL_TILE
ENTRY_SIZES = {"layernorm": {**TABLE_ENTRY_SIZES, "forward": {**TABLE_ENTRY_SIZES["forward"], "chunked": 5}},
               "rmsnorm": TABLE_ENTRY_SIZES}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (1, 257), (17, 1), (17, 257), (17, 1000), (300, 257)], ids=str)
def test_matches_torch(op, shape, dtype):
    OPS[op][1].check(shape, dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_three_dim_input(op, dtype):
    OPS[op][1].check((3, 7, 130), dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_widest_rows_interpreter_sized(op, dtype):
    OPS[op][1].check((5, 16384), dtype)  # the widest tuned N, with few rows


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op, design", [(op, d) for op, (_, tests) in OPS.items() for d in tests.DESIGNS])
# (60, 257): rows that end inside a chunk, several rows per program (the interpreter grid has 8)
@pytest.mark.parametrize("shape", [(1, 1), (17, 1000), (60, 257)], ids=str)
def test_each_design(op, design, shape, dtype, monkeypatch):
    fast, tests = OPS[op]
    fwd, bwd = tests.DESIGNS[design]
    monkeypatch.setattr(aligned, "WINDOW_MIN_BYTES", 0)  # the aligned design, not its fallback
    monkeypatch.setattr(fast.OP, "forward_config", lambda n, elt: fwd(n))
    monkeypatch.setattr(fast.OP, "backward_config", lambda n, elt: bwd(n))
    # no plan made with the tables' configurations
    monkeypatch.setattr(fast.OP, "forward_plans", {})
    monkeypatch.setattr(fast.OP, "backward_plans", {})
    tests.check(shape, dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("element_size", [2, 4])
def test_tuned_table_covers_every_width(op, element_size):
    # every multiple of the table's step up to MAX_N has an entry for both passes: no
    # width falls back to the rule
    fast = OPS[op][0]
    table = fast.tuned_table(element_size)
    for n in range(table["step"], fast.MAX_N + 1, table["step"]):
        for kind, sizes in ENTRY_SIZES[op].items():
            entry = table[kind].get(n)
            assert entry is not None and len(entry) == sizes.get(entry[0]), (kind, n, entry)
            assert all(isinstance(v, int) for v in entry[1:]), (kind, n, entry)  # bools are ints too


@pytest.mark.gpu
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(4096, 16384), (2, 2048, 4096), (32768, 1024), (1000, 8000)], ids=str)
def test_large_shapes(op, shape, dtype):
    OPS[op][1].check(shape, dtype)
