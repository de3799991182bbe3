"""What both fast ops must do alike, tested once for each op: every design of the launch code
on shapes that reach its edges, a launch table entry for every width of the tuned range, and
large shapes on the GPU, and the shapes every op must get right. Each op's test_fast.py says what is checked (check) and which designs
there are (DESIGNS).
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch

from layernorm import fast as layernorm_fast, test_fast as layernorm_tests
from normkit import aligned, exchange, fastop
from normkit.launch import ContractError
from normkit.runtime import DEVICE, INTERPRETED
from normkit.testing import (DTYPES, FAST_DESIGNS, TABLE_ENTRY_SIZES, UNREADABLE_LAYOUTS, assert_close,
                             layer_norm_exact, rms_norm_exact, unreadable_rows)
from normkit.tiles import SHARED_SLACK, forward_entry_config, staged_config_shared
from rmsnorm import fast as rmsnorm_fast, test_fast as rmsnorm_tests

OPS = {"layernorm": (layernorm_fast, layernorm_tests), "rmsnorm": (rmsnorm_fast, rmsnorm_tests)}
# the forward ladders' and launch tables' entries' lengths: LayerNorm's chunked forward takes a
# fifth field, TAIL_TILE
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


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("past", [1, 256, 8192, 16384])
def test_rows_past_the_tables(op, dtype, past):
    # past the widest tuned N: rows off 16 bytes (the walk by residue class), the staged
    # design's two shares (MAX_N + 256) and, past its rung, on a GPU the exchange of row
    # sums (MAX_N + 16384; MAX_N + 8192 but for RMSNorm's 16-bit rows), else the chunked
    # design
    OPS[op][1].check((3, OPS[op][0].MAX_N + past), dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("element_size", [2, 4])
def test_staged_configurations_a_gpu_cannot_hold_take_the_chunked_design(op, element_size, monkeypatch):
    fast = OPS[op][0].OP
    monkeypatch.setattr(fastop, "shared_bytes", lambda index: 99 * 1024)  # an RTX 30 or 40 card
    table = fast.tuned_table(element_size)
    for n in sorted(table["backward"])[::16] + [fast.MAX_N, fast.MAX_N + 256]:
        config = fast.backward_config(n, element_size)
        chunked = fast.wide_chunked(n, element_size)
        fits = config[0] != "staged" or staged_config_shared(config, element_size) + SHARED_SLACK <= 99 * 1024
        assert fast.fitting(config, n, element_size, 0) == (config if fits else chunked), n
    n = fast.MAX_N + 256
    chunked = fast.wide_chunked(n, element_size)
    assert chunked[0] == "chunked" and fast.fitting(fast.backward_config(n, element_size), n,
                                                    element_size, 0) == chunked


@pytest.mark.parametrize("op", OPS)
def test_the_chunked_fallback_computes_what_is_asked(op, monkeypatch):
    fast, tests = OPS[op]
    monkeypatch.setattr(fastop, "shared_bytes", lambda index: 99 * 1024)
    monkeypatch.setattr(fast.OP, "backward_plans", {})  # none made with the whole shared memory
    tests.check((3, fast.MAX_N + 256), torch.bfloat16)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("element_size", [2, 4])
def test_the_wide_backward_ladder(op, element_size):
    fast = OPS[op][0].OP
    ladder = fast.WIDE["backward"][element_size]
    (staged_max, staged), *between, (_, chunked) = ladder
    assert staged[0] == "staged" and staged[4] == 2 and chunked[0] == "chunked"
    n = fast.MAX_N + 256
    assert fast.backward_config(n, element_size)[0] == "staged"
    assert fast.backward_config(staged_max, element_size)[0] == "staged"
    # rows past the staged rung exchange their sums up to the exchange rung's widest, then
    # walk in chunks; under the interpreter, whose programs run one at a time, a plan takes
    # the chunked design instead (fitting)
    assert between == [exchange.WIDE_RUNG]
    for widest, entry in between:
        for n in (staged_max + 256, widest):
            assert fast.backward_config(n, element_size) == entry
            fits = fast.fitting(entry, n, element_size, 0)
            assert fits == (fast.wide_chunked(n, element_size) if INTERPRETED else entry)
        staged_max = widest
    assert fast.backward_config(staged_max + 256, element_size) == chunked
    # rows off 16 bytes, on which the staged copies would move an element at a time: the walk
    # by residue class, K classes of rows, G elements in 16 bytes, the chunked rung for inputs
    # it cannot read, where that rung would move fewer elements an access than the walk's last
    # field, else the rung
    *walk, fewer = fast.WIDE["classes_chunked"]
    off = {2: ((1, 8), (258, 4), (260, 2)), 4: ((1, 4), (258, 2))}  # rows on 2, 4, 8 bytes
    for past, classes in off[element_size]:
        config = fast.backward_config(fast.MAX_N + past, element_size)
        if 16 // classes // element_size < fewer:
            assert config == ("classes_chunked", *walk, 16 // element_size, classes, chunked), past
        else:
            assert config == chunked, past
    assert fast.backward_config(fast.MAX_N + 264, element_size)[0] == "staged"  # on 16 bytes


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


EXACT = {"layernorm": lambda x, w: layer_norm_exact(x, (x.shape[1],), w, None, 1e-5),
         "rmsnorm": lambda x, w: rms_norm_exact(x, (x.shape[1],), w, 1e-5)}


BY_CLASS = ("classes", "classes-chunked")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("design", BY_CLASS)
@pytest.mark.parametrize("layout", UNREADABLE_LAYOUTS)
def test_rows_the_classes_cannot_read_take_the_fallback(op, design, layout):
    # the kernels by residue class would read these one element at a time (Triton compiles
    # them for the pointers they are given): the plan's fallback, the row design, runs instead
    fast, n = OPS[op][0], 257
    x, dy = unreadable_rows(layout, n), unreadable_rows(layout, n)
    w = torch.rand(n, device=DEVICE) + 0.5
    params = (w,) + (None,) * (len(fast.OP.PARAMS) - 1)
    _, stats = fast.OP.forward_rows(x, *params, 1e-5)
    config = FAST_DESIGNS[design][1](n)
    dx, rows = fast.OP.backward_rows(dy, x, w, stats, (True, True, False), config=config)
    xr, wr = x.double().cpu().requires_grad_(), w.double().cpu().requires_grad_()
    dxr, dwr = torch.autograd.grad(EXACT[op](xr, wr), (xr, wr), dy.double().cpu())
    assert_close("dx", dx, dxr, torch.float32, 1.0)
    assert_close("dW", rows[0], dwr, torch.float32, 1.0)
    if layout == "rows apart":  # known from the strides: the plan is the fallback's
        plan = fast.OP.backward_plan(x, dy, w, (True, True, False), config)
        assert plan.kernel.launcher is fast.OP.BACKWARD["row"]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("design", (*BY_CLASS, "exchange"))
@pytest.mark.parametrize("needs", [(True, False, False), (False, True, True), (True, True, True),
                                   (False, False, True)], ids=str)
@pytest.mark.parametrize("weight", [True, False], ids=["weight", "no weight"])
def test_classes_and_exchange_compute_what_is_asked(op, design, needs, weight):
    # rows of 1001: every offset into a window of 8, M = 30 leaves classes of 3 and 4 rows
    # (and groups of the exchange with fewer rows than others)
    fast, n = OPS[op][0], 1001
    needs = needs[:len(fast.OP.PARAMS) + 1]
    g = torch.Generator().manual_seed(1)
    x, dy = (torch.randn(30, n, generator=g).to(DEVICE) for _ in range(2))
    w = (torch.rand(n, generator=g) + 0.5).to(DEVICE) if weight else None
    params = (w,) + (None,) * (len(fast.OP.PARAMS) - 1)
    _, stats = fast.OP.forward_rows(x, *params, 1e-5)
    dx, rows = fast.OP.backward_rows(dy, x, w, stats, needs, config=FAST_DESIGNS[design][1](n))
    xr = x.double().cpu().requires_grad_()
    wr = w.double().cpu().requires_grad_() if weight else torch.ones(n, dtype=torch.float64, requires_grad=True)
    dxr, dwr = torch.autograd.grad(EXACT[op](xr, wr), (xr, wr), dy.double().cpu())
    refs = {"W": dwr, "B": dy.double().cpu().sum(0)}  # dB: the bias adds dy
    assert (dx is not None) == needs[0]
    if needs[0]:
        assert_close("dx", dx, dxr, torch.float32, 1.0)
    # no weight, no dW
    asked = [flag for flag, need in zip(fast.OP.flags, needs[1:]) if need and (flag != "W" or weight)]
    assert rows.shape[0] == len(asked)
    for flag, got in zip(asked, rows):
        assert_close(f"d{flag}", got, refs[flag], torch.float32, 1.0)


@pytest.mark.skipif(INTERPRETED, reason="a CUDA graph needs a GPU")
@pytest.mark.parametrize("op", OPS)
def test_the_exchange_replays_in_a_cuda_graph(op):
    # a cooperative grid captured in a graph (torch.compile's "reduce-overhead" mode, the
    # benchmark's timing) gives what the eager call gives, bit for bit (sums in a fixed order)
    fast, n = OPS[op][0].OP, 32768
    g = torch.Generator(device=DEVICE).manual_seed(2)
    x, dy = (torch.randn(64, n, device=DEVICE, dtype=torch.bfloat16, generator=g) for _ in range(2))
    w = torch.rand(n, device=DEVICE, dtype=torch.bfloat16, generator=g) + 0.5
    params = (w,) + (None,) * (len(fast.PARAMS) - 1)
    _, stats = fast.forward_rows(x, *params, 1e-5)
    assert fast.backward_config(n, 2)[0] == exchange.KIND
    eager = fast.backward_rows(dy, x, w, stats)
    side = torch.cuda.Stream()  # warm up off the capturing stream, as torch.cuda.graph asks
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fast.backward_rows(dy, x, w, stats)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = fast.backward_rows(dy, x, w, stats)
    graph.replay()
    torch.cuda.synchronize()
    assert all(torch.equal(a, b) for a, b in zip(captured, eager))


class RefusingLauncher:
    """A driver that refuses every cooperative grid, as CUDA under MPS may (exchange.refused)."""

    def __init__(self):
        self.calls = 0

    def launch(self, grid, args, meta):
        self.calls += 1
        raise RuntimeError("Triton Error [CUDA]: too many blocks in cooperative launch")


@pytest.mark.parametrize("op", OPS)
def test_a_refused_exchange_takes_the_chunked_design(op, monkeypatch):
    # the driver checks a cooperative grid before it launches anything: the call, and every
    # later one on that GPU, walks in chunks instead, with the chunked design's results
    fast, n = OPS[op][0].OP, exchange.WIDE_RUNG[0]
    g = torch.Generator(device=DEVICE).manual_seed(3)
    x, dy = (torch.randn(3, n, device=DEVICE, dtype=torch.bfloat16, generator=g) for _ in range(2))
    w = torch.rand(n, device=DEVICE, dtype=torch.bfloat16, generator=g) + 0.5
    params = (w,) + (None,) * (len(fast.PARAMS) - 1)
    _, stats = fast.forward_rows(x, *params, 1e-5)
    driver = RefusingLauncher()
    monkeypatch.setitem(fast.BACKWARD, exchange.KIND, driver)
    monkeypatch.setattr(exchange, "INTERPRETED", False)  # the interpreter never takes the exchange
    monkeypatch.setattr(fastop, "sm_count", lambda index: 4)
    monkeypatch.setattr(exchange, "REFUSED", set())
    chunked = fast.backward_rows(dy, x, w, stats, config=fast.wide_chunked(n, 2))
    fast.reload()
    try:
        assert fast.backward_config(n, 2)[0] == exchange.KIND
        for _ in range(2):
            got = fast.backward_rows(dy, x, w, stats)
            assert all(torch.equal(a, b) for a, b in zip(got, chunked))
        assert driver.calls == 1 and exchange.REFUSED == {x.device.index}
        # what a caller chose itself is not changed behind its back
        with pytest.raises(RuntimeError, match="cooperative launch"):
            fast.backward_rows(dy, x, w, stats, config=fast.backward_config(n, 2))
    finally:
        fast.reload()  # plans made without the interpreter's rule


@pytest.mark.parametrize("op", OPS)
def test_an_aligned_forward_keeps_the_tables_configuration_where_it_cannot_pay(op):
    fast, n = OPS[op][0], 257
    table = ("row", 512, 2, 4)
    config = ("aligned", 512, 2, 4, table) if op == "rmsnorm" else ("aligned", 64, 1, 2, table)
    params = (None,) * len(fast.OP.PARAMS)

    def kernel(x, given=None):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(fast.OP, "forward_config", lambda n, elt: config)
            plan = fast.OP.forward_plan(x, params, False, given)
        return plan.kernel.launcher, plan.fallback is not None

    aligned_kernel, table_kernel = fast.OP.forward_design(config, n, 4, n)[0], fast.OP.forward_design(table, n, 4, n)[0]
    large = torch.empty(aligned.WINDOW_MIN_BYTES // (n * 4) + 1, n, device=DEVICE)
    assert kernel(large) == (aligned_kernel, True)  # the pointer is checked at each call
    assert kernel(torch.empty(64, n, device=DEVICE)) == (table_kernel, False)  # launch-bound: no weight table
    assert kernel(torch.empty(64, n, device=DEVICE), config) == (aligned_kernel, True)  # a caller's (tests, tuning): as given
    assert kernel(torch.empty(large.shape[0], n + 3, device=DEVICE)[:, :n]) == (table_kernel, False)  # rows n + 3 apart


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("element_size", [2, 4])
def test_tuned_table_covers_every_width(op, element_size):
    # every multiple of the table's step up to MAX_N has a backward entry: no width falls
    # back to the rule
    fast = OPS[op][0]
    table = fast.tuned_table(element_size)
    sizes = ENTRY_SIZES[op]["backward"]
    for n in range(table["step"], fast.MAX_N + 1, table["step"]):
        entry = table["backward"].get(n)
        assert entry is not None and len(entry) == sizes.get(entry[0]), (n, entry)
        assert all(isinstance(v, int) for v in entry[1:]), (n, entry)  # bools are ints too


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("element_size", [2, 4])
def test_the_forward_ladder_climbs_to_the_widest_row(op, element_size):
    # rungs by increasing width up to MAX_N, each entry as a table's would be
    fast = OPS[op][0]
    ladder = fast.OP.FORWARD[element_size]
    widths = [widest for widest, _ in ladder]
    assert widths == sorted(set(widths)) and widths[-1] == fast.MAX_N
    for widest, entry in ladder:
        assert len(entry) == ENTRY_SIZES[op]["forward"].get(entry[0]), (widest, entry)
        assert all(isinstance(v, int) for v in entry[1:]), (widest, entry)
        # a rung's widest row starts on 16 bytes: the rung's entry as it is
        assert fast.forward_config(widest, element_size) == forward_entry_config(entry, widest)


@pytest.mark.gpu
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
# past the tables too: an odd width, one of the faster build's, and twice the widest tuned N
@pytest.mark.parametrize("shape", [(4096, 16384), (2, 2048, 4096), (32768, 1024), (1000, 8000),
                                   (512, 16387), (1024, 20480), (256, 32768)], ids=str)
def test_large_shapes(op, shape, dtype):
    OPS[op][1].check(shape, dtype)


CALLS = {"layernorm": lambda x, w: layernorm_fast.layer_norm_fast(x, (x.shape[-1],), w, w, 1e-5),
         "rmsnorm": lambda x, w: rmsnorm_fast.rms_norm_fast(x, (x.shape[-1],), w, 1e-6)}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("grad", [False, True])
def test_the_compiled_forward_keeps_statistics_only_for_a_backward(op, grad):
    # the operator in the graph Dynamo records: save=True only when autograd will ask for a
    # gradient, so that a compiled no-grad call allocates no statistics it drops
    saves = []

    def record(gm, example_inputs):
        saves.extend(node.kwargs.get("save", True) for node in gm.graph.nodes
                     if node.op == "call_function" and str(node.target).endswith("_fwd.default"))
        return gm.forward

    x = torch.randn(4, 64, device=DEVICE, requires_grad=grad)
    w = torch.rand(64, device=DEVICE) + 0.5
    torch._dynamo.reset()
    torch.compile(CALLS[op], backend=record, fullgraph=True)(x, w)
    assert saves == [grad]


@pytest.mark.parametrize("op", OPS)
def test_the_backward_operator_refuses_statistics_a_forward_did_not_keep(op):
    fast = OPS[op][0]
    x, w = torch.randn(4, 64, device=DEVICE), torch.rand(64, device=DEVICE) + 0.5
    params = (w,) + (None,) * (len(fast.OP.PARAMS) - 1)
    _, stats = fast.OP.forward_op(x, *params, 1e-5, save=False)
    assert stats.shape == (fast.OP.STATS, 0)
    with pytest.raises(ContractError, match="save=True"):  # before any kernel reads them
        fast.OP.backward_op(x, x, w, stats, [True] * (1 + len(params)), torch.float32)
