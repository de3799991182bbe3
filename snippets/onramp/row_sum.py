"""Row sums, one program per row: the pieces of Triton the chapters use, in one kernel.

Runs on a CUDA GPU, or on the CPU through Triton's interpreter (normkit picks it there).
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import torch
import triton
import triton.language as tl


# --8<-- [start:kernel]
@triton.jit
def row_sum_kernel(
    X,                        # pointer to the first element of x, an (M, N) matrix
    Out,                      # pointer to the (M,) output
    N,                        # row length, a run-time value
    stride,                   # elements from one row to the next
    BLOCK_N: tl.constexpr,    # a compile-time constant: a power of two >= N
):
    row = tl.program_id(0)                # which program this is: one per row
    cols = tl.arange(0, BLOCK_N)          # a block of column indices: 0 .. BLOCK_N - 1
    mask = cols < N                       # lanes past the end load, store nothing
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0)  # masked lanes read 0
    total = tl.sum(x.to(tl.float32), axis=0)  # one number from the whole block, in fp32
    tl.store(Out + row, total)
# --8<-- [end:kernel]


# --8<-- [start:launch]
def row_sum(x):
    """Sum of each row of a 2-D tensor, in fp32."""
    M, N = x.shape
    out = torch.empty(M, dtype=torch.float32, device=x.device)
    block_n = triton.next_power_of_2(N)
    # grid: how many programs to start (one per row); num_warps: 32-thread warps each
    row_sum_kernel[(M,)](x, out, N, x.stride(0), BLOCK_N=block_n, num_warps=4)
    return out
# --8<-- [end:launch]
