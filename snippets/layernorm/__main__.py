"""python -m layernorm: check the kernels against PyTorch on this machine and print a short report."""

import sys

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
from normkit.runtime import DEVICE, INTERPRETED

import torch
import torch.nn.functional as F

from layernorm import layer_norm

CASES = [((17, 257), torch.float32), ((4, 1024), torch.float16), ((2, 3, 96), torch.bfloat16)]
if not INTERPRETED:
    CASES.append(((1151, 8192), torch.float16))


def max_errors(shape, dtype):
    """Largest |ours - float64 reference| for y, dx, dW and dB."""
    gen = torch.Generator().manual_seed(0)
    n = shape[-1]
    x = (-2.3 + 0.5 * torch.randn(shape, generator=gen)).to(dtype).to(DEVICE)
    w, b = (torch.rand(n, generator=gen).to(dtype).to(DEVICE) for _ in range(2))
    dy = (0.1 * torch.randn(shape, generator=gen)).to(dtype).to(DEVICE)
    results = []
    for fn, cast in ((layer_norm, dtype), (F.layer_norm, torch.float64)):
        leaves = [t.detach().to(cast).requires_grad_() for t in (x, w, b)]
        y = fn(leaves[0], (n,), leaves[1], leaves[2], 1e-5)
        results.append([y.detach(), *torch.autograd.grad(y, leaves, dy.to(cast))])
    return [(a.double() - r).abs().max().item() for a, r in zip(*results)]


def main():
    where = "Triton interpreter (CPU)" if INTERPRETED else torch.cuda.get_device_name()
    print(f"layernorm on {where}")
    print("largest |error| against torch.nn.functional.layer_norm in float64, same inputs:")
    print(f"{'shape':>14} {'dtype':>9} {'y':>9} {'dx':>9} {'dW':>9} {'dB':>9}")
    for shape, dtype in CASES:
        errors = max_errors(shape, dtype)
        print(f"{str(shape):>14} {str(dtype)[6:]:>9} " + " ".join(f"{e:9.1e}" for e in errors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
