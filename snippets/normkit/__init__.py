"""Helpers shared by every chapter's kernels: where kernels run, launch checks and timing."""

from normkit.runtime import DEVICE, INTERPRETED

__all__ = ["DEVICE", "INTERPRETED"]
