"""Checks the fast kernels' tests share: tolerances against an fp64 reference, and NaN-poisoned memory."""

import torch

from normkit.runtime import DEVICE

# Largest error allowed, relative to the largest reference value (or a larger natural scale).
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def poison_allocator():
    # fill the caching allocator's free blocks with NaN: an output element the kernels
    # forget to write then shows up as NaN instead of a plausible leftover value
    if DEVICE.type == "cuda":
        torch.full((64 * 1024 * 1024,), float("nan"), device=DEVICE)
        torch.cuda.synchronize()


def assert_close(name, out, ref, dtype, scale=1.0):
    out = out.double()
    assert out.shape == ref.shape, f"{name}: shape {tuple(out.shape)} != {tuple(ref.shape)}"
    scale = max(ref.abs().max().item(), scale)
    err = (out - ref).abs().max().item()
    assert err <= TOL[dtype] * scale, f"{name}: max error {err:.3g} > {TOL[dtype]} * {scale:.3g}"
