"""faster.models.use_fast_norms in a real Hugging Face model: a tiny Llama (and Qwen3, whose q_norm and
k_norm normalize each head) gets the fast norms in place of its own, keeps its parameters and
state_dict, and computes the same loss and gradients; norms with other arithmetic are left alone."""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)

import pytest
import torch

from faster.models import use_fast_norms
from layernorm.fast import LayerNormFast
from normkit.runtime import DEVICE
from rmsnorm.fast import RMSNormFast

transformers = pytest.importorskip("transformers")

TINY = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": 128, "max_position_embeddings": 64}


def build(name):
    config = getattr(transformers, f"{name}Config")(**TINY, **({"head_dim": 16} if name == "Qwen3" else {}))
    torch.manual_seed(0)
    return getattr(transformers, f"{name}ForCausalLM")(config).to(DEVICE)


def loss_and_grads(model, ids):
    loss = model(input_ids=ids, labels=ids).loss
    return loss, torch.autograd.grad(loss, list(model.parameters()))


@pytest.mark.parametrize("name, norms", [("Llama", 2 * 2 + 1), ("Qwen3", 2 * 4 + 1)])
def test_swapped_model_matches_the_original(name, norms):
    original, model = build(name), build(name)
    keys = list(model.state_dict())
    swapped = use_fast_norms(model)
    assert len(swapped) == norms, swapped  # two per layer (and Qwen3's q_norm, k_norm), and the final norm
    assert all(isinstance(model.get_submodule(n), RMSNormFast) for n in swapped)
    assert list(model.state_dict()) == keys
    ids = torch.randint(0, TINY["vocab_size"], (2, 16), generator=torch.Generator().manual_seed(0)).to(DEVICE)
    (loss, grads), (ref_loss, ref_grads) = loss_and_grads(model, ids), loss_and_grads(original, ids)
    torch.testing.assert_close(loss, ref_loss, atol=1e-5, rtol=1e-5)
    for g, r in zip(grads, ref_grads):
        torch.testing.assert_close(g, r, atol=1e-5, rtol=1e-4)


def test_parameters_are_shared_not_copied():
    model = build("Llama")
    weight = model.model.norm.weight
    use_fast_norms(model)
    assert model.model.norm.weight is weight


def test_other_arithmetic_is_left_alone():
    config = transformers.GemmaConfig(**TINY, head_dim=16)
    model = transformers.GemmaForCausalLM(config)  # Gemma's norm multiplies by (1 + weight)
    assert use_fast_norms(model) == []


def test_torch_norms_are_swapped():
    model = torch.nn.Sequential(torch.nn.LayerNorm(8, bias=False), torch.nn.RMSNorm(8, eps=1e-5),
                                torch.nn.LayerNorm(8, elementwise_affine=False))
    assert use_fast_norms(model) == ["0", "1", "2"]
    assert [type(m) for m in model] == [LayerNormFast, RMSNormFast, LayerNormFast]
    assert model[0].bias is None and model[1].eps == 1e-5 and model[2].weight is None
