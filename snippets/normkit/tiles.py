"""A row of N columns held as up to three power-of-two tiles instead of one padded block.

Triton's blocks have power-of-two sizes, so a whole row of N = 4352 in one block takes 8192 lanes
of registers, almost half of them masked. As tiles, 4352 = 4096 + 256: registers for the row's own
columns only. N is a compile-time constant in the kernels that use these, so a tile that starts
past the row's end has a mask that is false when compiling, and the compiler drops its loads.
"""

import triton
import triton.language as tl


def tiles_of(n):
    """(T1, T2, T3): T1 the largest power of two <= n, then the largest power of two that fits in
    what is left, then the next power of two above the rest; an unused tile is 16 lanes past n."""
    t1 = 1 << (n.bit_length() - 1)
    rest = n - t1
    t2 = 1 << (rest.bit_length() - 1) if rest else 0
    rest -= t2
    t3 = triton.next_power_of_2(rest) if rest else 0
    return t1, max(t2, 16), max(t3, 16)


# --8<-- [start:tile_helpers]
@triton.jit
def load_tile(P, start, ok, BASE: tl.constexpr, T: tl.constexpr, N: tl.constexpr):
    """Columns BASE .. BASE + T of the row at P + start, in P's dtype; 0 past N or if not ok."""
    cols = BASE + tl.arange(0, T)
    return tl.load(P + start + cols, mask=(cols < N) & ok, other=0.0)


@triton.jit
def store_tile(P, start, value, BASE: tl.constexpr, T: tl.constexpr, N: tl.constexpr):
    """Store value (T lanes) in columns BASE .. BASE + T of the row at P + start, up to N."""
    cols = BASE + tl.arange(0, T)
    tl.store(P + start + cols, value.to(P.dtype.element_ty), mask=cols < N)


@triton.jit
def in_row(BASE: tl.constexpr, T: tl.constexpr, N: tl.constexpr):
    """Which of the tile's T lanes are columns of the row."""
    return BASE + tl.arange(0, T) < N
# --8<-- [end:tile_helpers]
