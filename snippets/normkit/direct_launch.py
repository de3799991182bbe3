"""Launch a compiled Triton kernel without the JIT's per-call work.

`kernel[grid](*args)` binds every argument by name, computes the specialization of each
(dtype, 16-byte alignment, divisibility by 16, value 1), builds a cache key string, checks the
kernel's globals and only then launches: Python work on every launch, paid again by every call
of a small, launch-bound LayerNorm. Here the first call with a new specialization goes
through the JIT (which compiles or loads the kernel and launches it); later calls with the same
specialization call the compiled kernel's launcher straight away.
A caller that keeps its arguments' kinds fixed (a plan of normkit/fastop.py) binds the compiled
kernel once (bound) and then skips even the specialization key, checking only that every pointer
is still 16-byte aligned.

Written here rather than taken from a library because Triton exposes no public "bound kernel"
object; what it calls internally (CompiledKernel.run with the packed metadata) is used as
JITFunction.run uses it in Triton 3.6.

Several GPUs: a compiled kernel belongs to one device. The cache key holds the device of the
first tensor argument, and the launch goes to that device's current stream, under that device
when it is not the current one (the launcher's CUDA context is the current device's).

Under TRITON_INTERPRET=1 (the CPU tests) every call goes through the interpreter as usual.
"""

import inspect

import torch
import triton.language as tl
from triton import knobs
from triton.runtime.driver import driver

from normkit.runtime import INTERPRETED


def _tensor_key(a):
    return a.dtype, a.data_ptr() % 16 == 0


def _int_key(a):
    return a == 1, a % 16 == 0, -(2**31) <= a < 2**31


# by exact type: one dictionary lookup per argument instead of a chain of isinstance checks
_KEY_BY_TYPE = {torch.Tensor: _tensor_key, int: _int_key, bool: lambda a: a, float: type}


def _key_of(a):
    if isinstance(a, torch.Tensor):  # subclasses, e.g. nn.Parameter
        return _tensor_key(a)
    if isinstance(a, bool):
        return a
    return _int_key(a) if isinstance(a, int) else type(a)


def _specialization(args):
    """What the JIT specializes a compiled kernel on, for the argument kinds our kernels take."""
    return tuple([_KEY_BY_TYPE.get(type(a), _key_of)(a) for a in args])


def cache_key(device_index, args, meta):
    """One compiled kernel per device, specialization and set of compile-time constants."""
    return (device_index, _specialization(args), *meta.items())


class DirectLauncher:
    """launcher[grid](*args, **meta) with the meaning of kernel[grid](*args, **meta).

    Compile-time constants (tl.constexpr parameters, such as a width N the kernel is compiled
    for) must be passed by name: the cache key holds their values, not just their kind."""

    def __init__(self, kernel):
        self.kernel = kernel
        # the position of the first tl.constexpr parameter (from the signature: the
        # interpreter's function has no list of them)
        hints = inspect.signature(getattr(kernel, "fn", kernel)).parameters.values()
        self.positional = next((i for i, p in enumerate(hints) if p.annotation is tl.constexpr
                                or p.annotation == "tl.constexpr"), len(kernel.arg_names))
        self.compiled = {}  # (specialization, meta) -> (CompiledKernel, names of the constexpr args)
        self.stream_of = None

    def __getitem__(self, grid):
        return lambda *args, **meta: self.launch(grid, args, meta)

    def launch(self, grid, args, meta):
        if len(args) > self.positional:
            raise TypeError(f"{self.kernel.__name__}: pass {self.kernel.arg_names[self.positional]} and the "
                            "other tl.constexpr parameters by name")
        if INTERPRETED:
            return self.kernel[grid](*args, **meta)
        device = args[0].get_device()  # every kernel here takes a tensor first
        if device != torch.cuda.current_device():
            with torch.cuda.device(device):
                return self.launch_on(device, grid, args, meta)
        return self.launch_on(device, grid, args, meta)

    def launch_on(self, device, grid, args, meta):
        key = cache_key(device, args, meta)
        entry = self.compiled.get(key)
        if entry is None:
            compiled = self.kernel[grid](*args, **meta)  # the JIT's path: compile or load, then launch
            names = self.kernel.arg_names[len(args):]  # constexprs, in signature order
            self.compiled[key] = (compiled, tuple(meta[n] for n in names))
            self.stream_of = driver.active.get_current_stream
            return compiled
        compiled, constants = entry
        run_compiled(compiled, constants, self.stream_of(device), grid, args)
        return compiled

    def bound(self, args, meta):
        """launch(grid, args, meta) for later arguments of the kinds of these, skipping the
        specialization key: a run(grid, args) for a caller that keeps the arguments'
        dtypes, ints and device as they are here (its plan's key), or None where that
        kernel is not compiled yet or a pointer of args is off 16 bytes. run checks the
        pointers (one OR of their addresses) and the current device, and takes launch()
        where either differs."""
        if INTERPRETED:
            return None
        device = args[0].get_device()
        entry = self.compiled.get(cache_key(device, args, meta))
        tensors = tuple(i for i, a in enumerate(args) if isinstance(a, torch.Tensor))
        if entry is None or _or_of_pointers(args, tensors) % 16:
            return None
        compiled, constants = entry
        stream_of = self.stream_of

        def run(grid, args):
            if _or_of_pointers(args, tensors) % 16 or torch.cuda.current_device() != device:
                return self.launch(grid, args, meta)
            run_compiled(compiled, constants, stream_of(device), grid, args)
        return run


def run_compiled(compiled, constants, stream, grid, args):
    """The launch of a compiled kernel, as the JIT's own last step makes it."""
    hook = knobs.runtime.launch_enter_hook
    grid = (*grid, 1, 1)
    compiled.run(grid[0], grid[1], grid[2], stream, compiled.function, compiled.packed_metadata,
                 compiled.launch_metadata(grid, stream, *args, *constants) if hook else None,
                 hook, knobs.runtime.launch_exit_hook, *args, *constants)


def _or_of_pointers(args, tensors):
    bits = 0
    for i in tensors:
        bits |= args[i].data_ptr()
    return bits
