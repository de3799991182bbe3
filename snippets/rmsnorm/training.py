"""Training integration: Linear -> RMSNorm -> SiLU -> Linear, reference branch against kernel branch."""

import copy
import io
from dataclasses import asdict, dataclass

import torch
from torch import nn

from normkit.runtime import DEVICE
from rmsnorm import ops
from rmsnorm.reference import rmsnorm_reference


@dataclass(frozen=True)
class TrainConfig:
    in_features: int = 64
    hidden: int = 257  # not a power of two, on purpose
    out_features: int = 8
    steps: int = 100
    batch: int = 32
    lr: float = 1e-3
    n_train: int = 4096
    n_val: int = 512
    n_test: int = 512
    seed: int = 0


FULL = TrainConfig()
# What the CPU interpreter runs in tests: the same batch, fewer steps, smaller layers and splits.
QUICK = TrainConfig(in_features=16, hidden=33, out_features=4, steps=20, n_train=512, n_val=64, n_test=64)


# --8<-- [start:model]
class RMSNorm(nn.Module):
    def __init__(self, n, eps=1e-6, use_kernel=True):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps
        self.use_kernel = use_kernel

    def forward(self, x):
        norm = ops.rms_norm if self.use_kernel else rmsnorm_reference
        return norm(x, self.weight, self.eps)


class SmallNet(nn.Module):
    def __init__(self, cfg, use_kernel):
        super().__init__()
        self.inp = nn.Linear(cfg.in_features, cfg.hidden)
        self.norm = RMSNorm(cfg.hidden, use_kernel=use_kernel)
        self.act = nn.SiLU()
        self.out = nn.Linear(cfg.hidden, cfg.out_features)

    def forward(self, x):
        return self.out(self.act(self.norm(self.inp(x))))


def twin_models(cfg, device=DEVICE):
    """Two branches from the very same initial weights; only the RMSNorm differs."""
    torch.manual_seed(cfg.seed)
    reference = SmallNet(cfg, use_kernel=False).to(device)
    kernel = copy.deepcopy(reference)
    kernel.norm.use_kernel = True
    return reference, kernel
# --8<-- [end:model]


def make_splits(cfg, device=DEVICE):
    """Seeded synthetic regression data from a fixed random teacher, split train/val/test."""
    gen = torch.Generator().manual_seed(cfg.seed + 12345)
    n = cfg.n_train + cfg.n_val + cfg.n_test
    x = torch.randn(n, cfg.in_features, generator=gen)
    teacher_a = torch.randn(cfg.in_features, 32, generator=gen) / cfg.in_features**0.5
    teacher_b = torch.randn(32, cfg.out_features, generator=gen) / 32**0.5
    y = torch.sin(2.0 * x @ teacher_a) @ teacher_b + 0.05 * torch.randn(n, cfg.out_features, generator=gen)
    x, y = x.to(device), y.to(device)
    cut1, cut2 = cfg.n_train, cfg.n_train + cfg.n_val
    return {"train": (x[:cut1], y[:cut1]), "val": (x[cut1:cut2], y[cut1:cut2]), "test": (x[cut2:], y[cut2:])}


def mse(model, split):
    x, y = split
    with torch.no_grad():
        return nn.functional.mse_loss(model(x), y).item()


def max_param_diff(a, b):
    return max((p - q).abs().max().item() for p, q in zip(a.parameters(), b.parameters()))


def initial_differences(reference, kernel, batch):
    x, y = batch
    outs, grads = [], []
    for model in (reference, kernel):
        model.zero_grad()
        out = model(x)
        nn.functional.mse_loss(out, y).backward()
        outs.append(out.detach())
        grads.append([p.grad.detach().clone() for p in model.parameters()])
        model.zero_grad()
    out_diff = (outs[0] - outs[1]).abs().max().item()
    grad_diff = max((g - h).abs().max().item() for g, h in zip(*grads))
    return out_diff, grad_diff


# --8<-- [start:train_loop]
def train(model, splits, cfg):
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    x, y = splits["train"]
    # the same batches for both branches
    order = torch.Generator().manual_seed(cfg.seed + 1)
    for _ in range(cfg.steps):
        idx = torch.randint(0, x.shape[0], (cfg.batch,), generator=order).to(x.device)
        loss = nn.functional.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def run_integration(cfg=FULL, device=DEVICE):
    splits = make_splits(cfg, device)
    reference, kernel = twin_models(cfg, device)
    first_batch = (splits["train"][0][: cfg.batch], splits["train"][1][: cfg.batch])
    out_diff, grad_diff = initial_differences(reference, kernel, first_batch)

    train(reference, splits, cfg)
    before = dict(ops.CALLS)
    train(kernel, splits, cfg)
    forwards = ops.CALLS["forward"] - before["forward"]  # counted during training only
    backwards = ops.CALLS["backward"] - before["backward"]

    buffer = io.BytesIO()  # save a checkpoint, load it into a fresh model, compare
    torch.save({"config": asdict(cfg), "model": kernel.state_dict()}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer, map_location=device)
    reloaded = SmallNet(TrainConfig(**saved["config"]), use_kernel=True).to(device)
    reloaded.load_state_dict(saved["model"])
    with torch.no_grad():
        x_test = splits["test"][0]
        reload_diff = max(
            max_param_diff(kernel, reloaded),
            (kernel(x_test) - reloaded(x_test)).abs().max().item(),
        )
    # --8<-- [end:train_loop]

    return {
        "config": asdict(cfg),
        "initial_output_diff": out_diff,
        "initial_grad_diff": grad_diff,
        "kernel_forwards": forwards,
        "kernel_backwards": backwards,
        "val_mse": {"reference": mse(reference, splits["val"]), "kernel": mse(kernel, splits["val"])},
        "test_mse": {"reference": mse(reference, splits["test"]), "kernel": mse(kernel, splits["test"])},
        "final_param_diff": max_param_diff(reference, kernel),
        "reload_diff": reload_diff,
    }


def format_integration(r):
    c = r["config"]
    return "\n".join([
        f"Linear({c['in_features']}, {c['hidden']}) -> RMSNorm -> SiLU -> Linear({c['hidden']}, {c['out_features']}), "
        f"{c['steps']} Adam steps, batch {c['batch']}, splits {c['n_train']}/{c['n_val']}/{c['n_test']}",
        f"  initial output difference  {r['initial_output_diff']:.3e}",
        f"  initial gradient difference {r['initial_grad_diff']:.3e}",
        f"  kernel branch: {r['kernel_forwards']} forwards, {r['kernel_backwards']} backwards",
        f"  validation MSE  reference {r['val_mse']['reference']:.5f}  kernel {r['val_mse']['kernel']:.5f}",
        f"  test MSE        reference {r['test_mse']['reference']:.5f}  kernel {r['test_mse']['kernel']:.5f}",
        f"  largest parameter difference after training {r['final_param_diff']:.3e}",
        f"  checkpoint reload difference {r['reload_diff']:g}",
    ])
