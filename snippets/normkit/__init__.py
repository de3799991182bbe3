"""The kit every chapter shares: where kernels run, launch checks, timing, test helpers and the table
of what PyTorch's norms take on each device (contract.py), and the words and number formats of the
site's tables (catalogue.toml, words.py).

normkit is a leaf: it imports no other snippet package (test_leaf.py checks it in a fresh process).
The arrows run one way: the pages' data <- faster (the side-by-side benchmark) <- the chapters
(layernorm, rmsnorm) <- normkit.
"""

from normkit.runtime import DEVICE, INTERPRETED

__all__ = ["DEVICE", "INTERPRETED"]
