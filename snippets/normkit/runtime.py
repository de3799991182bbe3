"""Decide once where the snippets run: on a CUDA GPU, or through Triton's interpreter on the CPU."""

import os

import torch

# Triton reads TRITON_INTERPRET when a kernel is decorated, so the choice must be made
# before any chapter module defines its kernels. Every chapter imports normkit first.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"
DEVICE = torch.device("cpu" if INTERPRETED else "cuda")
