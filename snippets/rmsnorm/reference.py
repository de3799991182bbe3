"""The readable PyTorch oracle every kernel in this chapter is compared with."""

import torch


def work_dtype(t):
    """fp64 stays fp64; everything else is computed in fp32."""
    return torch.float64 if t.dtype == torch.float64 else torch.float32


# --8<-- [start:reference]
def rmsnorm_reference(x, gamma, eps=1e-6):
    """y = x * r * gamma with r = 1 / sqrt(mean(x^2) + eps), one r per row."""
    work = work_dtype(x)
    xw, gw = x.to(work), gamma.to(work)
    r = torch.rsqrt(xw.pow(2).mean(dim=-1, keepdim=True) + eps)  # shape (M, 1)
    return (xw * r * gw).to(x.dtype)


def manual_backward(x, gamma, dy, eps=1e-6):
    """The two gradients written out: dx (one row at a time)
    and dgamma (summed over rows)."""
    work = work_dtype(x)
    xw, gw, dyw = x.to(work), gamma.to(work), dy.to(work)
    r = torch.rsqrt(xw.pow(2).mean(dim=-1, keepdim=True) + eps)
    u = dyw * gw
    dx = r * u - xw * r.pow(3) * (u * xw).mean(dim=-1, keepdim=True)
    dgamma = (dyw * xw * r).reshape(-1, xw.shape[-1]).sum(dim=0)
    return dx.to(x.dtype), dgamma.to(gamma.dtype)
# --8<-- [end:reference]


# --8<-- [start:gradcheck]
def check_reference_gradients(m=3, n=5, eps=1e-6, seed=0):
    """gradcheck the oracle in float64, then compare manual_backward with autograd."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(m, n, dtype=torch.float64, generator=gen, requires_grad=True)
    gamma = torch.randn(n, dtype=torch.float64, generator=gen, requires_grad=True)
    dy = torch.randn(m, n, dtype=torch.float64, generator=gen)

    passed = torch.autograd.gradcheck(
        lambda a, b: rmsnorm_reference(a, b, eps), (x, gamma)
    )

    y = rmsnorm_reference(x, gamma, eps)
    dx_auto, dgamma_auto = torch.autograd.grad(y, (x, gamma), dy)
    dx_manual, dgamma_manual = manual_backward(x.detach(), gamma.detach(), dy, eps)
    gap = max(
        (dx_auto - dx_manual).abs().max().item(),
        (dgamma_auto - dgamma_manual).abs().max().item(),
    )
    return {"gradcheck": bool(passed), "manual_vs_autograd": gap}
# --8<-- [end:gradcheck]
