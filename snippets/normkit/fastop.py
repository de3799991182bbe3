"""The host side of both fast ops, written once: layernorm/fast.py and rmsnorm/fast.py
each subclass FastNorm with their kernels, their parameters and their rule for rows off
16 bytes.

- configurations: the launch table a tuning run wrote per element size
  (snippets/faster/tune.py), the op's rule for rows that do not start on 16 bytes, and
  past the table's widest row WIDE's designs, whose tiles do not grow with N;
- a plan per call: the kernel, grid and compile-time constants of a launch, worked out
  once per (rows, columns, row strides, dtype, device, parameters present) and kept, so
  that a call of a shape seen before does no table look-up and no integer arithmetic,
  and allocates only what it returns (a forward without autograd allocates no
  statistics);
- the backward's persistent grid, its partial rows and the one kernel that sums them;
- the autograd glue: one autograd.Function for eager calls, and per op a pair of
  torch.library operators for torch.compile, with fake functions and the autograd
  formula.

Written here rather than taken from a library: Liger-Kernel and QuACK write this glue
once per op, and torch.library has no helper that builds an operator pair around a
forward and a backward.
"""

import functools
from typing import NamedTuple, Optional

import torch
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable

from normkit import aligned, classes_chunked, dropin, exchange
from normkit.direct_launch import DirectLauncher
from normkit.launch import require
from normkit.runtime import INTERPRETED
from normkit.launch_tables import backward_entry_config, default_backward, ladder_entry, read_table
from normkit.tiles import SHARED_SLACK, forward_entry_config, share_width, staged_config_shared


@functools.lru_cache(maxsize=None)
def sm_count(device_index):
    if INTERPRETED:
        # the interpreter runs programs one by one: a few are enough to test the sums
        return 4
    return torch.cuda.get_device_properties(device_index).multi_processor_count


@functools.lru_cache(maxsize=None)
def shared_bytes(device_index):
    """The most shared memory one program may have on this GPU (CUDA's per-block opt-in
    limit: 227 KiB on an H100 or H200, 163 on an A100, 99 on an RTX 30 or 40 series card)."""
    if INTERPRETED:
        return float("inf")
    return triton.runtime.driver.active.utils.get_device_properties(device_index)["max_shared_mem"]


@functools.lru_cache(maxsize=None)
def pipelines(device_index):
    """Whether Triton pipelines a staged loop through shared memory on this GPU: from sm_80
    (cp.async). Before, the loop compiles unpipelined and asks for little shared memory
    (tests/test_gpu_targets.py). The interpreter: as if it did (shared_bytes decides)."""
    return INTERPRETED or torch.cuda.get_device_capability(device_index) >= (8, 0)


# --8<-- [start:reduce_kernel]
@triton.jit
def sum_partials_kernel(
    Part,    # (parts, P, N) fp32: P partial rows of dW (and then of dB)
    Out,     # (parts, N) in the parameters' dtype
    P, N,
    BLOCK_P: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    # grid (column blocks, parts): axis 1 picks dW or dB, both summed in one launch
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    which = tl.program_id(1)
    Part += which * P * N
    acc = tl.zeros([BLOCK_P, BLOCK_N], dtype=tl.float32)
    p = 0
    while p < P:
        r = p + tl.arange(0, BLOCK_P)
        mask = (r < P)[:, None] & (cols < N)[None, :]
        acc += tl.load(Part + r[:, None] * N + cols[None, :], mask=mask, other=0.0)
        p += BLOCK_P
    # round once, at the very end, to the parameters' dtype
    total = tl.sum(acc, axis=0).to(Out.dtype.element_ty)
    tl.store(Out + which * N + cols, total, mask=cols < N)
# --8<-- [end:reduce_kernel]


sum_partials = DirectLauncher(sum_partials_kernel)


def backward_grid(M, rows, programs):
    """The persistent grid: at most `programs` programs, each with whole ROWS-steps."""
    programs = max(1, min(programs, triton.cdiv(M, rows)))
    rows_per_program = triton.cdiv(triton.cdiv(M, programs), rows) * rows
    return triton.cdiv(M, rows_per_program), rows_per_program


def programs_a_row(config):
    """Programs that share a row in a backward configuration: the staged design's SPLIT,
    the exchange's S, else one."""
    if config[0] == "staged":
        return config[5]
    return config[1] if config[0] == exchange.KIND else 1


# the backward designs whose programs own rows of one residue class (normkit.aligned,
# normkit.classes_chunked): they read rows N apart, from 16-byte-aligned pointers
BY_CLASS = ("classes", classes_chunked.KIND)

# plans kept an op and pass: a model's shapes are few; ever new shapes start again
PLANS_KEPT = 4096


def remember(plans, key, plan):
    if len(plans) >= PLANS_KEPT:
        plans.clear()
    plans[key] = plan
    return plan


class Launch:
    """One kernel launch worked out: the launcher, grid and constants; once it has run, the
    compiled kernel bound to them (DirectLauncher.bound), so that a later call skips the
    launcher's specialization key."""

    __slots__ = ("launcher", "grid", "meta", "run")

    def __init__(self, launcher, grid, meta):
        self.launcher, self.grid, self.meta, self.run = launcher, grid, meta, None

    def __call__(self, args):
        if self.run is not None:
            return self.run(self.grid, args)
        self.launcher.launch(self.grid, args, self.meta)
        self.run = self.launcher.bound(args, self.meta)


class ForwardPlan(NamedTuple):
    """A forward call of one shape, worked out."""
    kernel: Launch
    # (LANES, V) of the shifted parameter tables an aligned kernel reads
    shift: Optional[tuple]
    fallback: Optional["ForwardPlan"]  # for an input the aligned kernel cannot read


class BackwardPlan(NamedTuple):
    """A backward call of one shape, worked out."""
    kernel: Launch
    reduce: Optional[Launch]  # the sum of the partial rows, when there are some
    groups: int               # groups of programs, one partial row each
    rows_per_program: int
    part_cols: int            # a partial row's columns: N, or a class frame's lanes
    fallback: Optional["BackwardPlan"] = None  # for inputs the classes cannot read
    sync: int = 0             # elements of the zeroed buffer the exchange's programs meet in


class FastNorm:
    """A fast normalization's host side. A subclass names its parameters and statistics,
    its launch tables and its kernels:

    NAME: the operators' name (torch.ops.normkernels.NAME_fwd and NAME_bwd);
    PARAMS: the parameters after x, each with a flag letter (HAS_W / GRAD_W for "W");
    STATS: fp32 statistics saved a row (LayerNorm's mean and rstd, RMSNorm's rstd);
    CENTRED: whether the op subtracts the row's mean (LayerNorm), for the kernels both
    ops share;
    FORWARD: {element size: the forward's ladder by width, ((widest N, entry), ...)}
    (a rung's entry as a table's: ["row", ROWS, num_warps] or ["chunked", CHUNK, ROWS,
    num_warps, ...]; 16-bit's for any size without one); TUNED: {element size: the
    backward's launch table path} (tables_beside); MAX_N: the ladders' and tables' widest
    row; WIDE: past MAX_N, the forward's configuration (the chunked design: its tiles do
    not grow with N), the backward's ladders by element size (the staged design's two
    shares while they measure ahead, the exchange of row sums while a share fits in
    registers, normkit.exchange, then the chunked design) and, for rows off 16 bytes,
    the walk by residue class (CHUNK, ROWS, num_warps, per_sm, FEWER;
    normkit.classes_chunked.config);
    BACKWARD: {design: its DirectLauncher};
    forward_rule(config, N, element size): the configuration for rows off 16 bytes;
    forward_design(config, N, element size, stride): (launcher, constants) of a forward.
    """

    PARAMS: dict
    STATS: int
    CENTRED: bool
    FORWARD: dict
    TUNED: dict
    MAX_N: int
    WIDE: dict
    BACKWARD: dict
    NAME: str

    def __init__(self):
        self.flags = tuple(self.PARAMS.values())
        self.forward_plans, self.backward_plans = {}, {}  # call shape -> plan
        self.forward_op, self.backward_op = self.operators()

    def reload(self):
        """Forget the tables, configurations and plans (after the tuner wrote new
        tables)."""
        for cached in (FastNorm.tuned_table, FastNorm.forward_config,
                       FastNorm.backward_config):
            cached.cache_clear()
        self.forward_plans.clear()
        self.backward_plans.clear()

    # --8<-- [start:op_configs]
    @functools.lru_cache(maxsize=None)  # one instance an op: the cache holds two
    def tuned_table(self, element_size):
        """The table for this element size (the 16-bit one when there is none), or
        None."""
        path = self.TUNED.get(element_size)
        if path is None or not path.exists():
            path = self.TUNED[2]
        return read_table(path) if path.exists() else None

    def table_entry(self, n_cols, element_size):
        """The backward's tuned entry of the next multiple of the table's step at or
        above N (its rows are at least as wide)."""
        table = self.tuned_table(element_size)
        if table is None:
            return None
        return table["backward"].get(triton.cdiv(n_cols, table["step"]) * table["step"])

    @functools.lru_cache(maxsize=None)
    def forward_config(self, n_cols, element_size):
        """The forward's configuration for rows of n_cols: ("row", BLOCK_N, ROWS,
        num_warps), ("chunked", CHUNK, ROWS, num_warps, ...) or the op's aligned one
        (forward_rule)."""
        if n_cols > self.MAX_N:
            config = self.WIDE["forward"]
        else:
            ladder = self.FORWARD.get(element_size, self.FORWARD[2])
            config = forward_entry_config(ladder_entry(ladder, n_cols), n_cols)
        return self.forward_rule(config, n_cols, element_size)

    @functools.lru_cache(maxsize=None)
    def backward_config(self, n_cols, element_size):
        """("row", BLOCK_N, ROWS, num_warps, programs_per_sm, PREFETCH),
        ("staged", TILE, ROWS, num_warps, programs_per_sm, SPLIT, STAGES, REST, EARLY)
        or ("chunked", CHUNK, ROWS, num_warps, programs_per_sm) for the backward; rows
        that do not start on 16 bytes by residue class (normkit.aligned.classes_config)."""
        entry = self.table_entry(n_cols, element_size)
        if entry is not None:
            return aligned.classes_config(backward_entry_config(entry, n_cols), n_cols,
                                          element_size)
        if n_cols > self.MAX_N:
            return self.wide_backward(n_cols, element_size)
        return default_backward(n_cols, element_size)

    def wide_ladder(self, element_size):
        """WIDE's backward ladder for this element size (16-bit's for any without one)."""
        return self.WIDE["backward"].get(element_size, self.WIDE["backward"][2])

    def wide_chunked(self, n_cols, element_size):
        """The last rung of WIDE's backward ladder, the chunked design, which any N fits
        and any input layout."""
        return backward_entry_config(self.wide_ladder(element_size)[-1][1], n_cols)

    def fitting(self, config, n_cols, element_size, device_index):
        """The configuration, or the chunked design (wide_chunked) where a staged one asks
        for more shared memory than this GPU gives a program (the tables were tuned on an
        H200: an A100 or an RTX card at the widest rows) or where the exchange's programs
        cannot all run at once (exchange.runs_here)."""
        if config[0] == exchange.KIND and not exchange.runs_here(device_index):
            return self.wide_chunked(n_cols, element_size)
        if (config[0] != "staged" or not pipelines(device_index)
                or staged_config_shared(config, element_size) + SHARED_SLACK
                <= shared_bytes(device_index)):
            return config
        return self.wide_chunked(n_cols, element_size)

    def wide_backward(self, n_cols, element_size):
        """Past MAX_N: the entry of WIDE's backward ladder. Rows off 16 bytes, which the
        staged design's copies would move an element at a time (notes/data/wide-rows-3:
        1 to 4 % of copy at 16385), walk in chunks by residue class where the chunked
        design would move few elements an access (classes_chunked.config)."""
        if aligned.row_alignment(n_cols, element_size) == aligned.VECTOR_BYTES:
            return backward_entry_config(
                ladder_entry(self.wide_ladder(element_size), n_cols), n_cols)
        return classes_chunked.config(self.WIDE[classes_chunked.KIND], n_cols, element_size,
                                      self.wide_chunked(n_cols, element_size))
    # --8<-- [end:op_configs]

    # --8<-- [start:forward_launch]
    def forward_rows(self, x2d, *args, config=None, shape=None, save=True):
        """y (contiguous, in x's dtype, of `shape` when given) and the (STATS, M) fp32
        statistics (None unless save) for (M, N) rows with contiguous columns
        (dropin.rows_view); args: the parameters ((N,) or None), then eps. config
        overrides forward_config(...) for tuning."""
        *params, eps = args
        M, N = x2d.shape
        y = x2d.new_empty(shape or (M, N))
        stats = (torch.empty((self.STATS, M), dtype=torch.float32, device=x2d.device)
                 if save else None)
        if y.numel() == 0:  # an empty batch, or rows of no columns: nothing to launch
            return y, stats
        if config is None:
            key = (x2d.shape, x2d.stride(0), x2d.dtype, x2d.device, save,
                   *(None if p is None else p.dtype for p in params))
            plan = self.forward_plans.get(key) or remember(
                self.forward_plans, key, self.forward_plan(x2d, params, save))
        else:
            plan = self.forward_plan(x2d, params, save, config)
        if plan.fallback is not None and x2d.data_ptr() % aligned.VECTOR_BYTES:
            plan = plan.fallback
        ptrs = [x2d if p is None else p for p in params]  # an absent parameter: unread
        if plan.shift is not None:
            ptrs = [x2d if p is None else aligned.shifted_params(p, *plan.shift)
                    for p in params] + ptrs
        plan.kernel((x2d, y, *ptrs, x2d if stats is None else stats, M, eps))
        return y, stats

    def forward_plan(self, x2d, params, save, config=None):
        """The launch for these rows; an aligned configuration keeps the table's own as
        its fallback, and takes it at once for rows not one after the other or, unless a
        caller chose it, too few bytes to pay for the weight tables' launch."""
        M, N = x2d.shape
        element_size = x2d.element_size()
        chosen = config or self.forward_config(N, element_size)
        shape = (M, N, element_size, dropin.row_stride(x2d),
                 tuple(p is not None for p in params), save)
        if chosen[0] != "aligned":
            return self.launch_of(chosen, *shape)
        fallback = self.launch_of(chosen[4], *shape)
        small = config is None and M * N * element_size < aligned.WINDOW_MIN_BYTES
        if small or x2d.stride(0) != N:
            return fallback
        return self.launch_of(chosen, *shape)._replace(fallback=fallback)

    def launch_of(self, config, M, N, element_size, stride, has, save):
        """A configuration's launch for M rows of N, each parameter present or not
        (has)."""
        launcher, meta = self.forward_design(config, N, element_size, stride)
        flags = {f"HAS_{flag}": present for flag, present in zip(self.flags, has)}
        meta.update(N=N, **flags, SAVE_STATS=save, num_warps=config[3])
        shift = (meta["LANES"], meta["V"]) if config[0] == "aligned" else None
        grid = (triton.cdiv(M, config[2]),)
        return ForwardPlan(Launch(launcher, grid, meta), shift, None)
    # --8<-- [end:forward_launch]

    # --8<-- [start:backward_launch]
    def backward_rows(self, dy2d, x2d, weight, stats, grads=None, rows_dtype=None,
                      config=None, programs=None):
        """dx (None unless grads[0]) and the parameters' gradients that grads[1:] ask
        for (autograd's needs_input_grad: all by default), as one (parts, N) tensor in
        rows_dtype (the parameters' dtype: the weight's by default, else fp32). x2d:
        (M, N) rows with contiguous columns. config overrides backward_config(...),
        programs the grid's size: both for tuning and for the benchmark."""
        M, N = x2d.shape
        # autograd may hand over any layout (the gradient of a sum is a broadcast)
        dy2d = dy2d if dy2d.stride(1) == 1 or N <= 1 else dy2d.contiguous()
        wants = self.wanted(grads, weight)
        parts = sum(wants[1:])
        rows_dtype = rows_dtype or (torch.float32 if weight is None else weight.dtype)
        dx = x2d.new_empty((M, N)) if wants[0] else None
        if M == 0 or N == 0 or not any(wants):  # sums over no rows are zeros
            return dx, torch.zeros((parts, N), dtype=rows_dtype, device=x2d.device)
        out = torch.empty((parts, N), dtype=rows_dtype, device=x2d.device)
        if config is None and programs is None:
            key = (x2d.shape, x2d.stride(0), dy2d.stride(0), x2d.dtype, dy2d.dtype,
                   x2d.device, None if weight is None else weight.dtype, rows_dtype,
                   wants)
            plan = self.backward_plans.get(key) or remember(
                self.backward_plans, key, self.backward_plan(x2d, dy2d, weight, wants))
        else:
            key, plan = None, self.backward_plan(x2d, dy2d, weight, wants, config, programs)
        if plan.fallback is not None and (x2d.data_ptr() | dy2d.data_ptr()) % 16:
            plan = plan.fallback
        part = out
        if plan.reduce is not None:
            part = torch.empty((parts, plan.groups, plan.part_cols), dtype=torch.float32,
                               device=x2d.device)
        args = (x2d, dy2d, x2d if dx is None else dx, x2d if weight is None else weight,
                stats, part if parts else x2d, M, plan.rows_per_program)
        if plan.sync:  # where the exchange's programs meet: zeros every call
            args += (torch.zeros(plan.sync, dtype=torch.float32, device=x2d.device),)
        try:
            plan.kernel(args)
        except RuntimeError as error:  # launches nothing: the driver checks a grid first
            if (key is None or not plan.sync
                    or not exchange.refused(error, x2d.device.index)):
                raise
            # the chunked design from now on for this GPU (fitting), this call included
            self.backward_plans.pop(key, None)
            return self.backward_rows(dy2d, x2d, weight, stats, grads, rows_dtype)
        if plan.reduce is not None:
            # one small launch sums every part and casts to the parameters' dtype;
            # torch would need a sum and a cast for each of dW and dB
            plan.reduce((part, out, plan.groups, N))
        return dx, out

    def wanted(self, grads, weight):
        """(dx, one per parameter): what is computed; no weight, no dW."""
        grads = grads or (True,) * (1 + len(self.flags))
        return (bool(grads[0]), bool(grads[1]) and weight is not None,
                *map(bool, grads[2:]))

    def backward_plan(self, x2d, dy2d, weight, wants, config=None, programs=None):
        M, N = x2d.shape
        config = config or self.fitting(self.backward_config(N, x2d.element_size()), N,
                                        x2d.element_size(), x2d.device.index)
        # a persistent grid: every program resident at once
        programs = programs or sm_count(x2d.device.index) * config[4]
        strides = (dropin.row_stride(x2d), dropin.row_stride(dy2d))
        plan = functools.partial(self.backward_launch, M=M, N=N, strides=strides,
                                 has_w=weight is not None, wants=wants, programs=programs)
        if config[0] not in BY_CLASS:
            return plan(config)
        # by class: rows N apart from 16-byte-aligned pointers, else the fallback
        fallback = plan(config[-1])
        if strides != (N, N):
            return fallback
        return plan(config)._replace(fallback=fallback)

    def backward_launch(self, config, M, N, strides, has_w, wants, programs):
        """A configuration's launch for M rows of N on `programs` programs, each group
        of SPLIT programs with a block of rows, and the sum of their partial rows."""
        kind, block, rows, num_warps = config[:4]
        split = programs_a_row(config)
        v = config[6] if kind in BY_CLASS else 1  # residue classes, programs of their own
        groups, rows_per_program = backward_grid(triton.cdiv(M, v), rows,
                                                 max(1, programs // (split * v)))
        groups *= v
        if kind == "classes":
            design = {"LANES": block, "PREFETCH": config[5], "V": v, "EDGES": config[7]}
        elif kind == "row":
            design = {"BLOCK_N": block, "PREFETCH": config[5]}
        elif kind == "staged":
            design = {"SPLIT": split, "WIDTH": share_width(N, split), "TILE": block,
                      "REST": config[7], "STAGES": config[6], "EARLY": config[8]}
        elif kind == "chunked":
            design = {"CHUNK": block}
        elif kind == classes_chunked.KIND:  # one kernel for both ops: RMSNorm has no dB
            design = {**classes_chunked.design(config, N, self.CENTRED), "GRAD_B": False}
        elif kind == exchange.KIND:  # one kernel for both ops, one row a step
            design = {**exchange.design(config, N), "CENTRED": self.CENTRED,
                      "GRAD_B": False}
        grads = {f"GRAD_{flag}": want for flag, want in zip(self.flags, wants[1:])}
        if kind not in BY_CLASS:  # by class, rows N apart
            design.update(STRIDE_X=strides[0], STRIDE_DY=strides[1])
        steps = {} if kind == exchange.KIND else {"ROWS": rows}
        meta = {"N": N, **design, **steps, "HAS_W": has_w, "GRAD_X": wants[0], **grads,
                "num_warps": num_warps}
        kernel = Launch(self.BACKWARD[kind], (groups * split,), meta)
        # one group writes its sums straight out; the chunked designs keep their running
        # sums in their partial rows, even for one group
        reduce, part_cols = None, design.get("FRAME", N)
        if any(wants[1:]) and (kind in ("chunked", *BY_CLASS) or groups > 1):
            reduce_n = 64 if N > 2048 else 32
            meta = {"BLOCK_P": 32, "BLOCK_N": reduce_n, "num_warps": 4}
            launcher = sum_partials
            if kind == classes_chunked.KIND:  # partial rows in their classes' frames
                launcher = classes_chunked.sum_class_partials
                meta.update(FRAME=part_cols, K=design["K"], G=design["G"])
            reduce = Launch(launcher, (triton.cdiv(N, reduce_n), sum(wants[1:])), meta)
        sync = exchange.sync_numel(M, split) if kind == exchange.KIND else 0
        return BackwardPlan(kernel, reduce, groups, rows_per_program, part_cols, sync=sync)
    # --8<-- [end:backward_launch]

    # --8<-- [start:autograd]
    def save(self, ctx, x2d, params, stats):
        ctx.save_for_backward(x2d, params[0], stats)
        # the dtype of the (dW, dB) rows: the parameters' (the input's, or fp32 for a
        # 16-bit input)
        ctx.rows_dtype = next((p.dtype for p in params if p is not None), torch.float32)
        ctx.mark_non_differentiable(stats)  # the statistics are a by-product:
        ctx.set_materialize_grads(False)  # no zeros launched for their gradient

    def gradients(self, ctx, dy, run, needs):
        """(dx, a gradient per parameter) as autograd's needs ask, from run:
        backward_rows, or the operator that calls it."""
        x2d, weight, stats = ctx.saved_tensors
        dy2d = dy if dy.dim() == 2 else dy.reshape(x2d.shape)  # y had the input's shape
        dx, rows = run(dy2d, x2d, weight, stats, list(needs), ctx.rows_dtype)
        parts = iter(rows)  # dW, then dB: the rows that were asked for
        return (dx if needs[0] else None,
                *(next(parts) if need else None for need in needs[1:]))

    def __call__(self, input, shape, params, eps):
        """The op on inputs the checks passed: the launch alone without autograd, the
        autograd.Function with it, the operator while torch.compile traces."""
        # a view when the rows are evenly spaced
        x2d = dropin.rows_view(input, len(shape))
        params = [dropin.flat(p) for p in params]
        how = dropin.path(input, *params)
        if how == "launch":
            return self.forward_rows(x2d, *params, eps, shape=input.shape,
                                     save=False)[0]
        if how == "autograd":
            return FastFunction.apply(self, x2d, eps, input.shape, *params)[0]
        save = dropin.needs_grad(input, *params)  # Dynamo reads the grad mode
        return self.forward_op(x2d, *params, eps, save=save)[0].view(input.shape)
    # --8<-- [end:autograd]

    # --8<-- [start:ops]
    def operators(self):
        """torch.ops.normkernels.NAME_fwd and NAME_bwd, for torch.compile: Dynamo
        records one opaque call (it would otherwise trace into the launch code and break
        the graph), the fake functions give it the outputs' shapes, and the forward's
        autograd formula calls the backward operator (differentiable once, as in
        eager)."""
        params = ", ".join(f"Tensor? {name}" for name in self.PARAMS)

        def forward_rows(x2d, *args, save=True):
            # no statistics without a gradient to come: an empty (STATS, 0) in their place
            y, stats = self.forward_rows(x2d, *args, save=save)
            if stats is None:
                stats = x2d.new_empty((self.STATS, 0), dtype=torch.float32)
            return y, stats

        forward = torch.library.custom_op(
            f"{dropin.NAMESPACE}::{self.NAME}_fwd", forward_rows, mutates_args=(),
            schema=f"(Tensor x2d, {params}, float eps, *, bool save=True) "
                   "-> (Tensor, Tensor)")

        @forward.register_fake
        def _(x2d, *args, save=True):
            rows = x2d.shape[0] if save else 0
            return x2d.new_empty(x2d.shape), x2d.new_empty((self.STATS, rows),
                                                           dtype=torch.float32)

        def backward_rows(dy2d, x2d, weight, stats, grads, rows_dtype):
            # the kernels read STATS values a row: a forward called with save=False
            # kept none
            require(stats.shape == (self.STATS, x2d.shape[0]),
                    f"{self.NAME}_bwd: statistics of shape {tuple(stats.shape)} for "
                    f"{x2d.shape[0]} rows; call {self.NAME}_fwd with save=True for a "
                    "backward")
            # an operator returns tensors, none a view of another: dx empty when not
            # asked for
            dx, rows = self.backward_rows(dy2d, x2d, weight, stats, grads, rows_dtype)
            return x2d.new_empty(0) if dx is None else dx, rows

        backward = torch.library.custom_op(
            f"{dropin.NAMESPACE}::{self.NAME}_bwd", backward_rows, mutates_args=(),
            schema="(Tensor dy2d, Tensor x2d, Tensor? weight, Tensor stats, "
                   "bool[] grads, ScalarType rows_dtype) -> (Tensor, Tensor)")

        @backward.register_fake
        def _(dy2d, x2d, weight, stats, grads, rows_dtype):
            wants = self.wanted(grads, weight)
            return (x2d.new_empty(x2d.shape if wants[0] else 0),
                    x2d.new_empty((sum(wants[1:]), x2d.shape[1]), dtype=rows_dtype))

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            self.save(ctx, inputs[0], inputs[1:-1], output[1])

        def formula(ctx, dy, _):
            return (*self.gradients(ctx, dy, backward, ctx.needs_input_grad[:-1]),
                    None)  # eps: none

        forward.register_autograd(once_differentiable(formula),
                                  setup_context=setup_context)
        return forward, backward
    # --8<-- [end:ops]


# --8<-- [start:function]
class FastFunction(torch.autograd.Function):
    """The eager path: a FastNorm's forward_rows and backward_rows under autograd,
    without the operator's dispatch. (forward takes ctx: with a separate setup_context,
    apply would bind its arguments through inspect.signature on every call.)"""

    @staticmethod
    def forward(ctx, op, x2d, eps, shape, *params):
        y, stats = op.forward_rows(x2d, *params, eps, shape=shape)
        ctx.op = op
        op.save(ctx, x2d, params, stats)
        return y, stats

    @staticmethod
    @once_differentiable  # its backward computes with kernels autograd cannot see
    def backward(ctx, dy, _):
        needs = ctx.needs_input_grad
        dx, *params = ctx.op.gradients(ctx, dy, ctx.op.backward_rows,
                                       (needs[1], *needs[4:]))
        return None, dx, None, None, *params
# --8<-- [end:function]
