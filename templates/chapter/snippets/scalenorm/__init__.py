"""The template chapter: ScaleNorm, y = g * x / max(||x||, eps) over each row, in one Triton kernel."""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

from scalenorm.ops import scale_norm

__all__ = ["scale_norm"]
