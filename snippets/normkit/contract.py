"""What PyTorch's F.layer_norm and F.rms_norm accept, device by device, and what the fast paths
(layer_norm_fast, rms_norm_fast) accept: one table for each op.

PyTorch's devices disagree on mixed dtypes. Its CPU kernels have a mixed-dtype path: a 16-bit
input with float32 parameters, as a model keeps them in mixed-precision training. Its CUDA
LayerNorm has none: it reads the weight and the bias as the input's type and refuses any other
("expected scalar type BFloat16 but found Float"). A test that asks F.layer_norm on the GPU for
the answer to a question the CPU answers fails on the GPU alone, which is why the tests'
oracles are float64 computations on the CPU (normkit.testing) and why this table exists.

How each column was checked:

- "cpu": by running PyTorch 2.13 on the CPU over every case (normkit/test_contract.py runs them
  again in every test run, so the column cannot go stale).
- "cuda": from PyTorch's source, and by normkit/test_contract.py on a GPU (a GPU test: run it on
  one to confirm). aten/src/ATen/native/cuda/layer_norm_kernel.cu reads gamma and beta with the
  input's scalar type (gamma.const_data_ptr<T>(), T the input's type), which raises for any other
  dtype; issue 37 saw exactly that on an H200 (a bf16 input, float32 parameters). For RMSNorm,
  aten/src/ATen/native/layer_norm.cpp (rms_norm_symint) sends a weight of another dtype than the
  input's to rms_norm_composite on every device ("Can not dispatch to fused implementation"),
  which computes in the input's accumulation type and returns the input's dtype: RMSNorm takes
  any floating weight on both devices.
- "fast": the fast paths' own contract. They follow PyTorch's CPU rule on every device, the GPU
  included, so that the same model runs the same on both; where they take more than the CPU
  does, the row says so. What they refuse they refuse with a ContractError naming the problem,
  before anything is allocated or launched (layernorm/test_dropin.py, rmsnorm/test_dropin.py
  check every row). float64 and other inputs the kernels do not take are computed by PyTorch's
  own op on the input's device (normkit.dropin.on_kernels), so "fast" is PyTorch's answer there.

Every gradient PyTorch returns is in its tensor's own dtype, on both devices; the fast paths'
are too.

Imported by the tests only: the kernels' checks are their own code (layernorm.fast.check_inputs,
rmsnorm.fast.check_inputs), and this table is what the tests hold them to.
"""

import torch

F32, F16, BF16, F64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
REFUSED = "refused"
DEVICES = ("cpu", "cuda")


def row(cpu, cuda=None, fast=None):
    """{"cpu", "cuda", "fast"}: the output's dtype, or REFUSED where the forward or the backward
    raises; cuda and fast as the CPU unless given."""
    cuda = cpu if cuda is None else cuda
    return {"cpu": cpu, "cuda": cuda, "fast": cpu if fast is None else fast}


# (input, weight, bias) dtypes, None for an absent parameter -> row
LAYER_NORM = {
    (F32, F32, F32): row(F32),
    (F16, F16, F16): row(F16),
    (BF16, BF16, BF16): row(BF16),
    (BF16, BF16, None): row(BF16),
    (BF16, None, None): row(BF16),
    (F64, F64, F64): row(F64),
    # the mixed-precision case: the CPU computes it, CUDA refuses it, the fast paths compute it
    (BF16, F32, F32): row(BF16, cuda=REFUSED),
    (F16, F32, F32): row(F16, cuda=REFUSED),
    (BF16, F32, None): row(BF16, cuda=REFUSED),
    # a float32 bias without a weight: PyTorch's CPU forward computes it, its backward refuses it
    # (its mixed path needs the weight); the fast paths' rule is on the parameters present
    (BF16, None, F32): row(REFUSED, fast=BF16),
    # refused everywhere: parameters in a narrower dtype than the input, in two dtypes, or float32
    # parameters for a float64 input
    (F32, BF16, BF16): row(REFUSED),
    (BF16, F32, BF16): row(REFUSED),
    (BF16, F16, F16): row(REFUSED),
    (F64, F32, F32): row(REFUSED),
}

# (input, weight) dtypes, None for no weight -> row: any floating weight, the output in the input's dtype
RMS_NORM = {
    (F32, F32): row(F32),
    (F16, F16): row(F16),
    (BF16, BF16): row(BF16),
    (BF16, None): row(BF16),
    (F64, F64): row(F64),
    (BF16, F32): row(BF16),
    (F16, F32): row(F16),
    (F32, BF16): row(F32),
    (F16, BF16): row(F16),
    (F64, F32): row(F64),
}

CASES = {"layer_norm": LAYER_NORM, "rms_norm": RMS_NORM}


def case_name(dtypes):
    """A case's dtypes as a test id: "bfloat16 x, float32 weight, no bias"."""
    names = ("x", "weight", "bias")
    return ", ".join(f"{str(d).removeprefix('torch.')} {n}" if d else f"no {n}" for d, n in zip(dtypes, names))


def what_cuda_refuses_that_the_cpu_accepts(op):
    """The cases of op's table PyTorch computes on the CPU and refuses on CUDA."""
    return [dtypes for dtypes, r in CASES[op].items() if r["cpu"] != REFUSED and r["cuda"] == REFUSED]
