"""Triton in one page: the smallest kernel that uses everything the chapters use."""

from onramp.row_sum import row_sum

__all__ = ["row_sum"]
