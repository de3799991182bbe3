"""Chapter 1: LayerNorm with a Triton backward pass that sums dW and dB under atomic locks."""

from layernorm.ops import ContractError, LayerNormFunction, group_size_for, layer_norm

__all__ = ["ContractError", "LayerNormFunction", "group_size_for", "layer_norm"]
