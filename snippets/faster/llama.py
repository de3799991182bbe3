"""A Llama training step from Hugging Face `transformers` with each RMSNorm (eager, the fast kernel
swapped in by faster.models.use_fast_norms, Liger-Kernel's): its GPU time and how far its loss and
gradients are from eager's. faster.benchmark runs the tasks.
"""

import normkit  # noqa: F401  (first: picks the interpreter when there is no GPU)
import torch

from normkit import bench


# A Llama-style training step (forward, loss, gradients of every parameter) with Hugging Face's
# LlamaRMSNorm (eager), the fast kernels swapped in (faster.models.use_fast_norms) and Liger-Kernel's
# RMSNorm swapped in the same way. Random weights, the same for all three; bf16.
LLAMA_SHAPES = ((2048, 5632), (4096, 11008))  # hidden size, MLP size


LLAMA = {"layers": 2, "batch": 2, "seq": 2048, "vocab": 32000, "head_dim": 128}


MODEL_PROVIDERS = ("torch", "fast", "liger")


# a step takes milliseconds: fewer replays per repetition than the kernels' protocol
MODEL_PROTOCOL = bench.Protocol(warmup_calls=3, samples=5, calls_per_sample=2, repeats=3, max_copies=1)


def llama_model(hidden, intermediate, provider, llama=LLAMA):
    """A bf16 LlamaForCausalLM on the GPU with the provider's RMSNorm; ImportError without the package."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from faster import models
    heads = hidden // llama["head_dim"]
    config = LlamaConfig(hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=llama["layers"],
                         num_attention_heads=heads, num_key_value_heads=heads, vocab_size=llama["vocab"],
                         max_position_embeddings=llama["seq"], attn_implementation="sdpa")
    torch.manual_seed(0)  # the same weights for every provider
    with torch.device("cuda"):
        model = LlamaForCausalLM(config).to(torch.bfloat16)
    if provider == "fast":
        models.use_fast_norms(model)
    elif provider == "liger":
        from liger_kernel.transformers.rms_norm import LigerRMSNorm
        code = models.llama_norm_code()
        models.replace_modules(model, lambda m: models.rms_norm_like(m, LigerRMSNorm)
                               if models.is_llama_rms_norm(m, code) else None)
    return model


def llama_step(model, ids):
    """One training step's computation: the loss and the gradient of every parameter."""
    params = [p for p in model.parameters() if p.requires_grad]
    loss = model(input_ids=ids, labels=ids).loss
    return loss, torch.autograd.grad(loss, params)


def llama_tasks(protocol, shapes=LLAMA_SHAPES, llama=LLAMA):
    """{(provider, hidden): one repetition of the step's GPU time, µs}, and an agreement function that
    returns each provider's loss and its gradients' largest relative difference from eager's."""
    models_by = {}

    def model(provider, hidden, intermediate):
        if (provider, hidden) not in models_by:
            models_by[(provider, hidden)] = llama_model(hidden, intermediate, provider, llama)
        return models_by[(provider, hidden)]

    g = torch.Generator(device="cuda").manual_seed(1)
    ids = torch.randint(0, llama["vocab"], (llama["batch"], llama["seq"]), device="cuda", generator=g)
    intermediate_of = dict(shapes)
    tasks = {}
    for provider, hidden in llama_keys(shapes):
        def one(provider=provider, hidden=hidden):
            m = model(provider, hidden, intermediate_of[hidden])
            return bench.gpu_us(lambda: (lambda: llama_step(m, ids)), 1, protocol)
        tasks[(provider, hidden)] = one

    def agreement():
        out = []
        for hidden, intermediate in shapes:
            ref_loss, ref_grads = llama_step(model("torch", hidden, intermediate), ids)
            for provider in MODEL_PROVIDERS:
                try:
                    loss, grads = llama_step(model(provider, hidden, intermediate), ids)
                except Exception as e:  # noqa: BLE001 - a missing package: recorded, shown as missing
                    out.append({"provider": provider, "hidden": hidden, "error": bench.error_text(e)})
                    continue
                rel = max(((a.float() - r.float()).norm() / r.float().norm().clamp_min(1e-30)).item()
                          for a, r in zip(grads, ref_grads))
                out.append(agreement_record(provider, hidden, loss.item(), ref_loss.item(), rel))
        models_by.clear()
        return out
    return tasks, agreement


def llama_keys(shapes):
    """(provider, hidden) of every Llama step timed: each provider at each shape."""
    return [(provider, hidden) for hidden, _ in shapes for provider in MODEL_PROVIDERS]


def agreement_record(provider, hidden, loss, eager_loss, max_grad_rel_diff):
    """One provider's Llama step against eager's: its loss and its gradients' largest relative difference."""
    return {"provider": provider, "hidden": hidden, "loss": loss, "eager_loss": eager_loss,
            "max_grad_rel_diff": max_grad_rel_diff}
