"""Launch a compiled Triton kernel without the JIT's per-call work.

`kernel[grid](*args)` binds every argument by name, computes the specialization of each
(dtype, 16-byte alignment, divisibility by 16, value 1), builds a cache key string, checks the
kernel's globals and only then launches: tens of microseconds of Python per launch, more than a
LayerNorm on a small tensor takes on the GPU. Here the first call with a new specialization goes
through the JIT (which compiles or loads the kernel and launches it); later calls with the same
specialization call the compiled kernel's launcher straight away.

Written here rather than taken from a library because Triton exposes no public "bound kernel"
object; what it calls internally (CompiledKernel.run with the packed metadata) is used as
JITFunction.run uses it in Triton 3.6.

Under TRITON_INTERPRET=1 (the CPU tests) every call goes through the interpreter as usual.
"""

import torch
from triton import knobs
from triton.runtime.driver import driver

from normkit.runtime import INTERPRETED


def _specialization(args):
    """What the JIT specializes a compiled kernel on, for the argument kinds our kernels take."""
    key = []
    for a in args:
        if isinstance(a, torch.Tensor):
            key.append((a.dtype, a.data_ptr() % 16 == 0))
        elif isinstance(a, bool):
            key.append(a)
        elif isinstance(a, int):
            key.append((a == 1, a % 16 == 0, -(2**31) <= a < 2**31))
        else:
            key.append(type(a))
    return tuple(key)


class DirectLauncher:
    """launcher[grid](*args, **meta) with the meaning of kernel[grid](*args, **meta)."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.compiled = {}  # (specialization, meta) -> (CompiledKernel, names of the constexpr args)

    def __getitem__(self, grid):
        return lambda *args, **meta: self.launch(grid, args, meta)

    def launch(self, grid, args, meta):
        if INTERPRETED:
            return self.kernel[grid](*args, **meta)
        key = (_specialization(args), tuple(meta.items()))
        entry = self.compiled.get(key)
        if entry is None:
            compiled = self.kernel[grid](*args, **meta)  # the JIT's path: compile or load, then launch
            names = self.kernel.arg_names[len(args):]  # constexprs, in signature order
            self.compiled[key] = (compiled, names)
            return compiled
        compiled, names = entry
        hook = knobs.runtime.launch_enter_hook
        stream = driver.active.get_current_stream(torch.cuda.current_device())
        values = (*args, *(meta[n] for n in names))
        grid = (*grid, 1, 1)
        compiled.run(grid[0], grid[1], grid[2], stream, compiled.function, compiled.packed_metadata,
                     compiled.launch_metadata(grid, stream, *values) if hook else None,
                     hook, knobs.runtime.launch_exit_hook, *values)
        return compiled
