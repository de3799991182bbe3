"""ScaleNorm (Nguyen and Salazar, 2019): each row divided by its L2 norm, times one scalar gain g.

    y = g * x / max(||x||, eps)

One program normalizes one row: it loads the whole row into registers, sums its squares in fp32,
and stores the scaled row in the input's dtype. This is the template chapter's kernel
(templates/chapter/, the authoring guide's "Add a chapter"): replace it with yours, and keep what
the pages rely on: the named sections they include, and the checks that refuse an input before
anything is launched.
"""

import torch
import triton
import triton.language as tl

from normkit.launch import fused_block_size, require, require_kernel_device, rows_of, warps_for_block

DTYPES = (torch.float32, torch.float16, torch.bfloat16)


# --8<-- [start:kernel]
@triton.jit
def _scale_norm_kernel(x_ptr, y_ptr, g, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    norm = tl.sqrt(tl.sum(x * x, axis=0))
    y = g * x / tl.maximum(norm, eps)
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)  # in y's dtype
# --8<-- [end:kernel]


# --8<-- [start:launcher]
def scale_norm(x, g=1.0, eps=1e-6):
    """ScaleNorm over the last dimension of x; the output has x's shape and dtype."""
    require_kernel_device("x", x)
    require(x.dtype in DTYPES,
            f"x is {x.dtype}; the kernel takes float32, float16 or bfloat16")
    require(x.numel() > 0, "x is empty: there is no row to normalize")
    rows, n_cols = rows_of(x)
    block = fused_block_size(n_cols, x.element_size())  # the whole row in one block
    y = torch.empty_like(rows)
    _scale_norm_kernel[(rows.shape[0],)](rows, y, float(g), n_cols, eps, BLOCK=block,
                                         num_warps=warps_for_block(block))
    return y.reshape(x.shape)
# --8<-- [end:launcher]
