"""The fast kernels in a real model: swap them into a PyTorch or Hugging Face model in place.

    from faster.models import use_fast_norms
    model = AutoModelForCausalLM.from_pretrained(...)
    swapped = use_fast_norms(model)     # the names of the modules it replaced

What is replaced: every torch.nn.LayerNorm (by layernorm.fast.LayerNormFast), every torch.nn.RMSNorm
(by rmsnorm.fast.RMSNormFast), and every Hugging Face RMSNorm whose forward is Llama's, byte for
byte (LlamaRMSNorm, and the many models whose norm is a copy of it: Mistral, Qwen2, Qwen3 with its
q_norm and k_norm, ...). Norms with other arithmetic, such as Gemma's (1 + weight), are left alone.
The replacements share the originals' parameters, so state_dict keys, an optimizer built before
the swap, and tied weights stay as they were.

One difference in rounding: Llama's norm rounds the normalized row to the input's dtype before it
multiplies by the weight; the fast kernel multiplies in fp32 and rounds once, as F.rms_norm does.
With an fp32 weight and bf16 activations, Llama's norm returns fp32 and the fast one bf16 (the
input's dtype, as F.rms_norm).
"""

import torch

from layernorm.fast import LayerNormFast
from rmsnorm.fast import RMSNormFast


def llama_norm_code():
    """The bytecode of Hugging Face's LlamaRMSNorm.forward, or None without transformers."""
    try:
        from transformers.models.llama.modeling_llama import LlamaRMSNorm
    except ImportError:
        return None
    return LlamaRMSNorm.forward.__code__


def is_llama_rms_norm(module, code):
    """A module whose forward is LlamaRMSNorm's: the same bytecode, constants and names."""
    forward = getattr(type(module).forward, "__code__", None)
    return code is not None and forward is not None and all(
        getattr(forward, a) == getattr(code, a) for a in ("co_code", "co_consts", "co_names"))


def fast_module(module, llama_code):
    """The fast replacement of one module, sharing its parameters, or None to leave it."""
    if type(module) is torch.nn.LayerNorm:
        new = LayerNormFast(module.normalized_shape, module.eps, module.elementwise_affine,
                            bias=module.bias is not None, device="meta")
        new.weight, new.bias = module.weight, module.bias
        return new
    if type(module) is torch.nn.RMSNorm:
        new = RMSNormFast(module.normalized_shape, module.eps, module.elementwise_affine, device="meta")
        new.weight = module.weight
        return new
    if is_llama_rms_norm(module, llama_code):
        return rms_norm_like(module, RMSNormFast)
    return None


def rms_norm_like(module, cls):
    """cls(hidden, eps) in place of a Llama-style RMSNorm, with its weight."""
    new = cls(module.weight.shape[0], eps=module.variance_epsilon)
    new.weight = module.weight
    return new


def replace_modules(model, make):
    """Replace, in place, every submodule m for which make(m) is a module; the replaced names."""
    replaced = []
    for parent_name, parent in list(model.named_modules()):
        for name, child in list(parent.named_children()):
            new = make(child)
            if new is not None:
                setattr(parent, name, new)
                replaced.append(f"{parent_name}.{name}" if parent_name else name)
    return replaced


def use_fast_norms(model):
    """Swap the fast LayerNorm and RMSNorm into model, in place; returns the replaced modules' names."""
    code = llama_norm_code()
    return replace_modules(model, lambda m: fast_module(m, code))
